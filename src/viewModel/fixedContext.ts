/** The fixed part of the context (`core/rules/fixedContext.ts`) in words, for every surface. Pure. */

import * as l10n from "@vscode/l10n";
import type { FixedContext, FixedPart, FixedPartKind, FixedRemoval } from "../core/rules/fixedContext";
import { formatCount, formatDollars, formatGaugeTokens, localisedRecord, pluralText } from "../shared/format";
import type { FixedContextModel, FixedGroupModel, FixedItemModel } from "../shared/fixedContext";

type GroupId = "tools" | "mcp" | "contextFiles" | "skills" | "prompt" | "extensions";

const GROUP_LABELS: Readonly<Record<GroupId, string>> = localisedRecord({
  tools: () => l10n.t("Tools"),
  mcp: () => l10n.t("MCP"),
  contextFiles: () => l10n.t("Context files"),
  skills: () => l10n.t("Skills"),
  prompt: () => l10n.t("pi's prompt"),
  extensions: () => l10n.t("Extension sections"),
});

/** What a part is, in words (the panel's second column). */
export const KIND_LABELS: Readonly<Record<FixedPartKind, string>> = localisedRecord({
  prompt: () => l10n.t("prompt"),
  section: () => l10n.t("section"),
  "context-file": () => l10n.t("context file"),
  skill: () => l10n.t("skill"),
  "extension-section": () => l10n.t("extension section"),
  "mcp-section": () => l10n.t("MCP section"),
  tool: () => l10n.t("built-in tool"),
  "extension-tool": () => l10n.t("extension tool"),
  "mcp-tool": () => l10n.t("MCP tool"),
});

function groupOf(part: FixedPart): GroupId {
  switch (part.kind) {
    case "tool":
    case "extension-tool":
      return "tools";
    case "mcp-tool":
    case "mcp-section":
      return "mcp";
    case "context-file":
      return "contextFiles";
    case "skill":
      return "skills";
    case "extension-section":
      return "extensions";
    case "prompt":
      return "prompt";
    case "section":
      return part.name === "project_context" ? "contextFiles" : part.name === "skills" ? "skills" : "prompt";
  }
}

function baseName(file: string): string {
  const parts = file.split(/[/\\]/).filter(Boolean);
  return parts[parts.length - 1] ?? file;
}

function shortPath(file: string): string {
  return file.split(/[/\\]/).filter(Boolean).slice(-2).join("/") || file;
}

/** A context file by its file name (with its folder when two share the name); else its own name. */
export function displayNames(parts: readonly FixedPart[]): string[] {
  const files = parts.filter((p) => p.kind === "context-file").map((p) => baseName(p.name));
  return parts.map((p) => {
    if (p.kind === "context-file") {
      const base = baseName(p.name);
      return files.filter((f) => f === base).length > 1 ? shortPath(p.name) : base;
    }
    if (p.kind === "prompt") return l10n.t("system prompt");
    if (p.kind === "section" && p.name === "project_context") return l10n.t("heading and tags");
    if (p.kind === "section" && p.name === "skills") return l10n.t("instructions and tags");
    return p.name;
  });
}

function lineItems(fixed: FixedContext): { label: string; tokens: number }[] {
  const names = displayNames(fixed.parts);
  const items = new Map<string, { label: string; tokens: number }>();
  fixed.parts.forEach((p, i) => {
    const group = groupOf(p);
    let key: string;
    let label: string;
    if (p.kind === "context-file" || p.kind === "extension-section") {
      key = `${p.kind}:${p.name}`;
      label = names[i]!;
    } else if (group === "contextFiles" || group === "prompt") {
      key = "prompt";
      label = l10n.t("prompt");
    } else {
      key = group;
      label = group === "tools" ? l10n.t("tools") : group === "mcp" ? l10n.t("MCP") : l10n.t("skills");
    }
    const item = items.get(key) ?? { label, tokens: 0 };
    item.tokens += p.tokens;
    items.set(key, item);
  });
  return [...items.values()].filter((i) => i.tokens > 0).sort((a, b) => b.tokens - a.tokens);
}

/** Items the tooltip's line names before "…". */
export const LINE_ITEMS = 4;

/** `2.9k: tools 1.4k, prompt 650, AGENTS.md 249, …`; without a system message, a note when there is a conversation. */
export function fixedContextLine(fixed: FixedContext, contextTokens = 0): string | undefined {
  if (fixed.layout === "none")
    return contextTokens > 0
      ? l10n.t("not in the session file (pi before 0.86 did not record its system prompt and tools)")
      : undefined;
  if (fixed.total <= 0) return undefined;
  const items = lineItems(fixed);
  const shown = items.slice(0, LINE_ITEMS).map((i) => `${i.label} ${formatGaugeTokens(i.tokens)}`);
  if (items.length > LINE_ITEMS) shown.push("…");
  return l10n.t("{0}: {1}", formatGaugeTokens(fixed.total), shown.join(", "));
}

function scopeText(text: string): string | undefined {
  switch (text) {
    case "--no-context-files":
      return l10n.t("every context file");
    case "--no-skills":
      return l10n.t("every skill");
    case "--no-builtin-tools":
      return l10n.t("every built-in tool");
    case "--no-extensions":
      return l10n.t("every extension, pi's built-in ones too");
    case "--no-mcp":
      return l10n.t("every MCP server");
    case "--system-prompt":
    case "SYSTEM.md":
      return l10n.t("your own prompt instead of pi's: no tools, rules or docs sections");
    default:
      return undefined;
  }
}

/** One way out in words: `--no-skills (every skill)`, `"defaultTools": ["-write"] in settings.json`. */
export function removalText(r: FixedRemoval, withScope = true): string {
  const where = r.where ? l10n.t("{0} in {1}", r.text, r.where) : r.text;
  const scope = withScope && r.all ? scopeText(r.text) : undefined;
  return scope ? l10n.t("{0} ({1})", where, scope) : where;
}

function removalsText(removals: readonly FixedRemoval[]): string {
  const scopes = removals.map((r) => (r.all ? scopeText(r.text) : undefined));
  return removals.map((r, i) => removalText(r, scopes[i] !== scopes[i + 1])).join(l10n.t(" or "));
}

/** How to leave a part out in pi, or why it stays (`cwd`, pi's preamble, a prompt without sections). */
export function removalLine(part: FixedPart): string {
  const sources = part.removedBy.filter((r) => r.kind === "source");
  if (sources.length > 0) return l10n.t("Comes from {0}: leave it out.", removalsText(sources));
  if (part.removedBy.length > 0) return l10n.t("Leave out in pi: {0}", removalsText(part.removedBy));
  if (part.kind === "prompt") return l10n.t("Written by the program that wrote the session; pi has no setting for it.");
  if (part.kind === "section" && part.name === "preamble")
    return l10n.t("pi always sends a preamble; --system-prompt or SYSTEM.md replaces it with yours.");
  return l10n.t("pi always sends it.");
}

/** What a part cost over the branch's requests, and whether a tool was called: `$0.0046 over 25 requests · never called`. */
export function useText(part: FixedPart): string {
  const use = part.session;
  if (!use || use.requests === 0) return l10n.t("not sent yet");
  const parts: string[] = [];
  const over = pluralText(use.requests, l10n.t("{0} request"), l10n.t("{0} requests"));
  parts.push(
    use.cost !== null
      ? l10n.t("{0} over {1} ({2} tokens)", formatDollars(use.cost), over, formatCount(use.tokens))
      : l10n.t("{0} tokens over {1}", formatCount(use.tokens), over),
  );
  if (use.calls !== undefined)
    parts.push(
      use.calls === 0
        ? l10n.t("never called on this branch")
        : pluralText(use.calls, l10n.t("called {0} time"), l10n.t("called {0} times")),
    );
  return parts.join(" · ");
}

/** Why the fixed part is one part, or not known at all. */
export function layoutNote(fixed: FixedContext): string | undefined {
  switch (fixed.layout) {
    case "none":
      return l10n.t(
        "The session holds no system message: pi before 0.86 did not record its prompt and tools in the file, so they are in the provider's usage but cannot be itemised.",
      );
    case "content":
      return l10n.t(
        "This system message has no sections (it was not written by pi 0.87 or later): its prompt is one part; each tool's declaration is still its own part.",
      );
    case "sections":
      return undefined;
  }
}

/** The summary over the branch: `25 requests so far carried 71,420 fixed tokens (68,577 from the cache): $0.029`. */
export function sessionText(fixed: FixedContext): string | undefined {
  const s = fixed.session;
  if (!s || s.requests === 0) return undefined;
  const requests = pluralText(s.requests, l10n.t("{0} request"), l10n.t("{0} requests"));
  const tokens = formatCount(s.tokens);
  const cached = formatCount(s.cachedTokens);
  if (s.cost === null)
    return l10n.t(
      "{0} so far carried {1} fixed tokens ({2} read from the cache); no prices for the model.",
      requests,
      tokens,
      cached,
    );
  if (s.unpricedRequests === 0)
    return l10n.t(
      "{0} so far carried {1} fixed tokens ({2} read from the cache): {3} at the model's prices.",
      requests,
      tokens,
      cached,
      formatDollars(s.cost),
    );
  return l10n.t(
    "{0} so far carried {1} fixed tokens ({2} read from the cache): {3} at the model's prices ({4} without prices not included).",
    requests,
    tokens,
    cached,
    formatDollars(s.cost),
    pluralText(s.unpricedRequests, l10n.t("{0} request"), l10n.t("{0} requests")),
  );
}

const GROUP_ORDER: readonly GroupId[] = ["tools", "mcp", "contextFiles", "skills", "prompt", "extensions"];

/** The panel's drill-down; `scale` (`usage / estimate`) relates the bar to pi's estimate. */
export function buildFixedContextModel(fixed: FixedContext, scale = 1): FixedContextModel {
  const names = displayNames(fixed.parts);
  const groups = new Map<GroupId, FixedGroupModel>();
  fixed.parts.forEach((part, i) => {
    const id = groupOf(part);
    const group = groups.get(id) ?? { id, label: GROUP_LABELS[id], tokens: 0, items: [] };
    group.tokens += part.tokens;
    const item: FixedItemModel = {
      kind: part.kind,
      kindLabel: KIND_LABELS[part.kind],
      name: names[i]!,
      fullName: part.name,
      tokens: part.tokens,
      use: useText(part),
      removal: removalLine(part),
    };
    if (part.session?.calls === 0 && part.session.requests > 0) item.unused = true;
    group.items.push(item);
    groups.set(id, group);
  });
  const list = [...groups.values()]
    .map((g) => ({ ...g, items: g.items.sort((a, b) => b.tokens - a.tokens) }))
    .sort((a, b) => b.tokens - a.tokens || GROUP_ORDER.indexOf(a.id as GroupId) - GROUP_ORDER.indexOf(b.id as GroupId));
  const notes: string[] = [];
  const layout = layoutNote(fixed);
  if (layout) notes.push(layout);
  if (fixed.total > 0)
    notes.push(
      Math.abs(scale - 1) > 0.005
        ? l10n.t(
            "pi's estimate of its system message (chars/4): {0} tokens, split by part; the bar scales it ×{1} with the messages before the last provider usage.",
            formatCount(fixed.total),
            scale.toFixed(2),
          )
        : l10n.t("pi's estimate of its system message (chars/4): {0} tokens, split by part.", formatCount(fixed.total)),
    );
  const model: FixedContextModel = { total: fixed.total, layout: fixed.layout, groups: list, notes };
  const session = sessionText(fixed);
  if (session) model.session = session;
  return model;
}

/** `pi-context inspect`'s lines: the total and the summary, then one line per part (largest first). */
export function fixedContextLines(fixed: FixedContext): string[] {
  const lines: string[] = [];
  const note = layoutNote(fixed);
  if (fixed.layout === "none") return [note!];
  lines.push(
    l10n.t("{0} tokens every request carries (pi's estimate of its system message)", formatCount(fixed.total)),
  );
  if (note) lines.push(note);
  const session = sessionText(fixed);
  if (session) lines.push(session);
  const names = displayNames(fixed.parts);
  const order = fixed.parts.map((p, i) => ({ p, name: names[i]! })).sort((a, b) => b.p.tokens - a.p.tokens);
  const width = Math.max(...order.map((o) => o.name.length), 8);
  for (const { p, name } of order) {
    lines.push(`  ${name.padEnd(width)}  ${formatCount(p.tokens).padStart(6)}  ${KIND_LABELS[p.kind]} · ${useText(p)}`);
    lines.push(`  ${"".padEnd(width)}  ${"".padStart(6)}  ${removalLine(p)}`);
  }
  return lines;
}
