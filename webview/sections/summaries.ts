/**
 * The summaries section: every compaction, branch summary and scoped summary ("Summarize these
 * messages") on the current path as a card (time,
 * tokensBefore, its own tokens, in context or superseded); an expanded card shows its ids and its
 * body as sanitised markdown (`../markdown.ts`: summaries are LLM output, untrusted). With two or
 * more summaries the summary diff section follows.
 */

import type { SummaryModel } from "../../src/shared/protocol";
import { COMPACT_ICON, formatDateTime } from "../../src/shared/format";
import { h, icon } from "../dom";
import { short, summaryTitle } from "../format";
import { renderMarkdown } from "../markdown";
import type { View } from "../view";
import { collapsible } from "../widgets";
import { diffable, renderDiffSection } from "./diff";
import { renderLost } from "./lost";
import * as l10n from "@vscode/l10n";

/** One summary card (`index`: its 0-based position on the path). */
function renderSummary(view: View, sm: SummaryModel, index: number): HTMLElement {
  const ui = view.ui;
  const summaries = view.state.summaries;
  const expanded =
    ui.expandedSummaries.includes(sm.entryId) || (ui.expandedSummaries.length === 0 && index === summaries.length - 1);
  const card = h("article", {
    class: `summary ${sm.inContext ? "in-context" : "stale"}`,
    "data-summary": sm.entryId,
  });
  const head = h(
    "button",
    { class: "summary-head", "aria-expanded": String(expanded), "data-key": `summary-${sm.entryId}` },
    icon(expanded ? "chevron-down" : "chevron-right", { size: "14" }),
    icon(sm.type === "compaction" ? COMPACT_ICON : sm.type === "span_summary" ? "fold" : "git-branch", { size: "14" }),
    h("span", { class: "summary-title" }, `${summaryTitle(sm)} ${index + 1}`),
    h("span", { class: "muted" }, formatDateTime(sm.timestamp, view.state.locale)),
    sm.tokensBefore !== null
      ? h(
          "span",
          { class: "chip", title: l10n.t("tokensBefore: context tokens when pi compacted") },
          l10n.t("{0} before", short(sm.tokensBefore)),
        )
      : null,
    h(
      "span",
      { class: "chip", title: l10n.t("Estimated tokens of the summary itself") },
      l10n.t("{0} summary", short(sm.tokens)),
    ),
    sm.lost && sm.lost.items.length + sm.lost.more > 0
      ? h(
          "span",
          {
            class: "chip lost-count",
            title: l10n.t(
              "Paths, commands, identifiers and numbers of the summarized range that neither the summary nor the kept part contain",
            ),
          },
          l10n.t("{0} lost", sm.lost.items.length + sm.lost.more),
        )
      : null,
    sm.inContext
      ? h("vscode-badge", { title: l10n.t("Part of the current context") }, l10n.t("in context"))
      : h(
          "span",
          { class: "muted small", title: l10n.t("A later compaction summarized it again") },
          l10n.t("superseded"),
        ),
  );
  head.addEventListener("click", () => {
    // nothing saved yet = the latest is expanded; `["-"]` = the user collapsed every card
    const set = new Set(
      ui.expandedSummaries.length === 0 ? [summaries[summaries.length - 1]!.entryId] : ui.expandedSummaries,
    );
    if (set.has(sm.entryId)) set.delete(sm.entryId);
    else set.add(sm.entryId);
    ui.expandedSummaries = [...set];
    if (ui.expandedSummaries.length === 0) ui.expandedSummaries = ["-"];
    view.saveAndRender();
  });
  card.appendChild(head);
  if (expanded) {
    const meta = h("div", { class: "summary-meta muted" });
    meta.append(h("span", { class: "mono" }, `id ${sm.entryId}`));
    if (sm.firstKeptEntryId) {
      const kept = h(
        "button",
        { class: "link mono", title: l10n.t("Reveal the first kept entry in the tree") },
        `firstKeptEntryId ${sm.firstKeptEntryId}`,
      );
      kept.addEventListener("click", () => view.send({ type: "revealEntry", entryId: sm.firstKeptEntryId! }));
      meta.append(kept);
    }
    if (sm.fromId) meta.append(h("span", { class: "mono" }, `from ${sm.fromId}`));
    const span = sm.span;
    if (span) {
      const target = h(
        "button",
        { class: "link mono", title: l10n.t("Reveal the message that carries the summary in the tree") },
        l10n.t("replaces {0} messages ({1} … {2})", span.count, span.fromId, span.toId),
      );
      target.addEventListener("click", () => view.send({ type: "revealEntry", entryId: span.targetId }));
      meta.append(target);
    }
    if (sm.fromHook)
      meta.append(
        h("span", { title: l10n.t("Written by an extension/hook: pi ignores its file details") }, "fromHook"),
      );
    const body = h("div", { class: "markdown" });
    body.appendChild(renderMarkdown(sm.body));
    card.append(meta, body);
    if (sm.lost) card.appendChild(renderLost(view, sm.entryId, sm.lost));
    if (sm.readFiles.length || sm.modifiedFiles.length) {
      card.appendChild(
        h(
          "div",
          { class: "summary-files muted" },
          sm.modifiedFiles.length
            ? h("span", null, icon("edit", { size: "12" }), l10n.t(" {0} modified", sm.modifiedFiles.length))
            : null,
          sm.readFiles.length
            ? h("span", null, icon("eye", { size: "12" }), l10n.t(" {0} read", sm.readFiles.length))
            : null,
        ),
      );
    }
  }
  return card;
}

/**
 * The summaries section, in a wrapper that takes the summary diff section after it
 * ({@link renderSummaryDiff}, appended as a later part: `panelParts` in main.ts).
 */
export function renderSummariesSection(view: View): HTMLElement {
  const summaries = view.state.summaries;
  if (summaries.length === 0) {
    return h(
      "div",
      null,
      collapsible(view, "summaries", l10n.t("Summaries"), l10n.t("none on this path"), [
        h("p", { class: "muted pad" }, l10n.t("No compaction or branch summary on the current path yet.")),
      ]),
    );
  }
  const list = h("div", { class: "summaries" });
  summaries.forEach((sm, i) => list.appendChild(renderSummary(view, sm, i)));
  return h(
    "div",
    null,
    collapsible(view, "summaries", l10n.t("Summaries"), l10n.t("{0} on this path", summaries.length), [list]),
  );
}

/** The summary diff section (null with fewer than two summaries on the path). */
export function renderSummaryDiff(view: View): HTMLElement | null {
  return diffable(view).length >= 2 ? renderDiffSection(view) : null;
}
