/**
 * models.json files that differ only in one field, with pi 1.6.0's verdict (`ModelConfig.load`):
 * valid or ignored as a whole, and the path pi names. Shared by the unit test and the conformance
 * test that asks pi itself.
 */

/** One models.json case. */
export interface ModelsSchemaCase {
  name: string;
  /** The file: an object (written as JSON) or raw text. */
  json: unknown;
  valid: boolean;
  /** The path pi's error names (dots), for invalid cases. */
  path?: string;
}

const provider = (extra: Record<string, unknown>, model: Record<string, unknown> = {}): unknown => ({
  providers: {
    p: {
      baseUrl: "http://127.0.0.1:1/v1",
      api: "openai-completions",
      apiKey: "x",
      ...extra,
      models: [{ id: "m", contextWindow: 50000, ...model }],
    },
  },
});
const override = (o: Record<string, unknown>): unknown => ({
  providers: { anthropic: { modelOverrides: { "claude-sonnet-4-5": { contextWindow: 90000, ...o } } } },
});
const prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** The cases (pi 1.6.0's verdicts, checked with the real pi). */
export const MODELS_SCHEMA_CASES: ModelsSchemaCase[] = [
  { name: "plain custom model", json: provider({}), valid: true },
  { name: "full cost", json: provider({}, { cost: prices }), valid: true },
  {
    name: "cost with tiers",
    json: provider({}, { cost: { ...prices, tiers: [{ inputTokensAbove: 200000, ...prices }] } }),
    valid: true,
  },
  {
    name: "model cost missing fields",
    json: provider({}, { cost: { input: 3 } }),
    valid: false,
    path: "providers.p.models.0.cost.output",
  },
  {
    name: "price as a string",
    json: provider({}, { cost: { ...prices, input: "3" } }),
    valid: false,
    path: "providers.p.models.0.cost.input",
  },
  { name: "bad cost tier", json: provider({}, { cost: { ...prices, tiers: [{ x: 1 }] } }), valid: false },
  {
    name: "unknown input modality",
    json: provider({}, { input: ["text", "audio"] }),
    valid: false,
    path: "providers.p.models.0.input.1",
  },
  { name: "input text+image", json: provider({}, { input: ["text", "image"] }), valid: true },
  {
    name: "thinkingLevelMap number",
    json: provider({}, { thinkingLevelMap: { high: 5 } }),
    valid: false,
    path: "providers.p.models.0.thinkingLevelMap.high",
  },
  {
    name: "thinkingLevelMap null",
    json: provider({}, { thinkingLevelMap: { xhigh: null, high: "max" } }),
    valid: true,
  },
  { name: "oauth not radius", json: provider({ oauth: "x" }), valid: false, path: "providers.p.oauth" },
  {
    name: "promptCache 0",
    json: provider({}, { promptCache: { short: 0 } }),
    valid: false,
    path: "providers.p.models.0.promptCache.short",
  },
  {
    name: "samplingParams not an object",
    json: provider({}, { samplingParams: 5 }),
    valid: false,
    path: "providers.p.models.0.samplingParams",
  },
  { name: "$schema not a string", json: { $schema: 5, ...(provider({}) as object) }, valid: false, path: "$schema" },
  {
    name: "compat flag not boolean",
    json: provider({ compat: { supportsStore: "yes" } }),
    valid: false,
    path: "providers.p.compat.supportsStore",
  },
  {
    name: "inputLimits 0",
    json: provider({}, { inputLimits: { maxRequestBytes: 0 } }),
    valid: false,
    path: "providers.p.models.0.inputLimits.maxRequestBytes",
  },
  { name: "fractional window", json: provider({}, { contextWindow: 50000.5 }), valid: true },
  { name: "unknown extra field", json: provider({ somethingElse: [1] }, { note: "x" }), valid: true },
  { name: "override partial cost", json: override({ cost: { input: 1 } }), valid: true },
  {
    name: "override price as a string",
    json: override({ cost: { input: "1" } }),
    valid: false,
    path: "providers.anthropic.modelOverrides.claude-sonnet-4-5.cost.input",
  },
  { name: "override reasoning string", json: override({ reasoning: "yes" }), valid: false },
  {
    name: "comments, trailing commas, // inside a string",
    json: '{ // mine\n "providers": { "p": {"baseUrl":"http://x//y", "api":"openai-completions", "apiKey":"x", "models":[{"id":"m","contextWindow":50000,},], }, }, }',
    valid: true,
  },
];
