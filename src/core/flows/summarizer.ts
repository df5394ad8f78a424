/**
 * The summarizer abstraction (one request in, one text out, cancellable, streamed); providers live in
 * `src/summarizers/`. {@link checkSummaryResult} applies pi 1.6.0's refusals (`getSummarizationFailure`:
 * a `length` stop, an error, a tool call) plus an empty answer, which pi would persist.
 */

import { PiRpcError } from "../pi/rpc";
import type { Usage } from "../types";
import * as l10n from "@vscode/l10n";

export interface SummaryRequest {
  systemPrompt: string;
  /** Serialised conversation + instructions. */
  prompt: string;
  /** Tokens (the provider's output limit). */
  maxOutputTokens: number;
}

export interface SummarizeOptions {
  /** The provider must reject with a `cancelled` {@link SummarizerError}. */
  signal?: AbortSignal;
  onText?: (delta: string) => void;
}

export type SummaryStopReason = "stop" | "length" | "toolUse";

export interface SummaryResult {
  text: string;
  /** pi's `Usage` shape; cost fields 0 (no price table). */
  usage?: Usage;
  stopReason: SummaryStopReason;
  /** As the provider names it (may differ from the requested id). */
  model?: string;
}

export interface Summarizer {
  readonly provider: string;
  /** e.g. `gpt-4o-mini @ http://127.0.0.1:8080/v1`. */
  readonly label: string;
  readonly modelName?: string;
  /** Cannot send until an API key is stored; previews and counting still work. */
  readonly needsApiKey?: boolean;
  /** Tokens (input + output); undefined when unknown. */
  readonly contextWindow: number | undefined;
  /** To find the model's prices (`planPrice.ts`). */
  readonly baseURL?: string;
  readonly maxOutputTokens: number;
  /** The model's own tokenizer (VS Code LM); without it callers count with js-tiktoken. */
  countTokens?(text: string, signal?: AbortSignal): Promise<number>;
  /**
   * @throws {SummarizerError} `cancelled`, `http`, `network`, `config`. A `length` stop or a tool call
   *   is returned as `stopReason`; {@link completeSummary} turns it into an error.
   */
  summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummaryResult>;
}

export type SummarizerErrorKind =
  "cancelled" | "empty" | "length" | "tool-call" | "network" | "http" | "config" | "too-large";

/** A user-facing message that never contains the API key; the session is untouched. */
export class SummarizerError extends Error {
  readonly kind: SummarizerErrorKind;
  readonly status: number | undefined;
  constructor(kind: SummarizerErrorKind, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "SummarizerError";
    this.kind = kind;
    this.status = options?.status;
  }
}

/** `cancelled`, a DOM `AbortError`, or the user's pi answering "Compaction cancelled". */
export function isCancellation(error: unknown): boolean {
  if (error instanceof SummarizerError) return error.kind === "cancelled";
  if (error instanceof PiRpcError) return error.kind === "cancelled";
  return error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError");
}

export function cancelledError(): SummarizerError {
  return new SummarizerError("cancelled", l10n.t("Summarization cancelled; nothing was written."));
}

/** pi's acceptance rules plus "empty answer". @throws {SummarizerError} `length`, `tool-call` or `empty`. */
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

/** pi's `combineUsage`: field-wise sum; optional fields when either has them; `totalFromProvider` when both. */
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

export function isUnauthorized(error: unknown): error is SummarizerError {
  return error instanceof SummarizerError && error.kind === "http" && (error.status === 401 || error.status === 403);
}
