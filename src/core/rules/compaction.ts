/**
 * pi 1.6.0's `prepareCompaction` and the `CompactionEntry` it writes (`compaction/compaction.js`). Cut
 * points follow the private `findProjectedCutPoint`: the exported `findCutPoint` differs once
 * `context_edit`s exist. Nothing is summarized here.
 */

import { buildProjection, type ProjectedEntry, type Projection } from "./context";
import { entryRoles } from "../read/entries";
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

export interface CutPoint {
  firstKeptEntryIndex: number;
  turnStartIndex: number;
  isSplitTurn: boolean;
}

export type NothingToCompact = "already-compacted" | "nothing-to-compact" | "no-kept-entry-id";

/** In pi's words where pi has them. */
export const NOTHING_TO_COMPACT_MESSAGES: Record<NothingToCompact, string> = {
  "already-compacted": "Already compacted: the leaf is a compaction entry.",
  "nothing-to-compact": "Nothing to compact (session too small).",
  "no-kept-entry-id": "The first kept entry has no id (the session may need migration).",
};

export interface NotPrepared {
  reason: NothingToCompact;
  /** pi's `prepareCompaction` throws (or counts `NaN`) before it finds nothing to compact. */
  estimateFailure?: EstimateFailure;
}

/** Everything pi's `compact()` receives, plus what a preview shows. */
export interface CompactionPreparation {
  /** May be a label/model change (pi's backward scan). */
  firstKeptEntryId: string;
  messagesToSummarize: ProjectedEntry[];
  /** Empty when the turn is not split. */
  turnPrefixMessages: ProjectedEntry[];
  isSplitTurn: boolean;
  turnStartEntryId?: string;
  /** pi's `estimateProjectedContextTokens(...).tokens` at the leaf. */
  tokensBefore: number;
  previousSummary?: string;
  previousCompactionId?: string;
  fileOps: FileOps;
  readFiles: string[];
  modifiedFiles: string[];
  settings: CompactionSettings;
  keptEntries: ProjectedEntry[];
  /** Σ estimated tokens of the kept entries' non-system messages. */
  keptTokens: number;
  summarizedTokens: number;
  /** `estimateTokens` of the entry's system checkpoint (0 without one). */
  checkpointTokens: number;
  leafId: string;
  projection: Projection;
  /** Where pi's own `prepareCompaction` fails here (`estimateFailure.ts`): `/compact` gets no `tokensBefore`. */
  estimateFailure?: EstimateFailure;
}

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
 * pi's private `findProjectedCutPoint`: walk back summing estimates to `keepRecentTokens`, cut at the
 * nearest valid cut point at or after it, skip a closed overflow-recovery suffix, pull in preceding
 * message-less entries, detect a split turn.
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

/** pi's `prepareCompaction` at `leafId` (default the file's leaf), or why pi would not compact. */
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

export type InvalidCutCode =
  | "unknown"
  | "off-branch"
  /** Already summarized: before the latest compaction's kept range. */
  | "summarized"
  /** pi never cuts between a tool call and its result. */
  | "tool-result"
  | "no-message"
  /** pi sends no message for it. */
  | "omitted"
  | "compaction"
  /** pi's prompt state, never a cut point. */
  | "system";

export interface InvalidCut {
  reason: "invalid-cut";
  code: InvalidCutCode;
  entryId: string;
  /** Nearest valid cut points before and after the entry (ids, oldest first; 0–2). */
  nearest: string[];
}

/**
 * Ids of pi's valid cut points at the leaf (`isCutPointMessage` over the projection), oldest first, from
 * the latest compaction's kept range on; the first is included though nothing precedes it.
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
 * pi's `prepareCompaction` with the cut at a chosen entry ("Compact up to here"); pi's own rules apply
 * otherwise, so the entry differs from `/compact` only in `firstKeptEntryId`. The entry must be a valid
 * cut point or a message-less entry directly before one; else returns {@link InvalidCut}.
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
  // a message-less entry right before a cut point is kept with it by pi's rule below, so it names that cut point
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

export function isInvalidCut(result: object): result is InvalidCut {
  return (result as { reason?: unknown }).reason === "invalid-cut";
}

/** Nearest valid cut points to `at` (or to the entry's place on the path when it is not in the context). */
function nearestCutPoints(projection: Projection, boundaryStart: number, id: string, at: number): string[] {
  const entries = projection.entries;
  let position = at;
  if (position < 0) {
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
    // File ops come from the records (or the edit's replacement): no need to measure long lines.
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
  // Measured only when asked: long lines are measured lazily and the gauge does not need it.
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

export function isPrepared(result: CompactionPreparation | NotPrepared): result is CompactionPreparation {
  return !("reason" in result);
}

export interface CompactionEntryInput {
  id: string;
  parentId: string;
  timestamp: string;
  /** The final text, file-list blocks included. */
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  readFiles: string[];
  modifiedFiles: string[];
  /** Omitted from the line when undefined, as JSON.stringify does. */
  usage?: Usage;
  /** `false` for summaries in pi's format whose `details` pi may trust. */
  fromHook: boolean;
  /** pi's `getCurrentSystemMessage` at the leaf, if any. */
  systemMessage?: SystemMessage;
}

/** The `CompactionEntry` as pi 1.6.0's `appendCompaction` writes it (same key order; checkpoint time in ms). */
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
