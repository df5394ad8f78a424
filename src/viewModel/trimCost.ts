/**
 * A trim's prompt-cache money. B/A = tokens now/after, R = tokens from the earliest edit on,
 * r = warm rate, p = uncached rate. Next request: without `warm ? B·r : B·p`, with `R·p + (A − R)·r`;
 * each later one saves `(B − A)·r`.
 */

import type { TrimCostModel } from "../shared/trim";
import * as l10n from "@vscode/l10n";

/** US dollars per million tokens (pi-ai `Model.cost`, without tiers). */
export interface TrimPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Input of {@link trimEconomics}. */
export interface TrimEconomicsInput {
  tokensBefore: number;
  tokensAfter: number;
  rewrittenTokens: number;
  prices: TrimPrices;
  cache: TrimCostModel["cache"];
}

/** Requests beyond which a break-even is not reported. */
export const MAX_BREAK_EVEN = 10000;

/** Never throws; negative token counts count as 0. */
export function trimEconomics(input: TrimEconomicsInput): TrimCostModel {
  const clean = (v: number) => (Number.isFinite(v) && v > 0 ? v : 0);
  const B = clean(input.tokensBefore);
  const A = clean(input.tokensAfter);
  const R = Math.min(A, clean(input.rewrittenTokens));
  const caches = input.cache !== "none";
  const r = (caches ? input.prices.cacheRead : input.prices.input) / 1e6;
  const p = (caches && input.prices.cacheWrite > 0 ? input.prices.cacheWrite : input.prices.input) / 1e6;
  const without1 = input.cache === "warm" ? B * r : B * p;
  const with1 = R * p + (A - R) * r;
  const perRequestSaving = (B - A) * r;
  const oneOffExtra = with1 - without1 + perRequestSaving;
  const first = without1 - with1;
  let breakEvenRequests: number | null = null;
  if (first >= 0) breakEvenRequests = 1;
  else if (perRequestSaving > 0) {
    const n = 1 + Math.ceil(-first / perRequestSaving);
    breakEvenRequests = n <= MAX_BREAK_EVEN ? n : null;
  }
  return {
    oneOffExtra,
    perRequestSaving,
    breakEvenRequests,
    warmRate: { perMillion: r * 1e6, kind: caches ? "cacheRead" : "input" },
    cache: input.cache,
  };
}

/** Tiers ignored: a trim has no request of its own. */
export function sessionPrices(inspect: { cost?: { prices: TrimPrices | null } }): TrimPrices | undefined {
  const prices = inspect.cost?.prices;
  return prices
    ? { input: prices.input, output: prices.output, cacheRead: prices.cacheRead, cacheWrite: prices.cacheWrite }
    : undefined;
}

/** Why a preview shows no money (when {@link sessionPrices} knows none). */
export function priceUnknownNote(): string {
  return l10n.t(
    "The model's prices are not known (not in pi's catalog or models.json), so only the tokens of the cache effect are shown.",
  );
}
