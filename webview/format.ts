/**
 * The webview's own display helpers on top of the shared formatters (`src/shared/format.ts`):
 * signed short token counts, percentages of the window, a path's last segment, a summary's kind.
 */

import { formatGaugeTokens } from "../src/shared/format";
import type { SummaryModel } from "../src/shared/protocol";
import * as l10n from "@vscode/l10n";

/** Short tokens as the status bar shows them: `950`, `4.2k`, `12.5k`, `124k`, `1.2M`; negative with `−`. */
export function short(n: number): string {
  return `${n < 0 ? "−" : ""}${formatGaugeTokens(Math.abs(n))}`;
}

/** `part` as a percentage of `whole`: one decimal below 10 % (`4.2%`), else whole (`37%`); `""` without a whole. */
export function pct(part: number, whole: number): string {
  if (!whole) return "";
  const p = (part / whole) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p)}%`;
}

/** The last segment of a path (`/` or `\` separated), the path itself when it has none. */
export function basename(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

/** A summary's kind as the cards and the diff pickers name it: `Compaction`, `Branch summary`, `Summary of messages`. */
export function summaryTitle(sm: Pick<SummaryModel, "type">): string {
  return sm.type === "compaction"
    ? l10n.t("Compaction")
    : sm.type === "span_summary"
      ? l10n.t("Summary of messages")
      : l10n.t("Branch summary");
}
