/**
 * API keys of the OpenAI-compatible summarizer: only in `SecretStorage`, one per API origin, so a key
 * stored for one server is never sent to another; never in settings, logs or messages.
 */

import * as vscode from "vscode";
import type { BaseServices } from "../services";
import { inputMessageText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import { keyOrigin, OPENAI_DEFAULT_BASE_URL } from "./openai";
import { apiKeyPrompt } from "../viewModel/apiKeyPrompt";

const SECRET_PREFIX = "piContext.summarizer.apiKey:";

/** The origin a key is stored under (`scheme://host:port`), or the raw string when it is no URL. */
export { keyOrigin };

/** The configured OpenAI-compatible base URL (empty setting = OpenAI). */
export function configuredBaseURL(services: BaseServices): string {
  return services.config().summarizer.openai.baseURL || OPENAI_DEFAULT_BASE_URL;
}

/** The stored API key for a base URL, if any. */
export async function getApiKey(
  services: BaseServices,
  baseURL = configuredBaseURL(services),
): Promise<string | undefined> {
  return (await services.context.secrets.get(SECRET_PREFIX + keyOrigin(baseURL))) || undefined;
}

/** Store an API key for a base URL (empty = delete). */
export async function storeApiKey(
  services: BaseServices,
  key: string,
  baseURL = configuredBaseURL(services),
): Promise<void> {
  const name = SECRET_PREFIX + keyOrigin(baseURL);
  if (key) await services.context.secrets.store(name, key);
  else await services.context.secrets.delete(name);
}

/**
 * Ask for the configured server's key in a password box and store it under the server's origin.
 * @returns the key, or undefined when the user pressed Escape (nothing stored).
 */
export async function askApiKey(
  services: BaseServices,
  reason: "missing" | "rejected",
  detail?: string,
): Promise<string | undefined> {
  const baseURL = configuredBaseURL(services);
  const origin = keyOrigin(baseURL);
  const value = await vscode.window.showInputBox({
    title: vscode.l10n.t("API Key for {0}", origin),
    prompt: apiKeyPrompt({
      reason,
      origin,
      ...(detail ? { detail: inputMessageText(detail) } : {}),
      // pi-context's summarizer only because no pi was found (`auto`): say so, and how to point at one
      ...(services.config().summarizer.provider === "auto" && !services.pi.current.install
        ? { noPiLookedAt: services.pi.current.tried.map((t) => t.where) }
        : {}),
    }),
    password: true,
    ignoreFocusOut: true,
    placeHolder: vscode.l10n.t("sk-…"),
    validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t("Enter the API key, or press Escape to cancel.")),
  });
  const key = value?.trim();
  if (!key) return undefined;
  await storeApiKey(services, key, baseURL);
  services.log.info(`API key stored for ${origin}`);
  return key;
}

/** `piContext.setApiKey` takes an optional key argument (scripts, tests); else a password box. */
export function registerApiKeyCommands(services: BaseServices): void {
  const remove = async (baseURL: string, quiet: boolean): Promise<void> => {
    const origin = keyOrigin(baseURL);
    const had = (await getApiKey(services, baseURL)) !== undefined;
    if (had) await storeApiKey(services, "", baseURL);
    if (had) services.log.info(`API key removed for ${origin}`);
    if (!quiet)
      void notify.info(
        had
          ? vscode.l10n.t("API key removed for {0}.", origin)
          : vscode.l10n.t("no API key was stored for {0}.", origin),
      );
  };
  services.commands.add({
    "piContext.setApiKey": async (key?: unknown) => {
      const baseURL = configuredBaseURL(services);
      const origin = keyOrigin(baseURL);
      let value = typeof key === "string" ? key : undefined;
      if (value === undefined) {
        value = await vscode.window.showInputBox({
          title: vscode.l10n.t("Pi Context: Set API Key for {0}", origin),
          prompt: vscode.l10n.t(
            "API key for the summarizer at {0} (kept in VS Code's secret storage, never in settings). Empty removes the stored key.",
            origin,
          ),
          password: true,
          ignoreFocusOut: true,
          placeHolder: vscode.l10n.t("sk-…"),
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
      if (typeof key !== "string") void notify.info(vscode.l10n.t("API key stored for {0}.", origin));
      return true;
    },
    "piContext.clearApiKey": async () => {
      await remove(configuredBaseURL(services), false);
      return true;
    },
  });
}
