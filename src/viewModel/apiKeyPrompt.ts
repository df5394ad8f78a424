/**
 * The API-key password box's wording. When `auto` fell back to our summarizer because no pi was
 * found, it says so: a Mistral user must not wonder why api.openai.com wants a key.
 */

import { piPathHint } from "./sourceText";
import * as l10n from "@vscode/l10n";

/** What {@link apiKeyPrompt} needs. */
export interface ApiKeyPromptInput {
  /** `missing`: the server needs a key and none is stored; `rejected`: it answered HTTP 401/403. */
  reason: "missing" | "rejected";
  origin: string;
  /** Already made safe for an input box (`inputMessageText`). */
  detail?: string;
  /** Set when `auto` fell back to pi-context's summarizer because no pi was found: where we looked. */
  noPiLookedAt?: readonly string[];
}

/** Plain text: VS Code renders no Markdown there. */
export function apiKeyPrompt(input: ApiKeyPromptInput): string {
  const why =
    input.reason === "missing"
      ? l10n.t("The summarizer at {0} needs an API key.", input.origin)
      : l10n.t("The summarizer at {0} refused the request{1}.", input.origin, input.detail ? ` (${input.detail})` : "");
  const noPi = input.noPiLookedAt
    ? l10n.t(
        "No pi was found to summarize with your own model and key (looked at {0}); to use your pi, {1}; or choose another summarizer (piContext.summarizer.provider). ",
        input.noPiLookedAt.length ? input.noPiLookedAt.join(", ") : l10n.t("the PATH"),
        piPathHint(),
      )
    : "";
  return l10n.t(
    "{0}{1} Enter the key to continue; it is kept in VS Code's secret storage, never in settings. Escape cancels: nothing is sent.",
    noPi,
    why,
  );
}
