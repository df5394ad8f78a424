/**
 * Compactions and branch summaries on the current path, oldest first, with what the panel shows
 * for each (time, `tokensBefore`, `firstKeptEntryId`, the summary as markdown + its file blocks)
 * and whether it is still part of the context at the leaf.
 */

import type { Projection } from "../core/rules/context";
import type { SummaryModel } from "../shared/protocol";
import { splitSummary } from "./summaryText";

/** The summaries on `projection.path`. */
export function buildSummaries(projection: Projection): SummaryModel[] {
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
    });
  }
  return out;
}
