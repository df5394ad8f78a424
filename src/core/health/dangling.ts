/**
 * Dangling references anywhere in the file, also off the current branch (info: none breaks it): a
 * `context_edit` or `label` whose target is not in the file, a compaction whose `firstKeptEntryId` names
 * no entry. pi 1.6.0 applies such edits (changing nothing), shows such labels nowhere, and keeps nothing
 * before such a compaction (`buildContextEntries`).
 */

import type { Projection } from "../rules/context";
import type { EntryRecord } from "../read/entries";
import { entryRef, type HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

export interface DanglingInput {
  records: readonly EntryRecord[];
  byId: ReadonlyMap<string, EntryRecord>;
  projection: Projection;
}

/** One finding per dangling reference `references.ts` does not report. */
export function danglingFindings(input: DanglingInput): HealthFinding[] {
  const { records, byId, projection } = input;
  const inContext = new Set(projection.entries.map((e) => e.record));
  const onPath = new Set(projection.path);
  const out: HealthFinding[] = [];
  const where = (r: EntryRecord) =>
    onPath.has(r) ? l10n.t("on the current branch") : l10n.t("not on the current branch");
  for (const r of records) {
    if (byId.get(r.id) !== r) continue; // an id's earlier entry: pi keeps the later one
    if (r.type === "context_edit" && !inContext.has(r) && (r.targetId === undefined || !byId.has(r.targetId)))
      out.push(
        finding(
          r,
          "edit-target-missing",
          l10n.t(
            '{0} ({1}) targets {2}: it changes nothing, on any branch (pi\'s own appendContextEdit refuses such an edit: "Entry {3} not found").',
            entryRef(r),
            where(r),
            r.targetId === undefined
              ? l10n.t("no entry (its targetId is not a string)")
              : l10n.t("{0}, which is not in the file", r.targetId),
            r.targetId ?? "?",
          ),
        ),
      );
    else if (r.type === "label" && r.targetId !== undefined && !byId.has(r.targetId))
      out.push(
        finding(
          r,
          "label-target-missing",
          l10n.t(
            "{0} ({1}) labels {2}, which is not in the file: the label shows nowhere (pi's /tree and the Pi Session tree label entries by id). Nothing breaks.",
            entryRef(r),
            where(r),
            r.targetId,
          ),
        ),
      );
    else if (
      r.type === "compaction" &&
      r !== projection.compaction &&
      (r.firstKeptEntryId === undefined || !byId.has(r.firstKeptEntryId))
    )
      out.push(
        finding(
          r,
          "first-kept-missing",
          l10n.t(
            "{0} ({1}) keeps from {2}: should pi resume a branch whose latest compaction it is, the model sees only its summary and what came after it. The current branch is not affected.",
            entryRef(r),
            where(r),
            r.firstKeptEntryId === undefined
              ? l10n.t("no entry (firstKeptEntryId is missing)")
              : l10n.t("{0}, which is not in the file", r.firstKeptEntryId),
          ),
        ),
      );
  }
  return out;
}

function finding(r: EntryRecord, code: HealthFinding["code"], message: string): HealthFinding {
  return {
    code,
    severity: "info",
    entryId: r.id,
    relatedIds: [],
    message,
    source: "session",
    ...(r.line > 0 ? { line: r.line } : {}),
    repair: null,
  };
}
