/**
 * A session's display label, pi's rule: the session name, else the first user message
 * (pi 1.6.0 `modes/interactive/components/session-selector.js`: `session.name ?? session.firstMessage`,
 * control characters → space, `trim()`, then cut to the width). Every surface (panel header,
 * sidebar view, tree, progress and result messages, preview titles, the summary-diff tab, the
 * instructions box, Select Session, the gauge tooltip, the CLI) shows this one label.
 *
 * Beyond pi: C1 controls and bidirectional overrides also become spaces (the label is shown in
 * terminals and tooltips; see docs/security.md), and the label is cut at {@link LABEL_MAX_CHARS}.
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

const CONTROLS = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The label: `name` (pi trims it when reading; empty = none), else `firstMessage`, else pi's
 * `(no messages)`; control characters → space, trimmed, cut at `max` characters with `…`.
 */
export function sessionLabel(source: LabelSource, max = LABEL_MAX_CHARS): string {
  const name = source.name?.trim() ? source.name : undefined;
  const text = (name ?? source.firstMessage ?? NO_MESSAGES).replace(CONTROLS, " ").trim() || NO_MESSAGES;
  if (text.length <= max) return text;
  // do not cut a surrogate pair in half
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
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
