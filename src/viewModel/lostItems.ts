/**
 * What a compaction lost, in the shape the panel and the compaction preview show it: the items
 * (capped), the totals per kind, and a one-line summary. Numbers from `core/rules/lostItems.ts`.
 */

import { LOST_KINDS, type LostKind, type LostReport } from "../core/rules/lostItems";
import { LOST_ITEMS_SHOWN, type LostModel } from "../shared/protocol";
import { plural } from "../shared/format";

/** Kind names, singular and plural. */
export const LOST_KIND_NAMES: Record<LostKind, [string, string]> = {
  path: ["file path", "file paths"],
  command: ["command", "commands"],
  identifier: ["identifier", "identifiers"],
  number: ["number", "numbers"],
};

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
    const names = LOST_KIND_NAMES[kind];
    if (t.lost > 0) lost.push(`${t.lost} of ${plural(t.found, names[0], names[1])}`);
    else kept.push(t.found === 1 ? `the ${names[0]}` : `all ${t.found} ${names[1]}`);
  }
  if (lost.length === 0 && kept.length === 0) return "nothing to compare (no paths, commands, identifiers or numbers)";
  const parts: string[] = [];
  if (lost.length) parts.push(`lost ${lost.join(", ")}`);
  if (kept.length) parts.push(`kept ${kept.join(", ")}`);
  return parts.join("; ");
}

/**
 * Instructions that ask a summarizer to keep the lost items (for "re-run with instructions"):
 * `Keep these verbatim: …` with at most `max` items, commands and paths first.
 */
export function keepInstructions(report: LostReport | LostModel, max = 40): string {
  const items = report.items.slice(0, max).map((i) => (i.kind === "command" ? `\`${i.text}\`` : i.text));
  if (items.length === 0) return "";
  return `Keep these verbatim in the summary: ${items.join(", ")}${report.items.length > max ? ", …" : ""}.`;
}
