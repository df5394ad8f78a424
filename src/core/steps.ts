/**
 * Work in steps: a generator that yields between parts of a long computation (each part tens of ms
 * on a 128 MB session), so a caller on the extension host's thread can give the event loop a turn
 * between them, and a plain caller runs it at once with {@link drain}.
 */

/** Run a step generator to its end at once and return its result (throws what a step throws). */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
