/** The economics fields of `InspectResult` (usage, cost, cache, forecast), each computed on first read. */

import type { Projection } from "./context";
import type { EntryRecord } from "../read/entries";
import { cacheReport, type CacheReport } from "./cache";
import { NO_PRICES, type ModelPrices, type PriceLookup } from "./cost";
import { forecastCompaction, type Forecast, type NoForecast } from "./forecast";
import { sessionUsage, type SessionUsage } from "./usage";

/** `inspect --json` `cost`: US dollars, as the entries store them. */
export interface CostReport {
  /** pi's session cost (footer `$`): Σ `usage.cost.total` over the file. */
  total: number;
  /** pi's `/session` breakdown by `provider/model` (+ `Tools/summaries`). */
  byModel: SessionUsage["byModel"];
  /** pi's "Cache Re-billed" (`computeCacheWaste`, whole file). */
  reBilled: CacheReport["reBilled"];
  coldTurns: CacheReport["cold"];
  /** US dollars per million tokens; null when unknown. */
  prices: ModelPrices | null;
}

export interface EconomicsFields {
  usage: SessionUsage;
  cost: CostReport;
  cache: CacheReport;
  forecast: Forecast | NoForecast;
}

export interface EconomicsInput {
  records: readonly EntryRecord[];
  projection: Projection;
  prices: PriceLookup | undefined;
  tokens: number;
  threshold: number | null;
  autoCompaction: boolean;
  usageKnown: boolean;
}

export function attachEconomics(target: object, input: EconomicsInput): void {
  const prices = input.prices ?? NO_PRICES;
  const model = input.projection.model;
  let cache: CacheReport | undefined;
  const getCache = () => (cache ??= cacheReport(input.records, input.projection.path, prices, model?.provider));
  let forecast: Forecast | NoForecast | undefined;
  const fields: { [K in keyof EconomicsFields]: () => EconomicsFields[K] } = {
    usage: () => sessionUsage(input.records),
    cache: getCache,
    cost: () => {
      const usage = sessionUsage(input.records);
      const c = getCache();
      return {
        total: usage.totals.cost,
        byModel: usage.byModel,
        reBilled: c.reBilled,
        coldTurns: c.cold,
        prices: (model && prices(model.provider, model.modelId)) ?? null,
      };
    },
    forecast: () =>
      (forecast ??= forecastCompaction(input.projection.path, {
        tokens: input.tokens,
        threshold: input.threshold,
        autoCompaction: input.autoCompaction,
        usageKnown: input.usageKnown,
      })),
  };
  for (const [key, get] of Object.entries(fields))
    Object.defineProperty(target, key, { get, enumerable: true, configurable: true });
}
