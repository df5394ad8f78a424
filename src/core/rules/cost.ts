/**
 * Prices like pi-ai 1.6.0 (`Model.cost` per million tokens, `calculateCost`), for what has not happened
 * yet (a summary request, saved tokens, a cache re-write): pi stores a response's cost in the entry.
 */

/** pi-ai `Model.cost.tiers[]`: applies when the prompt has more than `inputTokensAbove` tokens. */
export interface PriceTier {
  inputTokensAbove: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** US dollars per million tokens (pi-ai `Model.cost`). */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tiers?: PriceTier[];
}

/** pi's `Usage` fields (`cacheWrite1h` ⊂ `cacheWrite`, Anthropic's 1-hour writes). */
export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
}

/** pi-ai `Usage.cost`, US dollars. */
export interface CostParts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A catalog entry's `cost` when every base rate is finite ≥ 0; undefined means "price unknown", never $0. */
export function pricesOf(entry: { cost?: unknown } | undefined | null): ModelPrices | undefined {
  if (!entry || !isObject(entry.cost)) return undefined;
  return toPrices(entry.cost);
}

function toPrices(cost: Obj): ModelPrices | undefined {
  const { input, output, cacheRead, cacheWrite } = cost;
  if (![input, output, cacheRead, cacheWrite].every((v) => finite(v) && v >= 0)) return undefined;
  const prices: ModelPrices = {
    input: input as number,
    output: output as number,
    cacheRead: cacheRead as number,
    cacheWrite: cacheWrite as number,
  };
  if (Array.isArray(cost.tiers)) {
    const tiers = cost.tiers.filter(
      (t): t is PriceTier =>
        isObject(t) &&
        finite(t.inputTokensAbove) &&
        [t.input, t.output, t.cacheRead, t.cacheWrite].every((v) => finite(v) && v >= 0),
    );
    if (tiers.length > 0) prices.tiers = tiers;
  }
  return prices;
}

/** pi-ai's tier rule: the tier with the highest `inputTokensAbove` below `promptTokens`, else the base rates. */
export function ratesFor(prices: ModelPrices, promptTokens: number): Omit<ModelPrices, "tiers"> {
  let rates: Omit<ModelPrices, "tiers"> = prices;
  let matched = -1;
  for (const tier of prices.tiers ?? []) {
    if (promptTokens > tier.inputTokensAbove && tier.inputTokensAbove > matched) {
      rates = tier;
      matched = tier.inputTokensAbove;
    }
  }
  return rates;
}

/** pi-ai's `calculateCost` as parts (1-hour cache writes at twice the input rate), without mutating the usage. */
export function calculateCost(prices: ModelPrices, usage: TokenCounts): CostParts {
  const rates = ratesFor(prices, usage.input + usage.cacheRead + usage.cacheWrite);
  const longWrite = usage.cacheWrite1h ?? 0;
  const shortWrite = usage.cacheWrite - longWrite;
  const input = (rates.input / 1000000) * usage.input;
  const output = (rates.output / 1000000) * usage.output;
  const cacheRead = (rates.cacheRead / 1000000) * usage.cacheRead;
  const cacheWrite = (rates.cacheWrite * shortWrite + rates.input * 2 * longWrite) / 1000000;
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

/** Dollars; missing counts are 0. */
export function priceTokens(prices: ModelPrices, counts: Partial<TokenCounts>): number {
  return calculateCost(prices, {
    input: counts.input ?? 0,
    output: counts.output ?? 0,
    cacheRead: counts.cacheRead ?? 0,
    cacheWrite: counts.cacheWrite ?? 0,
    ...(counts.cacheWrite1h !== undefined ? { cacheWrite1h: counts.cacheWrite1h } : {}),
  }).total;
}

export type PriceLookup = (provider: string, modelId: string) => ModelPrices | undefined;

export const NO_PRICES: PriceLookup = () => undefined;

/** A memoised {@link PriceLookup}: `pricesOf(resolve(provider, id))`. */
export function priceLookup(
  resolve: (provider: string, modelId: string) => { cost?: unknown } | undefined,
): PriceLookup {
  const memo = new Map<string, ModelPrices | undefined>();
  return (provider, modelId) => {
    const key = `${provider}/${modelId}`;
    if (!memo.has(key)) memo.set(key, pricesOf(resolve(provider, modelId)));
    return memo.get(key);
  };
}
