/** Summaries (LLM output: untrusted) as markdown for the panel's `marked` and VS Code's preview. Pure. */

import * as l10n from "@vscode/l10n";

const FILE_BLOCK = /<(read-files|modified-files)>\n?([\s\S]*?)\n?<\/\1>/g;

export function fileBlocksToMarkdown(text: string): string {
  return text.replace(FILE_BLOCK, (_m, tag: string, body: string) => {
    const title = tag === "read-files" ? l10n.t("Read files") : l10n.t("Modified files");
    const fence = body.includes("```") ? "~~~~" : "```";
    return `\n**${title}**\n\n${fence}\n${body.trim()}\n${fence}\n`;
  });
}

const MARKUP = /<(?=[A-Za-z/!?])|!(?=\[)/g;
const MAYBE_MARKUP = /<[A-Za-z/!?]|!\[/;

/**
 * For VS Code's preview, which renders raw HTML and loads images: each tag-opening `<` becomes
 * `&lt;` and each image `!` `&#33;` (entities, not backslashes: linkify can take a backslash into a URL).
 */
export function summaryPreviewMarkdown(summary: string): string {
  const text = fileBlocksToMarkdown(summary);
  if (!MAYBE_MARKUP.test(text)) return text;
  return text
    .split("\n")
    .map((line) => escapeLine(line))
    .join("\n");
}

function neutralise(text: string): string {
  return text.replace(MARKUP, (c) => (c === "<" ? "&lt;" : "&#33;"));
}

/** A code span holding markup is written as escaped plain text; every `<` and `![` is escaped either way. */
function escapeLine(line: string): string {
  let out = "";
  let i = 0;
  while (i < line.length) {
    if (line[i] === "`" && !isEscaped(line, i)) {
      let n = 1;
      while (line[i + n] === "`") n++;
      let close = line.indexOf("`".repeat(n), i + n);
      while (close >= 0 && (line[close + n] === "`" || line[close - 1] === "`")) {
        let skip = close;
        while (line[skip] === "`") skip++;
        close = line.indexOf("`".repeat(n), skip);
      }
      if (close < 0) return out + neutralise(line.slice(i));
      const code = line.slice(i + n, close);
      out += MAYBE_MARKUP.test(code)
        ? code
            .replace(/^ (.*\S.*) $/, "$1")
            .replace(/[!-/:-@[-`{-~]/g, (c) => (c === "<" ? "&lt;" : c === "!" ? "&#33;" : `\\${c}`))
        : line.slice(i, close + n);
      i = close + n;
      continue;
    }
    let end = line.indexOf("`", i + 1);
    if (end < 0) end = line.length;
    out += neutralise(line.slice(i, end));
    i = end;
  }
  return out;
}

function isEscaped(line: string, i: number): boolean {
  let k = i - 1;
  while (k >= 0 && line[k] === "\\") k--;
  return (i - 1 - k) % 2 === 1;
}
