/**
 * Prices of model calls, like pi-ai 1.6.0: a model's `cost` (US dollars per 1,000,000 tokens:
 * `input`, `output`, `cacheRead`, `cacheWrite`, optional `tiers` by prompt size) and
 * `calculateCost(model, usage)` (`dist/models.js`). pi computes a response's cost once, when it
 * arrives, and stores it in the entry (`usage.cost`); session totals only ever sum what is stored
 * (`rules/usage.ts`). This module prices what has not happened yet: a summary request, the
 * tokens a compaction or a trim saves on later requests, a cache re-write.
 *
 * The price of a model is read from "its catalog entry": anything with a `cost` field shaped like
 * pi-ai's `Model.cost` — our catalog snapshot, the user's pi's catalog, a `models.json` custom
 * model or override ({@link pricesOf}). No `vscode`, no I/O.
 */

/** One price tier (pi-ai `Model.cost.tiers[]`): applies when the prompt has more than `inputTokensAbove` tokens. */
export interface PriceTier {
  inputTokensAbove: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** A model's prices in US dollars per million tokens (pi-ai `Model.cost`). */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tiers?: PriceTier[];
}

/** Token counts of one request, in pi's `Usage` fields (`cacheWrite1h` ⊂ `cacheWrite`, Anthropic's 1-hour writes). */
export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
}

/** A priced request (pi-ai `Usage.cost`, US dollars). */
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

/**
 * The prices of a model's catalog entry: its `cost` when every base rate is a finite number ≥ 0
 * (tiers that are not well-formed are dropped). `undefined` when the entry has no usable `cost`
 * (unknown model, malformed data) — callers then say "price unknown", never $0.
 * Accepts pi-ai's `Model`, our `ModelInfo`/`CatalogModel`, or a `cost` object itself.
 */
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

/** True when every rate is 0 (a free or subscription model, or a custom model without prices: pi's default cost). */
export function isFree(prices: ModelPrices): boolean {
  return prices.input === 0 && prices.output === 0 && prices.cacheRead === 0 && prices.cacheWrite === 0;
}

/**
 * The rates that apply to a request of `promptTokens` (= input + cacheRead + cacheWrite): pi-ai's
 * tier rule — the tier with the highest `inputTokensAbove` below the prompt size, else the base rates.
 */
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

/**
 * pi-ai's `calculateCost(model, usage)`: dollars per part; 1-hour cache writes at twice the input
 * rate (Anthropic). Pure: returns the parts instead of writing them into the usage.
 */
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

/** Dollars for a partial usage (missing counts are 0), e.g. `{input: 12000, output: 900}`. */
export function priceTokens(prices: ModelPrices, counts: Partial<TokenCounts>): number {
  return calculateCost(prices, {
    input: counts.input ?? 0,
    output: counts.output ?? 0,
    cacheRead: counts.cacheRead ?? 0,
    cacheWrite: counts.cacheWrite ?? 0,
    ...(counts.cacheWrite1h !== undefined ? { cacheWrite1h: counts.cacheWrite1h } : {}),
  }).total;
}

/** Looks up the prices of `provider/modelId` (undefined = unknown). Built by the caller from its catalog. */
export type PriceLookup = (provider: string, modelId: string) => ModelPrices | undefined;

/** The lookup that knows no prices. */
export const NO_PRICES: PriceLookup = () => undefined;

/**
 * A memoised {@link PriceLookup} over a resolver of catalog entries — whatever resolves models
 * (our snapshot + models.json today, the user's pi's catalog tomorrow): `pricesOf(resolve(p, id))`.
 */
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
