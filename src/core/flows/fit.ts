/**
 * Token counting for summary requests (js-tiktoken, `o200k_base`) and fitting a request into the
 * summariser model's context window. No `vscode` import (the CLI uses it).
 *
 * pi sends the summary request with the model's output limit, reduced to fit the window; a request
 * whose input alone does not fit fails at the provider. We check before spending tokens: the output
 * limit is lowered to what is left (down to {@link MIN_SUMMARY_OUTPUT_TOKENS}), and below that the
 * request is refused with a message that says what to change.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { SummarizerError, type Summarizer, type SummaryRequest } from "./summarizer";

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

/** The result of {@link fitRequest}. */
export interface FittedRequest {
  request: SummaryRequest;
  /** Input tokens as counted (system prompt + prompt + framing). */
  inputTokens: number;
  /** `model` when the summariser's own tokenizer counted, `tiktoken` otherwise. */
  countedWith: "model" | "tiktoken";
  /** True when the output limit was lowered to fit the window. */
  outputReduced: boolean;
}

/**
 * Count a request's input tokens (the summariser's own `countTokens` when it has one, else
 * js-tiktoken) and fit `maxOutputTokens` into `summarizer.contextWindow`.
 * @throws {SummarizerError} `too-large` when input + {@link MIN_SUMMARY_OUTPUT_TOKENS} exceed the
 *   window (with the numbers and what to do), `cancelled` when `signal` fires.
 */
export async function fitRequest(
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
  const minimum = Math.min(wanted, MIN_SUMMARY_OUTPUT_TOKENS);
  if (available >= minimum)
    return { request: { ...request, maxOutputTokens: available }, inputTokens, countedWith, outputReduced: true };
  const n = (v: number) => v.toLocaleString("en-US");
  throw new SummarizerError(
    "too-large",
    `The ${what} request does not fit the summarizer model: it is about ${n(inputTokens)} tokens${margin ? ` (+${n(margin)} safety margin, counted with tiktoken)` : ""}, and ${summarizer.label} has a context window of ${n(window)} tokens, which leaves no room for a summary of at least ${n(minimum)} tokens. Choose a summarizer model with a larger context window (and give its real window: piContext.summarizer.openai.contextWindow in VS Code, --summarizer-window in the CLI), or compact earlier (lower keepRecentTokens or reserveTokens in pi's settings) so less is summarized at once. Nothing was sent or written.`,
  );
}
