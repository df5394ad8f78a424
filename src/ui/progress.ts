/** Progress of a streaming summary: "receiving … ≈N tokens" (characters / 4, pi's estimate rule). */

import type * as vscode from "vscode";
import { formatTokens, tokensText } from "../shared/format";

export const REPORT_INTERVAL_MS = 200;

export interface StreamingProgress {
  onText(delta: string): void;
  restart(message: string, prefix?: string): void;
}

/** `receiving`: e.g. `receiving the summary`; `first`: shown before any text arrives. */
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
