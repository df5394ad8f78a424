/**
 * "Summarize these messages": replaces a span of pi's context (widened to whole tool call/result
 * groups) with one note, in steps so a UI can preview before any token is spent. The note goes into
 * the span's first message, the rest is omitted, all in one append (`commitContextEdits`).
 */

import { assertPiCanOpen } from "./preflight";
import { analyzeLoaded, type Analysis } from "../rules/analyze";
import { compactionMessages, convertToLlm, serializeConversation } from "../rules/serialize";
import {
  isSpanRefusal,
  planSpan,
  spanEditPreparation,
  spanNote,
  spanNoteHeader,
  type SpanPlan,
  type SpanRefusal,
} from "../rules/spanSummary";
import type { ContextEditPreparation } from "../rules/editPlan";
import { SessionFile } from "../read/session";
import type { SessionAccess } from "../access/access";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import type { ProjectSettingsMode } from "../rules/settings";
import type { UserPi } from "../pi/userPi";
import { commitContextEdits, type ContextEditPlan, type ContextEditResult } from "./contextEdit";
import { measureRequest, tooLargeError, type FittedRequest } from "./fit";
import { buildSpanRequest } from "./prompts";
import { replanAfterChange, withReplanning, type Replan } from "./replan";
import { completeSummary, isUnauthorized, SummarizerError, type Summarizer, type SummaryRequest } from "./summarizer";
import { summaryTokenRange, type TokenRange } from "./summarySize";
import { watchSession, type ChangeStage } from "./watch";
import {
  assertWritable,
  expectationHolds,
  expectationOf,
  SessionChangedError,
  writeBlocker,
  type AppendExpectation,
} from "./write";
import type { Usage } from "../types";
import * as l10n from "@vscode/l10n";

/** The span cannot be summarized (see {@link SpanRefusal}); nothing was asked, sent or written. */
export class SpanRefusedError extends Error {
  readonly code: SpanRefusal["code"];
  readonly entryIds: string[];
  constructor(refusal: SpanRefusal, describe: (id: string) => string) {
    super(spanRefusalText(refusal, describe));
    this.name = "SpanRefusedError";
    this.code = refusal.code;
    this.entryIds = refusal.entryIds;
  }
}

function spanRefusalText(r: SpanRefusal, describe: (id: string) => string): string {
  const list = r.entryIds.map(describe).join(", ");
  switch (r.code) {
    case "unknown":
      return l10n.t("There is no entry {0} in this session. Nothing was written.", list);
    case "not-in-context":
      return l10n.t(
        "Entry {0} is not in pi's context at the leaf (another branch, or summarized by a compaction). Nothing was written.",
        list,
      );
    case "not-editable":
      return l10n.t(
        "The span includes {0}, which a context edit cannot change (pi 1.6.0 edits user, assistant, tool result and custom messages): choose a span that ends before it or starts after it. Nothing was written.",
        list,
      );
    case "empty":
      return l10n.t("The span from {0} has no message left to summarize. Nothing was written.", list);
    case "no-target":
      return l10n.t(
        "The span holds only tool results without their call ({0}): there is no message to carry the summary. Nothing was written.",
        list,
      );
    case "unpaired":
      return l10n.t(
        "Summarizing this span would leave tool results without their call ({0}). Nothing was written.",
        list,
      );
  }
}

export interface SpanPlanOptions extends SessionAccessOptions {
  agentDir: string;
  projectSettings?: ProjectSettingsMode;
  cwd?: string;
  customInstructions?: string;
  maxOutputTokens: number;
  surface?: MessageSurface;
  pi?: UserPi;
  /** Plan at a running pi's in-memory leaf (its bridge's state). */
  leafId?: string | null;
}

export interface SpanSummaryPlan {
  file: string;
  session: SessionFile;
  analysis: Analysis;
  span: SpanPlan;
  /** Serialized like pi's compaction input. */
  request: SummaryRequest;
  /** With the note's header only: tokens after without the summary, cache effect, bytes. */
  edits: ContextEditPreparation;
  estimatedSummaryRange: TokenRange;
  estimatedTokensAfterRange: TokenRange;
  expectation: AppendExpectation;
  access: SessionAccess;
  writeBlocker?: string;
  customInstructions?: string;
  options: SpanPlanOptions;
}

/** Plan the summary of `fromId`…`toId` (either order). @throws {SpanRefusedError}, the write path's refusals. */
export async function planSpanSummary(
  file: string,
  fromId: string,
  toId: string,
  options: SpanPlanOptions,
): Promise<SpanSummaryPlan> {
  const session = await SessionFile.open(file, { digest: true });
  const expectation = expectationOf(session);
  assertPiCanOpen(session, "summarize messages in", options.surface); // before any question or request
  const analysis = analyzeLoaded(session, {
    agentDir: options.agentDir,
    ...(options.projectSettings ? { projectSettings: options.projectSettings } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.pi ? { pi: options.pi } : {}),
  });
  const describe = (id: string) => {
    const r = session.byId.get(id);
    return r ? `${id} (${r.role ?? r.type})` : id;
  };
  const span = planSpan(session, fromId, toId, options.leafId !== undefined ? { leafId: options.leafId } : {});
  if (isSpanRefusal(span)) throw new SpanRefusedError(span, describe);
  const edits = spanEditPreparation(span, `${spanNoteHeader(span)}\n\n`, session);
  if (edits.newPairingErrors.length > 0)
    throw new SpanRefusedError(
      {
        reason: "span",
        code: "unpaired",
        entryIds: edits.newPairingErrors.map((f) => f.resultEntryId ?? f.toolCallId),
      },
      describe,
    );
  const conversation = serializeConversation(convertToLlm(compactionMessages(session, span.messages)));
  const plan: SpanSummaryPlan = {
    file,
    session,
    analysis,
    span,
    request: buildSpanRequest({ conversation, maxOutputTokens: options.maxOutputTokens }),
    edits,
    estimatedSummaryRange: { low: 0, high: 0 },
    estimatedTokensAfterRange: { low: 0, high: 0 },
    expectation,
    access: await accessOfSession(session, options),
    options,
  };
  const blocker = writeBlocker(file);
  if (blocker) plan.writeBlocker = blocker;
  return withSpanInstructions(plan, options.customInstructions, conversation);
}

/** The same plan with other instructions; `conversation` is read from the request when not given. */
export function withSpanInstructions(
  plan: SpanSummaryPlan,
  instructions: string | undefined,
  conversation = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(plan.request.prompt)?.[1] ?? "",
): SpanSummaryPlan {
  const custom = instructions?.trim() || undefined;
  const next: SpanSummaryPlan = {
    ...plan,
    request: buildSpanRequest({
      conversation,
      ...(custom ? { customInstructions: custom } : {}),
      maxOutputTokens: plan.options.maxOutputTokens,
    }),
    options: { ...plan.options, ...(custom ? { customInstructions: custom } : {}) },
  };
  if (custom) next.customInstructions = custom;
  else {
    delete next.customInstructions;
    delete next.options.customInstructions;
  }
  const range = summaryTokenRange({
    summarizedTokens: Math.ceil(conversation.length / 4),
    previousSummary: undefined,
    parts: 1,
    reusesPreviousSummary: false,
    maxOutputTokens: plan.options.maxOutputTokens,
    fileListsText: "",
  });
  next.estimatedSummaryRange = range;
  const base = plan.edits.tokensAfter.tokens;
  next.estimatedTokensAfterRange = { low: base + range.low, high: base + range.high };
  return next;
}

/** `problem`: it does not fit the summarizer (never sent). */
export interface SpanFit {
  request: FittedRequest;
  inputTokens: number;
  problem?: SummarizerError;
}

/** @throws {SummarizerError} `cancelled`. */
export async function fitSpanPlan(
  plan: SpanSummaryPlan,
  summarizer: Summarizer,
  signal?: AbortSignal,
): Promise<SpanFit> {
  const capped = {
    ...plan.request,
    maxOutputTokens: Math.min(plan.request.maxOutputTokens, summarizer.maxOutputTokens),
  };
  const request = await measureRequest(summarizer, capped, l10n.t("scoped summary"), signal);
  const fit: SpanFit = { request, inputTokens: request.inputTokens };
  if (request.shortfall)
    fit.problem = tooLargeError(
      [request.shortfall],
      [l10n.t("Choose a shorter span, or a summarizer with a larger context window.")],
    );
  return fit;
}

export interface SpanSummaryResult extends ContextEditResult {
  note: string;
  /** As written: pi's estimate after, predicted before the write. */
  edits: ContextEditPreparation;
}

/** One append, every prefix pairing-safe. @throws as `commitContextEdits`; {@link SpanRefusedError}. */
export async function commitSpanSummary(
  plan: SpanSummaryPlan,
  summary: string,
  now: () => Date = () => new Date(),
): Promise<SpanSummaryResult> {
  const note = spanNote(plan.span, summary);
  const edits = spanEditPreparation(plan.span, note, plan.session);
  const editPlan: ContextEditPlan = {
    file: plan.file,
    session: plan.session,
    actions: [],
    preparation: edits,
    expectation: plan.expectation,
    access: plan.access,
    options: plan.options,
  };
  return { ...(await commitContextEdits(editPlan, now)), note, edits };
}

export interface SpanFlowCallbacks {
  signal?: AbortSignal;
  onText?: (delta: string) => void;
  confirm?: (plan: SpanSummaryPlan, fit: SpanFit, changed: boolean) => Promise<boolean>;
  /** The summarizer to send with (e.g. after asking for a key), or undefined to stop. */
  beforeSummarize?: (summarizer: Summarizer, plan: SpanSummaryPlan) => Promise<Summarizer | undefined>;
  /** HTTP 401/403: a summarizer to retry with (once), or undefined. */
  onUnauthorized?: (error: SummarizerError, summarizer: Summarizer) => Promise<Summarizer | undefined>;
  around?: <T>(
    task: (callbacks: { signal?: AbortSignal; onText?: (delta: string) => void }) => Promise<T>,
  ) => Promise<T>;
  onSessionChanged?: (stage: ChangeStage, attempt: number) => void;
}

export type SpanFlowOutcome =
  | { kind: "summarized"; plan: SpanSummaryPlan; result: SpanSummaryResult; summary: string; usage?: Usage }
  | { kind: "declined"; plan: SpanSummaryPlan; stage: "preview" | "summarizer" };

/** Plan → fit → confirm → summarize (file watched) → commit, re-planned after a change at most 3 times. */
export async function runSpanSummaryFlow(
  file: string,
  fromId: string,
  toId: string,
  summarizer: Summarizer,
  options: Omit<SpanPlanOptions, "maxOutputTokens"> & { maxOutputTokens?: number; plan?: SpanSummaryPlan },
  callbacks: SpanFlowCallbacks = {},
): Promise<SpanFlowOutcome> {
  const { plan: firstPlan, ...planOptions } = options;
  let current = summarizer;
  let ready = false;
  let authRetried = false;
  return withReplanning(3, async (attempt) => {
    const plan =
      attempt.number === 1 && firstPlan
        ? firstPlan
        : await planSpanSummary(file, fromId, toId, {
            ...planOptions,
            maxOutputTokens: planOptions.maxOutputTokens ?? current.maxOutputTokens,
          });
    assertAccess(plan.access, ACTIONS.contextEdit, plan.options);
    assertWritable(plan.file);
    const fit = await fitSpanPlan(plan, current, callbacks.signal);
    const confirmed = !callbacks.confirm || (await callbacks.confirm(plan, fit, attempt.changed));
    if (fit.problem) throw fit.problem;
    if (!confirmed) return { kind: "declined", plan, stage: "preview" };
    if (!ready && callbacks.beforeSummarize) {
      const next = await callbacks.beforeSummarize(current, plan);
      if (!next) return { kind: "declined", plan, stage: "summarizer" };
      current = next;
    }
    ready = true;
    if (!expectationHolds(plan.expectation)) return replanAfterChange("preview", attempt, callbacks.onSessionChanged);
    const around =
      callbacks.around ??
      (<T>(task: (c: { signal?: AbortSignal; onText?: (delta: string) => void }) => Promise<T>) => task(callbacks));
    return around(async (inner): Promise<SpanFlowOutcome | Replan> => {
      const watch = watchSession(plan.expectation, inner.signal);
      let text: string;
      let usage: Usage | undefined;
      try {
        for (;;) {
          try {
            const result = await completeSummary(
              current,
              { ...fit.request.request, maxOutputTokens: fit.request.request.maxOutputTokens },
              "Scoped summary",
              { signal: watch.signal, ...(inner.onText ? { onText: inner.onText } : {}) },
            );
            text = result.text;
            usage = result.usage;
            break;
          } catch (error) {
            if (watch.changed) return replanAfterChange("summary", attempt, callbacks.onSessionChanged);
            if (!isUnauthorized(error) || !callbacks.onUnauthorized || authRetried) throw error;
            authRetried = true;
            const next = await callbacks.onUnauthorized(error, current);
            if (!next) throw error;
            current = next;
          }
        }
      } finally {
        watch.dispose();
      }
      try {
        const result = await commitSpanSummary(plan, text);
        return { kind: "summarized", plan, result, summary: text, ...(usage ? { usage } : {}) };
      } catch (error) {
        if (error instanceof SessionChangedError)
          return replanAfterChange("write", attempt, callbacks.onSessionChanged);
        throw error;
      }
    });
  });
}
