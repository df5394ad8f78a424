/**
 * A compaction plan priced: the summary request (input from the fitted requests, output = the
 * plan's guess of the summary's size) at the summarizer's prices where known, the tokens saved on
 * every later request at the session model's prices, the cache re-write, the break-even — all by
 * `priceReduction` (`rules/reduction.ts`, the same function a trim preview calls).
 *
 * The summarizer's prices: its server is mapped to a pi provider (OpenAI, OpenRouter, Anthropic,
 * Google, Groq, Mistral, DeepSeek, xAI, Together, Fireworks, Cerebras by host; else a `models.json`
 * provider with that `baseUrl`) and its model looked up there like any model (catalog →
 * models-store.json → models.json). VS Code language models have no per-token price we can know.
 * The user's own pi summarizes with the session's model (pi 1.6.0 `AgentSession.compact` uses
 * `this.model`): its prices are the session model's ({@link pricePiCompactionPlan}).
 */

import type { ModelsConfig } from "../rules/models";
import { cacheStateAt, priceReduction, type ReductionEconomics } from "../rules/reduction";
import type { ModelPrices, PriceLookup } from "../rules/cost";
import type { CompactionPlan, PlanFit } from "./compact";
import type { SpanFit, SpanSummaryPlan } from "./spanSummary";
import type { Summarizer } from "./summarizer";

/** Hosts of providers pi's catalog prices, by the summarizer's `baseURL` host. */
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

/**
 * The pi provider a summarizer's server belongs to: by host, else the `models.json` provider with
 * the same `baseUrl`; undefined when unknown (a local server, VS Code LM).
 */
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

/** The summarizer's prices and where they came from (`provider/model`), or why they are unknown. */
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

/** A plan's economics with the sources of its prices. */
export interface CompactionPrice extends ReductionEconomics {
  tokensBefore: number;
  tokensAfter: number;
  /** `provider/model` of the summarizer's prices, or why they are unknown. */
  summarizerPrices: string;
  /** `provider/model` of the session model, whose prices the savings use; null without a model. */
  sessionModel: string | null;
  sessionPricesKnown: boolean;
}

/**
 * Price a plan (see the module comment).
 * @param fit the fitted requests (their input tokens); without it the request's input is unknown (0).
 * @param now ms since epoch (whether the prompt cache is still warm).
 */
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

/**
 * Price a plan that the user's own pi carries out: pi sends the same requests (`plan.historyRequest`,
 * `plan.turnPrefixRequest`: pi's prompts) to the session's model, so the request is priced at the
 * session model's prices, its input estimated as pi estimates text (chars / 4, rounded up, per
 * request: system prompt + prompt).
 * @param now ms since epoch (whether the prompt cache is still warm).
 */
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

/** {@link priceCompactionPlan} with the request's input tokens and prices decided. */
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

/**
 * Price a scoped summary ("Summarize these messages"): its summary request (input from the fitted
 * request, else pi's chars/4 of it; output = the summary's guessed size) at the summarizer's
 * prices, every later request without the span at the session model's prices, and the prompt
 * cache written again from the span's first message on (the part before it stays cached).
 * @param now ms since epoch (whether the prompt cache is still warm).
 */
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
