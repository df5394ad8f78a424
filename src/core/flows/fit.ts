/**
 * Token counting for summary requests (js-tiktoken, `o200k_base`) and fitting a request into the
 * summarizer model's context window. No `vscode` import (the CLI uses it).
 *
 * pi sends the summary request with the model's output limit, reduced to fit the window; a request
 * whose input alone does not fit fails at the provider. We check before spending tokens: the output
 * limit is lowered to what is left (down to {@link MIN_SUMMARY_OUTPUT_TOKENS}), and below that the
 * request is refused with a message that says what to change.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { SummarizerError, type Summarizer, type SummaryRequest } from "./summarizer";
import * as l10n from "@vscode/l10n";

interface Encoder {
  encode(text: string, allowedSpecial?: string[] | "all", disallowedSpecial?: string[] | "all"): number[];
}
let encoder: Encoder | undefined;

/**
 * Tokens of `text` in OpenAI's `o200k_base` encoding (special-token text counted as plain text).
 * The encoder (≈ 2 MB of ranks, ≈ 0.7 s to build) is loaded on first use ({@link loadRanks}). js-tiktoken's typings are
 * ESM-only under node16 resolution, so its CommonJS build is required directly.
 */
export function countTiktokens(text: string): number {
  if (!encoder) {
    const { Tiktoken } = require("js-tiktoken/lite") as { Tiktoken: new (ranks: unknown) => Encoder };
    encoder = new Tiktoken(loadRanks());
  }
  return encoder.encode(text, [], []).length;
}

/** File name of the ranks shipped beside the bundles (`esbuild.mjs` writes it; 2.3 MB). */
export const RANKS_FILE = "tiktoken-o200k_base.js";

/**
 * The `o200k_base` ranks: in the bundles (`dist/`) a separate file beside them, so that loading the
 * extension or the CLI does not parse 2.3 MB it rarely needs (the bundles leave the package
 * import below external); from the sources (tests) the package itself.
 */
function loadRanks(): unknown {
  const beside = path.join(__dirname, RANKS_FILE);
  if (fs.existsSync(beside)) return require(beside) as unknown;
  return require("js-tiktoken/ranks/o200k_base") as unknown;
}

/** Per-message framing of chat formats (role markers etc.), a conservative constant. */
export const MESSAGE_OVERHEAD_TOKENS = 8;
/** Extra room kept when counting with a tokenizer that is not the model's own (5 % of the input). */
export const FOREIGN_TOKENIZER_MARGIN = 0.05;
/** Smallest output limit we still send; a summary needs room to be written. */
export const MIN_SUMMARY_OUTPUT_TOKENS = 1024;

/**
 * Why a request does not fit the summarizer's window (all numbers in tokens). A preview still shows
 * the plan with it; nothing may be sent.
 */
export interface FitShortfall {
  /** What the request is, for messages ("compaction summary", "split-turn prefix summary", "branch summary"). */
  what: string;
  /** The summarizer's label (model and server). */
  summarizer: string;
  /** Input tokens as counted (system prompt + prompt + framing). */
  inputTokens: number;
  /** Safety margin for a foreign tokenizer (0 when the model's own counter counted). */
  margin: number;
  countedWith: "model" | "tiktoken";
  /** The summarizer's context window. */
  window: number;
  /** The smallest output limit we still send ({@link MIN_SUMMARY_OUTPUT_TOKENS}, or less when less was asked for). */
  minimumOutput: number;
  /** The window this request needs at the least: input + margin + minimum output. */
  neededWindow: number;
  /** How much too large the request is: `neededWindow − window` (> 0). */
  excess: number;
}

/** The result of {@link fitRequest} / {@link measureRequest}. */
export interface FittedRequest {
  request: SummaryRequest;
  /** Input tokens as counted (system prompt + prompt + framing). */
  inputTokens: number;
  /** `model` when the summarizer's own tokenizer counted, `tiktoken` otherwise. */
  countedWith: "model" | "tiktoken";
  /** True when the output limit was lowered to fit the window. */
  outputReduced: boolean;
  /** Set when the request does not fit at all: it must not be sent (see {@link tooLargeError}). */
  shortfall?: FitShortfall;
}

const n = (v: number) => v.toLocaleString("en-US");

/**
 * Count a request's input tokens (the summarizer's own `countTokens` when it has one, else
 * js-tiktoken) and fit `maxOutputTokens` into `summarizer.contextWindow`: unchanged when it fits,
 * lowered to what is left (down to {@link MIN_SUMMARY_OUTPUT_TOKENS}), else the request comes back
 * with a {@link FitShortfall} (for a preview that shows what would be summarized anyway).
 * @throws {SummarizerError} `cancelled` when `signal` fires.
 */
export async function measureRequest(
  summarizer: Summarizer,
  request: SummaryRequest,
  what: string,
  signal?: AbortSignal,
): Promise<FittedRequest> {
  let inputTokens: number;
  let countedWith: FittedRequest["countedWith"];
  if (summarizer.countTokens) {
    inputTokens =
      (await summarizer.countTokens(request.systemPrompt, signal)) +
      (await summarizer.countTokens(request.prompt, signal)) +
      2 * MESSAGE_OVERHEAD_TOKENS;
    countedWith = "model";
  } else {
    inputTokens = countTiktokens(request.systemPrompt) + countTiktokens(request.prompt) + 2 * MESSAGE_OVERHEAD_TOKENS;
    countedWith = "tiktoken";
  }
  const window = summarizer.contextWindow;
  if (!window || window <= 0) return { request, inputTokens, countedWith, outputReduced: false };
  const margin = countedWith === "tiktoken" ? Math.ceil(inputTokens * FOREIGN_TOKENIZER_MARGIN) : 0;
  const available = window - inputTokens - margin;
  const wanted = request.maxOutputTokens;
  if (available >= wanted) return { request, inputTokens, countedWith, outputReduced: false };
  const minimumOutput = Math.min(wanted, MIN_SUMMARY_OUTPUT_TOKENS);
  if (available >= minimumOutput)
    return { request: { ...request, maxOutputTokens: available }, inputTokens, countedWith, outputReduced: true };
  const neededWindow = inputTokens + margin + minimumOutput;
  const shortfall: FitShortfall = {
    what,
    summarizer: summarizer.label,
    inputTokens,
    margin,
    countedWith,
    window,
    minimumOutput,
    neededWindow,
    excess: neededWindow - window,
  };
  return { request, inputTokens, countedWith, outputReduced: false, shortfall };
}

/**
 * The numbers of a shortfall in one sentence (no advice, no final period): "The compaction summary
 * request does not fit the summarizer: it is about 712,004 tokens (+35,601 safety margin, counted
 * with tiktoken), and gpt-4o-mini at … has a context window of 128,000 tokens — with at least 1,024
 * for the summary it is 620,629 tokens too large".
 */
export function shortfallText(s: FitShortfall): string {
  return l10n.t(
    "The {0} request does not fit the summarizer: it is about {1} tokens{2}, and {3} has a context window of {4} tokens — with at least {5} for the summary it is {6} tokens too large",
    s.what,
    n(s.inputTokens),
    s.margin ? l10n.t(" (+{0} safety margin, counted with tiktoken)", n(s.margin)) : "",
    s.summarizer,
    n(s.window),
    n(s.minimumOutput),
    n(s.excess),
  );
}

/**
 * The `too-large` error of a request that does not fit: the numbers, then `advice` (sentences), then
 * "Nothing was sent or written."
 */
export function tooLargeError(shortfalls: readonly FitShortfall[], advice: readonly string[]): SummarizerError {
  const head = shortfalls.map(shortfallText).join(". ");
  return new SummarizerError("too-large", [`${head}.`, ...advice, l10n.t("Nothing was sent or written.")].join(" "));
}

/**
 * {@link measureRequest}, refusing a request that does not fit.
 * @param advice what to change when it does not fit (sentences; see `fitAdvice.ts`).
 * @throws {SummarizerError} `too-large` when input + {@link MIN_SUMMARY_OUTPUT_TOKENS} exceed the
 *   window (with the numbers and `advice`), `cancelled` when `signal` fires.
 */
export async function fitRequest(
  summarizer: Summarizer,
  request: SummaryRequest,
  what: string,
  signal?: AbortSignal,
  advice: (shortfall: FitShortfall) => readonly string[] = () => [],
): Promise<FittedRequest> {
  const fitted = await measureRequest(summarizer, request, what, signal);
  if (fitted.shortfall) throw tooLargeError([fitted.shortfall], advice(fitted.shortfall));
  return fitted;
}
