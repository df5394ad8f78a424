/**
 * What a context reduction costs and saves: a compaction (one summary request, then a smaller
 * prompt on every later request) or a trim (no request, a smaller prompt from the first changed
 * entry on). Pure; the compaction preview, `pi-context compact --dry-run` and the trim preview call
 * {@link priceReduction}.
 *
 * Per-request accounting, with B = tokens now, A = tokens after, R = tokens of the new prompt the
 * provider must write to its cache again (a compaction: all of A; a trim: what follows the first
 * changed entry), r = the rate of a warm prompt token (the cache-read price when the provider
 * caches, else the input price), p = the rate of an uncached prompt token (pi's cache-warming
 * rule, pi-ai `evaluateCacheWarming`: the cache-write price when the model has one, else the input
 * price), c = the one-time request (summary input + output at the summarizer's prices):
 *
 *   next request   without: warm cache ? B·r : B·p      with: R·p + (A − R)·r
 *   each later one without: B·r                         with: A·r
 *
 * so after n requests the reduction has saved `Δ1 + (n − 1)·(B − A)·r − c`, Δ1 = the first line's
 * difference; the break-even is the first n where that is ≥ 0. Growth of the context after now is
 * the same on both sides and cancels. Without prices the break-even is counted in tokens (request
 * tokens / tokens saved per request) and says so.
 */

import { priceTokens, ratesFor, type ModelPrices } from "./cost";

/** The prompt cache of the session now: not used by the provider, warm (a request within its lifetime), or expired. */
export type CacheState = "none" | "warm" | "cold";

/** Input of {@link priceReduction}. */
export interface ReductionInput {
  /** Context tokens now (pi's estimate, e.g. a compaction's `tokensBefore`). */
  tokensBefore: number;
  /** Context tokens after the reduction (estimate). */
  tokensAfter: number;
  /** Tokens the first request after it must write to the cache again (default: all of `tokensAfter`). */
  rewrittenTokens?: number;
  /** A one-time request (a compaction's summary): tokens, and the summarizer's prices when known. */
  request?: { inputTokens: number; outputTokens: number; prices?: ModelPrices };
  /** The session model's prices (every later request), when known. */
  sessionPrices?: ModelPrices;
  cache: CacheState;
}

/** Result of {@link priceReduction}. US dollars; null where a price is unknown. */
export interface ReductionEconomics {
  /** B − A: tokens every later request no longer sends (≤ 0: nothing saved). */
  savedTokensPerRequest: number;
  /** Summary request tokens (0 for a trim). */
  requestInputTokens: number;
  requestOutputTokens: number;
  /** c. */
  requestCost: number | null;
  /** (B − A)·r. */
  savedCostPerRequest: number | null;
  /**
   * One-time: what re-writing the cache adds to the next request (R·(p − r) with a warm cache);
   * negative when the cache has expired anyway (the saved tokens would have been paid at p). So the
   * total saved after n requests is `n·savedCostPerRequest − cacheRewriteCost − requestCost`.
   */
  cacheRewriteCost: number | null;
  /** Requests until the reduction has paid for itself (1 = already with the next request); null = never or unknown. */
  breakEvenRequests: number | null;
  /** `cost`: from prices; `tokens`: prices unknown, request tokens / saved tokens; `none`: nothing saved. */
  breakEvenBasis: "cost" | "tokens" | "none";
  /** The rate r (per million) and what it is. */
  warmRate: { perMillion: number; kind: "cacheRead" | "input" } | null;
  cache: CacheState;
}

/** The most requests a break-even is reported for (beyond that: "not within 10,000 requests", null). */
export const MAX_BREAK_EVEN = 10000;

function breakEven(first: number, perRequest: number, oneTime: number): number | null {
  if (first - oneTime >= 0) return 1;
  if (perRequest <= 0) return null;
  const n = 1 + Math.ceil((oneTime - first) / perRequest);
  return n <= MAX_BREAK_EVEN ? n : null;
}

/**
 * Price a reduction of the context (see the module comment for the model).
 * Never throws; negative or non-finite token counts are taken as 0.
 */
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

/**
 * The cache state now: `none` when the provider never reported cache activity, else `warm` when
 * the latest request started less than `ttlMs` ago, else `cold`.
 * @param lastRequestAt ms since epoch of the latest request (an assistant message's timestamp).
 */
export function cacheStateAt(
  reportedCache: boolean,
  lastRequestAt: number | undefined,
  ttlMs: number,
  now: number,
): CacheState {
  if (!reportedCache) return "none";
  return lastRequestAt !== undefined && now - lastRequestAt < ttlMs ? "warm" : "cold";
}
