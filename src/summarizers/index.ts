/**
 * The summariser the settings choose (`piContext.summarizer.*`), and the API key commands.
 * Shared by compaction (`Pi: Compact Session…`) and branch summaries (tree view).
 *
 * API keys live only in `SecretStorage`, one per API origin (`https://openrouter.ai`,
 * `http://127.0.0.1:11434`, …) so a key stored for one server is never sent to another. They are
 * never written to settings, logs or messages.
 */

import * as vscode from "vscode";
import type { Summarizer } from "../core/summarizer";
import type { Services } from "../services";
import { OPENAI_DEFAULT_BASE_URL, OpenAiSummarizer } from "./openai";
import { selectLanguageModel, VscodeLmSummarizer } from "./vscodeLm";

const SECRET_PREFIX = "piContext.summarizer.apiKey:";

/** The origin a key is stored under (`scheme://host:port`), or the raw string when it is no URL. */
export function keyOrigin(baseURL: string): string {
  try {
    return new URL(baseURL || OPENAI_DEFAULT_BASE_URL).origin;
  } catch {
    return baseURL;
  }
}

/** The configured OpenAI-compatible base URL (empty setting = OpenAI). */
export function configuredBaseURL(services: Services): string {
  return services.config().summarizer.openai.baseURL || OPENAI_DEFAULT_BASE_URL;
}

/** The stored API key for a base URL, if any. */
export async function getApiKey(services: Services, baseURL = configuredBaseURL(services)): Promise<string | undefined> {
  return (await services.context.secrets.get(SECRET_PREFIX + keyOrigin(baseURL))) || undefined;
}

/** Store an API key for a base URL (empty = delete). */
export async function storeApiKey(services: Services, key: string, baseURL = configuredBaseURL(services)): Promise<void> {
  const name = SECRET_PREFIX + keyOrigin(baseURL);
  if (key) await services.context.secrets.store(name, key);
  else await services.context.secrets.delete(name);
}

/**
 * The summariser the settings describe: `openai` (OpenAI-compatible, key from SecretStorage) or
 * `vscode-lm` (first chat model matching vendor/family).
 * @throws {SummarizerError} `config` when no model is available or the settings are unusable.
 */
export async function getSummarizer(services: Services): Promise<Summarizer> {
  const config = services.config().summarizer;
  if (config.provider === "vscode-lm") {
    const model = await selectLanguageModel(config.vscodeLm.vendor, config.vscodeLm.family);
    return new VscodeLmSummarizer(model, config.openai.maxOutputTokens);
  }
  const baseURL = configuredBaseURL(services);
  const apiKey = await getApiKey(services, baseURL);
  return new OpenAiSummarizer({
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    model: config.openai.model,
    ...(config.openai.contextWindow > 0 ? { contextWindow: config.openai.contextWindow } : {}),
    maxOutputTokens: config.openai.maxOutputTokens,
    stream: config.openai.stream,
  });
}

/**
 * "Pi: Set API Key…" / "Pi: Clear API Key". `piContext.setApiKey` takes an optional key argument
 * (for scripts and tests); without it the user types it into a password box.
 */
export function registerApiKeyCommands(services: Services): void {
  services.context.subscriptions.push(
    vscode.commands.registerCommand("piContext.setApiKey", async (key?: unknown) => {
      const baseURL = configuredBaseURL(services);
      const origin = keyOrigin(baseURL);
      let value = typeof key === "string" ? key : undefined;
      if (value === undefined) {
        value = await vscode.window.showInputBox({
          title: "Pi: Set API Key",
          prompt: `API key for the summariser at ${origin} (stored in VS Code's secret storage, never in settings)`,
          password: true,
          ignoreFocusOut: true,
          placeHolder: "sk-…",
        });
        if (value === undefined) return false;
      }
      value = value.trim();
      await storeApiKey(services, value, baseURL);
      services.log.info(`API key ${value ? "stored" : "removed"} for ${origin}`);
      if (typeof key !== "string") void vscode.window.showInformationMessage(value ? `pi Context: API key stored for ${origin}.` : `pi Context: API key removed for ${origin}.`);
      return true;
    }),
    vscode.commands.registerCommand("piContext.clearApiKey", async () => {
      const baseURL = configuredBaseURL(services);
      await storeApiKey(services, "", baseURL);
      services.log.info(`API key removed for ${keyOrigin(baseURL)}`);
      void vscode.window.showInformationMessage(`pi Context: API key removed for ${keyOrigin(baseURL)}.`);
      return true;
    }),
  );
}
