/** Compactions and branch summaries on the current path, oldest first. */

import type { Projection } from "../core/rules/context";
import { compactionLostItems, spanLostItemSteps, spanSummaryOf } from "../core/rules/lostItems";
import type { EntryReader } from "../core/rules/serialize";
import { drain } from "../core/steps";
import type { SummaryModel } from "../shared/protocol";
import { lostModel } from "./lostItems";
import { splitSummary } from "./summaryText";

/** Without `session` no `lost`; without `reader` no scoped summaries. */
export function buildSummaries(
  projection: Projection,
  session?: Parameters<typeof compactionLostItems>[0],
  reader?: EntryReader,
): SummaryModel[] {
  const inContext = new Set<string>();
  for (const e of projection.entries) {
    if ((e.record.type === "compaction" || e.record.type === "branch_summary") && e.roles.length > 0)
      inContext.add(e.record.id);
  }
  const out: SummaryModel[] = [];
  const editOf = new Map(projection.entries.map((e) => [e.record.id, e.edit?.id]));
  for (const r of projection.path) {
    if (r.type === "context_edit" && reader) {
      const span = spanSummaryOf(reader, r);
      if (!span) continue;
      const lost = session ? drain(spanLostItemSteps(session, span)) : null;
      out.push({
        entryId: r.id,
        type: "span_summary",
        timestamp: r.timestamp,
        tokensBefore: null,
        firstKeptEntryId: null,
        fromId: null,
        fromHook: false,
        body: span.note.summary,
        text: span.note.summary,
        readFiles: [],
        modifiedFiles: [],
        tokens: Math.ceil(span.note.summary.length / 4),
        inContext: editOf.get(span.targetId) === r.id,
        span: {
          targetId: span.targetId,
          count: span.note.count,
          tokens: span.note.tokens,
          fromId: span.note.fromId,
          toId: span.note.toId,
        },
        ...(lost ? { lost: lostModel(lost) } : {}),
      });
      continue;
    }
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
