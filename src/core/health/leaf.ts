/**
 * A last line that is not an entry with a string id: pi 1.6.0 makes it its leaf, so it resumes away
 * from the conversation shown and its next entry starts a new root. Repair: a leaf marker on the newest
 * entry pi can resume at (the line stays).
 */

import type { EntryRecord } from "../read/entries";
import type { OddTail } from "../read/oddTail";
import { oddTailConsequence } from "../rules/piLeaf";
import { entryRef, type HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

export interface LeafInput {
  oddTail: OddTail | undefined;
  records: readonly EntryRecord[];
  byId: ReadonlyMap<string, EntryRecord>;
}

export function leafFindings(input: LeafInput): HealthFinding[] {
  const tail = input.oddTail;
  if (!tail) return [];
  const parentId = tail.record.parentId;
  const parent = parentId ? input.byId.get(parentId) : undefined;
  // the newest entry whose id pi can follow (a string that is not empty)
  let target: EntryRecord | undefined;
  for (let i = input.records.length - 1; i >= 0 && !target; i--) {
    const r = input.records[i]!;
    if (r.id !== "" && r !== tail.record && input.byId.get(r.id) === r) target = r;
  }
  return [
    {
      code: "leaf-not-an-entry",
      severity: "error",
      entryId: null,
      relatedIds: target ? [target.id] : [],
      message: l10n.t(
        "The last line (line {0}) is {1}, not an entry with a string id. pi 1.6.0 makes every line it reads its leaf, so {2}. pi-context shows the conversation up to {3}. {4}",
        tail.line,
        tail.what,
        oddTailConsequence(tail, parent ? entryRef(parent) : undefined),
        target ? entryRef(target) : l10n.t("(nothing)"),
        target
          ? l10n.t("Fix: move pi's leaf to {0} (a leaf marker; the line stays in the file).", entryRef(target))
          : l10n.t("No entry of the file can be resumed at; only editing the file fixes it."),
      ),
      source: "session",
      line: tail.line,
      repair: target
        ? {
            kind: "leaf-marker",
            targetId: target.id,
            description: l10n.t(
              "append a pi-context/leaf marker on {0}: pi resumes there instead of at line {1}",
              entryRef(target),
              tail.line,
            ),
          }
        : null,
    },
  ];
}
