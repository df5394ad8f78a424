/** The re-plan loop every writing flow shares: nothing is ever written from a stale plan. */

import { expectationHolds, SessionChangedError, type AppendExpectation } from "./write";

export const REPLAN: unique symbol = Symbol("replan");
export type Replan = typeof REPLAN;

export const KEEPS_CHANGING = "The session file keeps changing (is pi running on it?). Nothing was written.";

export interface Attempt {
  number: number;
  /** An earlier attempt found the file changed ("the session changed, here is the new preview"). */
  changed: boolean;
  last: boolean;
}

/** Run `attempt` until it returns no {@link REPLAN}. @throws {SessionChangedError} {@link KEEPS_CHANGING}. */
export async function withReplanning<R>(maxAttempts: number, attempt: (a: Attempt) => Promise<R | Replan>): Promise<R> {
  let changed = false;
  for (let number = 1; ; number++) {
    const out = await attempt({ number, changed, last: number >= maxAttempts });
    if (out !== REPLAN) return out;
    if (number >= maxAttempts) throw new SessionChangedError(KEEPS_CHANGING);
    changed = true;
  }
}

/** {@link REPLAN} when the file no longer matches the plan. @throws {SessionChangedError} on the last attempt. */
export function replanIfChanged(expectation: AppendExpectation, attempt: Attempt): Replan | undefined {
  if (expectationHolds(expectation)) return undefined;
  if (attempt.last) throw new SessionChangedError(KEEPS_CHANGING);
  return REPLAN;
}

/** A {@link SessionChangedError} from the write becomes {@link REPLAN}, except on the last attempt. */
export async function writeOrReplan<R>(attempt: Attempt, write: () => R | Promise<R>): Promise<R | Replan> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof SessionChangedError && !attempt.last) return REPLAN;
    throw error;
  }
}

/** Tell the caller the file changed at `stage` and re-plan (the loop throws on the last attempt). */
export function replanAfterChange<S>(stage: S, attempt: Attempt, notify?: (stage: S, attempt: number) => void): Replan {
  notify?.(stage, attempt.number);
  return REPLAN;
}
