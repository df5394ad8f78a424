/**
 * A compaction's (or a trim's) price in words, for the compaction preview (quick pick and details
 * document), `pi-context compact` and a trim preview: the summary request's tokens and cost, the
 * tokens and dollars saved on every later request, the one-time cache re-write, the break-even.
 * Numbers from `priceReduction` (`core/rules/reduction.ts`) / `priceCompactionPlan` (`core/flows/planPrice.ts`).
 */

import type { ReductionEconomics } from "../core/rules/reduction";
import type { CompactionPrice } from "../core/flows/planPrice";
import { formatCount, formatDollars, plural } from "../shared/format";

/** `after 4 requests`, `with the next request`, `not within 10,000 requests`. */
export function breakEvenText(e: ReductionEconomics): string {
  if (e.breakEvenBasis === "none") return "never: it saves no tokens";
  const n =
    e.breakEvenRequests === null
      ? "not within 10,000 requests"
      : e.breakEvenRequests === 1
        ? "with the next request"
        : `after ${plural(e.breakEvenRequests, "request")}`;
  return e.breakEvenBasis === "tokens" ? `${n} (counted in tokens: prices unknown)` : n;
}

/** The quick pick's label: `≈$0.00062 now · break-even after 3 requests`. */
export function priceHeadline(e: ReductionEconomics): string {
  const now =
    e.requestInputTokens || e.requestOutputTokens
      ? e.requestCost !== null
        ? `≈${formatDollars(e.requestCost)} now`
        : "request price unknown"
      : "no request";
  return `${now} · break-even ${breakEvenText(e)}`;
}

/** The quick pick's detail: `saves ≈4,016 tokens ($0.00040) on every later request; the prompt cache has expired`. */
export function priceDetail(e: ReductionEconomics): string {
  const saves =
    e.savedTokensPerRequest > 0
      ? `saves ≈${formatCount(e.savedTokensPerRequest)} tokens${e.savedCostPerRequest !== null ? ` (${formatDollars(e.savedCostPerRequest)})` : ""} on every later request`
      : "saves no tokens";
  return `${saves}; ${cacheWords(e)}`;
}

function cacheWords(e: ReductionEconomics): string {
  switch (e.cache) {
    case "warm":
      return "the prompt cache is warm: later requests read the saved tokens from the cache";
    case "cold":
      return "the prompt cache has expired: the next request pays full price either way";
    case "none":
      return "the provider reported no prompt caching";
  }
}

/** The full explanation, one fact per line (plain text; the caller escapes it for markdown). */
export function priceLines(p: CompactionPrice | (ReductionEconomics & Partial<CompactionPrice>)): string[] {
  const lines: string[] = [];
  if (p.requestInputTokens || p.requestOutputTokens)
    lines.push(
      `Summary request: ≈${formatCount(p.requestInputTokens)} input + ≈${formatCount(p.requestOutputTokens)} output tokens (the output is a guess) — ${p.requestCost !== null ? `≈${formatDollars(p.requestCost)} at ${p.summarizerPrices ?? "the summarizer's"} prices` : `price unknown (${p.summarizerPrices ?? "no prices"})`}.`,
    );
  if (p.savedTokensPerRequest > 0) {
    const rate = p.warmRate
      ? ` at ${p.warmRate.kind === "cacheRead" ? "the cache-read" : "the input"} price of ${p.sessionModel ?? "the session's model"} ($${p.warmRate.perMillion}/M)`
      : "";
    lines.push(
      `Saves ≈${formatCount(p.savedTokensPerRequest)} tokens on every later request${p.savedCostPerRequest !== null ? ` — ${formatDollars(p.savedCostPerRequest)} each${rate}` : p.sessionModel ? ` (no price known for ${p.sessionModel})` : ""}.`,
    );
  } else lines.push("Saves no tokens on later requests (the context after is not smaller).");
  if (p.cacheRewriteCost !== null && p.cache !== "none")
    lines.push(
      p.cacheRewriteCost >= 0
        ? `Re-writing the prompt cache: +${formatDollars(p.cacheRewriteCost)} once, on the next request (${cacheWords(p)}).`
        : `The next request saves ${formatDollars(-p.cacheRewriteCost)} more (${cacheWords(p)}).`,
    );
  else lines.push(`Cache: ${cacheWords(p)}.`);
  lines.push(`Break-even: ${breakEvenText(p)}.`);
  return lines;
}
