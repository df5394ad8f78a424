/**
 * The fixed context (pi's replayed system message) itemised by pi 1.6.0's prompt sections
 * (`buildSystemPromptSections`) and tool declarations, with tokens and cost over the branch. Parts get
 * pi's `estimateTokens` by cumulative rounding, so they add up to pi's number exactly.
 */

import { messageChars, totalChars } from "../read/estimate";
import type { EntryRecord } from "../read/entries";
import type { SystemMessage } from "../types";
import { ratesFor, type PriceLookup } from "./cost";
import type { Projection } from "./context";
import { currentSystemMessage, SystemReplay, type BodyReader } from "./tokens";

/** `section` also covers the framing of `project_context` / `skills` around their items. */
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

/** A pi 1.6.0 flag, setting or file that leaves a part out; `all`: it removes more than this part. */
export interface FixedRemoval {
  kind: "flag" | "setting" | "file" | "frontmatter" | "source";
  text: string;
  where?: string;
  all?: boolean;
}

export interface FixedPart {
  kind: FixedPartKind;
  /** The section's or tool's name, the skill's name, or the context file's path as pi wrote it. */
  name: string;
  /** Share of pi's estimate (the parts add up to {@link FixedContext.total}). */
  tokens: number;
  chars: number;
  section?: string;
  /** Empty when pi has no way (`cwd`, a prompt without sections). */
  removedBy: FixedRemoval[];
  session?: FixedPartUse;
}

export interface FixedPartUse {
  requests: number;
  tokens: number;
  cachedTokens: number;
  /** US dollars at each request's prices (cache reads at the cache-read rate); null without prices. */
  cost: number | null;
  /** Tools: direct calls and calls from codemode scripts on the branch. */
  calls?: number;
}

/** `sections`: pi ≥ 0.87; `content`: written by another program; `none`: pi < 0.86 recorded no prompt. */
export type FixedLayout = "sections" | "content" | "none";

export interface FixedContext {
  /** pi's `estimateTokens(getCurrentSystemMessage(context))`, 0 without a system message. */
  total: number;
  parts: FixedPart[];
  layout: FixedLayout;
  session?: FixedContextUse;
}

export interface FixedContextUse {
  /** A failed request without usage is not counted. */
  requests: number;
  tokens: number;
  cachedTokens: number;
  cost: number | null;
  unpricedRequests: number;
}

/** pi 1.6.0's built-in tools (`allToolNames`). */
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
/** Tools of pi's built-in extensions, by extension name. */
const BUILTIN_EXTENSION_TOOLS: Readonly<Record<string, string>> = {
  codemode: "builtin:codemode",
  tool_search: "builtin:tool-search",
};
const MCP_RESOURCE_TOOLS = new Set(["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]);
const PI_SECTIONS = new Set(["preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd"]);
const MCP_SECTION = "mcp_servers";

/** pi's `isMcpToolName`: a server tool (`mcp__<server>__<tool>`) or a resource tool. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith("mcp__") || MCP_RESOURCE_TOOLS.has(name);
}

/** By name only: a session records no tool's origin. */
export function toolKind(name: string): "tool" | "extension-tool" | "mcp-tool" {
  if (isMcpToolName(name)) return "mcp-tool";
  return BUILTIN_TOOLS.has(name) ? "tool" : "extension-tool";
}

function sectionKind(name: string): FixedPartKind {
  if (name === MCP_SECTION) return "mcp-section";
  return PI_SECTIONS.has(name) ? "section" : "extension-section";
}

const SETTINGS = "settings.json";

/** pi 1.6.0's ways to leave a part out (pi's `docs/cli.md`, `settings.md`, `mcp.md`, `skills.md`). */
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

type Draft = Omit<FixedPart, "tokens" | "removedBy">;

function draft(kind: FixedPartKind, name: string, chars: number, section?: string): Draft {
  return section === undefined ? { kind, name, chars } : { kind, name, chars, section };
}

const PROJECT_OPEN = "<project_context>\n";
const PROJECT_CLOSE = "\n</project_context>";
const PROJECT_HEADING = "Project-specific instructions and guidelines:";
const FILE_OPEN = '\n\n<project_instructions path="';
const FILE_CLOSE = "\n</project_instructions>";

/** `project_context` split by file (pi's `renderProjectContext`); undefined when not in pi's layout. */
function splitProjectContext(text: string): Draft[] | undefined {
  if (!text.startsWith(PROJECT_OPEN + PROJECT_HEADING) || !text.endsWith(PROJECT_CLOSE)) return undefined;
  const inner = text.slice(PROJECT_OPEN.length + PROJECT_HEADING.length, text.length - PROJECT_CLOSE.length);
  const files: Draft[] = [];
  let at = 0;
  while (at < inner.length) {
    if (!inner.startsWith(FILE_OPEN, at)) return undefined;
    // the block ends at the first `</project_instructions>` followed by the next block or the end
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

/** One `<skill>` of pi's `formatSkillsForPrompt` (XML-escaped: no `<`). */
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

/** Parts in message order; a tool's characters include its `,`/`]` (the first also `[`) of pi's `JSON.stringify`. */
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
    // pi counts a truthy section's length; our estimator counts strings only (`read/estimate.ts`)
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

/** Part i gets `ceil(end_i / 4) − ceil(start_i / 4)`, so Σ = `ceil(Σ chars / 4)`. */
function allocateTokens(drafts: Draft[]): FixedPart[] {
  let before = 0;
  return drafts.map((d) => {
    const start = Math.ceil(before / 4);
    before += d.chars;
    const part: FixedPart = { ...d, tokens: Math.ceil(before / 4) - start, removedBy: removalsOf(d.kind, d.name) };
    return part;
  });
}

export function partKey(part: Pick<FixedPart, "kind" | "name">): string {
  return `${part.kind}\u0000${part.name}`;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const finite = (v: number | undefined): number => (v !== undefined && Number.isFinite(v) ? v : 0);

/** An assistant message, unless it failed before the provider reported any usage. */
function isRequest(r: EntryRecord): boolean {
  if (r.type !== "message" || r.role !== "assistant") return false;
  const u = r.usage;
  const prompt = u ? finite(u.input) + finite(u.cacheRead) + finite(u.cacheWrite) : 0;
  return prompt > 0 || (r.stopReason !== "error" && r.stopReason !== "aborted");
}

const nestedCallNames = new WeakMap<EntryRecord, string[]>();

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
 * The fixed context at the leaf and its cost over the branch: the system message is replayed per
 * request (from a compaction's checkpoint on), and cache reads are assumed to cover the fixed part first.
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
