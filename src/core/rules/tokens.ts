/**
 * Context token accounting as pi 1.6.0 does it (`compaction.js` `estimateContextTokens`,
 * `estimateProjectedContextTokens`, `shouldCompact`; `getContextUsage`; pi-ai `getCurrentSystemMessage`).
 */

import type { ProjectedEntry, Projection } from "./context";
import { estimateTokens, messageChars, totalChars, type CharBreakdown } from "../read/estimate";
import { fileOpsOfMessage, type EntryRecord, type FileOp } from "../read/entries";
import type { SessionEntry, SystemMessage } from "../types";

export interface BodyReader {
  readEntry(record: EntryRecord): SessionEntry;
}

/** pi's `{tokens, usageTokens, trailingTokens, lastUsageIndex}`. */
export interface ContextEstimate {
  tokens: number;
  /** `calculateContextTokens(usage)` of the last valid assistant message, 0 without one. */
  usageTokens: number;
  /** All messages without such an assistant. */
  trailingTokens: number;
  lastUsageIndex: number | null;
  /** Our addition. */
  lastUsageEntryId: string | null;
}

export interface EntryContribution {
  tokens: number;
  chars: CharBreakdown;
  fileOps: FileOp[];
}

const EDITABLE_ROLES = new Set(["user", "assistant", "toolResult", "custom"]);
const editedCache = new WeakMap<EntryRecord, WeakMap<EntryRecord, EntryContribution>>();

/** Non-system tokens, chars and file ops of an entry with its context edit applied (pi's `projectContextEntry`). */
export function contribution(entry: ProjectedEntry, reader: BodyReader): EntryContribution {
  const record = entry.record;
  if (entry.roles.length === 0) return { tokens: 0, chars: emptyChars(), fileOps: [] };
  const role = record.type === "message" ? record.role : record.type === "custom_message" ? "custom" : undefined;
  const edit = entry.edit;
  if (!edit || role === undefined || !EDITABLE_ROLES.has(role)) {
    return { tokens: record.tokens, chars: record.chars, fileOps: record.fileOps ?? [] };
  }
  let byTarget = editedCache.get(edit);
  if (!byTarget) editedCache.set(edit, (byTarget = new WeakMap()));
  const cached = byTarget.get(record);
  if (cached) return cached;
  const body = reader.readEntry(edit) as { replacement?: { content?: unknown } | null };
  const replacement = body.replacement?.content;
  const content =
    (role === "assistant" || role === "toolResult") && typeof replacement === "string"
      ? [{ type: "text", text: replacement }]
      : replacement;
  const message: Record<string, unknown> = { role, content };
  if (role === "toolResult" && record.fileOps) {
    // nestedCalls are not part of `content`: an edit keeps them.
    const result = { tokens: estimateTokens(message), chars: messageChars(message), fileOps: record.fileOps };
    byTarget.set(record, result);
    return result;
  }
  const chars = messageChars(message);
  const result = { tokens: Math.ceil(totalChars(chars) / 4), chars, fileOps: fileOpsOfMessage(message) };
  byTarget.set(record, result);
  return result;
}

function emptyChars(): CharBreakdown {
  return { text: 0, thinking: 0, toolCalls: 0, images: 0, tools: 0 };
}

/** System message included, pi's `estimateTokens` per message. */
export function entryMessageTokens(entry: ProjectedEntry, reader: BodyReader): number {
  if (entry.roles.length === 0) return 0;
  let tokens = 0;
  if (entry.roles[0] === "system") tokens += entry.record.systemTokens;
  if (entry.roles.length > 1 || entry.roles[0] !== "system") tokens += contribution(entry, reader).tokens;
  return tokens;
}

/** pi's `getAssistantUsage`: a projected assistant (not aborted/error) with usage > 0. */
export function hasValidUsage(entry: ProjectedEntry): boolean {
  return entry.roles.length > 0 && hasTrustedUsage(entry.record);
}

/** pi's `estimateContextTokens` validity rule: an assistant message, not aborted/error, with usage > 0. */
export function hasTrustedUsage(r: EntryRecord): boolean {
  return (
    r.type === "message" &&
    r.role === "assistant" &&
    r.stopReason !== "aborted" &&
    r.stopReason !== "error" &&
    r.usageTokens > 0
  );
}

/** pi's `estimateContextTokens`: last valid usage + estimates of everything after it (or of all). */
export function estimateContextTokens(projection: Projection, reader: BodyReader): ContextEstimate {
  const entries = projection.entries;
  let usageAt = -1;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (hasValidUsage(entries[i]!)) {
      usageAt = i;
      break;
    }
  }
  if (usageAt < 0) {
    let estimated = 0;
    for (const entry of entries) estimated += entryMessageTokens(entry, reader);
    return {
      tokens: estimated,
      usageTokens: 0,
      trailingTokens: estimated,
      lastUsageIndex: null,
      lastUsageEntryId: null,
    };
  }
  const usageEntry = entries[usageAt]!;
  const usageTokens = usageEntry.record.usageTokens;
  let trailingTokens = 0;
  for (let i = usageAt + 1; i < entries.length; i++) trailingTokens += entryMessageTokens(entries[i]!, reader);
  return {
    tokens: usageTokens + trailingTokens,
    usageTokens,
    trailingTokens,
    lastUsageIndex: usageEntry.firstMessageIndex,
    lastUsageEntryId: usageEntry.record.id,
  };
}

/** pi-ai's `getCurrentSystemMessage` replay: texts joined, `sections` patched by name (`null` deletes). */
export class SystemReplay {
  private content: string[] = [];
  private sections = new Map<string, string>();
  private tools = new Map<unknown, unknown>();
  private timestamp: number | undefined;

  /** A compaction's context starts again from its checkpoint. */
  reset(): void {
    this.content = [];
    this.sections = new Map();
    this.tools = new Map();
    this.timestamp = undefined;
  }

  apply(message: SystemMessage): void {
    this.timestamp ??= message.timestamp;
    const text = contentText(message.content);
    if (text.length > 0) this.content.push(text);
    const patch = message.sections;
    if (patch && typeof patch === "object") {
      for (const [name, value] of Object.entries(patch)) {
        if (value === null) this.sections.delete(name);
        else this.sections.set(name, value);
      }
    }
    for (const tool of asArray(message.toolsRemoved)) this.tools.delete((tool as { name?: unknown } | null)?.name);
    for (const tool of asArray(message.toolsAdded)) this.tools.set((tool as { name?: unknown } | null)?.name, tool);
  }

  /** Undefined when no system message came and there is no tool. */
  message(): SystemMessage | undefined {
    if (this.timestamp === undefined && this.tools.size === 0) return undefined;
    const replayed: SystemMessage = {
      role: "system",
      content: this.content.join("\n\n"),
      timestamp: this.timestamp ?? 0,
    };
    if (this.sections.size > 0) replayed.sections = Object.fromEntries(this.sections);
    if (this.tools.size > 0) replayed.toolsAdded = [...this.tools.values()];
    return replayed;
  }
}

/** pi-ai's `getCurrentSystemMessage`; undefined without system message and tools. */
export function currentSystemMessage(projection: Projection): SystemMessage | undefined {
  const replay = new SystemReplay();
  for (const entry of projection.entries) {
    if (entry.roles[0] !== "system") continue;
    const message = entry.record.system;
    if (message) replay.apply(message);
  }
  return replay.message();
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** pi-ai `contentText(content)`: a string, or the text blocks joined with `\n`. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text")
    .map((b) => String((b as { text?: unknown }).text))
    .join("\n");
}

/**
 * pi's `estimateProjectedContextTokens` (footer and threshold): usage only if after the latest
 * `context_edit` or `compaction` on the path, else the pure estimate.
 */
export function estimateProjectedContextTokens(projection: Projection, reader: BodyReader): ContextEstimate {
  const estimate = estimateContextTokens(projection, reader);
  if (estimate.lastUsageEntryId !== null) {
    const path = projection.path;
    const usageEntryIndex = path.findIndex((e) => e.id === estimate.lastUsageEntryId);
    let latestInvalidating = -1;
    for (let i = path.length - 1; i >= 0; i--) {
      const type = path[i]!.type;
      if (type === "context_edit" || type === "compaction") {
        latestInvalidating = i;
        break;
      }
    }
    if (usageEntryIndex > latestInvalidating) return estimate;
  }
  const tokens = estimatePureContextTokens(projection, reader);
  return { tokens, usageTokens: 0, trailingTokens: tokens, lastUsageIndex: null, lastUsageEntryId: null };
}

/** Replayed system message + Σ non-system estimates: what pi shows after an edit or compaction until it answers. */
export function estimatePureContextTokens(projection: Projection, reader: BodyReader): number {
  const system = currentSystemMessage(projection);
  let tokens = system ? estimateTokens(system) : 0;
  for (const entry of projection.entries) {
    if (entry.roles.length === 0) continue;
    if (entry.roles.length === 1 && entry.roles[0] === "system") continue;
    tokens += contribution(entry, reader).tokens;
  }
  return tokens;
}

/** `tokens`/`percent` are null right after a compaction (footer `?`). */
export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** pi's `getContextUsage()`; undefined when the window is unknown or ≤ 0 (pi's footer shows `0.0%`). */
export function contextUsage(
  projection: Projection,
  contextWindow: number | undefined,
  reader: BodyReader,
): ContextUsage | undefined {
  if (!contextWindow || contextWindow <= 0) return undefined;
  if (isUsageUnknown(projection)) return { tokens: null, contextWindow, percent: null };
  const tokens = estimateProjectedContextTokens(projection, reader).tokens;
  return { tokens, contextWindow, percent: (tokens / contextWindow) * 100 };
}

/** pi shows `?`: no projected assistant with valid usage after the path's compaction. */
export function isUsageUnknown(projection: Projection): boolean {
  const compaction = projection.compaction;
  if (!compaction) return false;
  // Every path entry after the compaction is a context entry, in order, at the end of the list.
  const path = projection.path;
  const compactionIndex = path.lastIndexOf(compaction);
  const after = path.length - 1 - compactionIndex;
  const entries = projection.entries;
  for (let i = entries.length - after; i < entries.length; i++) if (i >= 0 && hasValidUsage(entries[i]!)) return false;
  return true;
}

export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

/** pi's `shouldCompact`: `enabled && contextTokens > contextWindow - reserveTokens` (strict). */
export function shouldCompact(
  contextTokens: number,
  contextWindow: number,
  settings: Pick<CompactionSettings, "enabled" | "reserveTokens">,
): boolean {
  if (!settings.enabled) return false;
  return contextTokens > contextWindow - settings.reserveTokens;
}
