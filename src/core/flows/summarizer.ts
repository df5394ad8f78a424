/**
 * The summarizer abstraction shared by compaction and branch summaries: one request (system prompt +
 * one user prompt + an output limit) in, one text answer out, with cancellation and streaming.
 * Providers live in `src/summarizers/` (OpenAI-compatible, VS Code Language Model API); this file has
 * no `vscode` import so the CLI and unit tests use it too.
 *
 * pi 1.6.0 refuses to persist a summary when the model stopped with `length` (partial text), an
 * `error`, or answered with a tool call (`getSummarizationFailure` and the tool-call checks in
 * `dist/core/compaction/compaction.js`); {@link checkSummaryResult} applies the same rules, plus an
 * empty answer (pi would persist an empty summary; we refuse it).
 */

import { PiRpcError } from "../pi/rpc";
import type { Usage } from "../types";
import * as l10n from "@vscode/l10n";

/** One summary request, already rendered to text (see `prompts.ts`). */
export interface SummaryRequest {
  /** The system prompt (pi sends one: "you are a summarization assistant…"). */
  systemPrompt: string;
  /** The single user message: serialised conversation + instructions. */
  prompt: string;
  /** Upper bound of the answer, in tokens (sent as the provider's output limit). */
  maxOutputTokens: number;
}

/** Per-call options. */
export interface SummarizeOptions {
  /** Cancels the request; the provider must reject with a `cancelled` {@link SummarizerError}. */
  signal?: AbortSignal;
  /** Streaming callback: each new piece of answer text as it arrives. */
  onText?: (delta: string) => void;
}

/** Why the model stopped (pi's `StopReason` subset a summary can end with). */
export type SummaryStopReason = "stop" | "length" | "toolUse";

/** What a provider returns. */
export interface SummaryResult {
  /** The answer text (all text parts joined). */
  text: string;
  /** Token usage in pi's `Usage` shape, when the provider reports it (cost fields 0: we have no price table). */
  usage?: Usage;
  stopReason: SummaryStopReason;
  /** The model that answered, as the provider names it (may differ from the requested id). */
  model?: string;
}

/** A summarizer: one provider + one model. */
export interface Summarizer {
  /** Provider id: `openai` or `vscode-lm`. */
  readonly provider: string;
  /** Human-readable model name for messages, e.g. `gpt-4o-mini @ http://127.0.0.1:8080/v1`. */
  readonly label: string;
  /** The model id as the server names it, for short texts (`gpt-4o-mini`); the label has the server too. */
  readonly modelName?: string;
  /**
   * True when the provider cannot send until an API key is stored (an OpenAI-compatible server that
   * needs one); previews and counting still work.
   */
  readonly needsApiKey?: boolean;
  /** The model's context window in tokens (input + output), undefined when unknown. */
  readonly contextWindow: number | undefined;
  /** The server of an OpenAI-compatible summarizer (to find the model's prices: `flows/planPrice.ts`). */
  readonly baseURL?: string;
  /** The output limit asked for by default (tokens). */
  readonly maxOutputTokens: number;
  /**
   * Count the tokens of a text with the model's own tokenizer, when the provider has one
   * (VS Code LM's `countTokens`). Without it callers count with js-tiktoken.
   */
  countTokens?(text: string, signal?: AbortSignal): Promise<number>;
  /**
   * Run one request.
   * @throws {SummarizerError} on cancel (`cancelled`), HTTP/provider errors (`http`), network
   *   failures (`network`), missing configuration (`config`). A `length` stop or a tool call is
   *   returned as `stopReason`; {@link completeSummary} turns it into an error.
   */
  summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummaryResult>;
}

/** Kinds of summarizer failure; each leaves the session untouched. */
export type SummarizerErrorKind =
  "cancelled" | "empty" | "length" | "tool-call" | "network" | "http" | "config" | "too-large";

/** A summarizer failure with a user-facing message (never contains the API key). */
export class SummarizerError extends Error {
  readonly kind: SummarizerErrorKind;
  /** HTTP status for `http` errors. */
  readonly status: number | undefined;
  constructor(kind: SummarizerErrorKind, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "SummarizerError";
    this.kind = kind;
    this.status = options?.status;
  }
}

/** True for a {@link SummarizerError} of kind `cancelled` (or a DOM `AbortError`, or the user's pi answering "Compaction cancelled"). */
export function isCancellation(error: unknown): boolean {
  if (error instanceof SummarizerError) return error.kind === "cancelled";
  if (error instanceof PiRpcError) return error.kind === "cancelled";
  return error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError");
}

/** The `cancelled` error every provider throws when its signal fires. */
export function cancelledError(): SummarizerError {
  return new SummarizerError("cancelled", l10n.t("Summarization cancelled; nothing was written."));
}

/**
 * pi's acceptance rules for a summary answer (`getSummarizationFailure` + tool-call check), plus
 * "empty answer".
 * @param label what was summarized, for the message ("Summarization", "Turn prefix summarization").
 * @throws {SummarizerError} `length`, `tool-call` or `empty`.
 */
export function checkSummaryResult(result: SummaryResult, label: string): void {
  if (result.stopReason === "length") {
    throw new SummarizerError(
      "length",
      l10n.t(
        "{0} failed: generation hit the token cap and the summary is incomplete. Raise the summarizer's output limit (maxOutputTokens) or use a model with a larger window.",
        label,
      ),
    );
  }
  if (result.stopReason === "toolUse")
    throw new SummarizerError(
      "tool-call",
      l10n.t("{0} failed: the model tried to call a tool instead of answering with a summary.", label),
    );
  if (result.text.trim() === "")
    throw new SummarizerError("empty", l10n.t("{0} failed: the model returned an empty answer.", label));
}

/** Run a request and apply {@link checkSummaryResult}. */
export async function completeSummary(
  summarizer: Summarizer,
  request: SummaryRequest,
  label: string,
  options?: SummarizeOptions,
): Promise<SummaryResult> {
  if (options?.signal?.aborted) throw cancelledError();
  const result = await summarizer.summarize(request, options);
  if (options?.signal?.aborted) throw cancelledError();
  checkSummaryResult(result, label);
  return result;
}

/** A zero `Usage` (pi's shape, cost included). */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/**
 * pi's `combineUsage` (`dist/core/usage-totals.js`): field-wise sum; `cacheWrite1h` / `reasoning`
 * only when either side has them; `cost.totalFromProvider` only true when both are.
 */
export function combineUsage(first: Usage, second: Usage): Usage {
  const fc = first.cost ?? emptyUsage().cost!;
  const sc = second.cost ?? emptyUsage().cost!;
  return {
    input: first.input + second.input,
    output: first.output + second.output,
    cacheRead: first.cacheRead + second.cacheRead,
    cacheWrite: first.cacheWrite + second.cacheWrite,
    ...(first.cacheWrite1h !== undefined || second.cacheWrite1h !== undefined
      ? { cacheWrite1h: (first.cacheWrite1h ?? 0) + (second.cacheWrite1h ?? 0) }
      : {}),
    ...(first.reasoning !== undefined || second.reasoning !== undefined
      ? { reasoning: (first.reasoning ?? 0) + (second.reasoning ?? 0) }
      : {}),
    totalTokens: first.totalTokens + second.totalTokens,
    cost: {
      input: fc.input + sc.input,
      output: fc.output + sc.output,
      cacheRead: fc.cacheRead + sc.cacheRead,
      cacheWrite: fc.cacheWrite + sc.cacheWrite,
      total: fc.total + sc.total,
      totalFromProvider: fc.totalFromProvider === true && sc.totalFromProvider === true,
    },
  };
}

/** True for an HTTP 401/403 answer of the summarizer. */
export function isUnauthorized(error: unknown): error is SummarizerError {
  return error instanceof SummarizerError && error.kind === "http" && (error.status === 401 || error.status === 403);
}
