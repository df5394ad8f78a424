/**
 * Taking back the last batch of context edits (pi has no "unedit"): `leaf` moves pi's leaf before the
 * batch with a `pi-context/leaf` marker when nothing came after it (pi then has its old context and
 * token count); `retarget` appends edits restoring what each target showed. Proved against pi by
 * `test/conformance/undo-edit.test.ts`.
 */

import { pairingSafeOrder } from "./batchOrder";
import { buildLeafMarkerEntry } from "./branch";
import { buildProjection, type Projection } from "./context";
import { chainContextEdits, draftLineBytes, editableRole, type ContextEditDraft } from "./contextEdit";
import { entryToContextMessages } from "./serialize";
import { estimateProjectedContextTokens, type ContextEstimate } from "./tokens";
import { withAppended, type SessionView } from "../read/overlay";
import type { EntryRecord } from "../read/entries";
import type { SessionEntry } from "../types";
import * as l10n from "@vscode/l10n";

export type UndoWay = "leaf" | "retarget";

export interface UndoTarget {
  targetId: string;
  now: "omit" | "replace";
  /** Original content, or the earlier edit's removal or replacement. */
  back: "original" | "omit" | "replace";
}

export interface UndoPreparation {
  editIds: string[];
  /** The branch's leaf before the batch. */
  beforeId: string | null;
  leafId: string | null;
  way: UndoWay;
  targets: UndoTarget[];
  /** `retarget`: the drafts to append (in batch order); `leaf`: none. */
  drafts: ContextEditDraft[];
  /** With newlines; ids of 8 characters. */
  bytes: number;
  /** Bytes the other way would append (null when it is not possible). */
  otherBytes: number | null;
  restoreBytes: number;
  tokensBefore: ContextEstimate;
  tokensAfter: ContextEstimate;
  /** An in-memory overlay. */
  projectionAfter: Projection;
}

export interface NothingToUndo {
  reason: string;
}

export interface UndoOptions {
  /** Default: the last batch on the branch. */
  editIds?: readonly string[];
  leafId?: string | null;
  /** Use new context edits even when the leaf could move (a running pi appends them). */
  retargetOnly?: boolean;
}

const PLACEHOLDER_ID = "00000000";
const PLACEHOLDER_TIME = "2026-01-01T00:00:00.000Z";

/** The given edits, else the branch's last `context_edit` and those right before it with the same timestamp. */
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
 * Plans taking back the last batch, or says why not (no edit, a compaction after it, a target gone).
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

  // shows are ordered pairing-safe (an assistant before its tool results), like every batch (`batchOrder.ts`)
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

export function isNothingToUndo(p: UndoPreparation | NothingToUndo): p is NothingToUndo {
  return "reason" in p;
}

/** With newlines, 8-character ids, one timestamp. */
function linesBytes(drafts: readonly ContextEditDraft[], leafId: string | null): number {
  return drafts.reduce((bytes, d, i) => bytes + draftLineBytes(d, i, leafId), 0);
}

function placeholder(session: SessionView, i: number): string {
  let id = `~undo-${i}`;
  while (session.byId.has(id)) id += "~";
  return id;
}
