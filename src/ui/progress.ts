/**
 * Progress of a streaming summary in a VS Code progress notification: "receiving … ≈N tokens",
 * updated at most every {@link REPORT_INTERVAL_MS} (the count is the received characters / 4, pi's
 * estimate rule). Shared by compaction and branch summaries.
 */

import type * as vscode from "vscode";
import { formatTokens, tokensText } from "../shared/format";

/** Minimum time between two progress messages while text streams in (ms). */
export const REPORT_INTERVAL_MS = 200;

/** Counts streamed text and reports it; {@link restart} begins a new request (e.g. the second half of a split turn). */
export interface StreamingProgress {
  /** Feed a piece of answer text (`SummarizeOptions.onText`). */
  onText(delta: string): void;
  /** A new request starts: `message` now, and streamed text reported as `${prefix}${receiving}… ≈N tokens`. */
  restart(message: string, prefix?: string): void;
}

/**
 * @param receiving what arrives, e.g. `receiving the summary` (shown as `receiving the summary… ≈1.2k tokens`).
 * @param first the message shown before any text arrives.
 */
export function streamingProgress(
  progress: vscode.Progress<{ message?: string }>,
  receiving: string,
  first: string,
): StreamingProgress {
  let received = 0;
  let lastReport = 0;
  let prefix = "";
  progress.report({ message: first });
  return {
    onText(delta) {
      received += delta.length;
      const now = Date.now();
      if (now - lastReport > REPORT_INTERVAL_MS) {
        lastReport = now;
        progress.report({ message: `${prefix}${receiving}… ≈${tokensText(Math.ceil(received / 4), formatTokens)}` });
      }
    },
    restart(message, nextPrefix = "") {
      received = 0;
      prefix = nextPrefix;
      progress.report({ message });
    },
  };
}
