/**
 * A session's display label by pi's rule (`session-selector.js`: name, else first user message). Beyond
 * pi: only tab and line breaks become spaces; other control or bidi characters stay so surfaces show
 * them as visible `\uXXXX` escapes (`shared/untrusted.ts`) instead of hiding them.
 */

/** pi's `firstMessage` when a session has no user message with text (`buildSessionInfo`). */
export const NO_MESSAGES = "(no messages)";

/** Characters; longer labels end in `…`. */
export const LABEL_MAX_CHARS = 80;

/** Characters of the first user message a listing keeps: enough for the label and the filter. */
export const FIRST_MESSAGE_KEEP_CHARS = 2000;

/** pi's `SessionInfo.name` and `firstMessage` (raw text). */
export interface LabelSource {
  name?: string | undefined;
  firstMessage?: string | undefined;
}

const LAYOUT_BREAKS = /[\t\n\v\f\r\x85\u2028\u2029]/g;

/** One line of at most `max` characters, cut with `…` (never inside a surrogate pair). */
export function clipLabel(text: string, max = LABEL_MAX_CHARS): string {
  const flat = text.replace(LAYOUT_BREAKS, " ").trim();
  if (flat.length <= max) return flat;
  let end = max - 1;
  const code = flat.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${flat.slice(0, end)}…`;
}

/** `name` (pi trims it; empty = none), else `firstMessage`, else `(no messages)`; clipped like {@link clipLabel}. */
export function sessionLabel(source: LabelSource, max = LABEL_MAX_CHARS): string {
  const name = source.name?.trim() ? source.name : undefined;
  return clipLabel(name ?? source.firstMessage ?? NO_MESSAGES, max) || NO_MESSAGES;
}

/** pi shows named sessions in another colour. */
export function isNamed(source: LabelSource): boolean {
  return !!source.name?.trim();
}

/** pi's `appendSessionInfo` normalisation: line breaks → one space, trimmed; empty is pi's error. */
export function normalizeSessionName(name: string): string {
  return name.replace(/[\r\n]+/g, " ").trim();
}
