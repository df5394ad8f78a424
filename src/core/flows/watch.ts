/**
 * Polls a session file while a summary streams, so the request stops as soon as someone appends.
 * Only identity and size (`open` + `fstat`, microseconds; any file system): hashing every byte would
 * re-read a large session several times a second, and the write path's own check catches a same-size rewrite.
 */

import * as fs from "node:fs";
import type { AppendExpectation } from "./write";
import * as l10n from "@vscode/l10n";

function stillSame(e: AppendExpectation): boolean {
  try {
    const st = fs.statSync(e.path);
    return st.dev === e.dev && st.ino === e.ino && st.size === e.size;
  } catch {
    return false;
  }
}

/** ms. */
export const CHANGE_POLL_MS = 250;

export type ChangeStage =
  /** nothing was sent */
  | "preview"
  /** the request was stopped (the server saw the abort) */
  | "summary"
  /** right before the write: the summary was discarded */
  | "write";

export interface SessionWatch {
  /** Aborted when `outer` aborts or the file changed (then {@link changed} is true). */
  readonly signal: AbortSignal;
  readonly changed: boolean;
  /** Check now (e.g. between two requests); true and aborts when the file changed. */
  check(): boolean;
  /** Always call it, e.g. in `finally`. */
  dispose(): void;
}

/**
 * Watch `expectation.path` until disposed; the returned signal aborts when the file changes, so a
 * summarizer cancels its request at once. Aborting `outer` aborts it too (not `changed`).
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

/** One sentence without a final period naming the request's fate: not sent, stopped, or discarded. */
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
