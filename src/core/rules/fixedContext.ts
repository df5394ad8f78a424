/**
 * The fixed part of the context, itemised: what every request carries before the conversation —
 * pi's system message, replayed (pi-ai `getCurrentSystemMessage`) — split into pi's prompt
 * sections and each tool's declaration, with tokens by pi's estimator, and what each part cost
 * over the requests of the branch so far.
 *
 * pi 1.6.0 (`dist/core/system-prompt.js` `buildSystemPromptSections`) records the prompt as named
 * sections: `preamble` (pi's or `--system-prompt`/SYSTEM.md's text), `tools`, `rules`, `docs`
 * (only with pi's own prompt), `addendum` (`--append-system-prompt`, APPEND_SYSTEM.md),
 * `project_context` (every context file as `<project_instructions path="…">`), `skills` (every
 * skill the model may invoke as `<skill>`), `cwd`, then the sections extensions add (pi's MCP
 * extension: `mcp_servers`); each but `preamble` wrapped as `<name>\n…\n</name>`. Tools are
 * `toolsAdded` declarations `{name, description, parameters, constrainedSampling}` (built-in,
 * extension and MCP tools alike; MCP tools are named `mcp__<server>__<tool>`, pi's
 * `isMcpToolName`). A system message without sections (other programs) is one prompt part.
 *
 * pi's estimate (`estimateTokens`, role `system`) is `ceil((content + Σ section lengths +
 * JSON.stringify(toolsAdded).length) / 4)`. A part's tokens are its share of that estimate, by
 * cumulative rounding over the parts in the message's order (`ceil(end / 4) − ceil(start / 4)`),
 * so the parts add up to pi's number exactly and each is within one token of `chars / 4`.
 */

import { messageChars, totalChars } from "../read/estimate";
import type { EntryRecord } from "../read/entries";
import type { SystemMessage } from "../types";
import { ratesFor, type PriceLookup } from "./cost";
import type { Projection } from "./context";
import { currentSystemMessage, SystemReplay, type BodyReader } from "./tokens";

/**
 * What a part is: `prompt` (the text of a system message without sections), `section` (pi's
 * own sections, and the framing of `project_context` / `skills` around their items),
 * `context-file` (one `<project_instructions>`), `skill` (one `<skill>`), `extension-section`
 * (a section an extension added), `mcp-section` (`mcp_servers`), `tool` (a built-in tool's
 * declaration), `extension-tool`, `mcp-tool`.
 */
export type FixedPartKind =
  | "prompt"
  | "section"
  | "context-file"
  | "skill"
  | "extension-section"
  | "mcp-section"
  | "tool"
  | "extension-tool"
  | "mcp-tool";

/**
 * A pi 1.6.0 flag, setting or file that leaves a part out of the system message: `text` is pi's
 * syntax (`--no-context-files`, `"defaultTools": ["-write"]`), `where` the file a setting goes in,
 * `all` true when it removes more than this part (every context file, every skill). The `addendum`
 * has no removal: its `source`s (a flag, a file) put it there, and leaving them out removes it.
 */
export interface FixedRemoval {
  kind: "flag" | "setting" | "file" | "frontmatter" | "source";
  text: string;
  where?: string;
  all?: boolean;
}

/** One part of the fixed context. */
export interface FixedPart {
  kind: FixedPartKind;
  /** The section's or tool's name, the skill's name, or the context file's path as pi wrote it. */
  name: string;
  /** Its share of pi's estimate of the system message (the parts add up to {@link FixedContext.total}). */
  tokens: number;
  /** The characters pi's estimator counts for it. */
  chars: number;
  /** The section a context file or skill is part of (`project_context`, `skills`). */
  section?: string;
  /** How to leave it out in pi (empty when pi has no way: `cwd`, a prompt without sections). */
  removedBy: FixedRemoval[];
  /** What it cost over the branch so far (set by {@link fixedContextOf}). */
  session?: FixedPartUse;
}

/** A part over the requests of the branch so far. */
export interface FixedPartUse {
  /** Requests that carried it. */
  requests: number;
  /** Σ its tokens over those requests (pi's estimate, as above). */
  tokens: number;
  /** Of those, the tokens the provider read from its cache. */
  cachedTokens: number;
  /** US dollars at each request's model's prices (cache reads at the cache-read rate); null without prices. */
  cost: number | null;
  /** Tools: how often the model called it on the branch (direct calls and calls from codemode scripts). */
  calls?: number;
}

/**
 * How the system message is laid out: `sections` (pi ≥ 0.87: split by pi's sections), `content`
 * (a system message without sections — written by another program: one prompt part), `none` (no
 * system message on the branch: pi before 0.86 did not record the prompt and tools).
 */
export type FixedLayout = "sections" | "content" | "none";

/** The fixed context at a leaf. */
export interface FixedContext {
  /** pi's `estimateTokens(getCurrentSystemMessage(context))`, 0 without a system message. */
  total: number;
  parts: FixedPart[];
  layout: FixedLayout;
  /** The requests of the branch so far (set by {@link fixedContextOf}). */
  session?: FixedContextUse;
}

/** The fixed context over the requests of the branch so far. */
export interface FixedContextUse {
  /** Assistant requests on the branch (a failed request without usage is not counted). */
  requests: number;
  /** Σ the fixed tokens each request carried. */
  tokens: number;
  /** Of those, read from the provider's cache. */
  cachedTokens: number;
  /** US dollars over the requests with known prices; null when none had prices. */
  cost: number | null;
  /** Requests whose model has no known prices (not in {@link cost}). */
  unpricedRequests: number;
}

/** pi 1.6.0's built-in tools (`dist/core/tools/index.js` `allToolNames`). */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "bash",
  "powershell",
  "edit",
  "write",
  "grep",
  "find",
  "ls",
]);
/** Tools pi's built-in extensions register (`codemode`, `tool_search`) and the extension's name in `extensions`. */
const BUILTIN_EXTENSION_TOOLS: Readonly<Record<string, string>> = {
  codemode: "builtin:codemode",
  tool_search: "builtin:tool-search",
};
/** pi's MCP resource tools (`dist/core/mcp-servers.js`). */
const MCP_RESOURCE_TOOLS = new Set(["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]);
/** The sections pi itself builds. */
const PI_SECTIONS = new Set(["preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd"]);
/** pi's MCP extension's section (`MCP_SERVERS_SECTION`). */
const MCP_SECTION = "mcp_servers";

/** pi's `isMcpToolName`: a server tool (`mcp__<server>__<tool>`) or a resource tool. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith("mcp__") || MCP_RESOURCE_TOOLS.has(name);
}

/** The kind of a declared tool, by its name (a session records no tool's origin). */
export function toolKind(name: string): "tool" | "extension-tool" | "mcp-tool" {
  if (isMcpToolName(name)) return "mcp-tool";
  return BUILTIN_TOOLS.has(name) ? "tool" : "extension-tool";
}

function sectionKind(name: string): FixedPartKind {
  if (name === MCP_SECTION) return "mcp-section";
  return PI_SECTIONS.has(name) ? "section" : "extension-section";
}

const SETTINGS = "settings.json";

/** The pi 1.6.0 ways to leave a part out (`docs/cli.md`, `docs/settings.md`, `docs/mcp.md`, `docs/skills.md`). */
export function removalsOf(kind: FixedPartKind, name: string): FixedRemoval[] {
  switch (kind) {
    case "tool":
      return [
        { kind: "flag", text: `--exclude-tools ${name}` },
        { kind: "setting", text: `"defaultTools": ["-${name}"]`, where: SETTINGS },
        { kind: "flag", text: "--no-builtin-tools", all: true },
      ];
    case "extension-tool": {
      const builtin = BUILTIN_EXTENSION_TOOLS[name];
      return builtin
        ? [
            { kind: "flag", text: `--exclude-tools ${name}` },
            { kind: "setting", text: `"extensions": ["-${builtin}"]`, where: SETTINGS },
          ]
        : [
            { kind: "flag", text: `--exclude-tools ${name}` },
            { kind: "flag", text: "--no-extensions", all: true },
          ];
    }
    case "mcp-tool": {
      const server = /^mcp__(.+?)__(.+)$/.exec(name);
      return [
        { kind: "flag", text: `--exclude-tools ${name}` },
        ...(server
          ? [
              {
                kind: "setting" as const,
                text: `"toolExposure": {"${server[2]}": "deferred"}`,
                where: `mcp.json (server ${server[1]})`,
              },
            ]
          : []),
        { kind: "flag", text: "--no-mcp", all: true },
      ];
    }
    case "mcp-section":
      return [{ kind: "flag", text: "--no-mcp", all: true }];
    case "context-file":
      return [{ kind: "flag", text: "--no-context-files", all: true }];
    case "skill":
      return [
        { kind: "frontmatter", text: "disable-model-invocation: true", where: "SKILL.md" },
        { kind: "flag", text: "--no-skills", all: true },
      ];
    case "extension-section":
      return [{ kind: "flag", text: "--no-extensions", all: true }];
    case "section":
      switch (name) {
        case "project_context":
          return [{ kind: "flag", text: "--no-context-files", all: true }];
        case "skills":
          return [{ kind: "flag", text: "--no-skills", all: true }];
        case "tools":
        case "rules":
        case "docs":
          // a custom prompt replaces pi's preamble and leaves out its tools, rules and docs sections
          return [
            { kind: "flag", text: "--system-prompt", all: true },
            { kind: "file", text: "SYSTEM.md", where: "the agent dir or .pi/", all: true },
          ];
        case "addendum":
          return [
            { kind: "source", text: "--append-system-prompt" },
            { kind: "source", text: "APPEND_SYSTEM.md", where: "the agent dir or .pi/" },
          ];
        default:
          return [];
      }
    case "prompt":
      return [];
  }
}

/** A part before its tokens are known. */
type Draft = Omit<FixedPart, "tokens" | "removedBy">;

function draft(kind: FixedPartKind, name: string, chars: number, section?: string): Draft {
  return section === undefined ? { kind, name, chars } : { kind, name, chars, section };
}

const PROJECT_OPEN = "<project_context>\n";
const PROJECT_CLOSE = "\n</project_context>";
const PROJECT_HEADING = "Project-specific instructions and guidelines:";
const FILE_OPEN = '\n\n<project_instructions path="';
const FILE_CLOSE = "\n</project_instructions>";

/**
 * `project_context` split by file (pi's `renderProjectContext`): the framing, then each file's
 * block with the blank line before it. undefined when the text is not in pi's layout. A file
 * whose text itself holds `</project_instructions>` followed by a new block cannot be told from
 * two files; the characters still add up.
 */
function splitProjectContext(text: string): Draft[] | undefined {
  if (!text.startsWith(PROJECT_OPEN + PROJECT_HEADING) || !text.endsWith(PROJECT_CLOSE)) return undefined;
  const inner = text.slice(PROJECT_OPEN.length + PROJECT_HEADING.length, text.length - PROJECT_CLOSE.length);
  const files: Draft[] = [];
  let at = 0;
  while (at < inner.length) {
    if (!inner.startsWith(FILE_OPEN, at)) return undefined;
    // the block ends at the first `</project_instructions>` that is followed by the next block or the end
    let end = inner.indexOf(FILE_CLOSE, at);
    while (end >= 0) {
      const after = end + FILE_CLOSE.length;
      if (after === inner.length || inner.startsWith(FILE_OPEN, after)) break;
      end = inner.indexOf(FILE_CLOSE, end + 1);
    }
    if (end < 0) return undefined;
    const next = end + FILE_CLOSE.length;
    const pathEnd = inner.indexOf('">\n', at + FILE_OPEN.length);
    const path = pathEnd >= 0 && pathEnd < end ? inner.slice(at + FILE_OPEN.length, pathEnd) : "";
    files.push(draft("context-file", path, next - at, "project_context"));
    at = next;
  }
  if (files.length === 0) return undefined;
  return [draft("section", "project_context", text.length - at), ...files];
}

/** One `<skill>` of pi's `formatSkillsForPrompt` (names, descriptions and paths are XML-escaped: no `<`). */
const SKILL_BLOCK =
  /\n {2}<skill>\n {4}<name>([^<]*)<\/name>\n {4}<description>[^<]*<\/description>\n {4}<location>[^<]*<\/location>\n {2}<\/skill>/g;

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}

/** `skills` split by skill: the framing (instructions, `<available_skills>`), then each skill. */
function splitSkills(text: string): Draft[] | undefined {
  if (!text.startsWith("<skills>\n") || !text.endsWith("\n</skills>")) return undefined;
  const skills: Draft[] = [];
  let chars = 0;
  for (const match of text.matchAll(SKILL_BLOCK)) {
    skills.push(draft("skill", unescapeXml(match[1]!), match[0].length, "skills"));
    chars += match[0].length;
  }
  if (skills.length === 0) return undefined;
  return [draft("section", "skills", text.length - chars), ...skills];
}

function sectionDrafts(name: string, text: string): Draft[] {
  const split =
    name === "project_context" ? splitProjectContext(text) : name === "skills" ? splitSkills(text) : undefined;
  return split ?? [draft(sectionKind(name), name, text.length)];
}

function toolName(tool: unknown): string {
  const name = (tool as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : String(name);
}

/**
 * Split a (replayed) system message into its parts, in the message's order: content, sections,
 * tools. Each tool's characters are its `JSON.stringify` plus the `,` or `]` after it in pi's
 * `JSON.stringify(toolsAdded)`; the first tool also gets the `[`.
 * @returns the parts and pi's estimate; `layout: "none"` and no parts for `undefined`.
 */
export function splitSystemMessage(system: SystemMessage | undefined): FixedContext {
  if (!system) return { total: 0, parts: [], layout: "none" };
  const charsOf = messageChars(system);
  const all = totalChars(charsOf);
  const drafts: Draft[] = [];
  const content = messageChars({ role: "system", content: system.content });
  const contentChars = content.text + content.images;
  const sections = system.sections && typeof system.sections === "object" ? system.sections : undefined;
  const sectionNames = sections ? Object.keys(sections) : [];
  if (contentChars > 0) drafts.push(draft("prompt", "system prompt", contentChars));
  for (const name of sectionNames) {
    const text = sections![name];
    // pi counts a truthy section's length; our estimator counts strings only (estimate.ts)
    if (typeof text === "string" && text.length > 0) drafts.push(...sectionDrafts(name, text));
  }
  const tools = Array.isArray(system.toolsAdded) ? system.toolsAdded : [];
  tools.forEach((tool, i) => {
    const json = JSON.stringify(tool) as string | undefined;
    const chars = (json ?? "null").length + 1 + (i === 0 ? 1 : 0);
    const name = toolName(tool);
    drafts.push(draft(toolKind(name), name, chars));
  });
  // what the estimator counts and the parts do not hold (never for pi's shapes) goes to the first part
  const counted = drafts.reduce((sum, d) => sum + d.chars, 0);
  if (counted !== all && drafts.length > 0) drafts[0]!.chars += all - counted;
  const parts = allocateTokens(drafts);
  return {
    total: Math.ceil(all / 4),
    parts,
    layout: sectionNames.length > 0 ? "sections" : "content",
  };
}

/** Tokens by cumulative rounding: part i gets `ceil(end_i / 4) − ceil(start_i / 4)` (Σ = `ceil(Σ chars / 4)`). */
function allocateTokens(drafts: Draft[]): FixedPart[] {
  let before = 0;
  return drafts.map((d) => {
    const start = Math.ceil(before / 4);
    before += d.chars;
    const part: FixedPart = { ...d, tokens: Math.ceil(before / 4) - start, removedBy: removalsOf(d.kind, d.name) };
    return part;
  });
}

/** The key of a part across requests. */
export function partKey(part: Pick<FixedPart, "kind" | "name">): string {
  return `${part.kind}\u0000${part.name}`;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const finite = (v: number | undefined): number => (v !== undefined && Number.isFinite(v) ? v : 0);

/** A request pi sent: an assistant message, unless it failed before the provider reported any usage. */
function isRequest(r: EntryRecord): boolean {
  if (r.type !== "message" || r.role !== "assistant") return false;
  const u = r.usage;
  const prompt = u ? finite(u.input) + finite(u.cacheRead) + finite(u.cacheWrite) : 0;
  return prompt > 0 || (r.stopReason !== "error" && r.stopReason !== "aborted");
}

const nestedCallNames = new WeakMap<EntryRecord, string[]>();

/** Names of the tools a codemode script called (the tool result's `nestedCalls`), read once per entry. */
function nestedCalls(record: EntryRecord, reader: BodyReader): string[] {
  let names = nestedCallNames.get(record);
  if (names) return names;
  names = [];
  try {
    const body = reader.readEntry(record) as { message?: { nestedCalls?: { calls?: unknown } } };
    for (const call of asArray(body.message?.nestedCalls?.calls)) {
      const name = (call as { name?: unknown } | null)?.name;
      if (typeof name === "string") names.push(name);
    }
  } catch {
    // the entry could not be read again (the file changed): its calls are not counted
  }
  nestedCallNames.set(record, names);
  return names;
}

/**
 * The fixed context at the leaf of `projection`, and what it cost over the branch so far.
 *
 * Requests: each assistant message on the path (pi's request), with the system message replayed
 * up to it — a compaction starts again from its checkpoint (`systemMessage`), as pi's context
 * after it does. Each request's fixed tokens are priced at its own model's rates for its prompt
 * size (pi-ai's tiers): the fixed part leads the prompt, so the provider's cache reads
 * (`usage.cacheRead`) cover it first, then its cache writes, the rest at the input rate.
 * @param prices prices by `provider/model` (an unknown model: the request is in `unpricedRequests`).
 * @param reader reads codemode tool results again for their nested calls.
 */
export function fixedContextOf(projection: Projection, prices: PriceLookup, reader: BodyReader): FixedContext {
  const leaf = splitSystemMessage(currentSystemMessage(projection));
  const uses = new Map<string, FixedPartUse>();
  const session: FixedContextUse = { requests: 0, tokens: 0, cachedTokens: 0, cost: null, unpricedRequests: 0 };
  const calls = new Map<string, number>();
  const replay = new SystemReplay();
  let fixed: FixedContext | undefined; // the replay's parts, split once per change
  for (const r of projection.path) {
    if (r.type === "compaction") {
      replay.reset();
      if (r.system) replay.apply(r.system);
      fixed = undefined;
      continue;
    }
    if (r.type !== "message") continue;
    if (r.role === "system" && r.system) {
      replay.apply(r.system);
      fixed = undefined;
      continue;
    }
    if (r.role === "assistant") for (const name of r.toolNames ?? []) calls.set(name, (calls.get(name) ?? 0) + 1);
    if (r.role === "toolResult" && r.toolName === "codemode")
      for (const name of nestedCalls(r, reader)) calls.set(name, (calls.get(name) ?? 0) + 1);
    if (!isRequest(r)) continue;
    fixed ??= splitSystemMessage(replay.message());
    if (fixed.total <= 0) continue;
    const u = r.usage;
    const cacheRead = finite(u?.cacheRead);
    const cacheWrite = finite(u?.cacheWrite);
    const prompt = finite(u?.input) + cacheRead + cacheWrite;
    const read = Math.min(fixed.total, cacheRead);
    const written = Math.min(fixed.total - read, cacheWrite);
    const model = prices(r.provider ?? "", r.model ?? "");
    let dollars: number | null = null;
    if (model) {
      const rates = ratesFor(model, prompt);
      dollars =
        (read * rates.cacheRead + written * rates.cacheWrite + (fixed.total - read - written) * rates.input) / 1e6;
      session.cost = (session.cost ?? 0) + dollars;
    } else session.unpricedRequests++;
    session.requests++;
    session.tokens += fixed.total;
    session.cachedTokens += read;
    for (const part of fixed.parts) {
      const key = partKey(part);
      const use = uses.get(key) ?? { requests: 0, tokens: 0, cachedTokens: 0, cost: null };
      const share = part.tokens / fixed.total;
      use.requests++;
      use.tokens += part.tokens;
      use.cachedTokens += read * share;
      if (dollars !== null) use.cost = (use.cost ?? 0) + dollars * share;
      uses.set(key, use);
    }
  }
  for (const part of leaf.parts) {
    const use = uses.get(partKey(part)) ?? { requests: 0, tokens: 0, cachedTokens: 0, cost: null };
    use.cachedTokens = Math.round(use.cachedTokens);
    if (part.kind === "tool" || part.kind === "extension-tool" || part.kind === "mcp-tool")
      use.calls = calls.get(part.name) ?? 0;
    part.session = use;
  }
  leaf.session = session;
  return leaf;
}
