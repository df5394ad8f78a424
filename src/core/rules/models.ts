/**
 * Context windows resolved like the user's pi (pi 1.6.0 `model-config.js`, `provider-composer.js`,
 * `remote-catalog-provider.js`): built-in catalog, then `models-store.json`, then `models.json`. The
 * {@link PiRules} switches cover pi 0.87 … 1.6 differences.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { snapshotCatalog, type ModelCatalog } from "../pi/catalog";
import { rulesFor, type PiRules } from "../pi/versions";
import { pricesOf, type ModelPrices } from "./cost";
import type { ResolvedWindow } from "./inspect";
import { validateSchema, type SchemaNode } from "./jsonSchema";
import schemaSnapshot from "../data/models-json-schema.json";

const MODELS_JSON_SCHEMA = (schemaSnapshot as { schema: SchemaNode }).schema;

export interface ModelInfo {
  provider: string;
  id: string;
  name: string;
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
  /** pi-ai `Model.cost`, when the catalog or models.json gives usable prices. */
  cost?: ModelPrices;
}

/** The parts that matter for windows, or the error pi would report. */
export interface ModelsConfig {
  file: string;
  providers: Map<string, ProviderConfig>;
  error?: string;
}

/** pi's `stripJsonComments`: `//` comments and trailing commas out; block comments stay and fail, as in pi. */
export function stripJsonComments(input: string): string {
  return input
    .replace(/"(?:\\.|[^"\\])*"|\/\/[^\n]*/g, (m) => (m[0] === '"' ? m : ""))
    .replace(/"(?:\\.|[^"\\])*"|,(\s*[}\]])/g, (m, tail: string | undefined) => tail ?? (m[0] === '"' ? m : ""));
}

type Obj = Record<string, unknown>;
function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

type Check = (value: unknown) => boolean;
const isString1: Check = (v) => typeof v === "string" && v.length > 0;
const isBool: Check = (v) => typeof v === "boolean";
// TypeBox's Number (pi's schema) accepts finite numbers only: `1e400` parses to Infinity and fails.
const isPositive: Check = (v) => typeof v === "number" && Number.isFinite(v) && v > 0;
const isNumber: Check = (v) => typeof v === "number" && Number.isFinite(v);
const isStringRecord: Check = (v) => isObject(v) && Object.values(v).every((x) => typeof x === "string");
const isArray: Check = (v) => Array.isArray(v);

/** Limits must be > 0 from pi 1.3.0 (`exclusiveMinimum: 0`), any number before. */
function modelFields(positiveLimits: boolean): Record<string, [Check, string]> {
  const limit: [Check, string] = positiveLimits ? [isPositive, "Expected number > 0"] : [isNumber, "Expected number"];
  return {
    name: [isString1, "Expected string (minLength 1)"],
    api: [isString1, "Expected string (minLength 1)"],
    baseUrl: [isString1, "Expected string (minLength 1)"],
    reasoning: [isBool, "Expected boolean"],
    input: [isArray, "Expected array"],
    contextWindow: limit,
    maxTokens: limit,
    headers: [isStringRecord, "Expected object of strings"],
    cost: [isObject, "Expected object"],
    compat: [isObject, "Expected object"],
  };
}
const overrideFields = (modelFieldSet: Record<string, [Check, string]>): Record<string, [Check, string]> =>
  Object.fromEntries(Object.entries(modelFieldSet).filter(([k]) => k !== "api" && k !== "baseUrl"));
const PROVIDER_FIELDS: Record<string, [Check, string]> = {
  name: [isString1, "Expected string (minLength 1)"],
  baseUrl: [isString1, "Expected string (minLength 1)"],
  apiKey: [isString1, "Expected string (minLength 1)"],
  api: [isString1, "Expected string (minLength 1)"],
  headers: [isStringRecord, "Expected object of strings"],
  compat: [isObject, "Expected object"],
  authHeader: [isBool, "Expected boolean"],
};

function checkFields(value: Obj, fields: Record<string, [Check, string]>, at: string, problems: string[]): void {
  for (const [key, [check, message]] of Object.entries(fields)) {
    if (value[key] !== undefined && !check(value[key])) problems.push(`  - ${at}.${key}: ${message}`);
  }
}

/** pi's `ModelConfig.load`: a file that fails to parse or the schema is ignored whole, with pi's kind of error. */
export function readModelsConfig(
  agentDir: string,
  rules: Pick<PiRules, "modelsJsonPositiveLimits"> = rulesFor(undefined),
): ModelsConfig {
  const MODEL_FIELDS = modelFields(rules.modelsJsonPositiveLimits);
  const OVERRIDE_FIELDS = overrideFields(MODEL_FIELDS);
  const file = path.join(agentDir, "models.json");
  const config: ModelsConfig = { file, providers: new Map() };
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      config.error = `Failed to load models.json: ${(error as Error).message}\n\nFile: ${file}`;
    return config;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripJsonComments(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content));
  } catch (error) {
    config.error = `Failed to parse models.json: ${(error as Error).message}\n\nFile: ${file}`;
    return config;
  }
  const problems: string[] = [];
  const providers = new Map<string, ProviderConfig>();
  if (!isObject(parsed)) problems.push("  - root: Expected object");
  else if (!isObject(parsed.providers)) problems.push("  - providers: Expected object");
  else {
    for (const [providerId, provider] of Object.entries(parsed.providers)) {
      const at = `providers.${providerId}`;
      if (!isObject(provider)) {
        problems.push(`  - ${at}: Expected object`);
        continue;
      }
      checkFields(provider, PROVIDER_FIELDS, at, problems);
      const models: Obj[] = [];
      if (provider.models !== undefined) {
        if (!Array.isArray(provider.models)) problems.push(`  - ${at}.models: Expected array`);
        else
          provider.models.forEach((m, index) => {
            if (!isObject(m)) return void problems.push(`  - ${at}.models.${index}: Expected object`);
            if (!isString1(m.id)) problems.push(`  - ${at}.models.${index}.id: Expected string (minLength 1)`);
            checkFields(m, MODEL_FIELDS, `${at}.models.${index}`, problems);
            models.push(m);
          });
      }
      const overrides: Record<string, Obj> = {};
      if (provider.modelOverrides !== undefined) {
        if (!isObject(provider.modelOverrides)) problems.push(`  - ${at}.modelOverrides: Expected object`);
        else
          for (const [id, o] of Object.entries(provider.modelOverrides)) {
            if (!isObject(o)) problems.push(`  - ${at}.modelOverrides.${id}: Expected object`);
            else {
              checkFields(o, OVERRIDE_FIELDS, `${at}.modelOverrides.${id}`, problems);
              overrides[id] = o;
            }
          }
      }
      providers.set(providerId, { raw: provider, models, modelOverrides: overrides });
    }
  }
  // pi ≥ 1.3 checks the whole schema: any violation anywhere ignores the file, like the fields above.
  if (problems.length === 0 && rules.modelsJsonPositiveLimits)
    for (const error of validateSchema(MODELS_JSON_SCHEMA, parsed))
      problems.push(`  - ${error.path}: ${error.message}`);
  if (problems.length > 0) config.error = `Invalid models.json schema:\n${problems.join("\n")}\n\nFile: ${file}`;
  else config.providers = providers;
  return config;
}

export interface ProviderConfig {
  raw: Obj;
  models: Obj[];
  modelOverrides: Record<string, Obj>;
}

export interface ModelsStore {
  file: string;
  providers: Map<string, { models: Obj[]; lastModified: number | undefined }>;
  error?: string;
}

/** `<agentDir>/models-store.json` (`FileModelsStore`); a missing file is empty. */
export function readModelsStore(agentDir: string): ModelsStore {
  const file = path.join(agentDir, "models-store.json");
  const store: ModelsStore = { file, providers: new Map() };
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      store.error = `Failed to read ${file}: ${(error as Error).message}`;
    return store;
  }
  try {
    const parsed: unknown = content ? JSON.parse(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content) : {};
    if (!isObject(parsed)) throw new Error("expected an object");
    for (const [providerId, entry] of Object.entries(parsed)) {
      if (!isObject(entry) || !Array.isArray(entry.models)) continue;
      store.providers.set(providerId, {
        models: entry.models.filter(isObject),
        lastModified: typeof entry.lastModified === "number" ? entry.lastModified : undefined,
      });
    }
  } catch (error) {
    store.error = `Failed to parse ${file}: ${(error as Error).message}`;
  }
  return store;
}

export function catalogModel(
  provider: string,
  modelId: string,
  catalog: ModelCatalog = snapshotCatalog(),
): ModelInfo | undefined {
  const m = catalog.models.get(`${provider}/${modelId}`);
  if (!m) return undefined;
  const info: ModelInfo = {
    provider,
    id: modelId,
    name: m.name ?? modelId,
    contextWindow: m.contextWindow,
    maxTokens: m.maxTokens,
    reasoning: Boolean(m.reasoning),
  };
  const cost = pricesOf(m);
  if (cost) info.cost = cost;
  return info;
}

const EMPTY_STORE: ModelsStore = { file: "", providers: new Map() };

/** pi-ai's `getModelType`: chat when absent. */
const typeOf = (m: Obj) => (m.type === undefined ? "chat" : m.type);

/** The cached catalog's model: `undefined` = built-in stays; `null` = OpenRouter's personalised list hides it. */
function storedModel(
  provider: string,
  modelId: string,
  store: ModelsStore,
  catalog: ModelCatalog,
  rules: PiRules,
): Obj | null | undefined {
  // Only pi-ai's built-in providers consult the cached catalog (`withRemoteCatalog` wraps them).
  if (!catalog.providers.has(provider)) return undefined;
  const stored = store.providers.get(provider);
  if (!stored) return undefined;
  const own = stored.models.filter((x) => x.provider === provider);
  if (provider === "openrouter" && rules.openRouterPersonalized) {
    // the saved personalised list replaces the catalog whenever non-empty (no lastModified check)
    if (own.length === 0) return undefined;
    return own.find((x) => x.id === modelId && typeOf(x) === "chat") ?? null;
  }
  if (stored.lastModified === undefined || catalog.generatedAt === undefined) return undefined;
  if (!(stored.lastModified > catalog.generatedAt)) return undefined;
  // pi ≥ 0.99 merges by (type, id) and keeps chat models; 0.87 by id (the last stored one wins)
  const matches = own.filter((x) => x.id === modelId && (!rules.storeMergesByType || typeOf(x) === "chat"));
  return matches.length ? matches[matches.length - 1] : undefined;
}

/**
 * pi's `ModelRuntime.getModel(provider, id)`: built-in catalog → newer `models-store.json` → `models.json`
 * model (default window 128000) → `modelOverrides[id]`. `value` undefined when pi would not know it.
 */
export function resolveContextWindow(
  provider: string | undefined,
  modelId: string | undefined,
  config: ModelsConfig,
  store: ModelsStore = EMPTY_STORE,
  catalog: ModelCatalog = snapshotCatalog(),
  rules: PiRules = rulesFor(catalog.piVersion),
): ResolvedWindow & { model?: ModelInfo } {
  if (!provider || !modelId) return { value: undefined, source: "unknown", detail: "no model on the session's path" };
  let model = catalogModel(provider, modelId, catalog);
  let source: ResolvedWindow["source"] = "catalog";
  let detail = `${catalog.name} (${catalog.location}: ${provider}/${modelId})`;
  let file: string | undefined;
  let where = `${provider}/${modelId}`;

  const stored = storedModel(provider, modelId, store, catalog, rules);
  if (stored === null) model = undefined;
  else if (stored) {
    model = toModelInfo(provider, modelId, stored, model);
    source = "models-store";
    detail = `${store.file} (cached catalog for ${provider})`;
    file = store.file;
    where = `cached catalog for ${provider}`;
  }

  const providerConfig = config.providers.get(provider);
  if (providerConfig && composes(provider, providerConfig, catalog)) {
    const custom = providerConfig.models.find((m) => m.id === modelId);
    if (custom) {
      model = {
        provider,
        id: modelId,
        name: typeof custom.name === "string" ? custom.name : modelId,
        contextWindow: typeof custom.contextWindow === "number" ? custom.contextWindow : 128000,
        maxTokens: typeof custom.maxTokens === "number" ? custom.maxTokens : 16384,
        reasoning: custom.reasoning === true,
        // pi's modelFromJson: `cost ?? {input: 0, output: 0, cacheRead: 0, cacheWrite: 0}`
        cost: pricesOf(custom) ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      };
      source = "models-json";
      detail = `${config.file} (providers.${provider}.models, id ${modelId}${typeof custom.contextWindow === "number" ? "" : "; default window 128000"})`;
      file = config.file;
      where = `providers.${provider}, model ${modelId}${typeof custom.contextWindow === "number" ? "" : " (no contextWindow: pi's default 128,000)"}`;
    }
    const override = providerConfig.modelOverrides[modelId];
    if (model && override) {
      model = {
        ...model,
        ...(typeof override.contextWindow === "number" ? { contextWindow: override.contextWindow } : {}),
        ...(typeof override.maxTokens === "number" ? { maxTokens: override.maxTokens } : {}),
        ...(typeof override.name === "string" ? { name: override.name } : {}),
        ...(typeof override.reasoning === "boolean" ? { reasoning: override.reasoning } : {}),
        ...overrideCost(model.cost, override.cost),
      };
      if (typeof override.contextWindow === "number") {
        source = "models-json-override";
        detail = `${config.file} (providers.${provider}.modelOverrides.${modelId}.contextWindow)`;
        file = config.file;
        where = `providers.${provider}.modelOverrides.${modelId}.contextWindow`;
      }
    }
  }
  if (!model)
    return {
      value: undefined,
      source: "unknown",
      detail: `${provider}/${modelId} is not in ${catalog.name}, models-store.json or models.json`,
      catalog: catalog.name,
    };
  return { value: model.contextWindow, source, detail, ...(file ? { file } : {}), where, catalog: catalog.name, model };
}

/** pi's `applyModelOverride` for `cost`: field-wise `override.cost.x ?? model.cost.x`. */
function overrideCost(base: ModelPrices | undefined, cost: unknown): { cost?: ModelPrices } {
  if (!isObject(cost)) return base ? { cost: base } : {};
  const merged = pricesOf({
    cost: {
      input: cost.input ?? base?.input,
      output: cost.output ?? base?.output,
      cacheRead: cost.cacheRead ?? base?.cacheRead,
      cacheWrite: cost.cacheWrite ?? base?.cacheWrite,
      tiers: cost.tiers ?? base?.tiers,
    },
  });
  return merged ? { cost: merged } : {};
}

function toModelInfo(provider: string, modelId: string, m: Obj, fallback: ModelInfo | undefined): ModelInfo {
  const info: ModelInfo = {
    provider,
    id: modelId,
    name: typeof m.name === "string" ? m.name : (fallback?.name ?? modelId),
    contextWindow: typeof m.contextWindow === "number" ? m.contextWindow : 0,
    maxTokens: typeof m.maxTokens === "number" ? m.maxTokens : 0,
    reasoning: m.reasoning === true,
    ...(pricesOf(m) ? { cost: pricesOf(m) as ModelPrices } : {}),
  };
  return info;
}

/** pi's `applyModelsJson`: else pi reports the provider and keeps only its built-in models. */
function composes(providerId: string, p: ProviderConfig, catalog: ModelCatalog): boolean {
  const raw = p.raw;
  const hasOverrides = Object.keys(p.modelOverrides).length > 0;
  if (
    !p.models.length &&
    !raw.baseUrl &&
    !raw.headers &&
    !raw.compat &&
    !hasOverrides &&
    !raw.apiKey &&
    !raw.oauth &&
    raw.authHeader === undefined
  )
    return false;
  const builtin = catalog.providers.has(providerId);
  for (const m of p.models) {
    if (!(m.api ?? raw.api) && !builtin) return false;
    if (!(m.baseUrl ?? raw.baseUrl) && !builtin) return false;
    // `modelFromJson` errors: reached only before pi 1.3.0 (the schema rejects the file from then)
    if (typeof m.contextWindow === "number" && m.contextWindow <= 0) return false;
    if (typeof m.maxTokens === "number" && m.maxTokens <= 0) return false;
  }
  return true;
}
