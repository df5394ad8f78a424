/**
 * The summarizer the settings choose (`piContext.summarizer.*`) as the {@link SummarizerProvider}
 * every surface gets from `services.summarizers` (compaction, branch summaries in the tree), and
 * asking for a key in the middle of a flow (after its preview) instead of failing.
 *
 * Who summarizes an idle session ({@link usesPi}), in this order:
 *   1. `piContext.summarizer.provider` set to `pi`, `openai` or `vscode-lm`: that one;
 *   2. `auto` (the default) with an OpenAI-compatible summarizer configured — `summarizer.openai.baseURL`
 *      set, or an API key stored for its server: that one (what
 *      pi-context did before it could use the user's pi);
 *   3. `auto` and a pi found (`services.pi`): the user's own pi, headless;
 *   4. otherwise the OpenAI-compatible API (which asks for its key).
 * A running pi with the live bridge always summarizes itself (before any of this).
 */

import type { Summarizer } from "../core/flows/summarizer";
import type { BaseServices, SummarizerProvider } from "../services";
import { askApiKey, configuredBaseURL, getApiKey, keyOrigin, registerApiKeyCommands } from "./apiKeys";
import { OpenAiSummarizer } from "./openai";
import { selectLanguageModel, VscodeLmSummarizer } from "./vscodeLm";

/**
 * The summarizer the settings describe: `openai` (OpenAI-compatible, key from SecretStorage) or
 * `vscode-lm` (first chat model matching vendor/family). Messages name VS Code's settings and commands.
 * @throws {SummarizerError} `config` when no model is available, the settings are unusable, or
 *   (without `allowMissingKey`) OpenAI's API has no stored key.
 */
export async function getSummarizer(
  services: BaseServices,
  options: { allowMissingKey?: boolean } = {},
): Promise<Summarizer> {
  const config = services.config().summarizer;
  if (config.provider === "vscode-lm") {
    const model = await selectLanguageModel(config.vscodeLm.vendor, config.vscodeLm.family);
    return new VscodeLmSummarizer(model, config.openai.maxOutputTokens);
  }
  const baseURL = configuredBaseURL(services);
  const apiKey = await getApiKey(services, baseURL);
  const summarizer = new OpenAiSummarizer({
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    model: config.openai.model,
    ...(config.openai.contextWindow > 0 ? { contextWindow: config.openai.contextWindow } : {}),
    maxOutputTokens: config.openai.maxOutputTokens,
    stream: config.openai.stream,
    surface: "vscode",
  });
  if (summarizer.needsApiKey && !options.allowMissingKey) throw summarizer.missingKeyError();
  return summarizer;
}

/** See the module comment: whether the user's own pi summarizes. */
export async function usesPi(services: BaseServices): Promise<boolean> {
  const provider = services.config().summarizer.provider;
  if (provider !== "auto") return provider === "pi";
  // get() only: VS Code drops restricted workspace values there (not in inspect())
  if (services.config().summarizer.openai.baseURL !== "") return false;
  if (await getApiKey(services)) return false;
  return services.pi.current.install !== undefined;
}

/** `services.summarizers`: the configured summarizer, with the key asked for when it is needed. */
export function summarizerProvider(services: BaseServices): SummarizerProvider {
  return {
    usesPi: () => usesPi(services),
    get: (options) => getSummarizer(services, options),
    async ready(summarizer) {
      if (!(summarizer instanceof OpenAiSummarizer) || !summarizer.needsApiKey) return summarizer;
      if (!(await askApiKey(services, "missing"))) return undefined;
      return getSummarizer(services);
    },
    async withNewKey(summarizer, error) {
      if (!(summarizer instanceof OpenAiSummarizer)) return undefined;
      const status = (error as { status?: number }).status;
      if (!(await askApiKey(services, "rejected", status ? `HTTP ${status}` : undefined))) return undefined;
      return getSummarizer(services);
    },
    keyOrigin: () => keyOrigin(configuredBaseURL(services)),
  };
}

/** Register the API key commands and return `services.summarizers`. */
export function registerSummarizers(services: BaseServices): SummarizerProvider {
  registerApiKeyCommands(services);
  return summarizerProvider(services);
}
