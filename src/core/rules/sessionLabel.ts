/**
 * A session's display label, pi's rule: the session name, else the first user message
 * (pi 1.6.0 `modes/interactive/components/session-selector.js`: `session.name ?? session.firstMessage`,
 * control characters → space, `trim()`, then cut to the width). Every surface (panel header,
 * sidebar view, tree, progress and result messages, preview titles, the summary-diff tab, the
 * instructions box, Select Session, the gauge tooltip, the CLI) shows this one label.
 *
 * Beyond pi: only the characters that break a line or a column (tab, line breaks) become spaces;
 * every other control character, bidi override or tag character stays, so that each surface shows
 * it as its visible `\uXXXX` escape (`shared/untrusted.ts`, docs/security.md) instead of a blank
 * that hides it. The label is cut at {@link LABEL_MAX_CHARS}; {@link clipLabel} does the same to
 * a name or an entry label shown on one line.
 */

/** pi's `firstMessage` when a session has no user message with text (`buildSessionInfo`). */
export const NO_MESSAGES = "(no messages)";

/** Longest label (characters); longer ones end in `…`. */
export const LABEL_MAX_CHARS = 80;

/** How much of the first user message a listing keeps (characters): enough for the label and the filter. */
export const FIRST_MESSAGE_KEEP_CHARS = 2000;

/** What the label is made of: pi's `SessionInfo.name` and `firstMessage` (raw text; undefined = none). */
export interface LabelSource {
  name?: string | undefined;
  firstMessage?: string | undefined;
}

/** Tab, line and paragraph breaks (also the vertical ones): what would break a one-line label. */
const LAYOUT_BREAKS = /[\t\n\v\f\r\x85\u2028\u2029]/g;

/**
 * `text` as one line of at most `max` characters: tabs and line breaks → space, trimmed, cut with
 * `…` (never inside a surrogate pair). Control characters stay for the surface to escape visibly.
 */
export function clipLabel(text: string, max = LABEL_MAX_CHARS): string {
  const flat = text.replace(LAYOUT_BREAKS, " ").trim();
  if (flat.length <= max) return flat;
  let end = max - 1;
  const code = flat.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${flat.slice(0, end)}…`;
}

/**
 * The label: `name` (pi trims it when reading; empty = none), else `firstMessage`, else pi's
 * `(no messages)`; tabs and line breaks → space, trimmed, cut at `max` characters with `…`.
 */
export function sessionLabel(source: LabelSource, max = LABEL_MAX_CHARS): string {
  const name = source.name?.trim() ? source.name : undefined;
  return clipLabel(name ?? source.firstMessage ?? NO_MESSAGES, max) || NO_MESSAGES;
}

/** True when the label is the session's name (pi shows named sessions in another colour). */
export function isNamed(source: LabelSource): boolean {
  return !!source.name?.trim();
}

/**
 * pi's `appendSessionInfo` normalisation of a new name (`/name`, RPC `set_session_name`,
 * `pi.setSessionName`): line breaks → one space, trimmed. Empty = pi's error "Session name cannot be empty".
 */
export function normalizeSessionName(name: string): string {
  return name.replace(/[\r\n]+/g, " ").trim();
}
