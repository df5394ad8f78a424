/**
 * What to change when a summary request does not fit the summarizer's window — worked out from the
 * numbers, with the direction of every setting right. No `vscode` import (the CLI says the same).
 *
 * The levers, and which way they work (pi 1.6.0: `shouldCompact` = context > window − reserveTokens;
 * `findCutPoint` keeps the newest ≈ keepRecentTokens; everything older since the last compaction is
 * summarized, together with the previous summary):
 * - **A summarizer with a larger window** (the session's own model has one that holds the whole
 *   context by construction), or the real window of the model if the setting understates it.
 * - **Compact inside pi** (`/compact`, or through the live bridge): pi summarizes with the session's
 *   model.
 * - **Summarize less this time**: *raise* `keepRecentTokens` — the cut point moves back, more stays
 *   as it is, less goes into the request (the context after compaction is that much larger).
 * - **Smaller compactions from now on**: *raise* `reserveTokens` — pi compacts when the context
 *   reaches `window − reserveTokens`, earlier, so less has piled up each time.
 * Lowering `reserveTokens` compacts *later* and lowering `keepRecentTokens` summarizes *more*: both
 * make the request larger, and the advice says so.
 *
 * Token figures: the requests are counted with the summarizer's tokenizer (or tiktoken), pi's
 * settings are in pi's estimate (chars/4). The advice converts with the ratio of the two measured on
 * this very request, and rounds up to thousands; the figures are approximate and say "about".
 */

import type { Analysis } from "../rules/analyze";
import type { CompactionPreparation } from "../rules/compaction";
import type { ProjectedEntry } from "../rules/context";
import { compactionMessages, convertToLlm, serializeConversation, type EntryReader } from "../rules/serialize";
import { isBranchBudgetLimited } from "../rules/branch";
import { contribution, type BodyReader } from "../rules/tokens";
import type { FitShortfall, FittedRequest } from "./fit";
import { FOREIGN_TOKENIZER_MARGIN } from "./fit";
import type { MessageSurface } from "../access/words";
import type { Summarizer, SummaryRequest } from "./summarizer";
import * as l10n from "@vscode/l10n";

const n = (v: number) => v.toLocaleString("en-US");
const up = (v: number) => Math.ceil(v / 1000) * 1000;

/** The summarizer side of the advice. */
export interface SummarizerFacts {
  surface: MessageSurface;
  /** `openai` or `vscode-lm`. */
  provider: string;
  /** Short model name for the text. */
  model: string;
  window: number;
  maxOutputTokens: number;
}

/** The session side of a compaction's advice (pi's settings and model at the leaf). */
export interface CompactionFacts {
  /** `provider/modelId` of the session's model, if known. */
  sessionModel?: string;
  /** The session model's context window, if known. */
  sessionWindow?: number;
  keepRecentTokens: number;
  reserveTokens: number;
  /** pi's `compaction.enabled`. */
  autoCompaction: boolean;
  /** pi's estimate of what is summarized (history + split-turn prefix). */
  summarizedTokens: number;
  /** The new summary's size (upper end of the guess), tokens. */
  summaryTokens: number;
  /** pi's estimate of the kept part (what `keepRecentTokens` measured). */
  keptTokens: number;
  /**
   * What is summarized, oldest first, with the request each entry goes into and the request's
   * counted tokens per character of its prompt — to find how far back the cut point must move.
   */
  walk?: {
    reader: EntryReader & BodyReader;
    history: readonly ProjectedEntry[];
    turnPrefix: readonly ProjectedEntry[];
    /** Counted tokens per prompt character, per request. */
    tokensPerChar: { history: number; turnPrefix: number };
    /** Excess per request (0 when it fits). */
    excess: { history: number; turnPrefix: number };
  };
}

/**
 * The `keepRecentTokens` at which pi's cut point would leave out enough of the newest summarized
 * messages for every request to fit: walk back from the cut point (the split turn's prefix first,
 * then the history), dropping each entry's serialised size from its request, until both excesses
 * are covered; the answer is the kept part + pi's estimate of what was dropped, rounded up to
 * thousands. Undefined when even keeping everything would not do.
 */
export function keepRecentToFit(facts: CompactionFacts): number | undefined {
  const w = facts.walk;
  if (!w) return undefined;
  let history = w.excess.history;
  let prefix = w.excess.turnPrefix;
  let kept = facts.keptTokens;
  const newestFirst: [ProjectedEntry, "history" | "turnPrefix"][] = [
    ...[...w.turnPrefix].reverse().map((e) => [e, "turnPrefix"] as [ProjectedEntry, "turnPrefix"]),
    ...[...w.history].reverse().map((e) => [e, "history"] as [ProjectedEntry, "history"]),
  ];
  for (const [entry, request] of newestFirst) {
    if (history <= 0 && prefix <= 0) break;
    const chars = serializeConversation(convertToLlm(compactionMessages(w.reader, [entry]))).length + 2;
    if (request === "history") history -= chars * w.tokensPerChar.history;
    else prefix -= chars * w.tokensPerChar.turnPrefix;
    if (entry.roles.length > 0) kept += contribution(entry, w.reader).tokens;
  }
  return history <= 0 && prefix <= 0 ? up(kept) : undefined;
}

/** Where the summarizer's model and window are set on a surface. */
function modelSettings(s: SummarizerFacts): { model: string; window: string } {
  if (s.surface === "cli") return { model: "--model", window: "--summarizer-window" };
  if (s.provider === "vscode-lm")
    return { model: "piContext.summarizer.vscodeLm.family", window: l10n.t("the language model's own window") };
  return { model: "piContext.summarizer.openai.model", window: "piContext.summarizer.openai.contextWindow" };
}

/**
 * pi-estimate tokens per counted token of these requests: above 1 when what pi counts is not sent
 * as such (images, tool results cut to 2,000 characters), below 1 for dense text. Bounded to 1/4…20.
 */
function estimateRatio(estimated: number, counted: number): number {
  if (!(estimated > 0) || !(counted > 0)) return 1;
  return Math.min(20, Math.max(0.25, estimated / counted));
}

/** "Use a summarizer with a window of at least …" (+ the session's model when its window is enough). */
function largerWindow(s: SummarizerFacts, need: number, sessionModel?: string, sessionWindow?: number): string {
  const where = modelSettings(s);
  const own =
    sessionModel && sessionWindow && sessionWindow >= need
      ? l10n.t(" — the session's own model, {0}, has {1}", sessionModel, n(sessionWindow))
      : "";
  const real =
    s.provider === "vscode-lm" && s.surface === "vscode"
      ? ""
      : l10n.t(
          " If {0} really has a larger window than {1}, give its real window instead ({2}).",
          s.model,
          n(s.window),
          where.window,
        );
  return l10n.t(
    "What helps: a summarizer model with a context window of at least {0} tokens{1} ({2}{3}).{4}",
    n(need),
    own,
    where.model,
    s.provider === "vscode-lm" && s.surface === "vscode" ? "" : l10n.t(" and {0}", where.window),
    real,
  );
}

/**
 * The advice for a compaction whose request(s) do not fit (sentences, in order of how directly they
 * help). See the file comment for the levers.
 */
export function compactionFitAdvice(
  shortfalls: readonly FitShortfall[],
  summarizer: SummarizerFacts,
  facts: CompactionFacts,
  countedInputTokens: number,
): string[] {
  if (shortfalls.length === 0) return [];
  const need = Math.max(...shortfalls.map((s) => s.neededWindow));
  const excess = shortfalls.reduce((a, s) => a + s.excess, 0);
  const ratio = estimateRatio(facts.summarizedTokens, countedInputTokens);
  const out = [largerWindow(summarizer, need, facts.sessionModel, facts.sessionWindow)];
  const cw = facts.sessionWindow;
  if (!cw || cw >= need)
    out.push(
      summarizer.surface === "cli"
        ? l10n.t("Or compact inside pi (/compact), which summarizes with the session's own model.")
        : l10n.t(
            'Or let pi compact it with the session\'s own model: /compact inside pi, or "Pi Context: Compact Session…" with the live bridge installed ("Pi Context: Install Live Bridge").',
          ),
    );
  const threshold = cw ? cw - facts.reserveTokens : undefined;
  const keep = keepRecentToFit(facts) ?? up(facts.keepRecentTokens + excess * ratio);
  if (threshold !== undefined && keep > facts.keepRecentTokens && keep + facts.summaryTokens < threshold)
    out.push(
      l10n.t(
        "Or summarize less this time: raise keepRecentTokens in pi's settings from {0} to about {1} — the newest ≈{1} tokens then stay as they are and only the older part is summarized (the context after the compaction is that much larger).",
        n(facts.keepRecentTokens),
        n(keep),
      ),
    );
  if (cw) {
    // what one request may hold: the window minus the output limit and the tokenizer margin, minus
    // the previous summary it carries (at most one output limit) and the prompt (≈ 1,000)
    const room = (summarizer.window - summarizer.maxOutputTokens) / (1 + FOREIGN_TOKENIZER_MARGIN);
    const perCompaction = Math.floor((room - summarizer.maxOutputTokens - 1000) * ratio);
    const reserve = up(cw - facts.keepRecentTokens - perCompaction);
    if (perCompaction > 0 && reserve > facts.reserveTokens && reserve < cw - facts.keepRecentTokens) {
      const at = cw - reserve;
      out.push(
        facts.autoCompaction
          ? l10n.t(
              "To keep later compactions small enough for this summarizer: raise reserveTokens from {0} to about {1} — pi then compacts on its own when the context reaches ≈{2} of {3} tokens, so each compaction summarizes ≈{4} tokens.",
              n(facts.reserveTokens),
              n(reserve),
              n(at),
              n(cw),
              n(perCompaction),
            )
          : l10n.t(
              "pi's auto-compaction is off (compaction.enabled is false), which is how this much piled up: compact before the context passes ≈{0} tokens (or turn it on with reserveTokens ≈{1}).",
              n(at),
              n(reserve),
            ),
      );
    }
  }
  out.push(
    l10n.t(
      "(Lowering reserveTokens makes pi compact later and lowering keepRecentTokens summarizes more — both make the request larger.)",
    ),
  );
  return out;
}

/** The session side of a branch summary's advice. */
export interface BranchFacts {
  /** pi's budget: `(window || 128000) − branchSummary.reserveTokens`. */
  budget: number;
  reserveTokens: number;
  sessionModel?: string;
  sessionWindow?: number;
  /** pi's estimate of the messages sent. */
  summarizedTokens: number;
}

/** The advice for a branch summary whose request does not fit. */
export function branchFitAdvice(shortfall: FitShortfall, summarizer: SummarizerFacts, facts: BranchFacts): string[] {
  const ratio = estimateRatio(facts.summarizedTokens, shortfall.inputTokens);
  const out = [largerWindow(summarizer, shortfall.neededWindow, facts.sessionModel, facts.sessionWindow)];
  if (summarizer.surface === "vscode")
    out.push(
      l10n.t(
        'Or let pi summarize it with the session\'s own model: /tree inside pi, or "Switch to Here…" with the live bridge installed.',
      ),
    );
  // pi takes the newest messages up to the budget: the budget must drop below what is sent now
  // by the excess (in pi's estimate), which raises branchSummary.reserveTokens by as much
  const budget = Math.floor((facts.summarizedTokens - shortfall.excess * ratio) / 1000) * 1000;
  const reserve = facts.reserveTokens + (facts.budget - budget);
  if (budget > 0 && !isBranchBudgetLimited(facts.budget))
    // reserveTokens ≥ the window: pi sets no limit at all, so a smaller reserve introduces one
    out.push(
      l10n.t(
        "Or summarize less of the branch: branchSummary.reserveTokens ({0}) is not below the window, so pi sends the whole branch (no budget limit); lower it in pi's settings to about {1} for a budget of ≈{2} tokens (the window − branchSummary.reserveTokens).",
        n(facts.reserveTokens),
        n(reserve),
        n(budget),
      ),
    );
  else if (budget > 0 && reserve > facts.reserveTokens)
    out.push(
      l10n.t(
        "Or summarize less of the branch: pi keeps its newest messages up to a budget of {0} tokens (the window − branchSummary.reserveTokens); raise branchSummary.reserveTokens in pi's settings from {1} to about {2} to lower it to ≈{3}.",
        n(facts.budget),
        n(facts.reserveTokens),
        n(reserve),
        n(budget),
      ),
    );
  out.push(l10n.t("Or switch without a summary."));
  return out;
}

/** What {@link planFitAdvice} reads of a compaction plan (`CompactionPlan` has it all). */
export interface AdvisedPlan {
  session: EntryReader & BodyReader;
  analysis: Pick<Analysis, "window"> & { inspect: Pick<Analysis["inspect"], "model"> };
  preparation: Pick<CompactionPreparation, "settings" | "keptTokens" | "messagesToSummarize" | "turnPrefixMessages">;
  preview: { summarizedTokens: number };
  options: { surface?: MessageSurface };
  estimatedSummaryTokens: number;
  historyRequest?: SummaryRequest;
  turnPrefixRequest?: SummaryRequest;
}

/** {@link compactionFitAdvice} with a plan's settings, model and sizes. */
export function planFitAdvice(
  plan: AdvisedPlan,
  summarizer: Summarizer,
  shortfalls: FitShortfall[],
  fit: { history?: FittedRequest; turnPrefix?: FittedRequest; inputTokens: number },
): string[] {
  const inspect = plan.analysis.inspect;
  const settings = plan.preparation.settings;
  const sessionWindow = plan.analysis.window.value;
  return compactionFitAdvice(
    shortfalls,
    {
      surface: plan.options.surface ?? "vscode",
      provider: summarizer.provider,
      model: summarizer.modelName ?? summarizer.label,
      window: shortfalls[0]!.window,
      maxOutputTokens: summarizer.maxOutputTokens,
    },
    {
      ...(inspect.model ? { sessionModel: `${inspect.model.provider}/${inspect.model.modelId}` } : {}),
      ...(sessionWindow ? { sessionWindow } : {}),
      keepRecentTokens: settings.keepRecentTokens,
      reserveTokens: settings.reserveTokens,
      autoCompaction: settings.enabled,
      summarizedTokens: plan.preview.summarizedTokens,
      summaryTokens: plan.estimatedSummaryTokens,
      keptTokens: plan.preparation.keptTokens,
      walk: {
        reader: plan.session,
        history: plan.historyRequest ? plan.preparation.messagesToSummarize : [],
        turnPrefix: plan.turnPrefixRequest ? plan.preparation.turnPrefixMessages : [],
        tokensPerChar: {
          history: perChar(fit.history, plan.historyRequest),
          turnPrefix: perChar(fit.turnPrefix, plan.turnPrefixRequest),
        },
        excess: { history: fit.history?.shortfall?.excess ?? 0, turnPrefix: fit.turnPrefix?.shortfall?.excess ?? 0 },
      },
    },
    fit.inputTokens,
  );
}

/** Counted tokens per character of a request (its counter's, with the tiktoken margin). */
function perChar(fitted: FittedRequest | undefined, request: SummaryRequest | undefined): number {
  if (!fitted || !request) return 0;
  const chars = request.systemPrompt.length + request.prompt.length;
  return chars > 0 ? (fitted.inputTokens + (fitted.shortfall?.margin ?? 0)) / chars : 0;
}
