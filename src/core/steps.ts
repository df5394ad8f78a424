/**
 * Work in steps: a generator that yields between parts of a long computation, so a caller on the
 * extension host's thread can give the event loop a turn, and a plain caller runs it with {@link drain}.
 */

/** Run a step generator to its end at once and return its result (throws what a step throws). */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
