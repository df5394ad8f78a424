/**
 * Compactions and branch summaries on the current path, oldest first, with what the panel shows
 * for each (time, `tokensBefore`, `firstKeptEntryId`, the summary as markdown + its file blocks)
 * and whether it is still part of the context at the leaf.
 */

import type { Projection } from "../core/rules/context";
import { compactionLostItems } from "../core/rules/lostItems";
import type { SummaryModel } from "../shared/protocol";
import { lostModel } from "./lostItems";
import { splitSummary } from "./summaryText";

/**
 * The summaries on `projection.path`.
 * @param session the file, to compute what each compaction lost (its bodies are read once per compaction); without it no `lost`.
 */
export function buildSummaries(
  projection: Projection,
  session?: Parameters<typeof compactionLostItems>[0],
): SummaryModel[] {
  const inContext = new Set<string>();
  for (const e of projection.entries) {
    if ((e.record.type === "compaction" || e.record.type === "branch_summary") && e.roles.length > 0)
      inContext.add(e.record.id);
  }
  const out: SummaryModel[] = [];
  for (const r of projection.path) {
    if (r.type !== "compaction" && r.type !== "branch_summary") continue;
    const text = r.summary ?? "";
    const split = splitSummary(text);
    const lost = session && r.type === "compaction" ? compactionLostItems(session, r) : null;
    out.push({
      entryId: r.id,
      type: r.type,
      timestamp: r.timestamp,
      tokensBefore: r.type === "compaction" ? (r.tokensBefore ?? null) : null,
      firstKeptEntryId: r.type === "compaction" ? (r.firstKeptEntryId ?? null) : null,
      fromId: r.type === "branch_summary" ? (r.fromId ?? null) : null,
      fromHook: Boolean(r.fromHook),
      body: split.body,
      text,
      readFiles: split.readFiles,
      modifiedFiles: split.modifiedFiles,
      tokens: r.tokens,
      inContext: inContext.has(r.id),
      ...(lost ? { lost: lostModel(lost) } : {}),
    });
  }
  return out;
}
