/** Single-line plain text for tree rows from untrusted session text (nothing is rendered). */

/** `text` on one line (line breaks and tabs → spaces, trimmed), cut to `max` characters with `…`. */
export function oneLine(text: string, max = 160): string {
  const s = text.replace(/[\r\n\t]+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** `**`pi-format-demo`**` → `pi-format-demo`: markers removed, code span contents kept verbatim. */
export function plainText(line: string): string {
  const code: string[] = [];
  let s = line.replace(/(`+)(.+?)\1/g, (_m, _ticks: string, body: string) => {
    code.push(body.trim());
    return `\u0000${code.length - 1}\u0000`;
  });
  s = s.replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+)/, "");
  // the link's own brackets only: a `[` before it (`\u001b[31m`, `a[0]`) is the user's text
  s = s.replace(/!\[([^[\]]*)\]\([^)]*\)/g, "$1").replace(/\[([^[\]]+)\]\([^)\s]*\)/g, "$1");
  s = s.replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2").replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1");
  s = s.replace(
    /(^|[^\w*])\*(?=[^\s*])([^*]*?[^\s*])?\*(?![\w*])/g,
    (_m, pre: string, body: string | undefined) => `${pre}${body ?? ""}`,
  );
  s = s.replace(
    /(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])?_(?!\w)/g,
    (_m, pre: string, body: string | undefined) => `${pre}${body ?? ""}`,
  );
  return s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => code[Number(i)] ?? "");
}

/** `400 {"error":{"message":"…"}}` → ` 400: …`, else `: ` and the text as it is. */
export function readableError(errorMessage: string): string {
  const status = /^(\d{3})\b/.exec(errorMessage)?.[1];
  const quoted = /"message"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(errorMessage)?.[1];
  if (quoted) {
    let message = quoted;
    try {
      message = JSON.parse(`"${quoted}"`) as string;
    } catch {
      message = quoted.replace(/\\(.)/g, "$1"); // cut inside an escape: take it as it is
    }
    message = oneLine(plainText(message)).replace(/\\$/, "");
    if (message) return `${status ? ` ${status}` : ""}: ${message}`;
  }
  return `: ${errorMessage}`;
}

const SUMMARY_PREAMBLE_LINES = new Set([
  "The user explored a different conversation branch before returning here.",
  "Summary of that exploration:",
]);

/** Skips pi's branch-summary preamble, headings, list markers and checkboxes. */
export function summaryHeadline(summary: string): string {
  for (const raw of summary.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || SUMMARY_PREAMBLE_LINES.has(line) || line.startsWith("<")) continue;
    const text = plainText(line.replace(/^([-*+]|\d+[.)])\s+/, "").replace(/^\[[ xX]\]\s*/, "")).trim();
    if (text) return oneLine(text);
  }
  return "";
}

/** The model part of `provider/model` as a row shows it: the last path segment (`accounts/x/routers/kimi` → `kimi`). */
export function shortModelName(model: string): string {
  const slash = model.lastIndexOf("/");
  return slash >= 0 && slash < model.length - 1 ? model.slice(slash + 1) : model;
}

/** No slashes or control characters, at most `max` characters. */
export function fileTitle(text: string, max = 60): string {
  const clean = text
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1).trimEnd()}…` : clean || "untitled";
}
