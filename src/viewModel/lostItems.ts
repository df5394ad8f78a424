/** What a compaction lost (`core/rules/lostItems.ts`) as the panel and preview show it. */

import { LOST_KINDS, type LostKind, type LostReport } from "../core/rules/lostItems";
import { LOST_ITEMS_SHOWN, type LostModel } from "../shared/protocol";
import { formatCount, pluralText } from "../shared/format";
import { markdownText, visibleText } from "../shared/untrusted";
import * as l10n from "@vscode/l10n";

/** `3 file paths`, `1 command`, … in the user's language (each form its own string). */
export function lostKindCount(kind: LostKind, count: number): string {
  switch (kind) {
    case "path":
      return pluralText(count, l10n.t("{0} file path"), l10n.t("{0} file paths"));
    case "command":
      return pluralText(count, l10n.t("{0} command"), l10n.t("{0} commands"));
    case "identifier":
      return pluralText(count, l10n.t("{0} identifier"), l10n.t("{0} identifiers"));
    case "number":
      return pluralText(count, l10n.t("{0} number"), l10n.t("{0} numbers"));
  }
}

function lostKindKept(kind: LostKind, count: number): string {
  const c = count;
  switch (kind) {
    case "path":
      return count === 1 ? l10n.t("the file path") : l10n.t("all {0} file paths", c);
    case "command":
      return count === 1 ? l10n.t("the command") : l10n.t("all {0} commands", c);
    case "identifier":
      return count === 1 ? l10n.t("the identifier") : l10n.t("all {0} identifiers", c);
    case "number":
      return count === 1 ? l10n.t("the number") : l10n.t("all {0} numbers", c);
  }
}

/** A kind as a heading: `File paths`, `Commands`, … */
export function lostKindTitle(kind: LostKind): string {
  switch (kind) {
    case "path":
      return l10n.t("File paths");
    case "command":
      return l10n.t("Commands");
    case "identifier":
      return l10n.t("Identifiers");
    case "number":
      return l10n.t("Numbers");
  }
}

/** The panel's model of a report (items capped at {@link LOST_ITEMS_SHOWN}). */
export function lostModel(report: LostReport, cap = LOST_ITEMS_SHOWN): LostModel {
  return {
    items: report.items.slice(0, cap).map((i) => ({ kind: i.kind, text: i.text, entryId: i.entryId, count: i.count })),
    more: Math.max(0, report.items.length - cap),
    totals: report.totals,
    truncated: report.truncated,
  };
}

/** `lost 5 of 5 commands, 176 of 217 numbers; kept every file path` (kinds with nothing found are left out). */
export function lostSummary(totals: LostModel["totals"]): string {
  const lost: string[] = [];
  const kept: string[] = [];
  for (const kind of LOST_KINDS) {
    const t = totals[kind];
    if (t.found === 0) continue;
    if (t.lost > 0) lost.push(l10n.t("{0} of {1}", t.lost, lostKindCount(kind, t.found)));
    else kept.push(lostKindKept(kind, t.found));
  }
  if (lost.length === 0 && kept.length === 0)
    return l10n.t("nothing to compare (no paths, commands, identifiers or numbers)");
  const parts: string[] = [];
  if (lost.length) parts.push(l10n.t("lost {0}", lost.join(", ")));
  if (kept.length) parts.push(l10n.t("kept {0}", kept.join(", ")));
  return parts.join("; ");
}

/** `Keep these verbatim: …` (at most `max` items, commands and paths first), for a re-run. */
export function keepInstructions(report: LostReport | LostModel, max = 40): string {
  const items = report.items.slice(0, max).map((i) => (i.kind === "command" ? `\`${i.text}\`` : i.text));
  if (items.length === 0) return "";
  // sent to the summarizer with its English prompt: stays English
  return `Keep these verbatim in the summary: ${items.join(", ")}${report.items.length > max ? ", …" : ""}.`;
}

/** Items are session text: escaped inside each code span (a backtick becomes `'`). */
export function lostMarkdown(report: LostReport, title: string): string {
  const lines = [`# ${title}`, "", lostSummary(report.totals), ""];
  for (const kind of LOST_KINDS) {
    const items = report.items.filter((i) => i.kind === kind);
    if (!items.length) continue;
    lines.push(`## ${lostKindTitle(kind)} (${items.length})`, "");
    for (const i of items)
      lines.push(
        l10n.t(
          "- `{0}` — entry {1}{2}",
          visibleText(i.text).replace(/`/g, "'"),
          markdownText(i.entryId),
          i.count > 1 ? `, ${formatCount(i.count)}×` : "",
        ),
      );
    lines.push("");
  }
  if (report.truncated) lines.push(l10n.t("_The summarized range was too long to scan completely._"), "");
  return lines.join("\n");
}
