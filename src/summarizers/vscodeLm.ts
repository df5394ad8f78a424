/**
 * Summarizer over VS Code's `vscode.lm` (no API key). The API reports neither usage nor a finish
 * reason, so a `length` stop cannot be detected (the entry then has no `usage`, as pi writes it).
 */

import * as vscode from "vscode";
import {
  cancelledError,
  SummarizerError,
  type Summarizer,
  type SummarizeOptions,
  type SummaryRequest,
  type SummaryResult,
} from "../core/flows/summarizer";

/** Pick a chat model by vendor/family (empty = any); the first match wins. */
export async function selectLanguageModel(vendor: string, family: string): Promise<vscode.LanguageModelChat> {
  const selector: vscode.LanguageModelChatSelector = {};
  if (vendor) selector.vendor = vendor;
  if (family) selector.family = family;
  const models = await vscode.lm.selectChatModels(selector);
  const model = models[0];
  if (!model) {
    const what = [vendor && vscode.l10n.t('vendor "{0}"', vendor), family && vscode.l10n.t('family "{0}"', family)]
      .filter(Boolean)
      .join(", ");
    throw new SummarizerError(
      "config",
      vscode.l10n.t(
        'No VS Code language model is available{0}. Install and sign in to an extension that provides chat models (e.g. GitHub Copilot), adjust piContext.summarizer.vscodeLm.vendor / .family, or set piContext.summarizer.provider to "openai".',
        what ? vscode.l10n.t(" for {0}", what) : "",
      ),
    );
  }
  return model;
}

/** A {@link Summarizer} over one `vscode.LanguageModelChat`. */
export class VscodeLmSummarizer implements Summarizer {
  readonly provider = "vscode-lm";
  readonly label: string;
  readonly contextWindow: number | undefined;
  readonly maxOutputTokens: number;

  constructor(
    private readonly model: vscode.LanguageModelChat,
    maxOutputTokens: number,
  ) {
    this.label = vscode.l10n.t("{0} ({1}/{2}, VS Code language model)", model.name, model.vendor, model.family);
    this.maxOutputTokens = maxOutputTokens;
    this.contextWindow = model.maxInputTokens > 0 ? model.maxInputTokens + maxOutputTokens : undefined;
  }

  async countTokens(text: string, signal?: AbortSignal): Promise<number> {
    const source = new vscode.CancellationTokenSource();
    const onAbort = () => source.cancel();
    signal?.addEventListener("abort", onAbort);
    try {
      return await this.model.countTokens(text, source.token);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      source.dispose();
    }
  }

  async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummaryResult> {
    const { signal, onText } = options;
    if (signal?.aborted) throw cancelledError();
    const source = new vscode.CancellationTokenSource();
    const onAbort = () => source.cancel();
    signal?.addEventListener("abort", onAbort);
    try {
      // The API has no system role: the system prompt goes first, as its own user message.
      const messages = [
        vscode.LanguageModelChatMessage.User(request.systemPrompt),
        vscode.LanguageModelChatMessage.User(request.prompt),
      ];
      const response = await this.model.sendRequest(
        messages,
        { justification: vscode.l10n.t("Pi Context summarizes a pi session to compact its context window.") },
        source.token,
      );
      let text = "";
      let toolCall = false;
      for await (const part of response.stream) {
        if (signal?.aborted) throw cancelledError();
        if (part instanceof vscode.LanguageModelTextPart) {
          text += part.value;
          onText?.(part.value);
        } else if (part instanceof vscode.LanguageModelToolCallPart) toolCall = true;
      }
      if (signal?.aborted) throw cancelledError();
      return { text, stopReason: toolCall ? "toolUse" : "stop", model: this.model.id };
    } catch (error) {
      if (error instanceof SummarizerError) throw error;
      if (signal?.aborted || error instanceof vscode.CancellationError) throw cancelledError();
      if (error instanceof vscode.LanguageModelError) {
        const hint =
          error.code === "NoPermissions"
            ? vscode.l10n.t(" Allow Pi Context to use the model when VS Code asks (or in the Accounts menu).")
            : error.code === "NotFound"
              ? vscode.l10n.t(" The model is no longer available.")
              : "";
        throw new SummarizerError(
          "http",
          vscode.l10n.t(
            "The VS Code language model {0} refused the request ({1}): {2}.{3}",
            this.model.name,
            error.code || "error",
            error.message,
            hint,
          ),
          { cause: error },
        );
      }
      throw new SummarizerError(
        "network",
        vscode.l10n.t(
          "The VS Code language model {0} failed: {1}",
          this.model.name,
          (error as Error)?.message ?? String(error),
        ),
        { cause: error },
      );
    } finally {
      signal?.removeEventListener("abort", onAbort);
      source.dispose();
    }
  }
}
