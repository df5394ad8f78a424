/**
 * A compaction or span summary priced by `priceReduction` (`rules/reduction.ts`): the request at the
 * summarizer's prices (its server mapped to a pi provider), the savings at the session model's. The
 * user's own pi summarizes with the session's model (pi 1.6.0 `AgentSession.compact`).
 */

import type { ModelsConfig } from "../rules/models";
import { cacheStateAt, priceReduction, type ReductionEconomics } from "../rules/reduction";
import type { ModelPrices, PriceLookup } from "../rules/cost";
import type { CompactionPlan, PlanFit } from "./compact";
import type { SpanFit, SpanSummaryPlan } from "./spanSummary";
import type { Summarizer } from "./summarizer";

const HOST_PROVIDERS: Record<string, string> = {
  "api.openai.com": "openai",
  "openrouter.ai": "openrouter",
  "api.anthropic.com": "anthropic",
  "generativelanguage.googleapis.com": "google",
  "api.groq.com": "groq",
  "api.mistral.ai": "mistral",
  "api.deepseek.com": "deepseek",
  "api.x.ai": "xai",
  "api.together.xyz": "together",
  "api.fireworks.ai": "fireworks",
  "api.cerebras.ai": "cerebras",
};

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/** By host, else the `models.json` provider with that `baseUrl`; undefined for a local server or VS Code LM. */
export function summarizerProvider(baseURL: string | undefined, config?: ModelsConfig): string | undefined {
  if (!baseURL) return undefined;
  let host: string;
  try {
    host = new URL(baseURL).hostname;
  } catch {
    return undefined;
  }
  if (HOST_PROVIDERS[host]) return HOST_PROVIDERS[host];
  for (const [id, p] of config?.providers ?? [])
    if (typeof p.raw.baseUrl === "string" && trimSlash(p.raw.baseUrl) === trimSlash(baseURL)) return id;
  return undefined;
}

export function summarizerPrices(
  summarizer: Summarizer,
  prices: PriceLookup,
  config?: ModelsConfig,
): { prices?: ModelPrices; source: string } {
  if (summarizer.provider !== "openai") return { source: "VS Code language models report no per-token price" };
  const provider = summarizerProvider(summarizer.baseURL ?? "https://api.openai.com/v1", config);
  const model = summarizer.modelName;
  if (!provider || !model) return { source: `no price known for ${summarizer.label}` };
  const found = prices(provider, model);
  return found
    ? { prices: found, source: `${provider}/${model}` }
    : { source: `${provider}/${model} has no price in pi's catalog` };
}

export interface CompactionPrice extends ReductionEconomics {
  tokensBefore: number;
  tokensAfter: number;
  summarizerPrices: string;
  /** Null without a model. */
  sessionModel: string | null;
  sessionPricesKnown: boolean;
}

/** Without `fit` the request's input is unknown (0); `now` (ms) decides whether the cache is warm. */
export function priceCompactionPlan(
  plan: CompactionPlan,
  fit: PlanFit | undefined,
  summarizer: Summarizer | undefined,
  now: number,
  config?: ModelsConfig,
): CompactionPrice {
  const sumPrices = summarizer
    ? summarizerPrices(summarizer, plan.analysis.prices, config)
    : { source: "no summarizer" };
  return priceWith(plan, fit?.inputTokens ?? 0, sumPrices, now);
}

/** For the user's pi: the same requests at the session model's prices, input as pi estimates (chars/4). */
export function pricePiCompactionPlan(plan: CompactionPlan, now: number): CompactionPrice {
  const inspect = plan.analysis.inspect;
  const model = inspect.model ? `${inspect.model.provider}/${inspect.model.modelId}` : null;
  const prices = inspect.cost.prices;
  const sumPrices = prices
    ? { prices, source: `${model} (the session's model, which pi summarizes with)` }
    : { source: model ? `${model} has no price in pi's catalog` : "no session model" };
  let input = 0;
  for (const r of [plan.historyRequest, plan.turnPrefixRequest])
    if (r) input += Math.ceil((r.systemPrompt.length + r.prompt.length) / 4);
  return priceWith(plan, input, sumPrices, now);
}

function priceWith(
  plan: CompactionPlan,
  inputTokens: number,
  sumPrices: { prices?: ModelPrices; source: string },
  now: number,
): CompactionPrice {
  const analysis = plan.analysis;
  const inspect = analysis.inspect;
  let lastRequest: number | undefined;
  for (const r of plan.preparation.projection.path)
    if (r.type === "message" && r.role === "assistant" && r.usage)
      lastRequest = r.messageTime ?? Date.parse(r.timestamp);
  const cache = cacheStateAt(inspect.cache.reportedCache, lastRequest, inspect.cache.ttl.ms, now);
  const model = inspect.model ? `${inspect.model.provider}/${inspect.model.modelId}` : null;
  const economics = priceReduction({
    tokensBefore: plan.preview.tokensBefore,
    tokensAfter: plan.estimatedTokensAfter,
    request: {
      inputTokens,
      outputTokens: plan.estimatedSummaryTokens,
      ...(sumPrices.prices ? { prices: sumPrices.prices } : {}),
    },
    ...(inspect.cost.prices ? { sessionPrices: inspect.cost.prices } : {}),
    cache,
  });
  return {
    ...economics,
    tokensBefore: plan.preview.tokensBefore,
    tokensAfter: plan.estimatedTokensAfter,
    summarizerPrices: sumPrices.source,
    sessionModel: model,
    sessionPricesKnown: inspect.cost.prices !== null,
  };
}

/** A span summary: the cache is written again from the span's first message on. */
export function priceSpanPlan(
  plan: SpanSummaryPlan,
  fit: SpanFit | undefined,
  summarizer: Summarizer | undefined,
  now: number,
  config?: ModelsConfig,
): CompactionPrice {
  const inspect = plan.analysis.inspect;
  const sumPrices = summarizer
    ? summarizerPrices(summarizer, plan.analysis.prices, config)
    : { source: "no summarizer" };
  let lastRequest: number | undefined;
  for (const r of plan.span.projection.path)
    if (r.type === "message" && r.role === "assistant" && r.usage)
      lastRequest = r.messageTime ?? Date.parse(r.timestamp);
  const cache = cacheStateAt(inspect.cache.reportedCache, lastRequest, inspect.cache.ttl.ms, now);
  const model = inspect.model ? `${inspect.model.provider}/${inspect.model.modelId}` : null;
  const before = plan.edits.pureTokensBefore;
  const after = plan.estimatedTokensAfterRange.high;
  const inputTokens =
    fit?.inputTokens ?? Math.ceil((plan.request.systemPrompt.length + plan.request.prompt.length) / 4);
  const economics = priceReduction({
    tokensBefore: before,
    tokensAfter: after,
    rewrittenTokens: after - (plan.edits.earliest?.unchangedPrefixTokens ?? 0),
    request: {
      inputTokens,
      outputTokens: plan.estimatedSummaryRange.high,
      ...(sumPrices.prices ? { prices: sumPrices.prices } : {}),
    },
    ...(inspect.cost.prices ? { sessionPrices: inspect.cost.prices } : {}),
    cache,
  });
  return {
    ...economics,
    tokensBefore: before,
    tokensAfter: after,
    summarizerPrices: sumPrices.source,
    sessionModel: model,
    sessionPricesKnown: inspect.cost.prices !== null,
  };
}
