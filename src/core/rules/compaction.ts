/**
 * Compaction preparation exactly like pi's `prepareCompaction`, and the `CompactionEntry` pi writes.
 *
 * Source: pi 1.6.0 `dist/core/compaction/compaction.js` — `prepareCompaction`,
 * `findProjectedCutPoint` (the projected variant; the exported raw `findCutPoint` differs when
 * `context_edit`s exist), `isCutPointMessage`, `isTurnStartMessage`, `extractFileOperations`;
 * `SessionManager.appendCompaction` for the entry shape. Nothing is summarized here.
 */

import { buildProjection, type ProjectedEntry, type Projection } from "./context";
import { entryRoles, type EntryRecord } from "../read/entries";
import {
  addDetails,
  addFileOps,
  computeFileLists,
  countsFileOps,
  createFileOps,
  REFERENCE_RULES,
  type FileOps,
} from "./files";
import { compactionEstimateFailure, type EstimateFailure } from "./estimateFailure";
import type { PiRules } from "../pi/versions";
import {
  contribution,
  currentSystemMessage,
  entryMessageTokens,
  estimateProjectedContextTokens,
  type BodyReader,
  type CompactionSettings,
} from "./tokens";
import { estimateTokens } from "../read/estimate";
import type { EntryIndex } from "./tree";
import type { CompactionEntry, MessageRole, SystemMessage, Usage } from "../types";

const CUT_POINT_ROLES: ReadonlySet<MessageRole> = new Set([
  "user",
  "assistant",
  "bashExecution",
  "custom",
  "branchSummary",
  "compactionSummary",
]);
const TURN_START_ROLES: ReadonlySet<MessageRole> = new Set([
  "user",
  "bashExecution",
  "custom",
  "branchSummary",
  "compactionSummary",
]);

/** pi's `CutPointResult` (indices into the projected entries). */
export interface CutPoint {
  firstKeptEntryIndex: number;
  turnStartIndex: number;
  isSplitTurn: boolean;
}

/** Why pi would not compact. */
export type NothingToCompact = "already-compacted" | "nothing-to-compact" | "no-kept-entry-id";

/** Human-readable reasons, in pi's words where pi has them. */
export const NOTHING_TO_COMPACT_MESSAGES: Record<NothingToCompact, string> = {
  "already-compacted": "Already compacted: the leaf is a compaction entry.",
  "nothing-to-compact": "Nothing to compact (session too small).",
  "no-kept-entry-id": "The first kept entry has no id (the session may need migration).",
};

/** Why {@link prepareCompaction} prepared nothing, and where pi's own preparation fails before saying so. */
export interface NotPrepared {
  reason: NothingToCompact;
  /** pi's `prepareCompaction` throws (or counts `NaN`) before it finds nothing to compact. */
  estimateFailure?: EstimateFailure;
}

/** The result of {@link prepareCompaction}: everything pi's `compact()` receives, plus what a preview shows. */
export interface CompactionPreparation {
  /** Id of the first entry kept after compaction (may be a label/model change; see pi's backward scan). */
  firstKeptEntryId: string;
  /** Projected entries whose messages are summarized (history part). */
  messagesToSummarize: ProjectedEntry[];
  /** Projected entries of the split turn's prefix (summarized separately), empty when not split. */
  turnPrefixMessages: ProjectedEntry[];
  isSplitTurn: boolean;
  /** Id of the turn's first entry when the turn is split. */
  turnStartEntryId?: string;
  /** pi's `estimateProjectedContextTokens(...).tokens` at the leaf. */
  tokensBefore: number;
  /** Summary of the previous compaction whose kept range is re-summarized. */
  previousSummary?: string;
  previousCompactionId?: string;
  fileOps: FileOps;
  readFiles: string[];
  modifiedFiles: string[];
  settings: CompactionSettings;
  /** Projected entries kept verbatim after the compaction (from the cut to the leaf). */
  keptEntries: ProjectedEntry[];
  /** Σ estimated tokens of the kept entries' non-system messages. */
  keptTokens: number;
  /** Σ estimated tokens of the summarized messages (history + turn prefix). */
  summarizedTokens: number;
  /** `estimateTokens` of the system checkpoint the compaction entry will carry (0 without one). */
  checkpointTokens: number;
  /** The leaf the compaction would be appended to. */
  leafId: string;
  /** The projection at that leaf. */
  projection: Projection;
  /**
   * Where pi's own `prepareCompaction` fails here (its `estimateTokens` throws or counts `NaN`, see
   * `estimateFailure.ts`): pi's `/compact` gets no `tokensBefore` (or no cut point). Absent: it works.
   */
  estimateFailure?: EstimateFailure;
}

/** Roles of the messages an entry contributes to compaction input (no system messages; compactions none). */
function summarizedRoles(entry: ProjectedEntry): MessageRole[] {
  if (entry.record.type === "compaction") return [];
  return entry.roles.filter((r) => r !== "system");
}

function isCutPointEntry(entry: ProjectedEntry): boolean {
  return entry.record.type !== "compaction" && entry.roles.some((r) => CUT_POINT_ROLES.has(r));
}

function isTurnStartEntry(entry: ProjectedEntry): boolean {
  return entry.record.type !== "compaction" && entry.roles.some((r) => TURN_START_ROLES.has(r));
}

/**
 * pi's private `findProjectedCutPoint(entries, startIndex, endIndex, keepRecentTokens)` over projected
 * entries: walk back from the newest summing estimates until `keepRecentTokens` is reached, cut at
 * the nearest valid cut point at or after it (the last one if none), advance past a closed
 * overflow-recovery suffix, pull in directly preceding message-less entries, and detect a split turn.
 */
export function findCutPoint(
  entries: readonly ProjectedEntry[],
  startIndex: number,
  endIndex: number,
  keepRecentTokens: number,
  reader: BodyReader,
): CutPoint {
  const cutPoints: number[] = [];
  for (let i = startIndex; i < endIndex; i++) if (isCutPointEntry(entries[i]!)) cutPoints.push(i);
  if (cutPoints.length === 0) return { firstKeptEntryIndex: startIndex, turnStartIndex: -1, isSplitTurn: false };

  let accumulated = 0;
  let exceededBudget = false;
  let cutIndex = cutPoints[0]!;
  for (let i = endIndex - 1; i >= startIndex; i--) {
    const tokens = entryMessageTokens(entries[i]!, reader);
    if (tokens === 0) continue;
    accumulated += tokens;
    if (accumulated >= keepRecentTokens) {
      exceededBudget = true;
      cutIndex = cutPoints.find((c) => c >= i) ?? cutPoints[cutPoints.length - 1]!;
      break;
    }
  }

  // A recovery attempt and its omission edits are context-invisible after the last visible input.
  const suffix = entries.slice(cutIndex + 1, endIndex);
  const isIntrinsicallyVisible = (e: ProjectedEntry): boolean =>
    e.record.type !== "context_edit" && entryRoles(e.record).length > 0;
  const isOmitted = (e: ProjectedEntry): boolean => isIntrinsicallyVisible(e) && e.roles.length === 0;
  const omittedSuffixIds = new Set(suffix.filter(isOmitted).map((e) => e.record.id));
  const hasExternalReplacement = suffix.some(
    (e) =>
      e.record.type === "context_edit" &&
      e.record.replacementIsNull === false &&
      !omittedSuffixIds.has(e.record.targetId as string),
  );
  const isRecoveryOmissionSuffix =
    exceededBudget &&
    !hasExternalReplacement &&
    suffix.some((e) => e.record.type === "message" && e.record.role === "assistant" && isOmitted(e)) &&
    suffix.every((e) => e.record.type !== "compaction" && (!isIntrinsicallyVisible(e) || isOmitted(e)));
  if (isRecoveryOmissionSuffix) cutIndex++;

  while (cutIndex > startIndex) {
    const previous = entries[cutIndex - 1]!;
    if (previous.record.type === "compaction" || previous.roles.length > 0) break;
    cutIndex--;
  }

  const cutEntry = entries[cutIndex];
  const startsTurn = cutEntry !== undefined && isTurnStartEntry(cutEntry);
  let turnStartIndex = -1;
  if (!startsTurn) {
    for (let i = cutIndex; i >= startIndex; i--) {
      const e = entries[i];
      if (e && isTurnStartEntry(e)) {
        turnStartIndex = i;
        break;
      }
    }
  }
  return { firstKeptEntryIndex: cutIndex, turnStartIndex, isSplitTurn: !startsTurn && turnStartIndex !== -1 };
}

/**
 * pi's `prepareCompaction(pathEntries, settings)` for the path ending at `leafId`.
 * @param index the session (records + id map + its leaf).
 * @param leafId the leaf to compact from; default the file's leaf.
 * @param rules the pi version's switches (default the reference version's): tool results'
 *   `nestedCalls` count for the file lists from pi 0.99.
 * @returns the preparation, or the reason pi would not compact.
 */
export function prepareCompaction(
  index: EntryIndex & { leafId: string | null },
  settings: CompactionSettings,
  reader: BodyReader,
  leafId?: string | null,
  rules: Pick<PiRules, "nestedCallFileOps"> = REFERENCE_RULES,
): CompactionPreparation | NotPrepared {
  const start = compactionStart(index, leafId);
  if ("reason" in start) return start;
  const { projection, boundaryStart } = start;
  const cut = findCutPoint(
    projection.entries,
    boundaryStart,
    projection.entries.length,
    settings.keepRecentTokens,
    reader,
  );
  return preparationAt(start, cut, settings, reader, rules);
}

/** Why a chosen first kept entry cannot be pi's cut point. */
export type InvalidCutCode =
  /** Not an entry of the session. */
  | "unknown"
  /** Not on the branch that ends at the leaf. */
  | "off-branch"
  /** Before the latest compaction's kept range: already summarized. */
  | "summarized"
  /** A tool result: pi never cuts between a tool call and its result. */
  | "tool-result"
  /** An entry without a message of its own (label, model change, context edit, …). */
  | "no-message"
  /** Omitted by a context edit: pi sends no message for it. */
  | "omitted"
  /** A compaction entry. */
  | "compaction"
  /** A system message (pi's prompt state, never a cut point). */
  | "system";

/** A chosen first kept entry pi would not cut at, with the nearest entries it would. */
export interface InvalidCut {
  reason: "invalid-cut";
  code: InvalidCutCode;
  /** The entry asked for. */
  entryId: string;
  /** The nearest valid cut points of the context before and after the entry (ids, oldest first; 0–2). */
  nearest: string[];
}

/**
 * The ids of pi's valid cut points in the context at the leaf, oldest first: non-compaction entries
 * whose (edited) messages include a user, assistant, bash execution, custom, branch summary or
 * compaction summary message (pi's `isCutPointMessage` over the projection), from the latest
 * compaction's kept range on. The first one is never useful (nothing before it to summarize) but
 * is included: it is still a cut point.
 */
export function validCutPoints(index: EntryIndex & { leafId: string | null }, leafId?: string | null): string[] {
  const start = compactionStart(index, leafId);
  if ("reason" in start) return [];
  const entries = start.projection.entries;
  const ids: string[] = [];
  for (let i = start.boundaryStart; i < entries.length; i++)
    if (isCutPointEntry(entries[i]!)) ids.push(entries[i]!.record.id);
  return ids;
}

/**
 * pi's `prepareCompaction` with the cut at a chosen entry instead of where `keepRecentTokens`
 * puts it ("Compact up to here"): everything from the latest compaction's kept range up to the
 * entry is summarized (the previous summary passed along), the entry and everything after it are
 * kept verbatim. The chosen entry must be one of pi's valid cut points ({@link validCutPoints}), or
 * an entry without a message of its own directly before one (it names that cut point);
 * then pi's own rules apply unchanged: directly preceding message-less entries (labels, model
 * changes) are kept with it, an assistant mid-turn splits the turn (turn-prefix summary), the file
 * lists accumulate from the previous compaction's `details`, `tokensBefore` is pi's estimate at the
 * leaf. The entry written from it differs from pi's `/compact` only in its `firstKeptEntryId`.
 * @returns the preparation; the reason pi would not compact; or {@link InvalidCut} with the nearest
 *   valid cut points.
 */
export function prepareCompactionAt(
  index: EntryIndex & { leafId: string | null },
  settings: CompactionSettings,
  reader: BodyReader,
  keepFromId: string,
  options: { leafId?: string | null; rules?: Pick<PiRules, "nestedCallFileOps"> } = {},
): CompactionPreparation | NotPrepared | InvalidCut {
  const start = compactionStart(index, options.leafId);
  if ("reason" in start) return start;
  const { projection, boundaryStart } = start;
  const entries = projection.entries;
  const at = entries.findIndex((e) => e.record.id === keepFromId);
  const invalid = (code: InvalidCutCode): InvalidCut => ({
    reason: "invalid-cut",
    code,
    entryId: keepFromId,
    nearest: nearestCutPoints(projection, boundaryStart, keepFromId, at),
  });
  if (at < 0) {
    if (!index.byId.has(keepFromId)) return invalid("unknown");
    const onPath = projection.path.some((r) => r.id === keepFromId);
    return invalid(onPath ? "summarized" : "off-branch");
  }
  const entry = entries[at]!;
  if (at < boundaryStart || entry.record.type === "compaction")
    return invalid(at < boundaryStart ? "summarized" : "compaction");
  // a message-less entry (label, model change, omitted message…) right before a cut point is kept
  // with it by pi's own rule below, so it names that cut point
  let cutIndex = at;
  while (cutIndex < entries.length && entries[cutIndex]!.roles.length === 0) cutIndex++;
  if (cutIndex >= entries.length || !isCutPointEntry(entries[cutIndex]!)) {
    const intrinsic = entryRoles(entry.record);
    if (intrinsic.length === 0) return invalid("no-message");
    if (entry.roles.length === 0) return invalid("omitted");
    return invalid(intrinsic.includes("toolResult") ? "tool-result" : "system");
  }
  while (cutIndex > boundaryStart) {
    const previous = entries[cutIndex - 1]!;
    if (previous.record.type === "compaction" || previous.roles.length > 0) break;
    cutIndex--;
  }
  const startsTurn = isTurnStartEntry(entries[cutIndex]!);
  let turnStartIndex = -1;
  if (!startsTurn)
    for (let i = cutIndex; i >= boundaryStart; i--)
      if (isTurnStartEntry(entries[i]!)) {
        turnStartIndex = i;
        break;
      }
  const cut: CutPoint = {
    firstKeptEntryIndex: cutIndex,
    turnStartIndex,
    isSplitTurn: !startsTurn && turnStartIndex !== -1,
  };
  return preparationAt(start, cut, settings, reader, options.rules ?? REFERENCE_RULES);
}

/** True when {@link prepareCompactionAt} refused the chosen entry. */
export function isInvalidCut(result: object): result is InvalidCut {
  return (result as { reason?: unknown }).reason === "invalid-cut";
}

/** The valid cut points nearest to position `at` (or to the entry's place on the path when it is not in the context). */
function nearestCutPoints(projection: Projection, boundaryStart: number, id: string, at: number): string[] {
  const entries = projection.entries;
  let position = at;
  if (position < 0) {
    // not in the context: place it by its position on the path
    const pathIndex = projection.path.findIndex((r) => r.id === id);
    if (pathIndex < 0) return [];
    const pathPosition = new Map(projection.path.map((r, i) => [r.id, i]));
    position = entries.findIndex((e) => (pathPosition.get(e.record.id) ?? -1) > pathIndex);
    if (position < 0) position = entries.length;
  }
  let before: string | undefined;
  let after: string | undefined;
  for (let i = Math.min(position, entries.length) - 1; i >= boundaryStart; i--)
    if (isCutPointEntry(entries[i]!)) {
      before = entries[i]!.record.id;
      break;
    }
  for (let i = Math.max(position + 1, boundaryStart); i < entries.length; i++)
    if (isCutPointEntry(entries[i]!)) {
      after = entries[i]!.record.id;
      break;
    }
  return [before, after].filter((x): x is string => x !== undefined);
}

/** The projection at the leaf and where the summarized range starts (after the latest compaction). */
interface CompactionStart {
  projection: Projection;
  boundaryStart: number;
  previousIndex: number;
}

function compactionStart(
  index: EntryIndex & { leafId: string | null },
  leafId: string | null | undefined,
): CompactionStart | { reason: NothingToCompact } {
  const projection = buildProjection(index, leafId);
  const path = projection.path;
  if (path.length === 0 || path[path.length - 1]!.type === "compaction") {
    return { reason: path.length === 0 ? "nothing-to-compact" : "already-compacted" };
  }
  const previousIndex = projection.entries.findIndex((e) => e.record.type === "compaction" && e.roles.length > 0);
  return { projection, boundaryStart: previousIndex >= 0 ? previousIndex + 1 : 0, previousIndex };
}

/** pi's `prepareCompaction` from the cut on: the summarized and kept ranges, file lists, `tokensBefore`. */
function preparationAt(
  start: CompactionStart,
  cut: CutPoint,
  settings: CompactionSettings,
  reader: BodyReader,
  rules: Pick<PiRules, "nestedCallFileOps">,
): CompactionPreparation | NotPrepared {
  const { projection, boundaryStart, previousIndex } = start;
  const path = projection.path;
  const entries = projection.entries;
  const previousSummary = previousIndex >= 0 ? entries[previousIndex]!.record.summary : undefined;
  const tokensBefore = estimateProjectedContextTokens(projection, reader).tokens;
  // where pi's own prepareCompaction fails (tokensBefore, then the cut-point walk): before any answer
  const estimateFailure = compactionEstimateFailure(projection, reader, {
    startIndex: boundaryStart,
    keepRecentTokens: settings.keepRecentTokens,
    tokensOf: (e) => entryMessageTokens(e, reader),
  });
  const nothing = (reason: NothingToCompact): NotPrepared => ({
    reason,
    ...(estimateFailure ? { estimateFailure } : {}),
  });
  const firstKept = entries[cut.firstKeptEntryIndex]?.record;
  if (!firstKept?.id) return nothing(firstKept ? "no-kept-entry-id" : "nothing-to-compact");
  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
  const messagesToSummarize = entries.slice(boundaryStart, historyEnd).filter((e) => summarizedRoles(e).length > 0);
  const turnPrefixMessages = cut.isSplitTurn
    ? entries.slice(cut.turnStartIndex, cut.firstKeptEntryIndex).filter((e) => summarizedRoles(e).length > 0)
    : [];
  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) return nothing("nothing-to-compact");

  const fileOps = createFileOps();
  if (previousIndex >= 0) addDetails(fileOps, entries[previousIndex]!.record);
  for (const e of [...messagesToSummarize, ...turnPrefixMessages]) {
    // File ops come from the records (or the edit's replacement) — no need to measure long lines.
    if (!countsFileOps(e.record, rules)) continue;
    if (e.edit && !e.edit.replacementIsNull) addFileOps(fileOps, contribution(e, reader).fileOps);
    else addFileOps(fileOps, e.record.fileOps);
  }
  const { readFiles, modifiedFiles } = computeFileLists(fileOps);
  const keptEntries = entries.slice(cut.firstKeptEntryIndex);
  let keptTokens = 0;
  for (const e of keptEntries) if (summarizedRoles(e).length > 0) keptTokens += contribution(e, reader).tokens;
  const checkpoint = currentSystemMessage(projection);
  const preparation: CompactionPreparation = {
    firstKeptEntryId: firstKept.id,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    tokensBefore,
    fileOps,
    readFiles,
    modifiedFiles,
    settings,
    keptEntries,
    keptTokens,
    summarizedTokens: 0,
    checkpointTokens: checkpoint ? estimateTokens(checkpoint) : 0,
    leafId: path[path.length - 1]!.id,
    projection,
    ...(estimateFailure ? { estimateFailure } : {}),
  };
  // Σ tokens of the summarized messages, measured only when someone asks (long lines are
  // measured lazily, and the gauge does not need this number).
  let summarizedTokens: number | undefined;
  Object.defineProperty(preparation, "summarizedTokens", {
    get: () =>
      (summarizedTokens ??= [...messagesToSummarize, ...turnPrefixMessages].reduce(
        (sum, e) => sum + contribution(e, reader).tokens,
        0,
      )),
    enumerable: true,
    configurable: true,
  });
  if (cut.isSplitTurn) preparation.turnStartEntryId = entries[cut.turnStartIndex]!.record.id;
  if (previousSummary !== undefined) preparation.previousSummary = previousSummary;
  if (previousIndex >= 0) preparation.previousCompactionId = entries[previousIndex]!.record.id;
  return preparation;
}

/** True when {@link prepareCompaction} returned a preparation. */
export function isPrepared(result: CompactionPreparation | NotPrepared): result is CompactionPreparation {
  return !("reason" in result);
}

/** Input for {@link buildCompactionEntry}. */
export interface CompactionEntryInput {
  id: string;
  parentId: string;
  /** ISO timestamp of the entry. */
  timestamp: string;
  /** The final summary text, file-list blocks included. */
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  readFiles: string[];
  modifiedFiles: string[];
  /** Usage the summarizer reported (omitted from the line when undefined, as JSON.stringify does). */
  usage?: Usage;
  /** `false` for summaries in pi's format whose `details` pi may trust. */
  fromHook: boolean;
  /** The replayed system message of the context at the leaf (pi's `getCurrentSystemMessage`), if any. */
  systemMessage?: SystemMessage;
}

/**
 * The `CompactionEntry` exactly as pi 1.6.0's `appendCompaction` writes it (same key order:
 * type, id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore, details, usage, fromHook,
 * systemMessage), with the checkpoint's timestamp set to the entry's time in ms.
 */
export function buildCompactionEntry(input: CompactionEntryInput): CompactionEntry {
  const entry: CompactionEntry = {
    type: "compaction",
    id: input.id,
    parentId: input.parentId,
    timestamp: input.timestamp,
    summary: input.summary,
    firstKeptEntryId: input.firstKeptEntryId,
    tokensBefore: input.tokensBefore,
    details: { readFiles: input.readFiles, modifiedFiles: input.modifiedFiles },
    ...(input.usage ? { usage: input.usage } : {}),
    fromHook: input.fromHook,
    ...(input.systemMessage
      ? { systemMessage: { ...input.systemMessage, timestamp: new Date(input.timestamp).getTime() } }
      : {}),
  };
  return entry;
}

/** The entry records of a preparation's summarized messages, in order (history, then turn prefix). */
export function summarizedRecords(preparation: CompactionPreparation): EntryRecord[] {
  return [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages].map((e) => e.record);
}
