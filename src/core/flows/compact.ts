/**
 * The compaction flow pi's `/compact [instructions]` runs, split into steps so a UI can show a
 * preview before any token is spent. Shared by `Pi Context: Compact Session…` and `pi-context compact`.
 * No `vscode` import.
 *
 *   planCompaction(file)      read the file, pi's `prepareCompaction`, render the summary requests,
 *                             take the append expectation, check the live-session guard
 *   fitPlan(plan, summarizer) count the requests' tokens and fit them into the summarizer's window
 *   summarizePlan(plan, …)    one request, or two for a split turn (merged like pi's `compact()`),
 *                             then pi's `<read-files>` / `<modified-files>` blocks
 *   commitCompaction(plan, …) live guard again, `buildCompactionEntry`, `appendEntries` with the
 *                             expectation taken at plan time (throws `SessionChangedError` if the
 *                             file changed: re-plan and ask again)
 *   withInstructions(plan, …) the same plan with other custom instructions (a UI prepares first,
 *                             says "Nothing to compact" at once, then asks for instructions)
 *   runCompactionFlow(…)      all of the above with a confirm callback, a hook that makes the
 *                             summarizer ready (API key) after the preview, and the re-plan loop
 *
 * Source: pi 1.6.0 `dist/core/compaction/compaction.js` (`compact`, `generateSummaryWithUsage`,
 * `generateTurnPrefixSummary`), `SessionManager.appendCompaction`.
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

/** Options of {@link planCompaction}. */
export interface PlanOptions extends SessionAccessOptions {
  /** pi's agent dir (settings: `reserveTokens`, `keepRecentTokens`; models). */
  agentDir: string;
  projectSettings?: ProjectSettingsMode;
  /** Working directory for project settings (default: the header's `cwd`). */
  cwd?: string;
  /** `/compact <instructions>`: appended as `Additional focus: …`. */
  customInstructions?: string;
  /** Output limit of each summary request (tokens). */
  maxOutputTokens: number;
  /** Wording of the live-session refusal: VS Code's setting (default) or the CLI's `--guard-seconds`. */
  surface?: MessageSurface;
  /** The user's pi (its rules and catalog) for the analysis. */
  pi?: UserPi;
  /**
   * "Compact up to here": keep from this entry on (pi's `firstKeptEntryId`) instead of where
   * `keepRecentTokens` cuts; it must be one of pi's valid cut points (`prepareCompactionAt`).
   */
  keepFrom?: string;
}

/** Everything a preview shows and the later steps need. Immutable once made. */
export interface CompactionPlan {
  file: string;
  /** The file as read for this plan (a private index, not the UI's live one). */
  session: SessionFile;
  analysis: Analysis;
  preparation: CompactionPreparation;
  preview: CompactionPreview;
  /** Taken when the plan was made; the append is refused if the file changed since. */
  expectation: AppendExpectation;
  customInstructions?: string;
  /** The history request; absent for a split turn whose history part is empty (pi then reuses the previous summary). */
  historyRequest?: SummaryRequest;
  /** The split turn's prefix request. */
  turnPrefixRequest?: SummaryRequest;
  /** pi's file-list blocks appended to the summary (`formatFileOperations`). */
  fileListsText: string;
  /** The new summary's size in tokens as a range (see {@link summaryTokenRange}), file lists included. */
  estimatedSummaryRange: TokenRange;
  /** The upper end of {@link estimatedSummaryRange} (tokens). */
  estimatedSummaryTokens: number;
  /** `preview.tokensAfterWithoutSummary` + {@link estimatedSummaryRange}. */
  estimatedTokensAfterRange: TokenRange;
  /** The upper end of {@link estimatedTokensAfterRange}. */
  estimatedTokensAfter: number;
  /** Who had the session open at plan time (the flow refuses to summarize when someone may). */
  access: SessionAccess;
  /** Why the file cannot be written, checked at plan time (the flow refuses before any request). */
  writeBlocker?: string;
  options: PlanOptions;
}

/**
 * Read the session and prepare a compaction at its leaf, like pi's `/compact`.
 * @throws {NothingToCompactError} when pi would not compact ("Already compacted", "Nothing to compact").
 * @throws {InvalidCutPointError} when `options.keepFrom` is not one of pi's valid cut points.
 * @throws {UnsafeSessionWriteError} for files we never write (v1/v2 sessions, torn final line, not a session).
 * @throws the `fs` error when the file cannot be read.
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

/**
 * (Re)build a plan's summary requests and size guesses for `custom` instructions (pi's
 * `/compact <instructions>` → `Additional focus: …`). Mutates `plan`; only used while a plan is
 * being made.
 */
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
 * The same plan (same file read, preparation, append expectation and live check) with other
 * custom instructions: lets a UI prepare first — and say "Nothing to compact" before asking
 * anything — and ask for the instructions afterwards. The input plan is not changed.
 * @param instructions `/compact <instructions>`; empty or blank = none.
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

/** The fitted requests of a plan. */
export interface PlanFit {
  history?: FittedRequest;
  turnPrefix?: FittedRequest;
  /** Σ input tokens of all requests. */
  inputTokens: number;
  /**
   * Set when a request does not fit the summarizer's window: the `too-large` error with the numbers
   * and what to change (`fitAdvice.ts`). The preview is still shown; nothing can be sent.
   */
  problem?: SummarizerError;
}

/**
 * Count the plan's requests and fit them into the summarizer's window (see `fit.ts`). A request
 * that cannot fit does not throw here: the fit carries the `problem` (so a preview can show what
 * would be summarized, with the advice), and {@link runCompactionFlow} refuses to send it.
 * @throws {SummarizerError} `cancelled` when `signal` fires.
 */
export async function fitPlan(plan: CompactionPlan, summarizer: Summarizer, signal?: AbortSignal): Promise<PlanFit> {
  const fit: PlanFit = { inputTokens: 0 };
  // the summarizer's own output limit caps the plan's
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

/** A finished summary, not yet written. */
export interface CompactionDraft {
  /** Final summary text: merged history/prefix + file-list blocks. */
  summary: string;
  usage?: Usage;
  /** The summarizer's answers (for logs and tests). */
  historyText?: string;
  turnPrefixText?: string;
}

/** Progress of {@link summarizePlan}. */
export interface SummarizeCallbacks {
  signal?: AbortSignal;
  onText?: (delta: string) => void;
  /** Called before each request. */
  onPhase?: (phase: "history" | "turn-prefix", index: number, count: number) => void;
}

/**
 * Summarize like pi's `compact()`: one history request; for a split turn, the history request
 * (only if there are history messages; otherwise the previous summary or `No prior history.`) and
 * the turn-prefix request, merged with pi's separator, usage summed field-wise. Then pi's
 * file-list blocks.
 * @throws {SummarizerError} cancel, network/HTTP failure, empty answer, `length` stop, tool call.
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

/** What was written. */
export interface CompactionResult {
  file: string;
  entry: CompactionEntry;
  /** pi's estimate before (the entry's `tokensBefore`). */
  tokensBefore: number;
  /**
   * pi's projected estimate at the new leaf, read back from the file; null when reading it back
   * failed after the entry was written (see {@link readBackError}) — the compaction is written.
   */
  tokensAfter: number | null;
  /** Why the file could not be read back after the write (e.g. it was moved right after it). */
  readBackError?: string;
  /** Where pi has no number (`estimateFailure.ts`): its `/compact` preparation before, its estimate after. */
  estimateFailureBefore?: EstimateFailure;
  estimateFailureAfter?: EstimateFailure;
  /** The compaction whose summary was updated, if any (for the summary diff). */
  previousCompactionId?: string;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Write the compaction entry: live guard again, then pi's entry shape (parent = the leaf read,
 * `tokensBefore`, `details`, `usage` when reported, `fromHook: false`, the checkpoint
 * `systemMessage`), appended only if the file is byte-for-byte as planned.
 * @throws {LiveSessionError} when the session looks live now.
 * @throws {SessionChangedError} when the file changed since the plan (nothing written).
 * @throws {SessionWriteError} when the append failed (it says what is in the file).
 * Never throws once the entry is written: a failed read-back leaves `tokensAfter` null.
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
  // Written: from here on nothing may turn the outcome into a failure (that would invite a second compaction).
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

/**
 * The summary of `draft` as the compaction a running pi appends itself (its live bridge's
 * `compact` with a `summary`): pi's cut (the plan's `firstKeptEntryId`) and the file lists the
 * entry keeps. pi adds its own `tokensBefore`, id, time and `fromHook: true`.
 */
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

/**
 * The {@link CompactionResult} of a compaction someone else appended for the plan (a running pi):
 * the entry `entryId` read back from the file, pi's estimate at the new leaf.
 * @throws Error when the file has no such compaction entry.
 */
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

/** Callbacks of {@link runCompactionFlow}. */
export interface FlowCallbacks extends SummarizeCallbacks {
  /**
   * Show the preview and ask; false = the user declined (nothing spent, nothing written).
   * `changed` is true when the file changed after an earlier preview and this is the re-prepared one.
   * Undefined = proceed without asking.
   */
  confirm?: (plan: CompactionPlan, fit: PlanFit, changed: boolean) => Promise<boolean>;
  /** Called after fitting, before summarizing. */
  onPlan?: (plan: CompactionPlan, fit: PlanFit) => void;
  /**
   * Called once after the first confirmation, before the first request: returns the summarizer to
   * send with — the same one, or one made ready (e.g. with the API key the user just entered) —
   * or undefined when the user gave up (outcome `declined`, stage `summarizer`; nothing sent).
   * The preview and the fit never need it, so a preview works without an API key.
   */
  beforeSummarize?: (summarizer: Summarizer, plan: CompactionPlan) => Promise<Summarizer | undefined>;
  /**
   * The summarizer answered HTTP 401/403 (key missing or wrong): return a summarizer to retry the
   * same request with (e.g. after asking for a key), or undefined to fail with that error. At most
   * {@link MAX_AUTH_RETRIES} retries per compaction.
   */
  onUnauthorized?: (error: SummarizerError, summarizer: Summarizer) => Promise<Summarizer | undefined>;
  /**
   * Called with each finished summary before it is written (e.g. to show what it lost): `write` it,
   * `discard` it (outcome `declined`, stage `review`; the request was spent, nothing written), or
   * `retry` with other custom instructions (the summary is requested again; a retry beyond
   * {@link MAX_REVIEW_RETRIES} is taken as `discard`). Undefined = write.
   */
  reviewDraft?: (plan: CompactionPlan, draft: CompactionDraft) => Promise<DraftReview>;
  /**
   * Wraps summarizing + writing (e.g. in a progress notification). The task receives the callbacks
   * to use (they may add a signal of their own, e.g. a notification's Cancel button).
   */
  around?: <T>(task: (callbacks: SummarizeCallbacks) => Promise<T>) => Promise<T>;
  /**
   * The session file changed under the flow (someone appended): at `stage` `preview` nothing had
   * been sent; at `summary` the running request was aborted (the server sees the connection close)
   * before this is called; at `write` a finished summary was discarded. Nothing was written in each
   * case; the flow prepares again (the next `confirm` gets `changed` true) unless this was the last
   * attempt ({@link SessionChangedError} follows).
   */
  onSessionChanged?: (stage: ChangeStage, attempt: number) => void;
  /**
   * Who writes the reviewed summary (default {@link commitCompaction}: our append). A running pi
   * with the live bridge appends it itself (`liveBridge/routes.ts` `routeCompactionSummary`); a
   * {@link SessionChangedError} from it re-plans, as a change before our own append does.
   */
  commit?: (plan: CompactionPlan, draft: CompactionDraft) => Promise<CompactionResult>;
}

/** What {@link FlowCallbacks.reviewDraft} decides. */
export type DraftReview = { action: "write" } | { action: "discard" } | { action: "retry"; instructions: string };

/** How often one compaction asks the summarizer again after a review ({@link FlowCallbacks.reviewDraft}). */
export const MAX_REVIEW_RETRIES = 3;

/** Result of {@link runCompactionFlow}. */
export type FlowOutcome =
  | {
      kind: "compacted";
      result: CompactionResult;
      plan: CompactionPlan;
      draft: CompactionDraft;
      summarizer: Summarizer;
    }
  | { kind: "declined"; plan: CompactionPlan; stage: "preview" | "summarizer" | "review" };

/** How often the flow re-prepares after the file changed under it. */
export const MAX_FLOW_ATTEMPTS = 3;

/** How often one compaction retries after HTTP 401/403 ({@link FlowCallbacks.onUnauthorized}). */
export const MAX_AUTH_RETRIES = 2;

/** Options of {@link runCompactionFlow}: {@link PlanOptions} (output limit defaults to the summarizer's). */
export type FlowOptions = Omit<PlanOptions, "maxOutputTokens"> & {
  maxOutputTokens?: number;
  /**
   * A plan already made for `file` with these options (e.g. by {@link planCompaction} +
   * {@link withInstructions}): used as the first plan instead of reading the file again. Its
   * expectation still guards the append; re-plans use `options`.
   */
  plan?: CompactionPlan;
  /** How often a running summary checks the file for changes (ms; default `CHANGE_POLL_MS`). */
  changePollMs?: number;
};

/**
 * Plan → (live check) → fit → confirm → (summarizer ready) → summarize → commit; when the file
 * changed between the preview and the write, re-plan and ask again (at most
 * {@link MAX_FLOW_ATTEMPTS} times). A change while the summary streams aborts it at once (`watch.ts`).
 * Refuses a file it cannot write (read-only, immutable) before the preview and before the first request.
 * @throws {NothingToCompactError}, {@link LiveSessionError}, {@link UnsafeSessionWriteError} (also
 *   for a file that cannot be written), {@link SummarizerError} (incl. cancel and `too-large`),
 *   {@link SessionChangedError} after the last attempt, {@link SessionWriteError} when the append failed.
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
    // a request that does not fit: the preview showed what would be summarized and why not; never sent
    if (fit.problem) throw fit.problem;
    if (!confirmed) return { kind: "declined", plan, stage: "preview" };
    if (!ready && callbacks.beforeSummarize) {
      const next = await callbacks.beforeSummarize(current, plan);
      if (!next) return { kind: "declined", plan, stage: "summarizer" };
      current = next;
    }
    ready = true;
    // changed while the preview was shown: nothing spent yet, prepare again and ask again
    if (!expectationHolds(plan.expectation)) return replanAfterChange("preview", attempt, callbacks.onSessionChanged);
    assertWritable(plan.file); // again: the preview may have been open for a while
    const around = callbacks.around ?? (<T>(task: (c: SummarizeCallbacks) => Promise<T>) => task(callbacks));
    return around(async (inner): Promise<FlowOutcome | Replan> => {
      /** One summary of `p`, the file watched meanwhile: undefined when it changed (the request was aborted). */
      const summarize = async (p: CompactionPlan, f: PlanFit): Promise<CompactionDraft | undefined> => {
        const watch = watchSession(p.expectation, inner.signal, changePollMs);
        try {
          for (;;) {
            try {
              return await summarizePlan(p, current, f, {
                ...inner,
                signal: watch.signal,
                // look once more before each request: a split turn's second request is not sent after a change
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
      // the review of a finished summary: write it, drop it, or ask again with other instructions
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
