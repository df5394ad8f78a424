/**
 * The compaction-aware model context pi builds for a leaf (pi 1.6.0 `session-manager.js`
 * `buildContextEntries`, `buildSessionProjection`, `getSessionContextSettings`).
 */

import { entryRoles, type EntryRecord } from "../read/entries";
import { getPath, type EntryIndex, type PathResult } from "./tree";
import type { MessageRole } from "../types";

export interface ProjectedEntry {
  record: EntryRecord;
  /** The latest `context_edit` targeting this entry among the context entries. */
  edit?: EntryRecord;
  /** Empty when omitted, or an older compaction. */
  roles: MessageRole[];
  firstMessageIndex: number;
}

/** pi's `buildSessionProjection` without message bodies. */
export interface Projection {
  leafId: string | null;
  /** pi's `getBranch()`. */
  path: EntryRecord[];
  pathInfo: Omit<PathResult, "path">;
  compaction?: EntryRecord;
  entries: ProjectedEntry[];
  messageCount: number;
  /** From the last `model_change` or assistant message on the path. */
  model: { provider: string; modelId: string } | null;
  /** From the last `thinking_level_change` on the path (default `"off"`). */
  thinkingLevel: string;
}

/** pi's `buildContextEntries`: the latest compaction's kept range (system messages skipped) and what follows. */
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

/** Applies the latest `context_edit` per target (`null` omits) and keeps only the newest compaction's contribution. */
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

/** pi's `getSessionContextSettings`. */
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

/** pi's `buildSessionProjection(entries, leafId)`; `undefined` → the file's leaf, `null` → empty. */
export function buildProjection(index: EntryIndex & { leafId: string | null }, leafId?: string | null): Projection {
  const leaf = leafId === undefined ? index.leafId : leafId;
  // Projections are immutable: reuse the last one while unchanged (every surface asks after each change)
  // and extend it when entries were only appended below the previous leaf.
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

/** Undefined unless `leaf` descends from the previous leaf through appends with no compaction or context edit. */
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
 * pi's `getBranchSelection`: leaf → root, the first `model_change` or non-virtual assistant model;
 * null means the caller falls back to settings `defaultProvider/defaultModel`.
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
