/** A tree row's tooltip as Markdown; session text goes through `markdownText`/`markdownCode`/`markdownCodeBlock`. */

import type { SessionTreeModel } from "../core/treeModel/model";
import { formatDateTime, formatTokens, pluralText } from "../shared/format";
import { markdownCode, markdownCodeBlock, themeIconMarkdownText as markdownText } from "../shared/untrusted";
import { KIND_NAMES, type NodeDisplay } from "./treeText";
import { shortModelName } from "./treeTextLines";
import { clipLabel } from "../core/rules/sessionLabel";

const TOOLTIP_LABEL_CHARS = 1000;
import * as l10n from "@vscode/l10n";

/**
 * The latest compaction on the path when `id` precedes its `firstKeptEntryId` (pi 1.6.0
 * `buildSessionContext`); undefined when `id` is still sent or nothing can be claimed.
 */
export function summarizedBy(model: SessionTreeModel, id: string): string | undefined {
  let latest: { id: string; firstKeptEntryId?: string } | undefined;
  const seen = new Set<string>();
  for (let x = model.leafId; x && !seen.has(x);) {
    seen.add(x);
    const r = model.record(x);
    if (!r) break;
    if (r.type === "compaction") {
      latest = r;
      break;
    }
    x = r.parentId;
  }
  if (!latest?.firstKeptEntryId) return undefined;
  seen.clear();
  for (let x = model.record(latest.firstKeptEntryId)?.parentId ?? null; x && !seen.has(x);) {
    if (x === id) return latest.id;
    seen.add(x);
    x = model.record(x)?.parentId ?? null;
  }
  return undefined;
}

/** `branchSize`: the row heads a branch group of this many entries (undefined: an entry row). */

export function treeTooltipMarkdown(
  d: NodeDisplay,
  model: SessionTreeModel,
  branchSize: number | undefined,
  locale: string | undefined,
): string {
  const parts: string[] = [];
  const head = `**${d.error && d.kind === "assistant" ? l10n.t("failed ") : ""}${KIND_NAMES[d.kind]}** · ${markdownCode(d.id)}`;
  parts.push(d.timestamp ? `${head} · ${markdownText(formatDateTime(d.timestamp, locale))}` : head);
  if (d.label) parts.push(`$(tag) ${markdownText(clipLabel(d.label, TOOLTIP_LABEL_CHARS))}`);
  if (branchSize !== undefined)
    parts.push(
      l10n.t(
        "$(git-branch) starts a branch of {0}{1}",
        pluralText(branchSize, l10n.t("{0} entry"), l10n.t("{0} entries")),
        model.branchIsActive(d.id) ? l10n.t(" (the branch with the current leaf)") : "",
      ),
    );
  else if (model.continuesBranch(d.id))
    parts.push(
      l10n.t("$(git-branch) starts the branch with the current leaf (its other branches are under the entry before)"),
    );
  if (d.isLeaf)
    parts.push(
      d.isFileLeaf
        ? l10n.t("$(debug-stackframe) the current leaf: pi continues from here")
        : l10n.t("$(debug-stackframe) the current leaf is a hidden entry right after this one"),
    );
  else if (d.onActivePath) {
    const by = summarizedBy(model, d.id);
    parts.push(
      by
        ? l10n.t("on the active path, summarized by compaction {0}: pi resumes with its summary", markdownCode(by))
        : l10n.t("on the active path (part of what pi resumes with)"),
    );
  }
  const r = model.record(d.id);
  if (r && (r.type === "compaction" || r.type === "branch_summary")) {
    const id = (x: string | undefined) => markdownCode(x ?? "?");
    parts.push(
      r.type === "compaction"
        ? l10n.t(
            "tokens before: **{0}** → summary of ≈{1} tokens · firstKeptEntryId {2}",
            formatTokens(r.tokensBefore ?? NaN),
            formatTokens(r.tokens),
            id(r.firstKeptEntryId),
          )
        : l10n.t("summary of ≈{0} tokens · from {1}", formatTokens(r.tokens), id(r.fromId)),
    );
    const summary = r.summary ?? "";
    const lines = summary.split("\n");
    const headLines = lines.slice(0, 30).join("\n");
    parts.push(
      markdownCodeBlock(
        headLines.length > 2000 ? `${headLines.slice(0, 2000)}…` : headLines + (lines.length > 30 ? "\n…" : ""),
        "markdown",
      ),
    );
    parts.push(l10n.t("Click to open the full summary."));
    return parts.join("\n\n");
  }
  if (d.errorMessage) parts.push(l10n.t("$(error) **The request failed:** {0}", markdownText(d.errorMessage)));
  if (!d.errorInText) parts.push(markdownText(d.text));
  let detail = d.errorMessage ? d.detail.replace(/^error\b.*$/, "").replace(/ {2}error\b.*$/, "") : d.detail;
  const short = d.model ? shortModelName(d.model) : "";
  if (short && detail.endsWith(short)) detail = detail.slice(0, -short.length);
  detail = detail.trim();
  if (detail) parts.push(markdownText(detail));
  if (d.model) parts.push(l10n.t("$(sparkle) model {0}", markdownText(d.model)));
  if (d.branches) parts.push(l10n.t("$(git-branch) branch point: {0} branches", d.branches));
  return parts.join("\n\n");
}
