/**
 * The doctor's finding for a context pi cannot measure (`rules/estimateFailure.ts`): pi 1.6.0's
 * `estimateTokens` throws on a message (or counts `NaN`), so its footer and its auto-compaction check
 * after each answer fail (error), or only its `/compact` — and so auto-compaction once the threshold
 * is reached — fails (warning). The repair is a context edit: restore the entry when its latest edit
 * brought the content pi cannot measure, else omit the message (the file keeps it).
 * A replacement that is not `{content: string or array}` at all is `edit-invalid-replacement`
 * (`references.ts`), not repeated here.
 */

import type { Projection } from "../rules/context";
import {
  compactionEstimateFailure,
  estimateFailureCause,
  estimateFailureText,
  projectedEstimateFailure,
} from "../rules/estimateFailure";
import { editableRole } from "../rules/contextEdit";
import { entryMessageTokens, type BodyReader } from "../rules/tokens";
import type { EntryRecord } from "../read/entries";
import type { HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

/** What the estimate check reads. */
export interface EstimateInput {
  projection: Projection;
  reader: BodyReader;
  byId: ReadonlyMap<string, EntryRecord>;
  /** `compaction.keepRecentTokens` (pi's cut-point walk); undefined: the setting is invalid (pi throws before). */
  keepRecentTokens: number | undefined;
}

/** At most one finding: the first message pi cannot measure, where it hurts most. */
export function estimateFindings(input: EstimateInput): HealthFinding[] {
  const { projection, reader, byId } = input;
  const footer = projectedEstimateFailure(projection, reader);
  let failure = footer;
  if (!failure && input.keepRecentTokens !== undefined) {
    const previous = projection.entries.findIndex((e) => e.record.type === "compaction" && e.roles.length > 0);
    failure = compactionEstimateFailure(projection, reader, {
      startIndex: previous + 1,
      keepRecentTokens: input.keepRecentTokens,
      tokensOf: (e) => entryMessageTokens(e, reader),
    });
  }
  // pi cannot build the context at all: the missing-message / edit-invalid-replacement finding says it
  if (!failure || failure.stage === "context") return [];
  const edit = failure.editId !== undefined ? byId.get(failure.editId) : undefined;
  if (edit?.replacementInvalid) return []; // edit-invalid-replacement says it, with the same repair
  const target = byId.get(failure.entryId);
  const role = target ? editableRole(target) : undefined;
  const repair: HealthFinding["repair"] = edit
    ? {
        kind: "context-edit",
        action: { action: "restore", targetId: failure.entryId },
        description: l10n.t(
          "append a context_edit that restores the original content of {0} (it supersedes {1})",
          failure.entry,
          edit.id,
        ),
      }
    : role
      ? {
          kind: "context-edit",
          action: { action: "omit", targetId: failure.entryId },
          description: l10n.t(
            "append a context_edit that omits {0} from the context (the file keeps it)",
            failure.entry,
          ),
        }
      : null;
  const what = estimateFailureText(failure);
  return [
    {
      code: "estimate-fails",
      severity: footer ? "error" : "warning",
      entryId: failure.entryId,
      relatedIds: edit ? [edit.id] : [],
      message: footer
        ? l10n.t(
            "{0}. pi's footer and its auto-compaction check after each answer fail on this session, and so does /compact; pi-context shows no number as pi's here. Fix: {1}",
            what,
            repair ? repair.description : l10n.t("only editing the file fixes it; pi-context never rewrites the file"),
          )
        : l10n.t(
            "When pi 1.6.0 prepares a compaction, {0}: its /compact fails, and so does its auto-compaction once the context reaches the threshold. Fix: {1}",
            estimateFailureCause(failure),
            repair ? repair.description : l10n.t("only editing the file fixes it; pi-context never rewrites the file"),
          ),
      source: "session",
      ...(failure.line > 0 ? { line: (edit ?? target)?.line ?? failure.line } : {}),
      repair,
    },
  ];
}
