/**
 * Writing context edits to a session file: the flow behind "context surgery" (remove, shorten,
 * restore single items of pi's context). No `vscode` import.
 *
 *   planContextEdits(file, actions, options)   fresh read; pi's rules and pi-context's pairing-safe
 *                                               planner (`rules/editPlan.ts`); the append
 *                                               expectation; the live-session check
 *   commitContextEdits(plan)                   live guard again; every edit of the batch in ONE
 *                                               append, chained like pi's `appendContextEdit` called
 *                                               once per edit (the first hangs off the leaf, each
 *                                               next off the previous edit; fresh 8-hex ids); then
 *                                               the file is read back: tokens and pairing after
 *   runContextEditFlow(file, actions, …)       plan → confirm → commit, re-planning when the file
 *                                               changed under us (shared loop, `replan.ts`)
 *
 * Refusals and guards are those of the compaction and switch flows: {@link UnsafeSessionWriteError}
 * (not a session, v1/v2 file, torn tail), {@link LiveSessionError}, {@link SessionChangedError}; our
 * own last write is no "recent write" (`access/ownWrites.ts`: a trim can be restored or refined at once).
 * Source: pi 1.6.0 `SessionManager.appendContextEdit` (see `rules/contextEdit.ts`).
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

/** Options of {@link planContextEdits}. */
export interface ContextEditOptions extends SessionAccessOptions {
  /** Wording of the live-session refusal: VS Code's setting (default) or the CLI's `--guard-seconds`. */
  surface?: MessageSurface;
  /** Plan at a running pi's in-memory leaf (its live bridge's state), see `ContextEditPlanOptions.leafId`. */
  leafId?: string | null;
}

/** A plan: the file as read, the planner's result, and what guards the write. Immutable once made. */
export interface ContextEditPlan {
  file: string;
  /** The file as read for this plan (a private index, not the UI's live one). */
  session: SessionFile;
  actions: readonly ContextEditAction[];
  /** The edits to append, refusals, tokens before → after, pairing, earliest edited position. */
  preparation: ContextEditPreparation;
  /** Taken when the plan was made; the append is refused if the file changed since. */
  expectation: AppendExpectation;
  /** Who had the session open at plan time. */
  access: SessionAccess;
  options: ContextEditOptions;
}

/**
 * Read the session and plan `actions` at its leaf.
 * @throws {UnsafeSessionWriteError} for files we never write (v1/v2 sessions, torn final line, not a session).
 * @throws the `fs` error when the file cannot be read; {@link StaleSessionError} when it changes while read.
 */
export async function planContextEdits(
  file: string,
  actions: readonly ContextEditAction[],
  options: ContextEditOptions,
): Promise<ContextEditPlan> {
  return planContextEditsOn(await SessionFile.open(file, { digest: true }), actions, options);
}

/** {@link planContextEdits} on a session already read (a private index opened with `{ digest: true }`: do not refresh it). */
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

/** What {@link commitContextEdits} wrote. */
export interface ContextEditResult {
  file: string;
  /** The appended entries in file order (empty: nothing was written). */
  entries: ContextEditEntry[];
  /** The file's leaf afterwards (the last edit, or the unchanged leaf). */
  leafId: string | null;
  bytesBefore: number;
  bytesAfter: number;
  /**
   * pi's projected estimate before (from the plan) and after (read back from the file), in tokens;
   * `tokensAfter` is null when reading back failed after the edits were written (see {@link readBackError}).
   */
  tokensBefore: number;
  tokensAfter: number | null;
  /** Pairing of what pi sends, read back from the file (null when reading back failed). */
  pairingAfter: PairingReport | null;
  /** Where pi's own estimate fails on the file read back (pi has no `tokensAfter` then; `estimateFailure.ts`). */
  estimateFailureAfter?: EstimateFailure;
  /** Why the file could not be read back after the write; the edits are written. */
  readBackError?: string;
}

/**
 * Append the plan's edits: live guard again, then one append of all edits (chained parentIds,
 * one timestamp), only if the file is byte-for-byte as planned; then read the file back.
 * A plan without edits writes nothing.
 * @throws {LiveSessionError} when the session looks live now.
 * @throws {SessionChangedError} when the file changed since the plan (nothing written).
 * @throws Error when the plan would leave a tool result orphaned (the planner's safety net failed; nothing written).
 * @throws {SessionWriteError} when the append failed (it says what is in the file).
 * Never throws once the edits are written: a failed read-back leaves `tokensAfter` null.
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
  // Written: from here on nothing may turn the outcome into a failure.
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

/** Callbacks of {@link runContextEditFlow}. */
export interface ContextEditCallbacks {
  /**
   * Show the plan (edits, cascades, refusals, tokens before → after) and ask; false = declined,
   * nothing written. `changed` is true when the file changed after an earlier preview and this is
   * the re-made plan. Undefined = write without asking. Not called for a plan without edits.
   */
  confirm?: (plan: ContextEditPlan, changed: boolean) => Promise<boolean>;
}

/** Result of {@link runContextEditFlow}. */
export type ContextEditOutcome =
  | { kind: "edited"; plan: ContextEditPlan; result: ContextEditResult }
  /** Nothing to write: every action was refused or changes nothing (see `plan.preparation`). */
  | { kind: "nothing"; plan: ContextEditPlan }
  | { kind: "declined"; plan: ContextEditPlan };

/** How often the flow re-plans after the file changed under it. */
export const MAX_EDIT_ATTEMPTS = 3;

/**
 * plan → (live check) → confirm → commit; when the file changed before the write, plan again from
 * a fresh read and ask again, at most {@link MAX_EDIT_ATTEMPTS} times.
 * @throws {LiveSessionError}, {@link UnsafeSessionWriteError}, {@link SessionChangedError} after the last attempt.
 */
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
