/**
 * Writing context edits (remove, shorten, restore items of pi's context) — pi 1.6.0
 * `appendContextEdit`. All edits of a batch go in ONE append, chained as pi would chain them one by
 * one (the first off the leaf); then the file is read back for tokens and pairing.
 */

import { buildProjection } from "../rules/context";
import { chainContextEdits } from "../rules/contextEdit";
import { prepareContextEdits, type ContextEditAction, type ContextEditPreparation } from "../rules/editPlan";
import { analyzePairing, describeFinding, type PairingReport } from "../rules/pairing";
import { estimateProjectedContextTokens } from "../rules/tokens";
import { projectedEstimateFailure, type EstimateFailure } from "../rules/estimateFailure";
import { SessionFile } from "../read/session";
import type { SessionAccess } from "../access/access";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { replanIfChanged, withReplanning, writeOrReplan } from "./replan";
import { appendEntries, assertWritable, expectationOf, newEntryId, type AppendExpectation } from "./write";
import type { ContextEditEntry } from "../types";
import { assertPiCanOpen } from "./preflight";

export interface ContextEditOptions extends SessionAccessOptions {
  surface?: MessageSurface;
  /** Plan at a running pi's in-memory leaf (its bridge's state). */
  leafId?: string | null;
}

export interface ContextEditPlan {
  file: string;
  /** A private index, not the UI's live one. */
  session: SessionFile;
  actions: readonly ContextEditAction[];
  preparation: ContextEditPreparation;
  /** The append is refused if the file changed since. */
  expectation: AppendExpectation;
  access: SessionAccess;
  options: ContextEditOptions;
}

/**
 * Read the session and plan `actions` at its leaf.
 * @throws {UnsafeSessionWriteError}, the `fs` error, {@link StaleSessionError} when it changes while read.
 */
export async function planContextEdits(
  file: string,
  actions: readonly ContextEditAction[],
  options: ContextEditOptions,
): Promise<ContextEditPlan> {
  return planContextEditsOn(await SessionFile.open(file, { digest: true }), actions, options);
}

/** On a session already read with `{ digest: true }` (do not refresh it). */
export async function planContextEditsOn(
  session: SessionFile,
  actions: readonly ContextEditAction[],
  options: ContextEditOptions,
): Promise<ContextEditPlan> {
  const expectation = expectationOf(session); // refuses v1/v2 and torn tails before any work
  assertPiCanOpen(session, "edit the context of", options.surface); // before any question
  return {
    file: session.filePath,
    session,
    actions,
    preparation: prepareContextEdits(session, actions, options.leafId !== undefined ? { leafId: options.leafId } : {}),
    expectation,
    access: await accessOfSession(session, options),
    options,
  };
}

export interface ContextEditResult {
  file: string;
  /** File order; empty: nothing was written. */
  entries: ContextEditEntry[];
  leafId: string | null;
  bytesBefore: number;
  bytesAfter: number;
  /** Tokens; `tokensAfter` is null when the read-back failed (the edits are written). */
  tokensBefore: number;
  tokensAfter: number | null;
  /** Null when the read-back failed. */
  pairingAfter: PairingReport | null;
  /** pi has no `tokensAfter` then (`rules/estimateFailure.ts`). */
  estimateFailureAfter?: EstimateFailure;
  readBackError?: string;
}

/**
 * Append all edits in one append after the live guard, only if the file is as planned; a plan without
 * edits writes nothing. @throws {LiveSessionError}, {@link SessionChangedError}, {@link SessionWriteError},
 * Error when a tool result would be orphaned. Never throws once written.
 */
export async function commitContextEdits(
  plan: ContextEditPlan,
  now: () => Date = () => new Date(),
): Promise<ContextEditResult> {
  const prep = plan.preparation;
  const tokensBefore = prep.tokensBefore.tokens;
  if (prep.newPairingErrors.length > 0) {
    throw new Error(
      `internal error: these edits would leave tool results orphaned (${prep.newPairingErrors.map(describeFinding).join("; ")}). Nothing was written.`,
    );
  }
  if (prep.drafts.length === 0) {
    return {
      file: plan.file,
      entries: [],
      leafId: prep.leafId,
      bytesBefore: plan.expectation.size,
      bytesAfter: plan.expectation.size,
      tokensBefore,
      tokensAfter: tokensBefore,
      pairingAfter: prep.pairingBefore,
    };
  }
  assertAccess(await accessOfSession(plan.session, plan.options), ACTIONS.contextEdit, plan.options);
  const entries = chainContextEdits(prep.drafts, {
    leafId: prep.leafId,
    newId: (reserved) => newEntryId(plan.session.byId, reserved),
    timestamp: now().toISOString(),
  });
  const bytesAfter = appendEntries(plan.expectation, entries);
  // written: nothing may turn the outcome into a failure
  const result: ContextEditResult = {
    file: plan.file,
    entries,
    leafId: entries[entries.length - 1]!.id,
    bytesBefore: plan.expectation.size,
    bytesAfter,
    tokensBefore,
    tokensAfter: null,
    pairingAfter: null,
  };
  try {
    const after = await SessionFile.open(plan.file);
    const projection = buildProjection(after);
    result.leafId = after.leafId;
    result.tokensAfter = estimateProjectedContextTokens(projection, after).tokens;
    result.pairingAfter = analyzePairing(projection, after);
    const failure = projectedEstimateFailure(projection, after);
    if (failure) result.estimateFailureAfter = failure;
  } catch (error) {
    result.readBackError = (error as Error).message;
  }
  return result;
}

export interface ContextEditCallbacks {
  /** Show the plan and ask; false = declined; `changed`: re-made after a change. Not called without edits. */
  confirm?: (plan: ContextEditPlan, changed: boolean) => Promise<boolean>;
}

export type ContextEditOutcome =
  | { kind: "edited"; plan: ContextEditPlan; result: ContextEditResult }
  /** Every action was refused or changes nothing. */
  | { kind: "nothing"; plan: ContextEditPlan }
  | { kind: "declined"; plan: ContextEditPlan };

export const MAX_EDIT_ATTEMPTS = 3;

/** plan → confirm → commit, re-planning after a change at most {@link MAX_EDIT_ATTEMPTS} times. */
export async function runContextEditFlow(
  file: string,
  actions: readonly ContextEditAction[],
  options: ContextEditOptions,
  callbacks: ContextEditCallbacks = {},
): Promise<ContextEditOutcome> {
  return withReplanning(MAX_EDIT_ATTEMPTS, async (attempt) => {
    const plan = await planContextEdits(file, actions, options);
    if (plan.preparation.drafts.length === 0) return { kind: "nothing", plan };
    assertAccess(plan.access, ACTIONS.contextEdit, options);
    assertWritable(plan.file); // no question for a file we cannot write
    if (callbacks.confirm && !(await callbacks.confirm(plan, attempt.changed))) return { kind: "declined", plan };
    const replan = replanIfChanged(plan.expectation, attempt);
    if (replan) return replan;
    return writeOrReplan(attempt, async () => ({
      kind: "edited" as const,
      plan,
      result: await commitContextEdits(plan),
    }));
  });
}
