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

/** What OpenAI and Anthropic answer to a tool result without its call (HTTP 400). */
const REJECTED =
  'providers reject the whole request (OpenAI: "No tool call found for function call output…", Anthropic: "unexpected tool_use_id found in tool_result blocks")';

/**
 * One health finding per pairing finding of the projection's context.
 * @param byId the session's entries (for line numbers and kinds in the messages).
 */
export function pairingFindings(
  projection: Projection,
  reader: PairingReader,
  byId: ReadonlyMap<string, EntryRecord>,
): HealthFinding[] {
  return analyzePairing(projection, reader).findings.map((f) => findingOf(f, byId));
}

function findingOf(f: PairingFinding, byId: ReadonlyMap<string, EntryRecord>): HealthFinding {
  const ref = (id: string | undefined) => entryRef(id === undefined ? undefined : byId.get(id), id);
  const call = `${f.toolName ?? "tool"} call ${f.toolCallId || "(no id)"}`;
  const result = ref(f.resultEntryId);
  const related = [f.callEntryId, f.separatorEntryId].filter((id): id is string => id !== undefined);
  const omit = (why: string): HealthFinding["repair"] => ({
    kind: "context-edit",
    action: { action: "omit", targetId: f.resultEntryId! },
    description: `append a context_edit that omits ${result} from the context (the file keeps it)${why}`,
  });
  const error = (code: HealthCode, what: string, why: string): HealthFinding => {
    const line = byId.get(f.resultEntryId!)?.line;
    return {
      code,
      severity: "error",
      entryId: f.resultEntryId ?? null,
      relatedIds: related,
      message: `${what}: ${REJECTED}. Fix: omit this tool result from the context (a context edit; nothing is deleted).`,
      source: "session",
      ...(line !== undefined && line > 0 ? { line } : {}),
      repair: omit(why),
    };
  };
  switch (f.kind) {
    case "orphan-result":
      return error(
        "orphan-result",
        `${result} answers ${call}, which no earlier answer in the context made (it was summarised, edited away, or never there)`,
        "",
      );
    case "dropped-call-result":
      return error(
        "dropped-call-result",
        `${result} answers ${call} of the failed answer ${ref(f.callEntryId)}; pi-ai drops failed (error/aborted) answers from what it sends, so the result arrives without its call`,
        "",
      );
    case "separated-result":
      return error(
        "separated-result",
        `${result} answers ${call} of ${ref(f.callEntryId)}, but ${f.separatorEntryId ? ref(f.separatorEntryId) : "another message"} comes between them: pi-ai sends "${NO_RESULT_PROVIDED}" for the call there and this result later, without its call`,
        `; the call keeps pi-ai's "${NO_RESULT_PROVIDED}"`,
      );
    case "duplicate-result":
      return error(
        "duplicate-result",
        `${result} answers ${call} of ${ref(f.callEntryId)}, which already has a result`,
        "; the first result stays",
      );
    case "missing-result": {
      const line = byId.get(f.callEntryId!)?.line;
      return {
        code: "missing-result",
        severity: "info",
        entryId: f.callEntryId ?? null,
        relatedIds: f.separatorEntryId ? [f.separatorEntryId] : [],
        message: `${call} in ${ref(f.callEntryId)} has no result in the context: pi-ai sends "${NO_RESULT_PROVIDED}" (an error result) for it, which providers accept; the model sees the call as failed. Nothing to fix.`,
        source: "session",
        ...(line !== undefined && line > 0 ? { line } : {}),
        repair: null,
      };
    }
  }
}
