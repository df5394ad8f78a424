/**
 * Run `task` right after `activate()` returns (`setImmediate`): off its path, without a timer.
 * @returns a disposable that cancels `task` if it has not run yet.
 */
export function afterActivation(task: () => void): { dispose(): void } {
  const handle = setImmediate(task);
  return { dispose: () => clearImmediate(handle) };
}
