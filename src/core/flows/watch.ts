/**
 * Watching a session file while a summary is being written, so that a flow that writes (compaction,
 * branch summary) stops the running request as soon as someone else appends — instead of streaming
 * a summary of a stale file to the end and only then finding out that the append must be refused.
 * No `vscode` import.
 *
 * The poll is cheap — the file's identity and size (an append, a replacement, a truncation) — not
 * the write path's SHA-256 of every byte, which would re-read a 100 MB session 4 times a second; a
 * same-size rewrite is still caught by the write path's own check before the append. Polled:
 * one `open` + `fstat` + a read of ≤ 256 bytes every {@link CHANGE_POLL_MS} ms. Polling needs no file
 * watcher (works on every file system, remote ones too) and costs microseconds per poll.
 */

import * as fs from "node:fs";
import type { AppendExpectation } from "./write";
import * as l10n from "@vscode/l10n";

/** Same file (device + inode) and same size as at plan time; false when it is gone. Never throws. */
function stillSame(e: AppendExpectation): boolean {
  try {
    const st = fs.statSync(e.path);
    return st.dev === e.dev && st.ino === e.ino && st.size === e.size;
  } catch {
    return false;
  }
}

/** How often a running summary checks the session file (ms). */
export const CHANGE_POLL_MS = 250;

/** When a flow noticed that the session changed under it. */
export type ChangeStage =
  /** while the preview / question was shown: nothing was sent */
  | "preview"
  /** while the summary was being received: the request was stopped (the server saw the abort) */
  | "summary"
  /** after the summary was complete, right before the write: the summary was discarded */
  | "write";

/** A running watch (see {@link watchSession}). */
export interface SessionWatch {
  /** Aborted when `outer` aborts or when the file changed (then {@link changed} is true). */
  readonly signal: AbortSignal;
  /** True once the file was seen changed. */
  readonly changed: boolean;
  /** Check once now (e.g. between two requests); true when the file changed. Aborts the signal then. */
  check(): boolean;
  /** Stop polling (always call it, e.g. in `finally`). */
  dispose(): void;
}

/**
 * Watch `expectation.path` until {@link SessionWatch.dispose}: when the file no longer holds the
 * expectation (an append, a rewrite, a deletion), the returned signal aborts, so a summarizer
 * given that signal cancels its HTTP request at once.
 * @param outer the caller's signal (Cancel); aborting it aborts the returned one (not `changed`).
 * @param intervalMs poll interval, default {@link CHANGE_POLL_MS}.
 */
export function watchSession(
  expectation: AppendExpectation,
  outer?: AbortSignal,
  intervalMs: number = CHANGE_POLL_MS,
): SessionWatch {
  const controller = new AbortController();
  let changed = false;
  const onOuter = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener("abort", onOuter, { once: true });
  const check = () => {
    if (changed) return true;
    if (controller.signal.aborted || stillSame(expectation)) return false;
    changed = true;
    controller.abort(new Error("the session file changed"));
    return true;
  };
  const timer = setInterval(() => {
    if (check()) clearInterval(timer);
  }, intervalMs);
  timer.unref?.();
  return {
    signal: controller.signal,
    get changed() {
      return changed;
    },
    check,
    dispose() {
      clearInterval(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

/**
 * What happened, in one sentence without a final period, for every surface ("… — new preview",
 * "…; preparing again"). Names the request's fate: not sent, stopped, or discarded.
 */
export function describeChange(stage: ChangeStage): string {
  switch (stage) {
    case "preview":
      return l10n.t("The session changed while the preview was open (nothing was sent or written)");
    case "summary":
      return l10n.t(
        "The session changed while the summary was being written: the request was stopped and nothing was written",
      );
    case "write":
      return l10n.t(
        "The session changed right before the write: the finished summary was discarded and nothing was written",
      );
  }
}
