/**
 * Taking back the last batch of context edits. pi has no "unedit" (the latest `context_edit` of a
 * target among the context entries wins), so a batch is taken back one of two ways:
 *
 * - `leaf` — the batch ends the branch (nothing came after it): a `pi-context/leaf` marker parented
 *   on the entry before the batch. pi resumes at the file's last line, so its branch no longer
 *   holds the edits (they stay in the file, on a side branch): pi loads exactly the context it had
 *   before them, its usage-based token count included. One short line.
 * - `retarget` — something came after the batch (pi answered, another edit), or a running pi must
 *   append it: one new `context_edit` per target with what the target showed before the batch (its
 *   earlier edit's replacement, or its original content). pi sends the same messages as before;
 *   it counts from chars/4 until its next answer (the branch holds context edits).
 *
 * Both are proved against pi 1.6.0 by `test/conformance/undo-edit.test.ts` (pi's projected
 * messages after the undo equal those before the batch; `leaf` also its token estimate).
 * Pure: nothing is written (see `flows/undoEdit.ts`).
 */

import { pairingSafeOrder } from "./batchOrder";
import { buildLeafMarkerEntry } from "./branch";
import { buildProjection, type Projection } from "./context";
import { buildContextEditEntry, chainContextEdits, editableRole, type ContextEditDraft } from "./contextEdit";
import { entryToContextMessages } from "./serialize";
import { estimateProjectedContextTokens, type ContextEstimate } from "./tokens";
import { withAppended, type SessionView } from "../read/overlay";
import type { EntryRecord } from "../read/entries";
import type { SessionEntry } from "../types";
import * as l10n from "@vscode/l10n";

/** How a batch is taken back (see the file comment). */
export type UndoWay = "leaf" | "retarget";

/** One target of the batch: what it shows now and what it shows again after the undo. */
export interface UndoTarget {
  targetId: string;
  /** Now (the batch's edit): removed or replaced. */
  now: "omit" | "replace";
  /** After the undo: its original content, or the earlier edit's removal or replacement. */
  back: "original" | "omit" | "replace";
}

/** The plan of {@link prepareUndo}. */
export interface UndoPreparation {
  /** The batch's `context_edit` ids, in file order. */
  editIds: string[];
  /** The entry the batch hangs off (the branch's leaf before it). */
  beforeId: string | null;
  /** The leaf the plan was made at. */
  leafId: string | null;
  way: UndoWay;
  targets: UndoTarget[];
  /** `retarget`: the drafts to append (in batch order); `leaf`: none. */
  drafts: ContextEditDraft[];
  /** Bytes the undo appends (with newlines; ids of 8 characters). */
  bytes: number;
  /** Bytes the other way would append (`retarget` when `leaf` is taken; null when it is not possible). */
  otherBytes: number | null;
  /** Bytes a *Restore original* of the same targets would append. */
  restoreBytes: number;
  /** pi's projected estimate now and after the undo. */
  tokensBefore: ContextEstimate;
  tokensAfter: ContextEstimate;
  /** The projection after the undo (an in-memory overlay). */
  projectionAfter: Projection;
}

/** Why there is nothing to undo. */
export interface NothingToUndo {
  reason: string;
}

/** Options of {@link prepareUndo}. */
export interface UndoOptions {
  /** The batch's `context_edit` ids (what a trim just wrote); default: the last batch on the branch. */
  editIds?: readonly string[];
  /** Plan at this leaf (a running pi's) instead of the file's. */
  leafId?: string | null;
  /** Take it back with new context edits even when the leaf could move (a running pi appends them). */
  retargetOnly?: boolean;
}

const PLACEHOLDER_ID = "00000000";
const PLACEHOLDER_TIME = "2026-01-01T00:00:00.000Z";

/**
 * The batch to take back on the branch of `leafId`: the given edits (a consecutive chain of
 * `context_edit` entries on the branch), else the last `context_edit` on the branch and the ones
 * written right before it with the same timestamp (one append of ours).
 */
function findBatch(
  path: readonly EntryRecord[],
  editIds: readonly string[] | undefined,
): EntryRecord[] | NothingToUndo {
  if (editIds && editIds.length > 0) {
    const at = path.findIndex((r) => r.id === editIds[0]);
    const batch = at < 0 ? [] : path.slice(at, at + editIds.length);
    if (batch.length !== editIds.length || batch.some((r, i) => r.id !== editIds[i] || r.type !== "context_edit"))
      return { reason: l10n.t("The context edit is no longer on the session's current branch.") };
    return batch;
  }
  let end = path.length - 1;
  while (end >= 0 && path[end]!.type !== "context_edit") end--;
  if (end < 0) return { reason: l10n.t("The current branch has no context edit.") };
  let start = end;
  while (start > 0 && path[start - 1]!.type === "context_edit" && path[start - 1]!.timestamp === path[end]!.timestamp)
    start--;
  return path.slice(start, end + 1);
}

/**
 * Plan taking back the last batch of context edits (see the file comment for the two ways).
 * @returns the plan, or why there is nothing to undo (no edit on the branch, a compaction after it,
 *   a target no longer in the context).
 * @throws {StaleSessionError} (from the reader) when a needed body changed on disk.
 */
export function prepareUndo(session: SessionView, options: UndoOptions = {}): UndoPreparation | NothingToUndo {
  const leaf =
    options.leafId !== undefined && (options.leafId === null || session.byId.has(options.leafId))
      ? options.leafId
      : session.leafId;
  const now = buildProjection(session, leaf);
  const path = now.path;
  const batch = findBatch(path, options.editIds);
  if (!Array.isArray(batch)) return batch;
  const first = batch[0]!;
  const last = batch[batch.length - 1]!;
  const after = path.slice(path.indexOf(last) + 1);
  if (after.some((r) => r.type === "compaction"))
    return {
      reason: l10n.t(
        "A compaction came after the last context edit: its items are summarized now, so taking the edit back would change nothing.",
      ),
    };
  const beforeId = first.parentId ?? null;
  const before = buildProjection(session, beforeId);
  const inBefore = new Map(before.entries.map((e) => [e.record.id, e]));
  const inNow = new Set(now.entries.map((e) => e.record.id));

  const targets: UndoTarget[] = [];
  const drafts: ContextEditDraft[] = [];
  const restores: ContextEditDraft[] = [];
  const seen = new Set<string>();
  for (const edit of [...batch].reverse()) {
    const targetId = edit.targetId;
    if (targetId === undefined || seen.has(targetId)) continue; // the batch's latest edit of a target counts
    seen.add(targetId);
    const target = inBefore.get(targetId);
    if (!target || !inNow.has(targetId))
      return { reason: l10n.t("Entry {0} is no longer in the context: the edit cannot be taken back.", targetId) };
    const original = (entryToContextMessages(session.readEntry(target.record))[0] as { content?: unknown } | undefined)
      ?.content;
    const restore: ContextEditDraft = {
      type: "context_edit",
      targetId,
      replacement: { content: original as NonNullable<ContextEditDraft["replacement"]>["content"] },
    };
    let draft: ContextEditDraft;
    let back: UndoTarget["back"];
    if (target.edit) {
      const earlier = session.readEntry(target.edit) as { replacement?: ContextEditDraft["replacement"] };
      draft = { type: "context_edit", targetId, replacement: earlier.replacement ?? null };
      back = draft.replacement === null ? "omit" : "replace";
    } else {
      if (typeof original !== "string" && !Array.isArray(original))
        return { reason: l10n.t("Entry {0} has no string or array content to restore.", targetId) };
      draft = restore;
      back = "original";
    }
    targets.unshift({ targetId, now: edit.replacementIsNull ? "omit" : "replace", back });
    drafts.unshift(draft);
    restores.unshift(restore);
  }

  // the edits that show items again are written so that every prefix is pairing-safe (an assistant
  // before its tool results), as every batch is (`batchOrder.ts`)
  const positions = new Map(before.entries.map((e, i) => [e.record.id, i]));
  const ordered = pairingSafeOrder(
    drafts.map((d) => ({
      draft: d,
      role: editableRole(inBefore.get(d.targetId)!.record) ?? "user",
      replacement: d.replacement,
      contextIndex: positions.get(d.targetId) ?? 0,
    })),
  );
  drafts.splice(0, drafts.length, ...ordered.map((o) => o.draft));
  targets.sort((a, b) => (positions.get(a.targetId) ?? 0) - (positions.get(b.targetId) ?? 0));
  const atLeaf = last.id === leaf;
  const way: UndoWay = atLeaf && !options.retargetOnly ? "leaf" : "retarget";
  const retargetBytes = linesBytes(drafts, leaf);
  const marker = buildLeafMarkerEntry({
    id: PLACEHOLDER_ID,
    parentId: beforeId,
    timestamp: PLACEHOLDER_TIME,
    targetId: beforeId ?? "root",
    fromId: leaf,
  });
  const planned: SessionEntry[] =
    way === "leaf"
      ? [{ ...marker, id: placeholder(session, 0) }]
      : chainContextEdits(drafts, {
          leafId: leaf,
          newId: (reserved) => placeholder(session, reserved.size),
          timestamp: PLACEHOLDER_TIME,
        });
  const view = withAppended(session, planned);
  const projectionAfter = buildProjection(view);
  return {
    editIds: batch.map((r) => r.id),
    beforeId,
    leafId: leaf,
    way,
    targets,
    drafts: way === "retarget" ? drafts : [],
    bytes: way === "leaf" ? Buffer.byteLength(JSON.stringify(marker)) + 1 : retargetBytes,
    otherBytes: way === "leaf" ? retargetBytes : null,
    restoreBytes: linesBytes(restores, leaf),
    tokensBefore: estimateProjectedContextTokens(now, session),
    tokensAfter: estimateProjectedContextTokens(projectionAfter, view),
    projectionAfter,
  };
}

/** True when {@link prepareUndo} found nothing to undo. */
export function isNothingToUndo(p: UndoPreparation | NothingToUndo): p is NothingToUndo {
  return "reason" in p;
}

/** The size of the lines for `drafts` chained at `leafId` (8-character ids, one timestamp), with newlines. */
function linesBytes(drafts: readonly ContextEditDraft[], leafId: string | null): number {
  let bytes = 0;
  drafts.forEach((d, i) => {
    const entry = buildContextEditEntry({
      id: PLACEHOLDER_ID,
      parentId: i === 0 ? leafId : PLACEHOLDER_ID,
      timestamp: PLACEHOLDER_TIME,
      targetId: d.targetId,
      replacement: d.replacement,
    });
    bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
  });
  return bytes;
}

/** An id for a planned entry that no entry of the session has. */
function placeholder(session: SessionView, i: number): string {
  let id = `~undo-${i}`;
  while (session.byId.has(id)) id += "~";
  return id;
}
