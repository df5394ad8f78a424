/** Pure helpers on summary text (the webview bundle uses them too). */

/** A summary split into its markdown body and pi's trailing file-list blocks. */
export interface SplitSummary {
  body: string;
  readFiles: string[];
  modifiedFiles: string[];
}

/** The last occurrence of each block: a summary embedding an earlier one keeps the inner blocks in its body. */
export function splitSummary(text: string): SplitSummary {
  let body = text;
  const out: SplitSummary = { body, readFiles: [], modifiedFiles: [] };
  for (let i = 0; i < 2; i++) {
    const trimmed = body.replace(/\s+$/, "");
    const tag = trimmed.endsWith("</modified-files>")
      ? "modified-files"
      : trimmed.endsWith("</read-files>")
        ? "read-files"
        : null;
    if (!tag) break;
    const start = trimmed.lastIndexOf(`<${tag}>`);
    if (start < 0 || (start > 0 && trimmed[start - 1] !== "\n")) break;
    const inner = trimmed.slice(start + tag.length + 2, trimmed.length - tag.length - 3);
    const files = inner
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.length > 0);
    if (tag === "read-files") {
      if (out.readFiles.length) break;
      out.readFiles = files;
    } else {
      if (out.modifiedFiles.length || out.readFiles.length) break;
      out.modifiedFiles = files;
    }
    body = trimmed.slice(0, start);
  }
  out.body = body.replace(/\s+$/, "");
  return out;
}
