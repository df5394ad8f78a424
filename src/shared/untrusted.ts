/**
 * Untrusted text (anything that comes from a session file or a server: assistant text, session
 * names, labels, model ids, paths, error bodies) made safe for where it is shown: a terminal or
 * Markdown. One helper per output kind, applied where the text leaves us, so new code gets it
 * without remembering to. Browser-safe (no `node:`).
 */

/**
 * Characters a terminal or a text renderer acts on instead of showing: C0 controls except tab and
 * newline (ESC starts CSI/OSC sequences — title changes, `ESC[2J`, OSC 8 hyperlinks —, a bare CR
 * overwrites the line, BEL, backspace …), DEL, the C1 controls U+0080–U+009F (8-bit CSI/OSC/ST),
 * the Unicode bidirectional controls that reorder what is shown (U+061C, U+200E/F,
 * U+202A–U+202E, U+2066–U+2069), and the Unicode tag characters U+E0000–U+E007F (the surrogate
 * pairs U+DB40 U+DC00–DC7F): invisible everywhere, yet each one mirrors an ASCII character, so a
 * session can hide a whole instruction to the model in them ("ASCII smuggling"); shown, the hidden
 * text is there to see. The one cost: an emoji subdivision flag (🏴 + tags) shows as its escapes.
 */
const UNSAFE_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/g;
const UNSAFE_TEST =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/;

/**
 * `\uXXXX` for each UTF-16 unit of one character (a tag character is two: `\udb40\udc41`):
 * visible, and the same character when the text is JSON.
 */
function escapeCode(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * Untrusted text made visible, the one rule of every surface: every control character and bidi
 * override (see above) becomes its visible `\uXXXX` escape (ESC shows as `\u001b` in the CLI, the
 * VS Code labels and the panel alike); tab and newline stay, a CRLF pair becomes a newline. JSON
 * stays valid JSON with the same value (the escape means the same character), so it also applies
 * to `--json` output.
 */
export function visibleText(text: string): string {
  if (!UNSAFE_TEST.test(text)) return text;
  return text.replace(/\r\n/g, "\n").replace(UNSAFE_CONTROL, escapeCode);
}

/** Text for a terminal: {@link visibleText} (applied to all CLI output in `cli/main.ts`). */
export const terminalText = visibleText;

/** Every line break: CRLF, CR, LF and the Unicode line and paragraph separators. */
const ANY_LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/g;

/**
 * Untrusted text that is one line of line-oriented terminal output (a `tree` row, an `inspect`
 * row, a preview's `session` line): {@link visibleText}, and every line break a space, so that a
 * session name, label, id, model id or tool name cannot start an output line of its own (a
 * forged `leaf …` row or tree entry). Apply it to each line a formatter joins.
 */
export function lineText(text: string): string {
  return visibleText(text.replace(ANY_LINE_BREAK, " "));
}

/**
 * VS Code's theme-icon syntax as its label renderer (`renderLabelWithIcons`) matches it: `$(name)`
 * or `$(name~modifier)` (`ThemeIcon.iconNameExpression` / `iconModifierExpression`), with the
 * backslash that makes VS Code show the text instead — VS Code's own `escapeIcons` rule.
 */
const THEME_ICON = /(\\)?\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g;

/**
 * Untrusted text in a VS Code string that renders `$(icon)`: quick-pick item labels, descriptions
 * and details (also `showQuickPick`'s), status-bar text. {@link visibleText}, then every `$(name)`
 * VS Code would turn into a codicon gets a backslash (`\$(name)`), which VS Code shows as the
 * plain `$(name)` (VS Code's `escapeIcons`); a `$(` that is no icon is left alone (a backslash
 * there would show). Idempotent, so a surface may apply it to a whole string that already holds
 * escaped parts; the one loss: a `\$(name)` in the text shows as `$(name)`. Compose our own icons
 * around the escaped text: `` `$(check) ${iconLabelText(name)}` ``.
 */
export function iconLabelText(text: string): string {
  return visibleText(text).replace(THEME_ICON, (m, escaped: string | undefined) => (escaped ? m : `\\${m}`));
}

/** A zero-width space between `]` and `(`: VS Code's `[label](target)` link syntax no longer matches. */
function breakLinks(text: string): string {
  return text.replace(/\]\s*\(/g, (m) => `${m.slice(0, -1)}\u200b(`);
}

/**
 * Untrusted text in an input box's prompt or validation message: VS Code renders those with
 * `$(icon)`s *and* `[label](command:…)` links that run with command URIs allowed, so both are
 * neutralised ({@link iconLabelText}, and the links broken like {@link notificationText}).
 */
export function inputMessageText(text: string): string {
  return breakLinks(iconLabelText(text));
}

/** Line breaks as Markdown (and `marked`, which also splits on a lone CR) sees them. */
const LINE_BREAK = /\r\n|[\r\n\u000b\u000c\u0085\u2028\u2029]/g;
/** Every ASCII punctuation character: CommonMark lets each be escaped with a backslash. */
const MARKDOWN_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/**
 * Untrusted text as inline Markdown that renders as exactly that text, also inside a table cell:
 * every ASCII punctuation character is backslash-escaped — so no emphasis, code, link, image, HTML,
 * entity, heading, list, table pipe or theme icon (`$(…)`), and no autolink either (`https\://`,
 * `www\.`, `a\@b` are not links) — line breaks (also a lone CR, which `marked` treats as one)
 * become spaces, runs of spaces and tabs become one space (no indented code block), and control
 * characters, bidi overrides and tag characters their visible `\uXXXX` escape.
 */
export function markdownText(text: string): string {
  return escapePunctuation(flatText(text));
}

/** Line breaks and runs of spaces and tabs as one space, control characters and bidi overrides escaped. */
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
 * {@link markdownText} for a `MarkdownString` with `supportThemeIcons` (the tree's and the gauge's
 * tooltips): VS Code draws `$(name)` as a codicon in the text it gets *after* Markdown removed the
 * escapes, so an escaped `\$\(zap\)` still became an icon. Each `$(name)` VS Code would draw gets
 * an escaped backslash in front (`\\\$\(zap\)` → the text `\$(zap)` → shown as `$(zap)`, VS Code's
 * `escapeIcons`); every other character as {@link markdownText}. Not for Markdown shown elsewhere
 * (a document, `marked`): there the extra backslash would show.
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

/** The longest run of backticks in `text`. */
function longestBacktickRun(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

/**
 * Untrusted text as an inline code span (shown verbatim, nothing inside is Markdown): delimited by
 * one backtick more than its longest backtick run, padded when it starts or ends with one; line
 * breaks become spaces, control characters their `\uXXXX` escape.
 */
export function markdownCode(text: string): string {
  const flat = text.replace(LINE_BREAK, " ").replace(UNSAFE_CONTROL, escapeCode);
  const fence = "`".repeat(longestBacktickRun(flat) + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat === "" ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/**
 * Untrusted text as a fenced code block that no line of it can end early: the fence is one
 * backtick longer than the longest backtick run anywhere in it (a closing fence may be indented,
 * so line starts are not enough), at least three. Line breaks are normalised to `\n` (a lone CR
 * is a line break to `marked`), control characters become their `\uXXXX` escape.
 */
export function markdownCodeBlock(text: string, language = ""): string {
  const body = text.replace(/\r\n?|[\u000b\u000c\u0085\u2028\u2029]/g, "\n").replace(UNSAFE_CONTROL, escapeCode);
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1));
  return `${fence}${language}\n${body}\n${fence}`;
}

/**
 * Untrusted text in a VS Code notification: VS Code turns `[label](https:…|command:…|file:…)` in
 * a notification message into a link and opens it with command URIs allowed, so a session name
 * could carry a clickable command. A zero-width space between `]` and `(` keeps every such
 * pattern text; control characters and bidi overrides become their `\uXXXX` escape.
 */
export function notificationText(text: string): string {
  return breakLinks(text.replace(UNSAFE_CONTROL, escapeCode));
}

/**
 * True when looking at `p` could make the machine connect to another one — on Windows, a UNC path
 * (`\\server\share\…`, `//server/share/…`, `\\?\UNC\…`), a device path (`\\.\…`, `\\?\…` other
 * than a drive), or a `file://host/…` URL with a host other than `localhost`: Windows answers a
 * `stat` of such a path by connecting to that server over SMB and offering the user's credentials
 * (an NTLM hash), so a session could make us leak them just by naming a file. Such
 * paths (tracked files, a session's `cwd`) are shown, never stat'ed, read, opened or diffed.
 * Elsewhere (POSIX) paths are local: always false.
 * @param platform the host's `process.platform` (a parameter: browser-safe, and testable anywhere).
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
