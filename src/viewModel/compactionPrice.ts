/** A compaction's or trim's price in words (`core/rules/reduction.ts`, `core/flows/planPrice.ts`). */

import type { ReductionEconomics } from "../core/rules/reduction";
import type { CompactionPlan } from "../core/flows/compact";
import type { CompactionPrice } from "../core/flows/planPrice";
import { formatCount, formatDollars, formatPricePerMillion, formatTokenRange, pluralText } from "../shared/format";
import * as l10n from "@vscode/l10n";

/** `after 4 requests`, `with the next request`, `not within 10,000 requests`. */
export function breakEvenText(e: ReductionEconomics): string {
  if (e.breakEvenBasis === "none") return l10n.t("never: it saves no tokens");
  const n =
    e.breakEvenRequests === null
      ? l10n.t("not within 10,000 requests")
      : e.breakEvenRequests === 1
        ? l10n.t("with the next request")
        : `after ${pluralText(e.breakEvenRequests, l10n.t("{0} request"), l10n.t("{0} requests"))}`;
  return e.breakEvenBasis === "tokens" ? l10n.t("{0} (counted in tokens: prices unknown)", n) : n;
}

/** The quick pick's label: `≈$0.00062 now · break-even after 3 requests`. */
export function priceHeadline(e: ReductionEconomics): string {
  const now =
    e.requestInputTokens || e.requestOutputTokens
      ? e.requestCost !== null
        ? l10n.t("≈{0} now", formatDollars(e.requestCost))
        : l10n.t("request price unknown")
      : l10n.t("no request");
  return l10n.t("{0} · break-even {1}", now, breakEvenText(e));
}

/** The quick pick's detail: `saves ≈4,016 tokens ($0.00040) on every later request; the prompt cache has expired`. */
export function priceDetail(e: ReductionEconomics): string {
  const saves =
    e.savedTokensPerRequest > 0
      ? l10n.t(
          "saves ≈{0} tokens{1} on every later request",
          formatCount(e.savedTokensPerRequest),
          e.savedCostPerRequest !== null ? ` (${formatDollars(e.savedCostPerRequest)})` : "",
        )
      : l10n.t("saves no tokens");
  return `${saves}; ${cacheWords(e)}`;
}

function cacheWords(e: ReductionEconomics): string {
  switch (e.cache) {
    case "warm":
      return l10n.t("the prompt cache is warm: later requests read the saved tokens from the cache");
    case "cold":
      return l10n.t("the prompt cache has expired: the next request pays full price either way");
    case "none":
      return l10n.t("the provider reported no prompt caching");
  }
}

/** A number a preview cannot know, and why (plain text: "the running pi's settings differ …"). */
export interface NotKnown {
  notKnown: string;
}

/** A plan's before and after, as {@link beforeAfterText} shows them. */
export function planBeforeAfter(plan: Pick<CompactionPlan, "preview" | "estimatedTokensAfterRange">): {
  tokensBefore: number;
  after: { low: number; high: number };
} {
  return { tokensBefore: plan.preview.tokensBefore, after: plan.estimatedTokensAfterRange };
}

/** `45,012 → ≈4,373–4,625 tokens`, or `tokens after: not known (…)` when the plan's numbers do not apply. */
export function beforeAfterText(
  numbers: { tokensBefore: number; after: { low: number; high: number } } | NotKnown,
): string {
  return "notKnown" in numbers
    ? l10n.t("tokens after: not known ({0})", numbers.notKnown)
    : l10n.t("{0} → {1} tokens", formatCount(numbers.tokensBefore), formatTokenRange(numbers.after));
}

/** A price that cannot be known says so and why (never a guessed number). */
export function pricePickRow(price: CompactionPrice | NotKnown): { label: string; detail: string } {
  if ("notKnown" in price) return { label: `$(credit-card) ${l10n.t("Cost not known")}`, detail: price.notKnown };
  return { label: `$(credit-card) ${priceHeadline(price)}`, detail: priceDetail(price) };
}

/** One fact per line (plain text; the caller escapes it for markdown). */
export function priceLines(p: CompactionPrice | (ReductionEconomics & Partial<CompactionPrice>)): string[] {
  const lines: string[] = [];
  if (p.requestInputTokens || p.requestOutputTokens)
    lines.push(
      l10n.t(
        "Summary request: ≈{0} input + ≈{1} output tokens (the output is a guess) — {2}.",
        formatCount(p.requestInputTokens),
        formatCount(p.requestOutputTokens),
        p.requestCost !== null
          ? l10n.t("≈{0} at {1} prices", formatDollars(p.requestCost), p.summarizerPrices ?? l10n.t("the summarizer's"))
          : l10n.t("price unknown ({0})", p.summarizerPrices ?? l10n.t("no prices")),
      ),
    );
  if (p.savedTokensPerRequest > 0) {
    const rate = p.warmRate
      ? l10n.t(
          " at {0} price of {1} ({2})",
          p.warmRate.kind === "cacheRead" ? l10n.t("the cache-read") : l10n.t("the input"),
          p.sessionModel ?? l10n.t("the session's model"),
          formatPricePerMillion(p.warmRate.perMillion),
        )
      : "";
    lines.push(
      l10n.t(
        "Saves ≈{0} tokens on every later request{1}.",
        formatCount(p.savedTokensPerRequest),
        p.savedCostPerRequest !== null
          ? l10n.t(" — {0} each{1}", formatDollars(p.savedCostPerRequest), rate)
          : p.sessionModel
            ? l10n.t(" (no price known for {0})", p.sessionModel)
            : "",
      ),
    );
  } else lines.push(l10n.t("Saves no tokens on later requests (the context after is not smaller)."));
  if (p.cacheRewriteCost !== null && p.cache !== "none")
    lines.push(
      p.cacheRewriteCost >= 0
        ? l10n.t(
            "Re-writing the prompt cache: +{0} once, on the next request ({1}).",
            formatDollars(p.cacheRewriteCost),
            cacheWords(p),
          )
        : l10n.t("The next request saves {0} more ({1}).", formatDollars(-p.cacheRewriteCost), cacheWords(p)),
    );
  else lines.push(l10n.t("Cache: {0}.", cacheWords(p)));
  lines.push(l10n.t("Break-even: {0}.", breakEvenText(p)));
  return lines;
}
