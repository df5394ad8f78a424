/**
 * Findings for tool-call pairing in what pi sends (`rules/pairing.ts`: pi-ai's `transformMessages`
 * over `convertToLlm` of the projection). Every error kind is repaired by a `context_edit` that
 * omits the tool result: the planner (`rules/editPlan.ts`) omits an orphaned result rather than
 * noting it, and pi-ai then fills a call left without a result with "No result provided".
 */

import type { Projection } from "../rules/context";
import { analyzePairing, NO_RESULT_PROVIDED, type PairingFinding, type PairingReader } from "../rules/pairing";
import type { EntryRecord } from "../read/entries";
import { entryRef, type HealthCode, type HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

/** What OpenAI and Anthropic answer to a tool result without its call (HTTP 400). */
const REJECTED =
  'providers reject the whole request (OpenAI: "No tool call found for function call output…", Anthropic: "unexpected tool_use_id found in tool_result blocks")';

/**
 * One health finding per pairing finding of the projection's context, except a call at the end of
 * the context still waiting for its result (a turn in progress).
 * @param byId the session's entries (for line numbers and kinds in the messages).
 */
export function pairingFindings(
  projection: Projection,
  reader: PairingReader,
  byId: ReadonlyMap<string, EntryRecord>,
): HealthFinding[] {
  // calls at the end of the context wait for their results: pi appends them as its tools finish (or,
  // stopped while they ran, pi-ai fills "No result provided" at the next prompt) — a turn in
  // progress, nothing to report; once anything else follows without their results, it is one
  const settled = analyzePairing(projection, reader).findings.filter(
    (f) => !(f.kind === "missing-result" && f.separatorEntryId === undefined),
  );
  return settled.map((f) => findingOf(f, byId));
}

function findingOf(f: PairingFinding, byId: ReadonlyMap<string, EntryRecord>): HealthFinding {
  const ref = (id: string | undefined) => entryRef(id === undefined ? undefined : byId.get(id), id);
  const call = l10n.t("{0} call {1}", f.toolName ?? "tool", f.toolCallId || l10n.t("(no id)"));
  const result = ref(f.resultEntryId);
  const related = [f.callEntryId, f.separatorEntryId].filter((id): id is string => id !== undefined);
  const omit = (why: string): HealthFinding["repair"] => ({
    kind: "context-edit",
    action: { action: "omit", targetId: f.resultEntryId! },
    description: l10n.t("append a context_edit that omits {0} from the context (the file keeps it){1}", result, why),
  });
  const error = (code: HealthCode, what: string, why: string): HealthFinding => {
    const line = byId.get(f.resultEntryId!)?.line;
    return {
      code,
      severity: "error",
      entryId: f.resultEntryId ?? null,
      relatedIds: related,
      message: l10n.t(
        "{0}: {1}. Fix: omit this tool result from the context (a context edit; nothing is deleted).",
        what,
        REJECTED,
      ),
      source: "session",
      ...(line !== undefined && line > 0 ? { line } : {}),
      repair: omit(why),
    };
  };
  switch (f.kind) {
    case "orphan-result":
      return error(
        "orphan-result",
        l10n.t(
          "{0} answers {1}, which no earlier answer in the context made (it was summarized, edited away, or never there)",
          result,
          call,
        ),
        "",
      );
    case "dropped-call-result":
      return error(
        "dropped-call-result",
        l10n.t(
          "{0} answers {1} of the failed answer {2}; pi-ai drops failed (error/aborted) answers from what it sends, so the result arrives without its call",
          result,
          call,
          ref(f.callEntryId),
        ),
        "",
      );
    case "separated-result":
      return error(
        "separated-result",
        l10n.t(
          '{0} answers {1} of {2}, but {3} comes between them: pi-ai sends "{4}" for the call there and this result later, without its call',
          result,
          call,
          ref(f.callEntryId),
          f.separatorEntryId ? ref(f.separatorEntryId) : l10n.t("another message"),
          NO_RESULT_PROVIDED,
        ),
        l10n.t('; the call keeps pi-ai\'s "{0}"', NO_RESULT_PROVIDED),
      );
    case "duplicate-result":
      return error(
        "duplicate-result",
        l10n.t("{0} answers {1} of {2}, which already has a result", result, call, ref(f.callEntryId)),
        l10n.t("; the first result stays"),
      );
    case "missing-result": {
      const line = byId.get(f.callEntryId!)?.line;
      return {
        code: "missing-result",
        severity: "info",
        entryId: f.callEntryId ?? null,
        relatedIds: f.separatorEntryId ? [f.separatorEntryId] : [],
        message: l10n.t(
          '{0} in {1} has no result in the context: pi-ai sends "{2}" (an error result) for it, which providers accept; the model sees the call as failed. Nothing to fix.',
          call,
          ref(f.callEntryId),
          NO_RESULT_PROVIDED,
        ),
        source: "session",
        ...(line !== undefined && line > 0 ? { line } : {}),
        repair: null,
      };
    }
  }
}
