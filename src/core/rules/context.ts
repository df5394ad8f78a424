/**
 * Compaction-aware model context, as pi builds it for a leaf.
 *
 * Source: pi 1.6.0 `dist/core/session-manager.js` — `buildContextEntries` (latest compaction on
 * the path, kept range from `firstKeptEntryId` skipping system messages, everything after the
 * compaction), `buildSessionProjection` (latest `context_edit` per target among the context
 * entries; `replacement: null` omits; only the compaction at index 0 contributes) and
 * `getSessionContextSettings` (model and thinking level from the path).
 */

import { entryRoles, type EntryRecord } from "../read/entries";
import { getPath, type EntryIndex, type PathResult } from "./tree";
import type { MessageRole } from "../types";

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
    else if (e.type === "message" && e.role === "assistant")
      model = { provider: e.provider as string, modelId: e.model as string };
  }
  return { model, thinkingLevel };
}

/**
 * The full projection of a leaf (pi's `buildSessionProjection(entries, leafId)`).
 * @param leafId the leaf; `undefined` → the file's leaf (last entry); `null` → empty.
 */
export function buildProjection(index: EntryIndex & { leafId: string | null }, leafId?: string | null): Projection {
  const leaf = leafId === undefined ? index.leafId : leafId;
  // Projections are immutable: reuse the last one while the session is unchanged (the gauge, the
  // compaction preview and the panel all ask for the same leaf after every change), and extend it
  // when entries were only appended below the previous leaf.
  const duplicates = (index as { duplicateIds?: number }).duplicateIds ?? 0;
  const state = `${index.records.length}:${index.byId.size}:${duplicates}:${(index as { size?: number }).size ?? ""}:${index.records[index.records.length - 1]?.id ?? ""}`;
  const memo = projectionMemo.get(index);
  if (memo && memo.state === state && memo.leaf === leaf) return memo.projection;
  let projection: Projection | undefined;
  if (memo && leaf !== null && memo.duplicates === duplicates && memo.records <= index.records.length) {
    projection = extendProjection(index, memo, leaf);
  }
  projection ??= computeProjection(index, leaf);
  projectionMemo.set(index, {
    state,
    leaf,
    projection,
    duplicates,
    records: index.records.length,
    editTargets: editTargetsOf(projection),
  });
  return projection;
}

interface ProjectionMemo {
  state: string;
  leaf: string | null;
  projection: Projection;
  duplicates: number;
  records: number;
  editTargets: Set<string>;
}

const projectionMemo = new WeakMap<object, ProjectionMemo>();

function editTargetsOf(projection: Projection): Set<string> {
  const targets = new Set<string>();
  for (const e of projection.entries)
    if (e.record.type === "context_edit" && e.record.targetId !== undefined) targets.add(e.record.targetId);
  return targets;
}

/**
 * The projection of `leaf` from the previous one when `leaf` descends from the previous leaf
 * through entries appended since, none of which is a compaction or a context edit (those change
 * what earlier entries contribute). Returns undefined when a full computation is needed.
 */
function extendProjection(index: EntryIndex, memo: ProjectionMemo, leaf: string): Projection | undefined {
  const old = memo.projection;
  if (old.leafId === null || old.pathInfo.cycleAt) return undefined;
  const oldLeaf = old.path[old.path.length - 1];
  const suffix: EntryRecord[] = [];
  let current = index.byId.get(leaf);
  const maxSteps = index.records.length - memo.records;
  while (current && current !== oldLeaf) {
    if (
      suffix.length >= maxSteps ||
      current.type === "compaction" ||
      current.type === "context_edit" ||
      memo.editTargets.has(current.id)
    )
      return undefined;
    suffix.push(current);
    current = current.parentId ? index.byId.get(current.parentId) : undefined;
  }
  if (current !== oldLeaf) return undefined;
  suffix.reverse();
  const path = old.path.concat(suffix);
  const { projected, messageCount } = projectEntries(suffix);
  const entries = old.entries.concat(
    projected.map((e) => ({ ...e, firstMessageIndex: e.firstMessageIndex + old.messageCount })),
  );
  let model = old.model;
  let thinkingLevel = old.thinkingLevel;
  for (const e of suffix) {
    if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel as string;
    else if (e.type === "model_change") model = { provider: e.provider as string, modelId: e.modelId as string };
    else if (e.type === "message" && e.role === "assistant")
      model = { provider: e.provider as string, modelId: e.model as string };
  }
  const projection: Projection = {
    leafId: leaf,
    path,
    pathInfo: old.pathInfo,
    entries,
    messageCount: old.messageCount + messageCount,
    model,
    thinkingLevel,
  };
  if (old.compaction) projection.compaction = old.compaction;
  return projection;
}

function computeProjection(index: EntryIndex & { leafId: string | null }, leaf: string | null): Projection {
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
    if (e.type === "message" && e.role === "assistant" && e.api !== "pi-virtual")
      return { provider: e.provider as string, modelId: e.model as string };
  }
  return null;
}
