/**
 * What a compaction or trim costs and saves. With B/A tokens before/after, R re-written to the cache,
 * r the warm rate, p the uncached rate (pi-ai `evaluateCacheWarming`) and c the summary request, the
 * saving after n requests is `Δ1 + (n − 1)·(B − A)·r − c`; later growth cancels out. Without prices
 * the break-even is counted in tokens.
 */

import { priceTokens, ratesFor, type ModelPrices } from "./cost";

/** `warm`: a request within the cache's lifetime. */
export type CacheState = "none" | "warm" | "cold";

export interface ReductionInput {
  /** pi's estimate, e.g. a compaction's `tokensBefore`. */
  tokensBefore: number;
  tokensAfter: number;
  /** Default: all of `tokensAfter`. */
  rewrittenTokens?: number;
  /** A one-time request (a compaction's summary) and the summarizer's prices when known. */
  request?: { inputTokens: number; outputTokens: number; prices?: ModelPrices };
  sessionPrices?: ModelPrices;
  cache: CacheState;
}

/** US dollars; null where a price is unknown. */
export interface ReductionEconomics {
  /** B − A (≤ 0: nothing saved). */
  savedTokensPerRequest: number;
  requestInputTokens: number;
  requestOutputTokens: number;
  /** c. */
  requestCost: number | null;
  /** (B − A)·r. */
  savedCostPerRequest: number | null;
  /** R·(p − r) with a warm cache; negative when it expired anyway. */
  cacheRewriteCost: number | null;
  /** 1 = already with the next request; null = never or unknown. */
  breakEvenRequests: number | null;
  breakEvenBasis: "cost" | "tokens" | "none";
  warmRate: { perMillion: number; kind: "cacheRead" | "input" } | null;
  cache: CacheState;
}

/** Beyond this: "not within 10,000 requests" (null). */
export const MAX_BREAK_EVEN = 10000;

function breakEven(first: number, perRequest: number, oneTime: number): number | null {
  if (first - oneTime >= 0) return 1;
  if (perRequest <= 0) return null;
  const n = 1 + Math.ceil((oneTime - first) / perRequest);
  return n <= MAX_BREAK_EVEN ? n : null;
}

/** Never throws; negative or non-finite token counts count as 0. */
export function priceReduction(input: ReductionInput): ReductionEconomics {
  const clean = (v: number | undefined) => (v !== undefined && Number.isFinite(v) && v > 0 ? v : 0);
  const B = clean(input.tokensBefore);
  const A = clean(input.tokensAfter);
  const R = Math.min(A, input.rewrittenTokens === undefined ? A : clean(input.rewrittenTokens));
  const saved = B - A;
  const reqIn = clean(input.request?.inputTokens);
  const reqOut = clean(input.request?.outputTokens);
  const requestCost = !input.request
    ? 0
    : input.request.prices
      ? priceTokens(input.request.prices, { input: reqIn, output: reqOut })
      : null;
  const result: ReductionEconomics = {
    savedTokensPerRequest: saved,
    requestInputTokens: reqIn,
    requestOutputTokens: reqOut,
    requestCost,
    savedCostPerRequest: null,
    cacheRewriteCost: null,
    breakEvenRequests: null,
    breakEvenBasis: "none",
    warmRate: null,
    cache: input.cache,
  };
  const prices = input.sessionPrices;
  if (prices) {
    const rates = ratesFor(prices, B);
    const caches = input.cache !== "none";
    const r = (caches ? rates.cacheRead : rates.input) / 1e6;
    const p = (caches && rates.cacheWrite > 0 ? rates.cacheWrite : rates.input) / 1e6;
    const without1 = input.cache === "warm" ? B * r : B * p;
    const with1 = R * p + (A - R) * r;
    const first = without1 - with1;
    result.warmRate = { perMillion: r * 1e6, kind: caches ? "cacheRead" : "input" };
    result.savedCostPerRequest = saved * r;
    result.cacheRewriteCost = with1 - without1 + saved * r;
    if (saved > 0 && requestCost !== null) {
      result.breakEvenRequests = breakEven(first, saved * r, requestCost);
      result.breakEvenBasis = "cost";
      return result;
    }
  }
  if (saved > 0) {
    result.breakEvenBasis = "tokens";
    result.breakEvenRequests = breakEven(saved, saved, reqIn + reqOut);
  }
  return result;
}

/** `none`: the provider never reported caching; `warm`: the latest request (ms since epoch) is within `ttlMs`. */
export function cacheStateAt(
  reportedCache: boolean,
  lastRequestAt: number | undefined,
  ttlMs: number,
  now: number,
): CacheState {
  if (!reportedCache) return "none";
  return lastRequestAt !== undefined && now - lastRequestAt < ttlMs ? "warm" : "cold";
}
