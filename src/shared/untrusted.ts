/** Untrusted text (session files, servers) made safe where it is shown. Browser-safe (no `node:`). */

/**
 * C0/C1 controls but tab and newline (ESC starts CSI/OSC, CR overwrites), DEL, bidi controls, and the
 * tag characters U+E0000–U+E007F, which can hide an instruction to the model ("ASCII smuggling").
 */
const UNSAFE_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/g;
const UNSAFE_TEST =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/;

/** `\uXXXX` per UTF-16 unit: visible, and the same character inside JSON. */
function escapeCode(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * Every control character and bidi override as its visible `\uXXXX` escape; tab and newline stay,
 * CRLF becomes a newline. JSON stays valid with the same value, so it applies to `--json` too.
 */
export function visibleText(text: string): string {
  if (!UNSAFE_TEST.test(text)) return text;
  return text.replace(/\r\n/g, "\n").replace(UNSAFE_CONTROL, escapeCode);
}

/** Text for a terminal (applied to all CLI output in `cli/main.ts`). */
export const terminalText = visibleText;

const ANY_LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/g;

/** {@link visibleText} with line breaks as spaces, so a name cannot forge an output line of its own. */
export function lineText(text: string): string {
  return visibleText(text.replace(ANY_LINE_BREAK, " "));
}

/** VS Code's theme-icon syntax as `renderLabelWithIcons` matches it (its `escapeIcons` rule). */
const THEME_ICON = /(\\)?\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g;

/**
 * For VS Code strings that render `$(icon)` (quick picks, status bar): {@link visibleText}, and each
 * icon VS Code would draw escaped as `\$(name)`. Idempotent, so whole composed strings may pass.
 */
export function iconLabelText(text: string): string {
  return visibleText(text).replace(THEME_ICON, (m, escaped: string | undefined) => (escaped ? m : `\\${m}`));
}

/** A zero-width space between `]` and `(`: VS Code's `[label](target)` link syntax no longer matches. */
function breakLinks(text: string): string {
  return text.replace(/\]\s*\(/g, (m) => `${m.slice(0, -1)}\u200b(`);
}

/** For input box prompts: VS Code renders icons and `command:` links there, so both are neutralised. */
export function inputMessageText(text: string): string {
  return breakLinks(iconLabelText(text));
}

/** Line breaks as Markdown (and `marked`, which also splits on a lone CR) sees them. */
const LINE_BREAK = /\r\n|[\r\n\u000b\u000c\u0085\u2028\u2029]/g;
const MARKDOWN_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/**
 * Inline Markdown that renders as exactly the text (also in a table cell): all ASCII punctuation
 * escaped (no autolinks either), line breaks and space runs one space, controls escaped.
 */
export function markdownText(text: string): string {
  return escapePunctuation(flatText(text));
}

function flatText(text: string): string {
  return text
    .replace(LINE_BREAK, " ")
    .replace(UNSAFE_CONTROL, escapeCode)
    .replace(/[ \t]+/g, " ");
}

function escapePunctuation(text: string): string {
  return text.replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`);
}

/**
 * {@link markdownText} for a `MarkdownString` with `supportThemeIcons`: VS Code draws icons after
 * Markdown removed the escapes, so each icon gets an escaped backslash too. Not for other Markdown.
 */
export function themeIconMarkdownText(text: string): string {
  const flat = flatText(text);
  let out = "";
  let last = 0;
  for (const m of flat.matchAll(THEME_ICON)) {
    if (m[1]) continue; // already `\$(…)`: its own backslash, escaped, keeps it text
    out += `${escapePunctuation(flat.slice(last, m.index))}\\\\${escapePunctuation(m[0])}`;
    last = m.index! + m[0].length;
  }
  return out + escapePunctuation(flat.slice(last));
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

/** An inline code span, delimited by one backtick more than the text's longest backtick run. */
export function markdownCode(text: string): string {
  const flat = text.replace(LINE_BREAK, " ").replace(UNSAFE_CONTROL, escapeCode);
  const fence = "`".repeat(longestBacktickRun(flat) + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat === "" ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block whose fence is longer than any backtick run in it (closing fences may be indented). */
export function markdownCodeBlock(text: string, language = ""): string {
  const body = text.replace(/\r\n?|[\u000b\u000c\u0085\u2028\u2029]/g, "\n").replace(UNSAFE_CONTROL, escapeCode);
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1));
  return `${fence}${language}\n${body}\n${fence}`;
}

/** For notifications: VS Code opens `[label](command:…)` links there, so each is broken. */
export function notificationText(text: string): string {
  return breakLinks(text.replace(UNSAFE_CONTROL, escapeCode));
}

/**
 * True for a Windows UNC, device or remote `file://` path: a `stat` of one connects over SMB and
 * offers the user's NTLM hash, so such paths are shown, never touched. False on POSIX.
 */
export function isNetworkPath(p: string, platform: string): boolean {
  if (platform !== "win32") return false;
  const raw = p.trim();
  if (/^file:/i.test(raw)) {
    const rest = raw.slice(5).replace(/\\/g, "/");
    if (!rest.startsWith("//")) return false; // file:/C:/x
    const authority = rest.slice(2).split("/")[0]!;
    if (authority !== "") return authority.toLowerCase() !== "localhost"; // file://server/share
    return rest.slice(2).startsWith("//"); // file:////server/share; file:///C:/x and file:///x are local
  }
  const s = raw.replace(/\//g, "\\");
  if (!s.startsWith("\\\\")) return false; // C:\x, \x (the current drive), x
  return !/^\\\\[?.]\\[a-zA-Z]:(\\|$)/.test(s); // only \\?\C:\… and \\.\C:\… are local
}
