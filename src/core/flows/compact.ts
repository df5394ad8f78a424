/**
 * pi's `/compact [instructions]` (pi 1.6.0 `compaction.js` `compact`, `appendCompaction`), split into
 * plan → fit → summarize → commit so a UI can show a preview before any token is spent. The commit
 * appends only if the file is as planned (else `SessionChangedError`: re-plan and ask again).
 */

import { projectedEstimateFailure, type EstimateFailure } from "../rules/estimateFailure";
import { analyzeLoaded, type Analysis } from "../rules/analyze";
import { buildCompactionEntry, type CompactionPreparation } from "../rules/compaction";
import { buildProjection } from "../rules/context";
import { measureRequest, tooLargeError, type FitShortfall, type FittedRequest } from "./fit";
import { planFitAdvice } from "./fitAdvice";
import { formatFileOperations } from "../rules/files";
import { previewOf, type CompactionPreview } from "../rules/inspect";
import type { SessionAccess } from "../access/access";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { buildHistoryRequest, buildTurnPrefixRequest, mergeSplitTurn, NO_PRIOR_HISTORY } from "./prompts";
import { compactionMessages, convertToLlm, serializeConversation } from "../rules/serialize";
import { SessionFile } from "../read/session";
import { summaryTokenRange, type TokenRange } from "./summarySize";
import { watchSession, type ChangeStage } from "./watch";
import { compactionSettingsOf, type ProjectSettingsMode } from "../rules/settings";
import { combineUsage, completeSummary, SummarizerError, type Summarizer, type SummaryRequest } from "./summarizer";
import { isUnauthorized } from "./summarizer";
import { currentSystemMessage, estimateProjectedContextTokens } from "../rules/tokens";
import type { CompactionEntry, Usage } from "../types";
import { replanAfterChange, withReplanning, type Replan } from "./replan";
import {
  appendEntries,
  assertWritable,
  expectationHolds,
  expectationOf,
  newEntryId,
  SessionChangedError,
  writeBlocker,
  type AppendExpectation,
} from "./write";
import type { UserPi } from "../pi/userPi";
import { assertPiCanOpen } from "./preflight";
import { prepareOrThrow } from "./cutPoint";

export { InvalidCutPointError, NothingToCompactError } from "./cutPoint";

export interface PlanOptions extends SessionAccessOptions {
  /** Settings (`reserveTokens`, `keepRecentTokens`) and models come from here. */
  agentDir: string;
  projectSettings?: ProjectSettingsMode;
  /** Project settings; default the header's `cwd`. */
  cwd?: string;
  /** Appended as `Additional focus: …`. */
  customInstructions?: string;
  /** Per summary request (tokens). */
  maxOutputTokens: number;
  surface?: MessageSurface;
  pi?: UserPi;
  /** "Compact up to here": pi's `firstKeptEntryId`; must be a valid cut point (`prepareCompactionAt`). */
  keepFrom?: string;
}

/** Everything a preview shows and the later steps need. Immutable once made. */
export interface CompactionPlan {
  file: string;
  /** A private index, not the UI's live one. */
  session: SessionFile;
  analysis: Analysis;
  preparation: CompactionPreparation;
  preview: CompactionPreview;
  /** The append is refused if the file changed since. */
  expectation: AppendExpectation;
  customInstructions?: string;
  /** Absent for a split turn with empty history (pi then reuses the previous summary). */
  historyRequest?: SummaryRequest;
  turnPrefixRequest?: SummaryRequest;
  /** pi's `formatFileOperations` blocks. */
  fileListsText: string;
  /** Tokens, file lists included ({@link summaryTokenRange}). */
  estimatedSummaryRange: TokenRange;
  estimatedSummaryTokens: number;
  estimatedTokensAfterRange: TokenRange;
  estimatedTokensAfter: number;
  access: SessionAccess;
  /** Checked at plan time: the flow refuses before any request. */
  writeBlocker?: string;
  options: PlanOptions;
}

/**
 * Read the session and prepare a compaction at its leaf, like pi's `/compact`.
 * @throws {NothingToCompactError}, {@link InvalidCutPointError} (`keepFrom`), {@link UnsafeSessionWriteError}
 *   (v1/v2, torn final line, not a session), the `fs` error.
 */
export async function planCompaction(file: string, options: PlanOptions): Promise<CompactionPlan> {
  const session = await SessionFile.open(file, { digest: true });
  const expectation = expectationOf(session); // refuses v1/v2 and torn tails before any work
  assertPiCanOpen(session, "compact", options.surface); // before any summarizer request
  const analysis = analyzeLoaded(session, {
    agentDir: options.agentDir,
    ...(options.projectSettings ? { projectSettings: options.projectSettings } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.pi ? { pi: options.pi } : {}),
  });
  const settings = compactionSettingsOf(analysis.settings);
  const prepared = prepareOrThrow(session, settings, analysis.pi.rules, options.keepFrom);
  const custom = options.customInstructions?.trim() || undefined;
  const plan: CompactionPlan = {
    file,
    session,
    analysis,
    preparation: prepared,
    preview: previewOf(prepared),
    expectation,
    fileListsText: formatFileOperations(prepared.readFiles, prepared.modifiedFiles),
    estimatedSummaryRange: { low: 0, high: 0 },
    estimatedSummaryTokens: 0,
    estimatedTokensAfterRange: { low: 0, high: 0 },
    estimatedTokensAfter: 0,
    access: await accessOfSession(session, options),
    options,
  };
  const blocker = writeBlocker(file);
  if (blocker) plan.writeBlocker = blocker;
  attachRequests(plan, custom);
  return plan;
}

/** (Re)build the summary requests and size guesses for `custom` instructions. Mutates `plan`. */
function attachRequests(plan: CompactionPlan, custom: string | undefined): void {
  const prepared = plan.preparation;
  const options = plan.options;
  const text = (entries: CompactionPreparation["messagesToSummarize"]) =>
    serializeConversation(convertToLlm(compactionMessages(plan.session, entries)));
  delete plan.customInstructions;
  delete plan.historyRequest;
  delete plan.turnPrefixRequest;
  if (custom) plan.customInstructions = custom;
  const split = prepared.isSplitTurn && prepared.turnPrefixMessages.length > 0;
  let conversationChars = 0;
  if (!split || prepared.messagesToSummarize.length > 0) {
    const conversation = text(prepared.messagesToSummarize);
    conversationChars += conversation.length;
    plan.historyRequest = buildHistoryRequest({
      conversation,
      ...(prepared.previousSummary ? { previousSummary: prepared.previousSummary } : {}),
      ...(custom ? { customInstructions: custom } : {}),
      maxOutputTokens: options.maxOutputTokens,
    });
  }
  if (split) {
    const conversation = text(prepared.turnPrefixMessages);
    conversationChars += conversation.length;
    plan.turnPrefixRequest = buildTurnPrefixRequest({
      conversation,
      ...(custom ? { customInstructions: custom } : {}),
      maxOutputTokens: options.maxOutputTokens,
    });
  }
  // what the summarizer reads (tool results cut, images gone), not pi's estimate of the messages
  const range = summaryTokenRange({
    summarizedTokens: Math.ceil(conversationChars / 4),
    previousSummary: prepared.previousSummary,
    parts: split ? (prepared.messagesToSummarize.length > 0 ? 2 : 1) : 1,
    reusesPreviousSummary: split && prepared.messagesToSummarize.length === 0,
    maxOutputTokens: options.maxOutputTokens,
    fileListsText: plan.fileListsText,
  });
  plan.estimatedSummaryRange = range;
  plan.estimatedSummaryTokens = range.high;
  const base = plan.preview.tokensAfterWithoutSummary;
  plan.estimatedTokensAfterRange = { low: base + range.low, high: base + range.high };
  plan.estimatedTokensAfter = base + range.high;
}

/**
 * The same plan with other instructions (a UI can say "Nothing to compact" before asking for them).
 * Empty or blank = none; the input plan is not changed.
 */
export function withInstructions(plan: CompactionPlan, instructions: string | undefined): CompactionPlan {
  const custom = instructions?.trim() || undefined;
  const next: CompactionPlan = {
    ...plan,
    options: { ...plan.options, ...(custom ? { customInstructions: custom } : {}) },
  };
  if (!custom) delete next.options.customInstructions;
  attachRequests(next, custom);
  return next;
}

export interface PlanFit {
  history?: FittedRequest;
  turnPrefix?: FittedRequest;
  inputTokens: number;
  /** A request does not fit (`too-large`, with advice): the preview still shows; nothing can be sent. */
  problem?: SummarizerError;
}

/** Count and fit the requests (`fit.ts`); a misfit is `problem`, not a throw. @throws {SummarizerError} */
export async function fitPlan(plan: CompactionPlan, summarizer: Summarizer, signal?: AbortSignal): Promise<PlanFit> {
  const fit: PlanFit = { inputTokens: 0 };
  const capped = (request: SummaryRequest) => ({
    ...request,
    maxOutputTokens: Math.min(request.maxOutputTokens, summarizer.maxOutputTokens),
  });
  if (plan.historyRequest) {
    fit.history = await measureRequest(summarizer, capped(plan.historyRequest), "compaction summary", signal);
    fit.inputTokens += fit.history.inputTokens;
  }
  if (plan.turnPrefixRequest) {
    fit.turnPrefix = await measureRequest(
      summarizer,
      capped(plan.turnPrefixRequest),
      "split-turn prefix summary",
      signal,
    );
    fit.inputTokens += fit.turnPrefix.inputTokens;
  }
  const shortfalls = [fit.history?.shortfall, fit.turnPrefix?.shortfall].filter((s): s is FitShortfall => !!s);
  if (shortfalls.length > 0) fit.problem = tooLargeError(shortfalls, planFitAdvice(plan, summarizer, shortfalls, fit));
  return fit;
}

export interface CompactionDraft {
  /** Merged history/prefix + file-list blocks. */
  summary: string;
  usage?: Usage;
  historyText?: string;
  turnPrefixText?: string;
}

export interface SummarizeCallbacks {
  signal?: AbortSignal;
  onText?: (delta: string) => void;
  onPhase?: (phase: "history" | "turn-prefix", index: number, count: number) => void;
}

/**
 * Summarize like pi's `compact()`: history, plus a turn-prefix request for a split turn, merged with pi's
 * separator, usage summed; then the file lists. @throws {SummarizerError}
 */
export async function summarizePlan(
  plan: CompactionPlan,
  summarizer: Summarizer,
  fit: PlanFit,
  callbacks: SummarizeCallbacks = {},
): Promise<CompactionDraft> {
  const opts = {
    ...(callbacks.signal ? { signal: callbacks.signal } : {}),
    ...(callbacks.onText ? { onText: callbacks.onText } : {}),
  };
  const count = (fit.history ? 1 : 0) + (fit.turnPrefix ? 1 : 0);
  const prep = plan.preparation;
  if (fit.turnPrefix) {
    let historyText = prep.previousSummary ?? NO_PRIOR_HISTORY;
    let historyUsage: Usage | undefined;
    const draft: CompactionDraft = { summary: "" };
    if (fit.history) {
      callbacks.onPhase?.("history", 1, count);
      const history = await completeSummary(summarizer, fit.history.request, "Summarization", opts);
      historyText = history.text;
      historyUsage = history.usage;
      draft.historyText = history.text;
    }
    callbacks.onPhase?.("turn-prefix", count, count);
    const prefix = await completeSummary(summarizer, fit.turnPrefix.request, "Turn prefix summarization", opts);
    draft.turnPrefixText = prefix.text;
    draft.summary = mergeSplitTurn(historyText, prefix.text) + plan.fileListsText;
    const usage =
      historyUsage && prefix.usage ? combineUsage(historyUsage, prefix.usage) : (prefix.usage ?? historyUsage);
    if (usage) draft.usage = usage;
    return draft;
  }
  if (!fit.history) throw new Error("internal error: a compaction plan without requests");
  callbacks.onPhase?.("history", 1, 1);
  const result = await completeSummary(summarizer, fit.history.request, "Summarization", opts);
  const draft: CompactionDraft = { summary: result.text + plan.fileListsText, historyText: result.text };
  if (result.usage) draft.usage = result.usage;
  return draft;
}

export interface CompactionResult {
  file: string;
  entry: CompactionEntry;
  /** The entry's `tokensBefore`. */
  tokensBefore: number;
  /** pi's estimate at the new leaf read back; null when the read-back failed (the compaction is written). */
  tokensAfter: number | null;
  readBackError?: string;
  /** Where pi has no number (`rules/estimateFailure.ts`). */
  estimateFailureBefore?: EstimateFailure;
  estimateFailureAfter?: EstimateFailure;
  /** For the summary diff. */
  previousCompactionId?: string;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Write pi's compaction entry after the live guard, only if the file is byte-for-byte as planned.
 * @throws {LiveSessionError}, {@link SessionChangedError} (nothing written), {@link SessionWriteError}.
 * Never throws once written: a failed read-back leaves `tokensAfter` null.
 */
export async function commitCompaction(
  plan: CompactionPlan,
  draft: CompactionDraft,
  now: () => Date = () => new Date(),
): Promise<CompactionResult> {
  assertAccess(await accessOfSession(plan.session, plan.options), ACTIONS.compact, plan.options);
  const prep = plan.preparation;
  const system = currentSystemMessage(prep.projection);
  const entry = buildCompactionEntry({
    id: newEntryId(plan.session.byId),
    parentId: prep.leafId,
    timestamp: now().toISOString(),
    summary: draft.summary,
    firstKeptEntryId: prep.firstKeptEntryId,
    tokensBefore: prep.tokensBefore,
    readFiles: prep.readFiles,
    modifiedFiles: prep.modifiedFiles,
    ...(draft.usage ? { usage: draft.usage } : {}),
    fromHook: false,
    ...(system ? { systemMessage: system } : {}),
  });
  const bytesAfter = appendEntries(plan.expectation, [entry]);
  // written: nothing may turn the outcome into a failure (that would invite a second compaction)
  const result: CompactionResult = {
    file: plan.file,
    entry,
    tokensBefore: prep.tokensBefore,
    tokensAfter: null,
    bytesBefore: plan.expectation.size,
    bytesAfter,
  };
  if (prep.previousCompactionId) result.previousCompactionId = prep.previousCompactionId;
  if (prep.estimateFailure) result.estimateFailureBefore = prep.estimateFailure;
  try {
    const after = await SessionFile.open(plan.file);
    result.tokensAfter = estimateProjectedContextTokens(buildProjection(after), after).tokens;
    const failure = projectedEstimateFailure(buildProjection(after), after); // the same projection (memoised)
    if (failure) result.estimateFailureAfter = failure;
  } catch (error) {
    result.readBackError = (error as Error).message;
  }
  return result;
}

/** `draft` as the compaction a running pi appends itself through its bridge (pi adds `tokensBefore`, id, time). */
export function providedCompactionOf(
  plan: CompactionPlan,
  draft: CompactionDraft,
): { summary: string; firstKeptEntryId: string; details: { readFiles: string[]; modifiedFiles: string[] } } {
  const prep = plan.preparation;
  return {
    summary: draft.summary,
    firstKeptEntryId: prep.firstKeptEntryId,
    details: { readFiles: [...prep.readFiles], modifiedFiles: [...prep.modifiedFiles] },
  };
}

/** The result of a compaction a running pi appended for the plan. @throws Error when there is no such entry. */
export async function compactionWrittenBy(
  plan: CompactionPlan,
  entryId: string,
  bytesBefore: number,
): Promise<CompactionResult> {
  const back = await SessionFile.open(plan.file);
  const record = back.byId.get(entryId);
  if (!record || record.type !== "compaction") throw new Error(`${plan.file} has no compaction entry ${entryId}`);
  const entry = back.readEntry(record) as CompactionEntry;
  const result: CompactionResult = {
    file: plan.file,
    entry,
    tokensBefore: entry.tokensBefore,
    tokensAfter: estimateProjectedContextTokens(buildProjection(back), back).tokens,
    bytesBefore,
    bytesAfter: back.size,
  };
  if (plan.preparation.previousCompactionId) result.previousCompactionId = plan.preparation.previousCompactionId;
  return result;
}

export interface FlowCallbacks extends SummarizeCallbacks {
  /** Ask after the preview; false = declined. `changed`: re-prepared after the file changed. Undefined: proceed. */
  confirm?: (plan: CompactionPlan, fit: PlanFit, changed: boolean) => Promise<boolean>;
  onPlan?: (plan: CompactionPlan, fit: PlanFit) => void;
  /**
   * After the first confirmation: the summarizer to send with (e.g. with a key just entered), or
   * undefined to give up. Preview and fit never need it, so a preview works without an API key.
   */
  beforeSummarize?: (summarizer: Summarizer, plan: CompactionPlan) => Promise<Summarizer | undefined>;
  /** HTTP 401/403: a summarizer to retry with, or undefined; at most {@link MAX_AUTH_RETRIES}. */
  onUnauthorized?: (error: SummarizerError, summarizer: Summarizer) => Promise<Summarizer | undefined>;
  /** Each finished summary: `write`, `discard` (spent, nothing written) or `retry` with other instructions. */
  reviewDraft?: (plan: CompactionPlan, draft: CompactionDraft) => Promise<DraftReview>;
  /** Wraps summarizing + writing (e.g. a progress notification that adds its own Cancel signal). */
  around?: <T>(task: (callbacks: SummarizeCallbacks) => Promise<T>) => Promise<T>;
  /**
   * The file changed: at `preview` nothing was sent; at `summary` the request was aborted; at `write`
   * the summary was discarded. Nothing was written; the flow re-prepares unless it was the last attempt.
   */
  onSessionChanged?: (stage: ChangeStage, attempt: number) => void;
  /** Who writes (default our append); a running pi's bridge (`liveBridge/routes.ts`) may instead. */
  commit?: (plan: CompactionPlan, draft: CompactionDraft) => Promise<CompactionResult>;
}

export type DraftReview = { action: "write" } | { action: "discard" } | { action: "retry"; instructions: string };

export const MAX_REVIEW_RETRIES = 3;

export type FlowOutcome =
  | {
      kind: "compacted";
      result: CompactionResult;
      plan: CompactionPlan;
      draft: CompactionDraft;
      summarizer: Summarizer;
    }
  | { kind: "declined"; plan: CompactionPlan; stage: "preview" | "summarizer" | "review" };

export const MAX_FLOW_ATTEMPTS = 3;

export const MAX_AUTH_RETRIES = 2;

export type FlowOptions = Omit<PlanOptions, "maxOutputTokens"> & {
  maxOutputTokens?: number;
  /** A plan already made for `file` (e.g. with {@link withInstructions}); its expectation still guards. */
  plan?: CompactionPlan;
  /** ms; default `CHANGE_POLL_MS`. */
  changePollMs?: number;
};

/**
 * Plan → fit → confirm → summarize → commit, re-planning when the file changed (at most
 * {@link MAX_FLOW_ATTEMPTS}); a change while a summary streams aborts it (`watch.ts`).
 * @throws what the steps throw; {@link SessionChangedError} after the last attempt.
 */
export async function runCompactionFlow(
  file: string,
  summarizer: Summarizer,
  options: FlowOptions,
  callbacks: FlowCallbacks = {},
): Promise<FlowOutcome> {
  const { plan: firstPlan, changePollMs, ...planOptions } = options;
  let current = summarizer;
  let ready = false;
  let authRetries = 0;
  return withReplanning(MAX_FLOW_ATTEMPTS, async (attempt) => {
    let plan =
      attempt.number === 1 && firstPlan
        ? firstPlan
        : await planCompaction(file, {
            ...planOptions,
            maxOutputTokens: planOptions.maxOutputTokens ?? current.maxOutputTokens,
          });
    assertAccess(plan.access, ACTIONS.compact, plan.options);
    assertWritable(plan.file); // no question and no summarizer token for a file we cannot write
    const fit = await fitPlan(plan, current, callbacks.signal);
    callbacks.onPlan?.(plan, fit);
    const confirmed = !callbacks.confirm || (await callbacks.confirm(plan, fit, attempt.changed));
    // a request that does not fit is never sent
    if (fit.problem) throw fit.problem;
    if (!confirmed) return { kind: "declined", plan, stage: "preview" };
    if (!ready && callbacks.beforeSummarize) {
      const next = await callbacks.beforeSummarize(current, plan);
      if (!next) return { kind: "declined", plan, stage: "summarizer" };
      current = next;
    }
    ready = true;
    if (!expectationHolds(plan.expectation)) return replanAfterChange("preview", attempt, callbacks.onSessionChanged);
    assertWritable(plan.file); // again: the preview may have been open for a while
    const around = callbacks.around ?? (<T>(task: (c: SummarizeCallbacks) => Promise<T>) => task(callbacks));
    return around(async (inner): Promise<FlowOutcome | Replan> => {
      const summarize = async (p: CompactionPlan, f: PlanFit): Promise<CompactionDraft | undefined> => {
        const watch = watchSession(p.expectation, inner.signal, changePollMs);
        try {
          for (;;) {
            try {
              return await summarizePlan(p, current, f, {
                ...inner,
                signal: watch.signal,
                // a split turn's second request is not sent after a change
                onPhase: (phase, index, count) => {
                  watch.check();
                  inner.onPhase?.(phase, index, count);
                },
              });
            } catch (error) {
              if (watch.changed) return undefined;
              if (!isUnauthorized(error) || !callbacks.onUnauthorized || authRetries >= MAX_AUTH_RETRIES) throw error;
              authRetries++;
              const next = await callbacks.onUnauthorized(error, current);
              if (!next) throw error;
              current = next;
            }
          }
        } finally {
          watch.dispose();
        }
      };
      let draft = await summarize(plan, fit);
      if (!draft) return replanAfterChange("summary", attempt, callbacks.onSessionChanged);
      for (let retries = 0; callbacks.reviewDraft; retries++) {
        const review = await callbacks.reviewDraft(plan, draft);
        if (review.action === "write") break;
        if (review.action === "discard" || retries >= MAX_REVIEW_RETRIES)
          return { kind: "declined" as const, plan, stage: "review" as const };
        plan = withInstructions(plan, review.instructions);
        const refit = await fitPlan(plan, current, inner.signal);
        if (refit.problem) throw refit.problem; // the new instructions made the request too large: never sent
        const again = await summarize(plan, refit);
        if (!again) return replanAfterChange("summary", attempt, callbacks.onSessionChanged);
        draft = again;
      }
      const reviewed = plan;
      const written = draft;
      try {
        const result = await (callbacks.commit ?? commitCompaction)(reviewed, written);
        return { kind: "compacted", result, plan: reviewed, draft: written, summarizer: current };
      } catch (error) {
        if (error instanceof SessionChangedError)
          return replanAfterChange("write", attempt, callbacks.onSessionChanged);
        throw error;
      }
    });
  });
}
