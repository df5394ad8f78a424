/**
 * The tooltip of an entry's row in the "Pi Session" view: the Markdown of
 * `viewModel/treeTooltip.ts` (session text escaped there) in an untrusted `MarkdownString` — no
 * command links, no HTML — with theme icons.
 */

import * as vscode from "vscode";
import type { SessionTreeModel } from "../core/treeModel/model";
import { treeTooltipMarkdown } from "../viewModel/treeTooltip";
import type { NodeDisplay } from "../viewModel/treeText";

/**
 * The tooltip of a row.
 * @param branchSize the row heads a branch group of this many entries (undefined: an entry row).
 */
export function tooltipOf(d: NodeDisplay, model: SessionTreeModel, branchSize?: number): vscode.MarkdownString {
  const md = new vscode.MarkdownString(treeTooltipMarkdown(d, model, branchSize, vscode.env.language), true);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}
