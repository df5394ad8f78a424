/**
 * Token counting (js-tiktoken `o200k_base`) and fitting a summary request into the summarizer's window:
 * the output limit is lowered to what is left, down to {@link MIN_SUMMARY_OUTPUT_TOKENS}, else refused
 * before any token is spent.
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
 * Tokens in `o200k_base` (special tokens as plain text); the encoder loads on first use. Its CommonJS
 * build is required directly: the typings are ESM-only under node16 resolution.
 */
export function countTiktokens(text: string): number {
  if (!encoder) {
    const { Tiktoken } = require("js-tiktoken/lite") as { Tiktoken: new (ranks: unknown) => Encoder };
    encoder = new Tiktoken(loadRanks());
  }
  return encoder.encode(text, [], []).length;
}

/** Beside the bundles (`esbuild.mjs` writes it). */
export const RANKS_FILE = "tiktoken-o200k_base.js";

/** In the bundles a separate file, so loading them does not parse 2.3 MB rarely needed; tests use the package. */
function loadRanks(): unknown {
  const beside = path.join(__dirname, RANKS_FILE);
  if (fs.existsSync(beside)) return require(beside) as unknown;
  return require("js-tiktoken/ranks/o200k_base") as unknown;
}

/** Per-message framing (role markers etc.), conservative. */
export const MESSAGE_OVERHEAD_TOKENS = 8;
/** Extra room when the tokenizer is not the model's own (5 % of the input). */
export const FOREIGN_TOKENIZER_MARGIN = 0.05;
export const MIN_SUMMARY_OUTPUT_TOKENS = 1024;

/** Why a request does not fit (tokens); nothing may be sent. */
export interface FitShortfall {
  what: string;
  summarizer: string;
  /** System prompt + prompt + framing. */
  inputTokens: number;
  /** 0 when the model's own counter counted. */
  margin: number;
  countedWith: "model" | "tiktoken";
  window: number;
  minimumOutput: number;
  /** Input + margin + minimum output. */
  neededWindow: number;
  /** `neededWindow − window` (> 0). */
  excess: number;
}

export interface FittedRequest {
  request: SummaryRequest;
  inputTokens: number;
  countedWith: "model" | "tiktoken";
  outputReduced: boolean;
  /** The request must not be sent (see {@link tooLargeError}). */
  shortfall?: FitShortfall;
}

const n = (v: number) => v.toLocaleString("en-US");

/**
 * Count the input (the summarizer's `countTokens`, else tiktoken) and fit `maxOutputTokens` into the
 * window, lowered if needed; a misfit comes back with a {@link FitShortfall}. @throws {SummarizerError} `cancelled`.
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

/** A shortfall's numbers in one sentence (no advice, no final period). */
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

/** The `too-large` error: the numbers, `advice`, then "Nothing was sent or written." */
export function tooLargeError(shortfalls: readonly FitShortfall[], advice: readonly string[]): SummarizerError {
  const head = shortfalls.map(shortfallText).join(". ");
  return new SummarizerError("too-large", [`${head}.`, ...advice, l10n.t("Nothing was sent or written.")].join(" "));
}

/** {@link measureRequest}, refusing a misfit. @throws {SummarizerError} `too-large` (with `advice`), `cancelled`. */
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
