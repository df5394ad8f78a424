/**
 * Work that must not run on `activate()`'s path (file I/O, messages to the workbench) but should not
 * wait for a timer either: it runs right after the current call stack returns.
 */

/**
 * Run `task` once, right after `activate()` (or whatever is on the stack now) returns: Node's
 * `setImmediate`, after pending I/O callbacks.
 * @returns a disposable that cancels `task` if it has not run yet (push it to the extension's
 *   subscriptions so a deactivated extension does not run it).
 */
export function afterActivation(task: () => void): { dispose(): void } {
  const handle = setImmediate(task);
  return { dispose: () => clearImmediate(handle) };
}
