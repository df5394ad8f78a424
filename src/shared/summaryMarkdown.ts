/**
 * Summaries (LLM output, from the session: untrusted) as markdown for a renderer: pi's file blocks
 * as titled code blocks for both renderers (the panel's `marked` + DOMPurify in `webview/markdown.ts`,
 * VS Code's own markdown preview), and for the preview, which renders raw HTML and loads images,
 * the text with neither ({@link summaryPreviewMarkdown}). Pure; the webview bundle includes it.
 */

import * as l10n from "@vscode/l10n";

const FILE_BLOCK = /<(read-files|modified-files)>\n?([\s\S]*?)\n?<\/\1>/g;

/** pi's `<read-files>`/`<modified-files>` blocks as readable markdown: a bold title and the paths in a code block. */
export function fileBlocksToMarkdown(text: string): string {
  return text.replace(FILE_BLOCK, (_m, tag: string, body: string) => {
    const title = tag === "read-files" ? l10n.t("Read files") : l10n.t("Modified files");
    const fence = body.includes("```") ? "~~~~" : "```";
    return `\n**${title}**\n\n${fence}\n${body.trim()}\n${fence}\n`;
  });
}

/** `<` that starts a tag, comment or declaration, and `!` that starts an image. */
const MARKUP = /<(?=[A-Za-z/!?])|!(?=\[)/g;
/** What {@link summaryPreviewMarkdown} looks for first: a summary without either is left as it is. */
const MAYBE_MARKUP = /<[A-Za-z/!?]|!\[/;

/**
 * A summary (LLM output, untrusted) as the markdown VS Code's own preview renders for it
 * (`piContext.tree.openSummary`): pi's file blocks become {@link fileBlocksToMarkdown}'s titled
 * code blocks (the preview dropped the tags), and nothing in it is HTML or loads anything — every
 * `<` that would start a tag becomes `&lt;` and the `!` of every image `&#33;` (the text `!` and a
 * link). Entities, not backslashes: the preview's linkify can take a backslash into a URL, and an
 * entity is text in every context.
 *
 * So this is safe whatever markdown makes of the rest (code, links, URLs), and the text is not
 * parsed; the price is in code: a code span that holds markup is shown as plain text instead
 * ({@link escapeLine}), and in a fenced block `&lt;` shows as written. A summary without `<` or
 * `![` is shown exactly as written.
 */
export function summaryPreviewMarkdown(summary: string): string {
  const text = fileBlocksToMarkdown(summary);
  if (!MAYBE_MARKUP.test(text)) return text;
  return text
    .split("\n")
    .map((line) => escapeLine(line))
    .join("\n");
}

/** {@link MARKUP} as entities in `text`. */
function neutralise(text: string): string {
  return text.replace(MARKUP, (c) => (c === "<" ? "&lt;" : "&#33;"));
}

/**
 * One line with {@link MARKUP} neutralised. What looks like a code span (`` `…` ``, paired on this
 * line, not after a backslash) and holds markup is written as plain text with its punctuation
 * escaped, which shows the same characters; other code spans are kept as written. (Markdown may
 * pair backticks otherwise — a link or a URL can take one —, which changes how the line looks,
 * never what it is: every `<` and `![` is escaped either way.)
 */
function escapeLine(line: string): string {
  let out = "";
  let i = 0;
  while (i < line.length) {
    if (line[i] === "`" && !isEscaped(line, i)) {
      let n = 1;
      while (line[i + n] === "`") n++;
      // the closing run: exactly n backticks
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

/** The character at `i` follows an odd run of backslashes. */
function isEscaped(line: string, i: number): boolean {
  let k = i - 1;
  while (k >= 0 && line[k] === "\\") k--;
  return (i - 1 - k) % 2 === 1;
}
