/**
 * The tooltip of an entry's row in the "Pi Session" view: the session doctor's findings about the
 * entry (if any), then the Markdown of `viewModel/treeTooltip.ts` (session text escaped there) in
 * an untrusted `MarkdownString` — no command links, no HTML — with theme icons.
 */

import * as vscode from "vscode";
import type { SessionTreeModel } from "../core/treeModel/model";
import { themeIconMarkdownText } from "../shared/untrusted";
import { treeTooltipMarkdown } from "../viewModel/treeTooltip";
import type { NodeDisplay } from "../viewModel/treeText";

/**
 * The tooltip of a row.
 * @param branchSize the row heads a branch group of this many entries (undefined: an entry row).
 * @param health the doctor's findings about the entry (`viewModel/health.ts` `rowHealth`), shown first.
 */
export function tooltipOf(
  d: NodeDisplay,
  model: SessionTreeModel,
  branchSize?: number,
  health?: { lines: { severity: "error" | "warning" | "info"; text: string }[] },
): vscode.MarkdownString {
  // the doctor's findings first: they are why the row is marked (their text quotes the session: escaped)
  const findings = health?.lines.length
    ? `${health.lines.map((l) => `$(${l.severity}) ${themeIconMarkdownText(l.text)}`).join("\n\n")}\n\n---\n\n`
    : "";
  const md = new vscode.MarkdownString(findings + treeTooltipMarkdown(d, model, branchSize, vscode.env.language), true);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}
