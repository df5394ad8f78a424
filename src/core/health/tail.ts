/**
 * Failures at the end of the current branch: the last answer failed (error, aborted), failed
 * several times in a row, or overflowed the context window — with what pi does next and what the
 * user can do.
 *
 * pi 1.6.0 behaviour cited: pi-ai's `transformMessages` drops `error`/`aborted` answers from what it
 * sends; `estimateContextTokens` ignores their usage (the last good answer's usage counts);
 * `AgentSession._checkCompaction` (after a run, and in `_prepareRun` before the next prompt): with
 * auto-compaction on and the same model, an overflowing answer still in the context is omitted
 * (`_omitRecoveryAttempt`, a `context_edit`) and an "overflow" compaction runs, once per prompt;
 * a silent overflow (the answer came through) compacts without retrying; otherwise the threshold
 * check runs on pi's estimate. `_isRetryableError` = not an overflow and pi-ai's
 * `isRetryableAssistantError`; retries happen within a run (`retry.enabled`, `retry.maxRetries`,
 * default 3), each failed attempt omitted by a `context_edit`.
 */

import type { Projection } from "../rules/context";
import type { EntryRecord } from "../read/entries";
import type { SessionEntry } from "../types";
import { contextOverflowKind, isQuotaError, isRetryableError, type FailedAnswer } from "./failures";
import { entryRef, type HealthFinding, type HealthSeverity } from "./types";
import * as l10n from "@vscode/l10n";

/** What the tail checks read besides the projection. */
export interface TailInput {
  projection: Projection;
  readEntry(record: EntryRecord): SessionEntry;
  /** The session model's context window (tokens), if known. */
  contextWindow: number | undefined;
  /** Auto-compaction on (`compaction.enabled`), and where that was set (for messages). */
  compactionEnabled: boolean;
  compactionEnabledWhere?: string;
  /** The model pi resumes with (`modelSelection`), to tell whether pi treats an overflow as its own. */
  model: { provider: string; modelId: string } | null;
  /** True when a compaction is possible at the leaf (pi's `prepareCompaction` finds something to summarize). */
  canCompact: () => boolean;
}

const USER_LIKE = new Set(["user", "custom", "bashExecution", "branchSummary"]);
const ERROR_TEXT_MAX = 240;

/** Findings about the last answers on the path (see the file comment). */
export function tailFindings(input: TailInput): HealthFinding[] {
  const path = input.projection.path;
  // the run of answers after the last user-like message, newest first
  const run: EntryRecord[] = [];
  let compactionAfter = false;
  for (let i = path.length - 1; i >= 0; i--) {
    const r = path[i]!;
    if (r.type === "compaction") {
      if (run.length === 0) compactionAfter = true;
      break;
    }
    if (r.type === "custom_message" || (r.type === "message" && USER_LIKE.has(r.role ?? ""))) break;
    if (r.type === "message" && r.role === "assistant") {
      if (r.stopReason !== "error" && r.stopReason !== "aborted") {
        if (run.length === 0) return silentOverflow(input, r);
        break;
      }
      run.push(r);
    }
  }
  if (run.length === 0 || compactionAfter) return [];
  const last = run[0]!;
  const answer = failedAnswer(last, input.readEntry);
  const overflow = contextOverflowKind(answer, input.contextWindow);
  if (overflow) return [overflowFinding(input, last, answer, false)];
  if (last.stopReason === "aborted")
    return [
      finding(
        "last-answer-aborted",
        "info",
        last,
        run,
        l10n.t(
          "The last answer, {0}, was stopped before it finished (aborted). {1} Send a prompt to continue.",
          entryRef(last),
          DROPPED,
        ),
      ),
    ];
  const why = errorAdvice(answer);
  if (run.length > 1)
    return [
      finding(
        "repeated-failures",
        "warning",
        last,
        run,
        l10n.t(
          "{0} answers in a row failed at the end of this branch; the last, {1}: {2}. {3} {4}",
          run.length,
          entryRef(last),
          quote(answer.errorMessage),
          DROPPED,
          why,
        ),
      ),
    ];
  return [
    finding(
      "last-answer-error",
      "warning",
      last,
      run,
      l10n.t("The last answer, {0}, failed: {1}. {2} {3}", entryRef(last), quote(answer.errorMessage), DROPPED, why),
    ),
  ];
}

const DROPPED =
  "pi-ai drops failed answers from what it sends and pi ignores their usage (the numbers count from the last good answer), so they cost no context.";

function errorAdvice(answer: FailedAnswer): string {
  if (isQuotaError(answer))
    return l10n.t(
      "This is a quota, budget or plan limit: pi does not retry it, and sending again fails until the limit is lifted or the model is changed.",
    );
  if (isRetryableError(answer))
    return l10n.t(
      "pi retries errors like this itself while it runs (retry.enabled, up to retry.maxRetries times, 3 by default); it does not retry a resumed session on its own. Check the provider (network, load, API key), then send the prompt again.",
    );
  return l10n.t(
    "pi does not retry this kind of error. Fix the cause (API key, model name, request), then send the prompt again.",
  );
}

function quote(text: string | undefined): string {
  if (!text) return l10n.t("(no error message)");
  const one = text.replace(/\s+/g, " ").trim();
  return `"${one.length > ERROR_TEXT_MAX ? `${one.slice(0, ERROR_TEXT_MAX - 1)}…` : one}"`;
}

function finding(
  code: HealthFinding["code"],
  severity: HealthSeverity,
  last: EntryRecord,
  run: readonly EntryRecord[],
  message: string,
  repair: HealthFinding["repair"] = null,
): HealthFinding {
  return {
    code,
    severity,
    entryId: last.id,
    relatedIds: run.slice(1).map((r) => r.id),
    message,
    source: "session",
    ...(last.line > 0 ? { line: last.line } : {}),
    repair,
  };
}

/** The failed answer's fields, with the full error message from its body (the record keeps one line). */
function failedAnswer(record: EntryRecord, readEntry: TailInput["readEntry"]): FailedAnswer {
  let errorMessage = record.errorMessage;
  try {
    const body = readEntry(record) as { message?: { errorMessage?: unknown } };
    if (typeof body.message?.errorMessage === "string") errorMessage = body.message.errorMessage;
  } catch {
    // unreadable body: the record's first line
  }
  const u = record.usage;
  return {
    ...(record.stopReason !== undefined ? { stopReason: record.stopReason } : {}),
    ...(errorMessage !== undefined ? { errorMessage } : {}),
    ...(record.provider !== undefined ? { provider: record.provider } : {}),
    input: u?.input ?? Number.NaN,
    output: u?.output ?? Number.NaN,
    cacheRead: u?.cacheRead ?? Number.NaN,
  };
}

/** A successful last answer whose usage says the input exceeded the window (pi-ai's silent / length cases). */
function silentOverflow(input: TailInput, last: EntryRecord): HealthFinding[] {
  if (last.stopReason !== "stop" && last.stopReason !== "length") return [];
  const answer = failedAnswer(last, input.readEntry);
  return contextOverflowKind(answer, input.contextWindow) ? [overflowFinding(input, last, answer, true)] : [];
}

function overflowFinding(input: TailInput, last: EntryRecord, answer: FailedAnswer, silent: boolean): HealthFinding {
  const sameModel =
    input.model !== null && input.model.provider === last.provider && input.model.modelId === last.model;
  const canCompact = input.canCompact();
  const piRecovers = input.compactionEnabled && sameModel && canCompact;
  const what = silent
    ? l10n.t(
        "The last answer, {0}, came back, but its usage ({1} input tokens) is over the context window of {2}: the provider cut or ignored part of the context.",
        entryRef(last),
        answer.input + answer.cacheRead,
        String(input.contextWindow),
      )
    : l10n.t(
        "The last answer, {0}, failed because the context is too large for the model: {1}. pi-ai drops failed answers from what it sends and pi ignores their usage, so the next request is as large as this one.",
        entryRef(last),
        quote(answer.errorMessage),
      );
  const next = !input.compactionEnabled
    ? l10n.t(
        "Auto-compaction is off (compaction.enabled: false{0}), so pi sends the same context again and the provider rejects it again.",
        input.compactionEnabledWhere ? l10n.t(" in {0}", input.compactionEnabledWhere) : "",
      )
    : !sameModel
      ? l10n.t(
          "It came from another model than the one pi resumes with, so pi does not compact for it; the threshold check decides.",
        )
      : !canCompact
        ? l10n.t(
            "pi would compact before the next prompt, but there is nothing before the kept messages to summarize, so the request stays too large.",
          )
        : silent
          ? l10n.t("pi compacts before the next prompt (an overflow compaction, without retrying the answer).")
          : l10n.t(
              'Before the next prompt pi omits this attempt and runs an overflow compaction, once; if that fails, pi stops with "Context overflow recovery failed after one compact-and-retry attempt".',
            );
  const fix = l10n.t(
    "What you can do: compact now (Pi Context: Compact Session…, or pi-context compact), remove large tool outputs from the context, switch to an earlier point, or continue with a model that has a larger context window.",
  );
  return finding(
    "context-overflow",
    piRecovers ? "warning" : "error",
    last,
    [],
    `${what} ${next} ${fix}`,
    canCompact
      ? {
          kind: "compaction",
          description: l10n.t(
            "compact the session (pi's compaction through the configured summarizer) so the context fits again",
          ),
        }
      : null,
  );
}
