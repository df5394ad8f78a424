/**
 * OpenAI-compatible summarizer (Chat Completions, any server through `baseURL`). No `vscode`: the
 * CLI uses it. Usage maps to pi's `Usage` like pi-ai's `openai-completions` `parseChunkUsage`.
 */

import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { MessageSurface } from "../core/access/words";
import {
  cancelledError,
  SummarizerError,
  type Summarizer,
  type SummarizeOptions,
  type SummaryRequest,
  type SummaryResult,
  type SummaryStopReason,
} from "../core/flows/summarizer";
import type { Usage } from "../core/types";
import * as l10n from "@vscode/l10n";

/** OpenAI's own endpoint (the `openai` package's default). */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Options of {@link OpenAiSummarizer}. */
export interface OpenAiSummarizerOptions {
  /** API base URL; empty/undefined = OpenAI. */
  baseURL?: string;
  /** API key (from SecretStorage or an environment variable); undefined = send none (local servers). */
  apiKey?: string;
  /** Model id as the server names it. */
  model: string;
  /** The model's context window in tokens (undefined = unknown: the request is not fitted). */
  contextWindow?: number;
  /** Output limit in tokens. */
  maxOutputTokens: number;
  /** Stream the answer (default true). */
  stream?: boolean;
  /** Retries of transient failures (429, 5xx, connection errors) by the `openai` package (default 2). */
  maxRetries?: number;
  /** ms (default 10 min) for the headers and then for each further piece: a stalled server is given up on. */
  timeoutMs?: number;
  /** Default `max_completion_tokens` for api.openai.com, `max_tokens` elsewhere (as pi-ai does). */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** `vscode`: messages name the settings; `cli` (default): the flags and environment variables. */
  surface?: MessageSurface;
}

/** How to fix each configuration problem, per surface. */
const HINTS: Record<
  MessageSurface,
  { model: string; baseURL: string; setKey: string; checkKey: (origin: string) => string }
> = {
  // VS Code's words are localised when read (the CLI's stay English: its flags and variables)
  vscode: {
    get model() {
      return l10n.t("set piContext.summarizer.openai.model");
    },
    get baseURL() {
      return l10n.t("setting piContext.summarizer.openai.baseURL");
    },
    get setKey() {
      return l10n.t('run "Pi Context: Set API Key…" (kept in VS Code\'s secret storage)');
    },
    checkKey: () => l10n.t('Check the API key ("Pi Context: Set API Key…").'),
  },
  cli: {
    model: "pass --model or set PI_CONTEXT_MODEL",
    baseURL: "--base-url or PI_CONTEXT_BASE_URL",
    setKey: "set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment",
    checkKey: (origin) =>
      origin === OPENAI_ORIGIN
        ? "Check the API key (PI_CONTEXT_API_KEY or OPENAI_API_KEY)."
        : `Check the API key in PI_CONTEXT_API_KEY (OPENAI_API_KEY is only sent to ${OPENAI_ORIGIN}, not to ${origin}).`,
  },
};

type RawUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  prompt_cache_hit_tokens?: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
};

/** `"500 upstream exploded"` → `"upstream exploded."`, as a sentence. */
export function withoutStatus(message: string, status: number | undefined): string {
  let text = message.trim();
  if (status !== undefined && text.startsWith(`${status} `)) text = text.slice(String(status).length + 1).trim();
  if (text === "status code (no body)") text = l10n.t("no body");
  if (text === "") text = l10n.t("no message");
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** pi-ai's `parseChunkUsage` without prices. */
export function usageFromOpenAi(raw: RawUsage): Usage {
  const prompt = raw.prompt_tokens || 0;
  const cacheRead = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? raw.cached_tokens ?? 0;
  const cacheWrite = raw.prompt_tokens_details?.cache_write_tokens || 0;
  const input = Math.max(0, prompt - cacheRead - cacheWrite);
  const output = raw.completion_tokens || 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning: raw.completion_tokens_details?.reasoning_tokens || raw.reasoning_tokens || 0,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

function stopReasonOf(finish: string | null | undefined): SummaryStopReason | { error: string } {
  switch (finish) {
    case null:
    case undefined:
    case "stop":
    case "end":
    case "eos":
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    default:
      return { error: l10n.t('the provider stopped the answer (finish_reason "{0}")', finish) };
  }
}

/** Drop a leading `<think>…</think>` block some local models put into the answer text. */
export function stripThinking(text: string): string {
  const m = /^\s*<think>[\s\S]*?<\/think>\s*/.exec(text);
  return m ? text.slice(m[0].length) : text;
}

/** The origin an API key belongs to (`scheme://host:port`; empty = OpenAI's), or the raw string when it is no URL. */
export function keyOrigin(baseURL: string | undefined): string {
  try {
    return new URL(baseURL || OPENAI_DEFAULT_BASE_URL).origin;
  } catch {
    return baseURL ?? "";
  }
}

/** OpenAI's own origin: the only one `OPENAI_API_KEY` is sent to. */
export const OPENAI_ORIGIN = "https://api.openai.com";

/** True when `baseURL` (empty = OpenAI's) has OpenAI's origin exactly (https, api.openai.com, port 443). */
export function isOpenAiOrigin(baseURL: string | undefined): boolean {
  return keyOrigin(baseURL) === OPENAI_ORIGIN;
}

/** Never a user name or password; a query string only as `?…` (some proxies take keys there). */
export function displayBaseURL(baseURL: string): string {
  try {
    const u = new URL(baseURL);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? "?…" : ""}`;
  } catch {
    return baseURL.replace(/\/\/[^/@\s]*@/, "//***@");
  }
}

/** A redirect's `Location` (relative to `baseURL`) as {@link displayBaseURL} shows a URL; at most 200 characters. */
function shownLocation(location: string, baseURL: string): string {
  let shown: string;
  try {
    shown = displayBaseURL(new URL(location, baseURL).href);
  } catch {
    shown = location;
  }
  return shown.length > 200 ? `${shown.slice(0, 199)}…` : shown;
}

/** The base64 alphabet's view of bytes (browser-safe `btoa` over a byte string). */
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/**
 * Every form in which a server might echo `secret`: any letter case, and its base64/base64url at
 * each of the three byte alignments. Undefined for keys too short to redact safely (< 8 characters).
 */
export function secretPattern(secret: string | undefined): RegExp | undefined {
  if (!secret || secret.length < 8) return undefined;
  const bytes = new TextEncoder().encode(secret);
  const forms = new Set<string>([secret]);
  for (let align = 0; align < 3; align++) {
    const padded = new Uint8Array(align + bytes.length);
    padded.set(bytes, align);
    let encoded = base64(padded).replace(/=+$/, "");
    // drop the groups that mix in bytes before or after the key
    if ((align + bytes.length) % 3 !== 0) encoded = encoded.slice(0, encoded.length - (encoded.length % 4 || 4));
    if (align > 0) encoded = encoded.slice(4);
    if (encoded.length >= 8) {
      forms.add(encoded);
      forms.add(encoded.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  }
  const escaped = [...forms].sort((a, b) => b.length - a.length).map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(escaped.join("|"), "gi");
}

/** `text` with every echo of `secret` (see {@link secretPattern}) replaced by `***`. */
export function redactSecret(text: string, secret: string | undefined): string {
  const pattern = secretPattern(secret);
  return pattern ? text.replace(pattern, "***") : text;
}

/** True when `baseURL` is OpenAI's own API. */
export function isOpenAiHost(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/** Summarizer over an OpenAI-compatible Chat Completions endpoint. */
export class OpenAiSummarizer implements Summarizer {
  readonly provider = "openai";
  readonly label: string;
  readonly contextWindow: number | undefined;
  readonly maxOutputTokens: number;
  readonly model: string;
  /** {@link model}: the id as the server names it. */
  get modelName(): string {
    return this.model;
  }
  readonly baseURL: string;
  private readonly client: OpenAI;
  private readonly stream: boolean;
  /** See {@link OpenAiSummarizerOptions.timeoutMs} (ms). */
  private readonly timeoutMs: number;
  private readonly maxTokensField: "max_completion_tokens" | "max_tokens";
  /** Every form of the API key a server might echo (see {@link secretPattern}). */
  private readonly secret: RegExp | undefined;
  private readonly hints: (typeof HINTS)[MessageSurface];
  /** The base URL as shown in labels and messages ({@link displayBaseURL}). */
  private readonly shownURL: string;
  /** The base URL's origin (which key belongs to it). */
  private readonly origin: string;
  /** True when a key was given (it is sent as `Authorization: Bearer …`). */
  readonly hasApiKey: boolean;
  /** OpenAI's own API without a key: counting and previews work, {@link summarize} throws `config`. */
  readonly needsApiKey: boolean;

  /** @throws {SummarizerError} `config` for an empty model id, a bad base URL, or credentials in the URL (it is shown and logged). */
  constructor(options: OpenAiSummarizerOptions) {
    this.hints = HINTS[options.surface ?? "cli"];
    if (!options.model)
      throw new SummarizerError("config", l10n.t("No summarizer model is set: {0}.", this.hints.model));
    this.baseURL = options.baseURL?.trim() || OPENAI_DEFAULT_BASE_URL;
    let url: URL;
    try {
      url = new URL(this.baseURL);
    } catch {
      throw new SummarizerError(
        "config",
        l10n.t(
          'The summarizer base URL "{0}" is not a valid URL ({1}).',
          displayBaseURL(this.baseURL),
          this.hints.baseURL,
        ),
      );
    }
    if (url.username || url.password)
      throw new SummarizerError(
        "config",
        l10n.t(
          "The summarizer base URL {0} must not contain a user name or password ({1}); to send a key, {2}.",
          displayBaseURL(this.baseURL),
          this.hints.baseURL,
          this.hints.setKey,
        ),
      );
    this.shownURL = displayBaseURL(this.baseURL);
    this.origin = url.origin;
    this.hasApiKey = !!options.apiKey;
    this.needsApiKey = !options.apiKey && isOpenAiHost(this.baseURL);
    this.model = options.model;
    this.contextWindow = options.contextWindow && options.contextWindow > 0 ? options.contextWindow : undefined;
    this.maxOutputTokens = options.maxOutputTokens;
    this.stream = options.stream ?? true;
    this.maxTokensField =
      options.maxTokensField ?? (isOpenAiHost(this.baseURL) ? "max_completion_tokens" : "max_tokens");
    this.secret = secretPattern(options.apiKey || undefined);
    this.label = l10n.t("{0} at {1}", options.model, this.shownURL);
    this.timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    this.client = new OpenAI({
      // Keyless local servers: the package insists on a key, so give it a dummy and drop the header.
      apiKey: options.apiKey || "no-key",
      ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
      baseURL: this.baseURL,
      maxRetries: options.maxRetries ?? 2,
      timeout: this.timeoutMs,
      // the package's own logs would print raw server bytes and, at OPENAI_LOG=debug, session text
      logLevel: "off",
      // Never follow a redirect: 307/308 would send the conversation elsewhere, 301–303 turn it into a GET
      // whose answer would be taken for a summary. The 3xx is refused below.
      fetchOptions: { redirect: "manual" },
    });
  }

  /** The `config` error for a missing key, with how to set it on this surface. */
  missingKeyError(): SummarizerError {
    return new SummarizerError("config", l10n.t("No API key for {0}: {1}.", this.shownURL, this.hints.setKey));
  }

  /** Never let the key reach a message: every echo of it (any case, base64) becomes `***`. */
  private redact(text: string): string {
    return this.secret ? text.replace(this.secret, "***") : text;
  }

  /** Mapped to a {@link SummarizerError}, redacted, without `cause` (it may carry headers or an echoing body). */
  private publicError(error: unknown, signal: AbortSignal | undefined): SummarizerError {
    const mapped = this.mapError(error, signal);
    return new SummarizerError(mapped.kind, this.redact(mapped.message), {
      ...(mapped.status !== undefined ? { status: mapped.status } : {}),
    });
  }

  private mapError(error: unknown, signal: AbortSignal | undefined): SummarizerError {
    if (error instanceof SummarizerError) return error;
    if (
      signal?.aborted ||
      error instanceof APIUserAbortError ||
      (error instanceof Error && error.name === "AbortError")
    )
      return cancelledError();
    if (error instanceof APIConnectionTimeoutError)
      return new SummarizerError(
        "network",
        l10n.t("The summarizer at {0} did not answer in time (timeout).", this.shownURL),
      );
    if (error instanceof APIConnectionError) {
      const cause = (error as { cause?: { message?: string; code?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? error.message;
      return new SummarizerError(
        "network",
        l10n.t("Could not reach the summarizer at {0}: {1}.", this.shownURL, detail),
      );
    }
    if (error instanceof APIError && error.status !== undefined && error.status >= 300 && error.status < 400) {
      const location = error.headers?.get("location");
      return new SummarizerError(
        "http",
        l10n.t(
          "The summarizer at {0} answered HTTP {1}, a redirect{2}. pi-context does not follow redirects (the conversation would go to another address): nothing was sent there. Set the base URL to the address the server names, if you trust it.",
          this.shownURL,
          error.status,
          location ? l10n.t(" to {0}", shownLocation(location, this.baseURL)) : "",
        ),
        { status: error.status },
      );
    }
    if (error instanceof APIError) {
      const status = error.status;
      const hint =
        status === 401 || status === 403
          ? ` ${this.hints.checkKey(this.origin)}`
          : status === 404
            ? l10n.t(" Check the base URL and the model id.")
            : "";
      return new SummarizerError(
        "http",
        l10n.t(
          "The summarizer at {0} answered HTTP {1}: {2}{3}",
          this.shownURL,
          status ?? "error",
          withoutStatus(error.message, status),
          hint,
        ),
        status !== undefined ? { status } : undefined,
      );
    }
    const detail = (error as Error)?.message ?? String(error);
    return new SummarizerError(
      "network",
      l10n.t("Summarizer request failed: {0}{1}", detail, /[.!?]$/.test(detail) ? "" : "."),
    );
  }

  /** The error for an answer that stopped coming (see {@link OpenAiSummarizerOptions.timeoutMs}). */
  private stalledError(): SummarizerError {
    return new SummarizerError(
      "network",
      l10n.t(
        "The summarizer at {0} stopped sending its answer: nothing came for {1} s.",
        this.shownURL,
        Math.round(this.timeoutMs / 1000),
      ),
    );
  }

  async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummaryResult> {
    const { signal, onText } = options;
    if (signal?.aborted) throw cancelledError();
    if (this.needsApiKey) throw this.missingKeyError();
    const body = {
      model: this.model,
      messages: [
        { role: "system" as const, content: request.systemPrompt },
        { role: "user" as const, content: request.prompt },
      ],
      [this.maxTokensField]: request.maxOutputTokens,
    };
    // The package's timeout ends when the headers arrive; after them, a watchdog gives up on an
    // answer that stops coming (no byte for `timeoutMs`). The caller's signal aborts it too.
    const watchdog = new StallWatchdog(this.timeoutMs, signal);
    const requestOptions = { signal: watchdog.signal };
    try {
      if (!this.stream) {
        const response = await this.client.chat.completions
          .create({ ...body, stream: false }, requestOptions)
          .asResponse();
        watchdog.arm();
        const completion = (await response.json()) as OpenAI.Chat.Completions.ChatCompletion;
        const choice = completion.choices?.[0];
        if (!choice) throw new SummarizerError("empty", l10n.t("The summarizer returned no choices."));
        const stop = stopReasonOf(choice.finish_reason);
        if (typeof stop === "object") throw new SummarizerError("http", `${stop.error}.`);
        const toolCall = (choice.message?.tool_calls?.length ?? 0) > 0;
        const text = this.redact(stripThinking(choice.message?.content ?? ""));
        if (text) onText?.(text);
        const result: SummaryResult = {
          text,
          stopReason: toolCall ? "toolUse" : stop,
          model: this.redact(completion.model),
        };
        if (completion.usage) result.usage = usageFromOpenAi(completion.usage as RawUsage);
        return result;
      }
      const stream = await this.client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        requestOptions,
      );
      watchdog.arm();
      let text = "";
      let finish: string | null | undefined;
      let toolCall = false;
      let usage: Usage | undefined;
      let model: string | undefined;
      for await (const chunk of stream) {
        watchdog.arm();
        if (signal?.aborted) throw cancelledError();
        model ??= chunk.model;
        if (chunk.usage) usage = usageFromOpenAi(chunk.usage as RawUsage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta?.tool_calls?.length) toolCall = true;
        if (delta?.content) {
          text += delta.content;
          onText?.(delta.content);
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      if (signal?.aborted) throw cancelledError();
      // the package ends the iteration quietly when the request is aborted
      if (watchdog.stalled) throw this.stalledError();
      const stop = stopReasonOf(finish);
      if (typeof stop === "object") throw new SummarizerError("http", `${stop.error}.`);
      // the summary is written into the session: no echo of the key goes with it
      const result: SummaryResult = { text: this.redact(stripThinking(text)), stopReason: toolCall ? "toolUse" : stop };
      if (model) result.model = this.redact(model);
      if (usage) result.usage = usage;
      return result;
    } catch (error) {
      if (watchdog.stalled && !signal?.aborted) throw this.stalledError();
      throw this.publicError(error, signal);
    } finally {
      watchdog.dispose();
    }
  }
}

/** Aborts on the caller's abort, or when `idleMs` pass between {@link arm} calls ({@link stalled}). */
class StallWatchdog {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerAbort = () => this.controller.abort();
  stalled = false;
  constructor(
    private readonly idleMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    caller?.addEventListener("abort", this.onCallerAbort, { once: true });
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  /** (Re)start the wait: the next piece of the answer must come within `idleMs`. */
  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, this.idleMs);
  }
  /** Stop waiting and let go of the caller's signal (the request has settled). */
  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCallerAbort);
  }
}
