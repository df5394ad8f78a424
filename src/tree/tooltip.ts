/** A row's tooltip: the doctor's findings, then `viewModel/treeTooltip.ts` in an untrusted `MarkdownString`. */

import * as vscode from "vscode";
import type { SessionTreeModel } from "../core/treeModel/model";
import { themeIconMarkdownText } from "../shared/untrusted";
import { treeTooltipMarkdown } from "../viewModel/treeTooltip";
import type { NodeDisplay } from "../viewModel/treeText";

/** `branchSize`: the row heads a branch group of this many entries; `health` is shown first. */
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
