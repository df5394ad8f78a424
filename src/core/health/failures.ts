/**
 * How pi-ai 1.6.0 classifies a failed answer (`utils/overflow.js`, `utils/retry.js`; patterns verbatim).
 * pi's `_isRetryableError` is `!isContextOverflow(m, window) && isRetryableAssistantError(m)`.
 */

export const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt (?:is )?too long/i,
  /prompt exceeds max length/i,
  /request_too_large/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))/i,
  /context window exceeded/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?/i,
  /input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?/i,
  /model_context_window_exceeded/i,
  /prompt too long; exceeded (?:max )?context length/i,
  /range of input length should be/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  /^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))/i,
];

export const NON_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /^(Throttling error|Service unavailable):/i,
  /rate limit/i,
  /too many requests/i,
];

const CEREBRAS_BODYLESS_OVERFLOW_PATTERN = /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i;

const provider = (patterns: string[]) => new RegExp(patterns.join("|"), "i");

export const QUOTA_PATTERN = provider([
  "GoUsageLimitError",
  "FreeUsageLimitError",
  "Monthly usage limit reached",
  "available balance",
  "insufficient_quota",
  "out of budget",
  "quota exceeded",
  "billing",
  "subscription_sharing_usage_limit_exceeded",
  "subscription_sharing_workplace_individual_usage_limit_exceeded",
  '"code"\\s*:\\s*"?1308(?![0-9])',
]);

export const RETRYABLE_PATTERN = provider([
  "overloaded",
  "server_busy",
  "servers are currently busy",
  "currently experiencing high demand",
  "model is at capacity",
  "rate.?limit",
  "too many requests",
  "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
  "service.?(?:is.?)?(?:temporarily.?)?unavailable",
  "server.?error",
  "internal.?error",
  "provider.?returned.?(?:an.?)?error",
  "exceeded request buffer limit while retrying upstream",
  "unable to forward upstream",
  "upstream.?request.?failed",
  "upstream_stream_read_error",
  "stream was interrupted",
  "http/?2 stream failed",
  "network.?error",
  "connection.?error",
  "connection.?refused",
  "connection.?lost",
  "connection.?closed",
  "other side closed",
  "fetch failed",
  "request to \\S+ failed, reason:",
  "getaddrinfo",
  "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
  "connection reset by peer",
  "ENOTFOUND",
  "EAI_AGAIN",
  "upstream.?connect",
  "reset before headers",
  "socket hang up",
  "socket connection was closed",
  "timed? out",
  "timeout",
  "terminated",
  "websocket.?closed",
  "websocket.?error",
  "websocket.?connection.?limit.?reached",
  "ended without",
  "stream ended before message_stop",
  "stream ended before a terminal response event",
  "http2 request did not get a response",
  "stream disconnected before completion",
  "cut short after the reply had begun",
  "pending stream has been canceled",
  "retry delay",
  "you can retry your request",
  "try your request again",
  "please retry your request",
  "ResourceExhausted",
  "subscription_sharing_usage_unavailable",
  "subscription_sharing_user_unavailable",
]);

export interface FailedAnswer {
  stopReason?: string;
  errorMessage?: string;
  provider?: string;
  /** NaN when absent. */
  input: number;
  output: number;
  cacheRead: number;
}

export type OverflowKind = "error" | "silent" | "length";

/** pi-ai's `isContextOverflow(message, contextWindow)`, saying which case matched; no window skips the usage cases. */
export function contextOverflowKind(message: FailedAnswer, contextWindow?: number): OverflowKind | undefined {
  const error = message.errorMessage;
  if (message.stopReason === "error" && error) {
    if (!NON_OVERFLOW_PATTERNS.some((p) => p.test(error))) {
      if (OVERFLOW_PATTERNS.some((p) => p.test(error))) return "error";
      if (message.provider === "cerebras" && CEREBRAS_BODYLESS_OVERFLOW_PATTERN.test(error)) return "error";
    }
  }
  const inputTokens = message.input + message.cacheRead;
  if (contextWindow && message.stopReason === "stop" && inputTokens > contextWindow) return "silent";
  if (contextWindow && message.stopReason === "length" && message.output === 0 && inputTokens >= contextWindow * 0.99)
    return "length";
  return undefined;
}

export function isRetryableError(message: Pick<FailedAnswer, "stopReason" | "errorMessage">): boolean {
  if (message.stopReason !== "error" || !message.errorMessage) return false;
  if (QUOTA_PATTERN.test(message.errorMessage)) return false;
  return RETRYABLE_PATTERN.test(message.errorMessage);
}

/** A quota, budget or plan limit: retrying does not help until it is lifted. */
export function isQuotaError(message: Pick<FailedAnswer, "errorMessage">): boolean {
  return Boolean(message.errorMessage && QUOTA_PATTERN.test(message.errorMessage));
}
