/**
 * The summarizer the settings choose (`piContext.summarizer.*`), the API key commands, and asking
 * for a key in the middle of a compaction (after its preview) instead of failing.
 * Shared by compaction (`Pi: Compact Session…`) and branch summaries (tree view).
 *
 * API keys live only in `SecretStorage`, one per API origin (`https://openrouter.ai`,
 * `http://127.0.0.1:11434`, …) so a key stored for one server is never sent to another. They are
 * never written to settings, logs or messages.
 */

import * as vscode from "vscode";
import type { Summarizer } from "../core/flows/summarizer";
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
export async function getApiKey(
  services: Services,
  baseURL = configuredBaseURL(services),
): Promise<string | undefined> {
  return (await services.context.secrets.get(SECRET_PREFIX + keyOrigin(baseURL))) || undefined;
}

/** Store an API key for a base URL (empty = delete). */
export async function storeApiKey(
  services: Services,
  key: string,
  baseURL = configuredBaseURL(services),
): Promise<void> {
  const name = SECRET_PREFIX + keyOrigin(baseURL);
  if (key) await services.context.secrets.store(name, key);
  else await services.context.secrets.delete(name);
}

/** Options of {@link getSummarizer}. */
export interface GetSummarizerOptions {
  /**
   * Return an OpenAI summariser even when its endpoint needs a key and none is stored (it counts
   * and previews; sending fails until {@link readySummarizer} got a key). Default false: throw.
   */
  allowMissingKey?: boolean;
}

/**
 * The summariser the settings describe: `openai` (OpenAI-compatible, key from SecretStorage) or
 * `vscode-lm` (first chat model matching vendor/family). Messages name VS Code's settings and commands.
 * @throws {SummarizerError} `config` when no model is available, the settings are unusable, or
 *   (without `allowMissingKey`) OpenAI's API has no stored key.
 */
export async function getSummarizer(services: Services, options: GetSummarizerOptions = {}): Promise<Summarizer> {
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

/**
 * Ask for the API key of the configured OpenAI-compatible server in a password box and store it
 * in SecretStorage (under the server's origin).
 * @param reason `missing`: the server needs a key and none is stored; `rejected`: it answered
 *   HTTP 401/403 (no key, or a wrong one).
 * @returns the key, or undefined when the user pressed Escape (nothing stored).
 */
export async function askApiKey(
  services: Services,
  reason: "missing" | "rejected",
  detail?: string,
): Promise<string | undefined> {
  const baseURL = configuredBaseURL(services);
  const origin = keyOrigin(baseURL);
  const value = await vscode.window.showInputBox({
    title: `API Key for ${origin}`,
    prompt: `${reason === "missing" ? `The summarizer at ${origin} needs an API key.` : `The summarizer at ${origin} refused the request${detail ? ` (${detail})` : ""}.`} Enter the key to continue; it is kept in VS Code's secret storage, never in settings. Escape cancels: nothing is sent.`,
    password: true,
    ignoreFocusOut: true,
    placeHolder: "sk-…",
    validateInput: (v) => (v.trim() ? undefined : "Enter the API key, or press Escape to cancel."),
  });
  const key = value?.trim();
  if (!key) return undefined;
  await storeApiKey(services, key, baseURL);
  services.log.info(`API key stored for ${origin}`);
  return key;
}

/**
 * Make a summariser ready to send: an OpenAI summariser that needs a key and has none asks for
 * it ({@link askApiKey}) and is rebuilt with it; any other summariser is returned as is.
 * @returns undefined when the user cancelled the key box.
 */
export async function readySummarizer(services: Services, summarizer: Summarizer): Promise<Summarizer | undefined> {
  if (!(summarizer instanceof OpenAiSummarizer) || !summarizer.needsApiKey) return summarizer;
  if (!(await askApiKey(services, "missing"))) return undefined;
  return getSummarizer(services);
}

/**
 * After HTTP 401/403 from the OpenAI-compatible server: ask for a (new) key and rebuild the
 * summariser with it. @returns undefined when the user cancelled, or for other providers.
 */
export async function summarizerWithNewKey(
  services: Services,
  summarizer: Summarizer,
  error: Error,
): Promise<Summarizer | undefined> {
  if (!(summarizer instanceof OpenAiSummarizer)) return undefined;
  const status = (error as { status?: number }).status;
  if (!(await askApiKey(services, "rejected", status ? `HTTP ${status}` : undefined))) return undefined;
  return getSummarizer(services);
}

/**
 * "Pi: Set API Key…" / "Pi: Clear API Key". `piContext.setApiKey` takes an optional key argument
 * (for scripts and tests); without it the user types it into a password box.
 */
export function registerApiKeyCommands(services: Services): void {
  const remove = async (baseURL: string, quiet: boolean): Promise<void> => {
    const origin = keyOrigin(baseURL);
    const had = (await getApiKey(services, baseURL)) !== undefined;
    if (had) await storeApiKey(services, "", baseURL);
    if (had) services.log.info(`API key removed for ${origin}`);
    if (!quiet)
      void vscode.window.showInformationMessage(
        had ? `pi Context: API key removed for ${origin}.` : `pi Context: no API key was stored for ${origin}.`,
      );
  };
  services.context.subscriptions.push(
    vscode.commands.registerCommand("piContext.setApiKey", async (key?: unknown) => {
      const baseURL = configuredBaseURL(services);
      const origin = keyOrigin(baseURL);
      let value = typeof key === "string" ? key : undefined;
      if (value === undefined) {
        value = await vscode.window.showInputBox({
          title: `Pi: Set API Key for ${origin}`,
          prompt: `API key for the summarizer at ${origin} (kept in VS Code's secret storage, never in settings). Empty removes the stored key.`,
          password: true,
          ignoreFocusOut: true,
          placeHolder: "sk-…",
        });
        if (value === undefined) return false;
      }
      value = value.trim();
      if (!value) {
        await remove(baseURL, typeof key === "string");
        return true;
      }
      await storeApiKey(services, value, baseURL);
      services.log.info(`API key stored for ${origin}`);
      if (typeof key !== "string")
        void vscode.window.showInformationMessage(`pi Context: API key stored for ${origin}.`);
      return true;
    }),
    vscode.commands.registerCommand("piContext.clearApiKey", async () => {
      await remove(configuredBaseURL(services), false);
      return true;
    }),
  );
}
