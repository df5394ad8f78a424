/** Writing the undo of the last context edits (`rules/undoEdit.ts` plans it), in ONE append. */

import { assertPiCanOpen } from "./preflight";
import { buildLeafMarkerEntry } from "../rules/branch";
import { buildProjection } from "../rules/context";
import { chainContextEdits } from "../rules/contextEdit";
import { estimateProjectedContextTokens } from "../rules/tokens";
import { isNothingToUndo, prepareUndo, type UndoOptions, type UndoPreparation } from "../rules/undoEdit";
import { SessionFile } from "../read/session";
import type { SessionAccess } from "../access/access";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess } from "../access/words";
import type { ContextEditOptions } from "./contextEdit";
import { replanIfChanged, withReplanning, writeOrReplan } from "./replan";
import { appendEntries, assertWritable, expectationOf, newEntryId, type AppendExpectation } from "./write";
import type { ContextEditEntry, CustomEntry } from "../types";

/** Default batch: the last one on the branch. */
export type UndoFlowOptions = ContextEditOptions & Pick<UndoOptions, "editIds" | "retargetOnly">;

export interface UndoPlan {
  file: string;
  session: SessionFile;
  preparation: UndoPreparation | { reason: string };
  expectation: AppendExpectation;
  access: SessionAccess;
  options: UndoFlowOptions;
}

/** @throws {UnsafeSessionWriteError}; the `fs` error when it cannot be read. */
export async function planUndo(file: string, options: UndoFlowOptions): Promise<UndoPlan> {
  const session = await SessionFile.open(file, { digest: true });
  const expectation = expectationOf(session);
  assertPiCanOpen(session, "undo the context edit of", options.surface); // before any question
  return {
    file: session.filePath,
    session,
    preparation: prepareUndo(session, {
      ...(options.editIds ? { editIds: options.editIds } : {}),
      ...(options.leafId !== undefined ? { leafId: options.leafId } : {}),
      ...(options.retargetOnly ? { retargetOnly: true } : {}),
    }),
    expectation,
    access: await accessOfSession(session, options),
    options,
  };
}

export interface UndoResult {
  file: string;
  way: UndoPreparation["way"];
  /** The marker, or the edits, in file order. */
  entries: (CustomEntry | ContextEditEntry)[];
  bytesBefore: number;
  bytesAfter: number;
  /** Read back; null when that failed. */
  tokensBefore: number;
  tokensAfter: number | null;
  readBackError?: string;
}

/** @throws {LiveSessionError}, {@link SessionChangedError} (nothing written), {@link SessionWriteError}. */
export async function commitUndo(plan: UndoPlan, now: () => Date = () => new Date()): Promise<UndoResult> {
  const prep = plan.preparation;
  if (isNothingToUndo(prep)) throw new Error(`internal error: nothing to undo (${prep.reason})`);
  assertAccess(await accessOfSession(plan.session, plan.options), ACTIONS.contextEdit, plan.options);
  const timestamp = now().toISOString();
  const ids = plan.session.byId;
  const entries: (CustomEntry | ContextEditEntry)[] =
    prep.way === "leaf"
      ? [
          buildLeafMarkerEntry({
            id: newEntryId(ids),
            parentId: prep.beforeId,
            timestamp,
            targetId: prep.beforeId ?? "root",
            fromId: prep.leafId,
          }),
        ]
      : chainContextEdits(prep.drafts, {
          leafId: prep.leafId,
          newId: (reserved) => newEntryId(ids, reserved),
          timestamp,
        });
  const bytesAfter = appendEntries(plan.expectation, entries);
  const result: UndoResult = {
    file: plan.file,
    way: prep.way,
    entries,
    bytesBefore: plan.expectation.size,
    bytesAfter,
    tokensBefore: prep.tokensBefore.tokens,
    tokensAfter: null,
  };
  try {
    const after = await SessionFile.open(plan.file);
    result.tokensAfter = estimateProjectedContextTokens(buildProjection(after), after).tokens;
  } catch (error) {
    result.readBackError = (error as Error).message;
  }
  return result;
}

export type UndoOutcome =
  | { kind: "undone"; plan: UndoPlan; result: UndoResult }
  | { kind: "nothing"; plan: UndoPlan; reason: string }
  | { kind: "declined"; plan: UndoPlan };

/** plan → confirm → commit, re-planning after a change at most 3 times. */
export async function runUndoFlow(
  file: string,
  options: UndoFlowOptions,
  confirm?: (plan: UndoPlan & { preparation: UndoPreparation }, changed: boolean) => Promise<boolean>,
): Promise<UndoOutcome> {
  return withReplanning(3, async (attempt) => {
    const plan = await planUndo(file, options);
    const prep = plan.preparation;
    if (isNothingToUndo(prep)) return { kind: "nothing", plan, reason: prep.reason };
    assertAccess(plan.access, ACTIONS.contextEdit, options);
    assertWritable(plan.file);
    if (confirm && !(await confirm({ ...plan, preparation: prep }, attempt.changed))) return { kind: "declined", plan };
    const replan = replanIfChanged(plan.expectation, attempt);
    if (replan) return replan;
    return writeOrReplan(attempt, async () => ({ kind: "undone" as const, plan, result: await commitUndo(plan) }));
  });
}
