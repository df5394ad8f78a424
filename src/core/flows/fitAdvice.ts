/**
 * What to change when a summary request does not fit the summarizer (pi 1.6.0: compaction when context
 * > window − reserveTokens; `findCutPoint` keeps ≈ keepRecentTokens). Raise `keepRecentTokens` to
 * summarize less now; raise `reserveTokens` to compact earlier; lowering either makes requests larger.
 * Counted tokens convert to pi's chars/4 estimate by the ratio measured on this request ("about").
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

export interface SummarizerFacts {
  surface: MessageSurface;
  provider: string;
  model: string;
  window: number;
  maxOutputTokens: number;
}

export interface CompactionFacts {
  sessionModel?: string;
  sessionWindow?: number;
  keepRecentTokens: number;
  reserveTokens: number;
  autoCompaction: boolean;
  /** pi's estimate of history + split-turn prefix. */
  summarizedTokens: number;
  /** Upper end of the guess, tokens. */
  summaryTokens: number;
  keptTokens: number;
  /** What is summarized, oldest first, with its request and tokens per prompt character (how far back to cut). */
  walk?: {
    reader: EntryReader & BodyReader;
    history: readonly ProjectedEntry[];
    turnPrefix: readonly ProjectedEntry[];
    tokensPerChar: { history: number; turnPrefix: number };
    excess: { history: number; turnPrefix: number };
  };
}

/**
 * The `keepRecentTokens` at which every request fits: walk back from the cut point (turn prefix first),
 * until both excesses are covered; rounded up to thousands. Undefined when nothing would do.
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

function modelSettings(s: SummarizerFacts): { model: string; window: string } {
  if (s.surface === "cli") return { model: "--model", window: "--summarizer-window" };
  if (s.provider === "vscode-lm")
    return { model: "piContext.summarizer.vscodeLm.family", window: l10n.t("the language model's own window") };
  return { model: "piContext.summarizer.openai.model", window: "piContext.summarizer.openai.contextWindow" };
}

/** pi-estimate tokens per counted token (images, cut tool results push it above 1), bounded to 1/4…20. */
function estimateRatio(estimated: number, counted: number): number {
  if (!(estimated > 0) || !(counted > 0)) return 1;
  return Math.min(20, Math.max(0.25, estimated / counted));
}

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

/** Sentences, most direct help first (levers in the file comment). */
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
    // per request: window − output limit − tokenizer margin − previous summary − prompt (≈ 1,000)
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

export interface BranchFacts {
  /** pi's budget: `(window || 128000) − branchSummary.reserveTokens`. */
  budget: number;
  reserveTokens: number;
  sessionModel?: string;
  sessionWindow?: number;
  summarizedTokens: number;
}

export function branchFitAdvice(shortfall: FitShortfall, summarizer: SummarizerFacts, facts: BranchFacts): string[] {
  const ratio = estimateRatio(facts.summarizedTokens, shortfall.inputTokens);
  const out = [largerWindow(summarizer, shortfall.neededWindow, facts.sessionModel, facts.sessionWindow)];
  if (summarizer.surface === "vscode")
    out.push(
      l10n.t(
        'Or let pi summarize it with the session\'s own model: /tree inside pi, or "Switch to Here…" with the live bridge installed.',
      ),
    );
  // pi takes the newest messages up to the budget: lower it by the excess (raise reserveTokens as much)
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

/** Counted tokens per request character, with the tiktoken margin. */
function perChar(fitted: FittedRequest | undefined, request: SummaryRequest | undefined): number {
  if (!fitted || !request) return 0;
  const chars = request.systemPrompt.length + request.prompt.length;
  return chars > 0 ? (fitted.inputTokens + (fitted.shortfall?.margin ?? 0)) / chars : 0;
}
