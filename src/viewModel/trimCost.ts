/**
 * The money side of a trim's prompt-cache effect, at the session model's prices
 * ({@link sessionPrices}: the catalog's `cost`, `inspect.cost.prices`); without prices the preview
 * says "price unknown" and shows the token numbers of the cache effect only.
 *
 * Accounting for a trim (no request of its own), with B = tokens now, A = tokens after,
 * R = tokens from the earliest edited item on (re-written to the cache), r = the rate of a warm
 * prompt token (cache read when the provider caches, else input), p = the rate of an uncached
 * prompt token (cache write when the model has one, else input):
 *
 *   next request   without the trim: warm ? B·r : B·p      with it: R·p + (A − R)·r
 *   each later one without: B·r                              with: A·r
 *
 * so the one-off extra of the next request is `with − without − (B − A)·r` and every later
 * request saves `(B − A)·r`. No `vscode`.
 */

import type { TrimCostModel } from "../shared/trim";
import * as l10n from "@vscode/l10n";

/** A model's prices in US dollars per million tokens (pi-ai `Model.cost`, without tiers). */
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
  /** Tokens from the earliest edited item on, after the edits. */
  rewrittenTokens: number;
  prices: TrimPrices;
  cache: TrimCostModel["cache"];
}

/** Requests beyond which a break-even is not reported. */
export const MAX_BREAK_EVEN = 10000;

/** Price a trim (see the module comment). Never throws; negative token counts count as 0. */
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

/**
 * The prices of the session's model, when known: the catalog's (or models.json's) `cost` of
 * `inspect.cost.prices` (issue 14; tiers ignored — a trim has no request of its own); undefined
 * when the model or its prices are unknown.
 */
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
