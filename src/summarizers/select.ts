/**
 * The summarizer the settings choose. Who summarizes an idle session ({@link usesPi}): an explicit
 * provider; `auto` with an OpenAI-compatible summarizer configured (base URL or stored key); `auto`
 * with a pi found: the user's pi; else the OpenAI API. A running pi with the live bridge always does.
 */

import type { Summarizer } from "../core/flows/summarizer";
import type { BaseServices, SummarizerProvider } from "../services";
import { askApiKey, configuredBaseURL, getApiKey, keyOrigin, registerApiKeyCommands } from "./apiKeys";
import { OpenAiSummarizer } from "./openai";
import { selectLanguageModel, VscodeLmSummarizer } from "./vscodeLm";

/** @throws {SummarizerError} `config` when no model is available, the settings are unusable, or no key (without `allowMissingKey`). */
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
