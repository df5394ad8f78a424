/**
 * The summarizer the settings choose (`piContext.summarizer.*`) as the {@link SummarizerProvider}
 * every surface gets from `services.summarizers` (compaction, branch summaries in the tree), and
 * asking for a key in the middle of a flow (after its preview) instead of failing.
 */

import type { Summarizer } from "../core/flows/summarizer";
import type { BaseServices, SummarizerProvider } from "../services";
import { askApiKey, configuredBaseURL, getApiKey, keyOrigin, registerApiKeyCommands } from "./apiKeys";
import { OpenAiSummarizer } from "./openai";
import { selectLanguageModel, VscodeLmSummarizer } from "./vscodeLm";

/**
 * The summariser the settings describe: `openai` (OpenAI-compatible, key from SecretStorage) or
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

/** `services.summarizers`: the configured summarizer, with the key asked for when it is needed. */
export function summarizerProvider(services: BaseServices): SummarizerProvider {
  return {
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
