/**
 * The re-plan loop every writing flow shares (compaction, branch switch, context edits): plan from
 * a fresh read, ask, write only if the file is unchanged since the plan — and when it changed
 * under us (pi or another writer appended), plan again from a fresh read and ask again, a bounded
 * number of times. Nothing is ever written from a stale plan.
 */

import { expectationHolds, SessionChangedError, type AppendExpectation } from "./write";

/** Returned by an attempt of {@link withReplanning} to start over with a fresh plan. */
export const REPLAN: unique symbol = Symbol("replan");
export type Replan = typeof REPLAN;

/** The message when the file changed on every attempt. */
export const KEEPS_CHANGING = "The session file keeps changing (is pi running on it?). Nothing was written.";

/** One pass of the loop. */
export interface Attempt {
  /** 1-based. */
  number: number;
  /** True when an earlier attempt found the file changed (a UI says "the session changed, here is the new preview"). */
  changed: boolean;
  /** No re-plan after this one. */
  last: boolean;
}

/**
 * Run `attempt` until it returns something other than {@link REPLAN}, at most `maxAttempts` times.
 * @throws {SessionChangedError} {@link KEEPS_CHANGING} when the last attempt asks to re-plan;
 *   whatever `attempt` throws.
 */
export async function withReplanning<R>(maxAttempts: number, attempt: (a: Attempt) => Promise<R | Replan>): Promise<R> {
  let changed = false;
  for (let number = 1; ; number++) {
    const out = await attempt({ number, changed, last: number >= maxAttempts });
    if (out !== REPLAN) return out;
    if (number >= maxAttempts) throw new SessionChangedError(KEEPS_CHANGING);
    changed = true;
  }
}

/**
 * Before spending anything on a plan that was shown: {@link REPLAN} when the file no longer matches
 * the plan's expectation (undefined when it does).
 * @throws {SessionChangedError} {@link KEEPS_CHANGING} on the last attempt.
 */
export function replanIfChanged(expectation: AppendExpectation, attempt: Attempt): Replan | undefined {
  if (expectationHolds(expectation)) return undefined;
  if (attempt.last) throw new SessionChangedError(KEEPS_CHANGING);
  return REPLAN;
}

/**
 * Run the write; a {@link SessionChangedError} (the file changed between the check and the
 * append; nothing was written) becomes {@link REPLAN}, except on the last attempt, where it is thrown.
 */
export async function writeOrReplan<R>(attempt: Attempt, write: () => R | Promise<R>): Promise<R | Replan> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof SessionChangedError && !attempt.last) return REPLAN;
    throw error;
  }
}

/**
 * The file changed at `stage` (see `watch.ts` ChangeStage): tell the caller (`notify`, e.g. a UI's
 * "the session changed — new preview") and ask {@link withReplanning} to re-plan; on the last
 * attempt the loop then throws {@link KEEPS_CHANGING}. Nothing was written.
 */
export function replanAfterChange<S>(stage: S, attempt: Attempt, notify?: (stage: S, attempt: number) => void): Replan {
  notify?.(stage, attempt.number);
  return REPLAN;
}
