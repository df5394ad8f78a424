/**
 * Compaction-aware model context, as pi builds it for a leaf.
 *
 * Source: pi 1.6.0 `dist/core/session-manager.js` — `buildContextEntries` (latest compaction on
 * the path, kept range from `firstKeptEntryId` skipping system messages, everything after the
 * compaction), `buildSessionProjection` (latest `context_edit` per target among the context
 * entries; `replacement: null` omits; only the compaction at index 0 contributes) and
 * `getSessionContextSettings` (model and thinking level from the path).
 */

import { entryRoles, type EntryRecord } from "./entries";
import { getPath, type EntryIndex, type PathResult } from "./tree";
import type { MessageRole } from "./types";

/** One context entry with what it contributes after context edits. */
export interface ProjectedEntry {
  record: EntryRecord;
  /** The latest `context_edit` targeting this entry among the context entries, if any. */
  edit?: EntryRecord;
  /** Roles of the messages it contributes (empty when omitted, or an older compaction). */
  roles: MessageRole[];
  /** Index of its first message in {@link Projection.messageCount} order. */
  firstMessageIndex: number;
}

/** The projection of a leaf: pi's `buildSessionProjection` without message bodies. */
export interface Projection {
  leafId: string | null;
  /** Raw path root → leaf (pi's `getBranch()`). */
  path: EntryRecord[];
  pathInfo: Omit<PathResult, "path">;
  /** The latest compaction on the path, if any. */
  compaction?: EntryRecord;
  /** Context entries with their edited contributions. */
  entries: ProjectedEntry[];
  /** Total number of messages (`projection.messages.length` in pi). */
  messageCount: number;
  /** `{provider, modelId}` from the last `model_change` or assistant message on the path. */
  model: { provider: string; modelId: string } | null;
  /** From the last `thinking_level_change` on the path (default `"off"`). */
  thinkingLevel: string;
}

/**
 * pi's `buildContextEntries(entries, leafId)`: the entries that make up the context of a path.
 * @returns the context entries and the latest compaction on the path.
 */
export function contextEntries(path: readonly EntryRecord[]): { entries: EntryRecord[]; compaction?: EntryRecord } {
  let compactionIndex = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.type === "compaction") {
      compactionIndex = i;
      break;
    }
  }
  if (compactionIndex < 0) return { entries: [...path] };
  const compaction = path[compactionIndex]!;
  const entries: EntryRecord[] = [compaction];
  let foundFirstKept = false;
  for (let i = 0; i < compactionIndex; i++) {
    const entry = path[i]!;
    if (entry.id === compaction.firstKeptEntryId) foundFirstKept = true;
    if (foundFirstKept && !(entry.type === "message" && entry.role === "system")) entries.push(entry);
  }
  for (let i = compactionIndex + 1; i < path.length; i++) entries.push(path[i]!);
  return { entries, compaction };
}

/**
 * Project the context entries of a path: apply the latest `context_edit` per target
 * (`replacement: null` removes the entry's messages) and keep only the newest compaction's
 * contribution.
 */
export function projectEntries(entries: readonly EntryRecord[]): { projected: ProjectedEntry[]; messageCount: number } {
  const edits = new Map<string, EntryRecord>();
  for (const e of entries) if (e.type === "context_edit" && e.targetId !== undefined) edits.set(e.targetId, e);
  const projected: ProjectedEntry[] = [];
  let messageCount = 0;
  entries.forEach((record, index) => {
    const edit = edits.get(record.id);
    let roles: MessageRole[];
    if (record.type === "compaction" && index > 0) roles = [];
    else if (edit?.replacementIsNull) roles = [];
    else roles = entryRoles(record);
    const item: ProjectedEntry = { record, roles, firstMessageIndex: messageCount };
    if (edit) item.edit = edit;
    projected.push(item);
    messageCount += roles.length;
  });
  return { projected, messageCount };
}

/** Model and thinking level of a path (pi's `getSessionContextSettings`). */
export function pathSettings(path: readonly EntryRecord[]): Pick<Projection, "model" | "thinkingLevel"> {
  let thinkingLevel = "off";
  let model: Projection["model"] = null;
  for (const e of path) {
    if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel as string;
    else if (e.type === "model_change") model = { provider: e.provider as string, modelId: e.modelId as string };
    else if (e.type === "message" && e.role === "assistant") model = { provider: e.provider as string, modelId: e.model as string };
  }
  return { model, thinkingLevel };
}

/**
 * The full projection of a leaf (pi's `buildSessionProjection(entries, leafId)`).
 * @param leafId the leaf; `undefined` → the file's leaf (last entry); `null` → empty.
 */
export function buildProjection(index: EntryIndex & { leafId: string | null }, leafId?: string | null): Projection {
  const leaf = leafId === undefined ? index.leafId : leafId;
  const { path, ...pathInfo } = getPath(index, leaf);
  const { entries, compaction } = contextEntries(path);
  const { projected, messageCount } = projectEntries(entries);
  const projection: Projection = {
    leafId: path.length > 0 ? path[path.length - 1]!.id : null,
    path,
    pathInfo,
    entries: projected,
    messageCount,
    ...pathSettings(path),
  };
  if (compaction) projection.compaction = compaction;
  return projection;
}

/**
 * The model pi resumes a session with (pi's `getBranchSelection`): scanning leaf → root, the first
 * `model_change`, or the first assistant whose model is not virtual.
 * @returns `{provider, modelId}` or null; the caller falls back to settings `defaultProvider/defaultModel`.
 */
export function modelSelection(path: readonly EntryRecord[]): { provider: string; modelId: string } | null {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.type === "model_change") return { provider: e.provider as string, modelId: e.modelId as string };
    if (e.type === "message" && e.role === "assistant" && e.api !== "pi-virtual") return { provider: e.provider as string, modelId: e.model as string };
  }
  return null;
}
