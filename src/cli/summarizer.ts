/**
 * The summarizer of `pi-context compact` and `pi-context switch --summarize`: an OpenAI-compatible
 * server chosen by flags and the environment (never a key on the command line).
 *
 * - `--base-url` (default `PI_CONTEXT_BASE_URL`, else OpenAI), `--model` (default `PI_CONTEXT_MODEL`,
 *   else `gpt-4o-mini`), `--summarizer-window` (tokens, default 128 000), `--max-output-tokens`
 *   (default 8 192), `--no-stream`;
 * - the key: `PI_CONTEXT_API_KEY` (the user's explicit choice for this server), else
 *   `OPENAI_API_KEY` — but only to OpenAI's own origin (`https://api.openai.com`), the same
 *   per-origin rule as the extension's stored keys: a `--base-url` elsewhere never gets it.
 */

import { isOpenAiOrigin, OpenAiSummarizer } from "../summarizers/openai";
import { intFlag, stringFlag, type ParsedArgs } from "./args";

/** The summarizer flags (for the commands' lists of known flags). */
export const SUMMARIZER_FLAGS = ["base-url", "model", "summarizer-window", "max-output-tokens", "no-stream"] as const;

/** The summarizer the flags describe. */
export interface FlagSummarizer {
  /** The model id asked for. */
  model: string;
  /** `--max-output-tokens` (default 8 192). */
  maxOutputTokens: number;
  /**
   * A new summarizer (throws the summarizer's `config` error for an unusable base URL or model).
   * @throws {SummarizerError}
   */
  make(): OpenAiSummarizer;
}

/**
 * The summarizer of `args` and `env`.
 * @throws {UsageError} for a malformed number flag.
 */
export function summarizerFromFlags(args: ParsedArgs, env: NodeJS.ProcessEnv): FlagSummarizer {
  const maxOutputTokens = intFlag(args, "max-output-tokens") ?? 8192;
  const contextWindow = intFlag(args, "summarizer-window") || 128000;
  const model = stringFlag(args, "model") ?? env.PI_CONTEXT_MODEL ?? "gpt-4o-mini";
  const baseURL = stringFlag(args, "base-url") ?? env.PI_CONTEXT_BASE_URL;
  const apiKey = env.PI_CONTEXT_API_KEY || (isOpenAiOrigin(baseURL) ? env.OPENAI_API_KEY : undefined) || undefined;
  return {
    model,
    maxOutputTokens,
    make: () =>
      new OpenAiSummarizer({
        ...(baseURL ? { baseURL } : {}),
        ...(apiKey ? { apiKey } : {}),
        model,
        contextWindow,
        maxOutputTokens,
        stream: !args.flags.has("no-stream"),
        surface: "cli",
      }),
  };
}
