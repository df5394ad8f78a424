/**
 * The tooltip of an entry's row in the "Pi Session" view: kind, id and time, label, branch and
 * leaf state, then the entry's words (a summary's head in a code block, a failed request's error,
 * the text, the detail the row abbreviates, the model). Session text is untrusted: it is appended
 * as text or inside a code block, never rendered as markdown.
 */

import * as vscode from "vscode";
import type { SessionTreeModel } from "../core/treeModel/model";
import { formatDateTime, formatTokens, plural, tokensText } from "../shared/format";
import { KIND_NAMES, type NodeDisplay } from "../viewModel/treeText";
import { shortModelName } from "../viewModel/treeTextLines";

/**
 * The tooltip of a row.
 * @param branchSize the row heads a branch group of this many entries (undefined: an entry row).
 */
export function tooltipOf(d: NodeDisplay, model: SessionTreeModel, branchSize?: number): vscode.MarkdownString {
  // Session text is untrusted: appendText escapes it; summaries go into a code block (nothing is rendered or fetched).
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown(`**${d.error && d.kind === "assistant" ? "failed " : ""}${KIND_NAMES[d.kind]}** · \`${d.id}\``);
  if (d.timestamp) md.appendText(` · ${formatDateTime(d.timestamp, vscode.env.language)}`);
  md.appendMarkdown("\n\n");
  if (d.label) {
    md.appendMarkdown("$(tag) ");
    md.appendText(d.label);
    md.appendMarkdown("\n\n");
  }
  if (branchSize !== undefined)
    md.appendMarkdown(
      `$(git-branch) starts a branch of ${plural(branchSize, "entry")}${model.branchIsActive(d.id) ? " (the branch with the current leaf)" : ""}\n\n`,
    );
  if (d.isLeaf)
    md.appendMarkdown(
      d.isFileLeaf
        ? "$(debug-stackframe) the current leaf: pi continues from here\n\n"
        : "$(debug-stackframe) the current leaf is a hidden entry right after this one\n\n",
    );
  else if (d.onActivePath) md.appendMarkdown("on the active path (part of what pi resumes with)\n\n");
  const r = model.record(d.id);
  if (r && (r.type === "compaction" || r.type === "branch_summary")) {
    if (r.type === "compaction")
      md.appendMarkdown(
        `tokens before: **${formatTokens(r.tokensBefore ?? NaN)}** → summary of ≈${tokensText(r.tokens, formatTokens)} · firstKeptEntryId \`${r.firstKeptEntryId ?? "?"}\`\n\n`,
      );
    else md.appendMarkdown(`summary of ≈${tokensText(r.tokens, formatTokens)} · from \`${r.fromId ?? "?"}\`\n\n`);
    const summary = r.summary ?? "";
    const head = summary.split("\n").slice(0, 30).join("\n");
    md.appendCodeblock(
      head.length > 2000 ? `${head.slice(0, 2000)}…` : head + (summary.length > head.length ? "\n…" : ""),
      "markdown",
    );
    md.appendMarkdown("\n\nClick to open the full summary.");
    return md;
  }
  // the entry's words, then what the row's description abbreviates
  const blocks: ((md: vscode.MarkdownString) => void)[] = [];
  if (d.errorMessage) {
    const message = d.errorMessage;
    blocks.push((m) => {
      m.appendMarkdown("$(error) **The request failed:** ");
      m.appendText(message);
    });
  }
  if (!d.errorInText) blocks.push((m) => m.appendText(d.text));
  let detail = d.errorMessage ? d.detail.replace(/^error\b.*$/, "").replace(/ {2}error\b.*$/, "") : d.detail;
  const short = d.model ? shortModelName(d.model) : "";
  if (short && detail.endsWith(short)) detail = detail.slice(0, -short.length);
  detail = detail.trim();
  if (detail) blocks.push((m) => m.appendText(detail));
  if (d.model) {
    const model = d.model;
    blocks.push((m) => {
      m.appendMarkdown("$(sparkle) model ");
      m.appendText(model);
    });
  }
  blocks.forEach((write, i) => {
    if (i > 0) md.appendMarkdown("\n\n");
    write(md);
  });
  if (d.branches) md.appendMarkdown(`\n\n$(git-branch) branch point: ${d.branches} branches`);
  return md;
}
