/**
 * The summary diff section: pick two summaries of the path (older → newer), see what the newer one
 * lost and gained line by line with word-level changes (`src/shared/summaryDiff.ts`, the same pure
 * function the tests check), unchanged lines folded to one line of context; "Open in Diff Editor"
 * asks the host for VS Code's diff editor.
 */

import type { SummaryModel } from "../../src/shared/protocol";
import { pluralText } from "../../src/shared/format";
import { defaultSummaryPair, diffSummaries, type DiffLine } from "../../src/shared/summaryDiff";
import { h, icon } from "../dom";
import { summaryTitle } from "../format";
import type { View } from "../view";
import { collapsible } from "../widgets";
import { renderLost } from "./lost";
import * as l10n from "@vscode/l10n";

/** Unchanged lines kept around each change when unchanged lines are folded. */
const CONTEXT = 1;

/**
 * The diff section (two or more summaries on the path). The pair is the saved one when it is
 * still valid (`ui.diffTo` not the first, `ui.diffFrom` before it), else like with like
 * (`defaultSummaryPair`: the latest two compactions, else the latest two branch summaries); with
 * no two of one kind it says so and shows no diff until the user picks a pair.
 */
/** The last pair diffed: every live update re-renders the panel, and the pair rarely changes. */
let lastDiff: { older: string; newer: string; diff: ReturnType<typeof diffSummaries> } | undefined;

function cachedDiff(older: string, newer: string): ReturnType<typeof diffSummaries> {
  if (lastDiff?.older !== older || lastDiff.newer !== newer)
    lastDiff = { older, newer, diff: diffSummaries(older, newer) };
  return lastDiff.diff;
}

type DiffableSummary = SummaryModel & { type: "compaction" | "branch_summary" };

/** The summaries a diff compares (not the scoped summaries of spans). */
export function diffable(view: View): DiffableSummary[] {
  return view.state.summaries.filter((s): s is DiffableSummary => s.type !== "span_summary");
}

export function renderDiffSection(view: View): HTMLElement {
  const ui = view.ui;
  // compactions and branch summaries: a scoped summary replaces a span, not the history before it
  const summaries = diffable(view);
  const ids = summaries.map((x) => x.entryId);
  const pair = defaultSummaryPair(summaries);
  const picked = (ui.diffTo && ids.includes(ui.diffTo)) || (ui.diffFrom && ids.includes(ui.diffFrom));
  let toId = ui.diffTo && ids.includes(ui.diffTo) ? ui.diffTo : ids[pair.toIndex]!;
  let toIndex = ids.indexOf(toId);
  if (toIndex === 0) {
    toIndex = 1;
    toId = ids[1]!;
  }
  const fromId =
    ui.diffFrom && ids.indexOf(ui.diffFrom) >= 0 && ids.indexOf(ui.diffFrom) < toIndex
      ? ui.diffFrom
      : toIndex === pair.toIndex
        ? ids[pair.fromIndex]!
        : ids[toIndex - 1]!;
  const note = !picked && pair.note ? pair.note : undefined;
  const older = summaries.find((x) => x.entryId === fromId)!;
  const newer = summaries[toIndex]!;

  const select = (id: string, value: string, choices: DiffableSummary[], onChange: (v: string) => void) => {
    const sel = h("vscode-single-select", {
      "data-testid": id,
      "aria-label": id === "diff-from" ? l10n.t("Older summary") : l10n.t("Newer summary"),
    });
    for (const c of choices) {
      const i = summaries.indexOf(c);
      const opt = h(
        "vscode-option",
        { value: c.entryId, selected: c.entryId === value },
        `${summaryTitle(c)} ${i + 1} · ${c.entryId}`,
      );
      sel.appendChild(opt);
    }
    sel.addEventListener("change", () => onChange((sel as unknown as { value: string }).value));
    return sel;
  };
  const fromSel = select("diff-from", fromId, summaries.slice(0, toIndex), (v) => {
    ui.diffFrom = v;
    view.saveAndRender();
  });
  const toSel = select("diff-to", newer.entryId, summaries.slice(1), (v) => {
    ui.diffTo = v;
    if (ui.diffFrom && ids.indexOf(ui.diffFrom) >= ids.indexOf(v)) ui.diffFrom = undefined;
    view.saveAndRender();
  });
  const diff = cachedDiff(older.text, newer.text);
  const counts = diff.stats;
  const stats = h(
    "div",
    { class: "diff-stats", "data-testid": "diff-stats" },
    h(
      "span",
      {
        class: `stat removed ${counts.linesRemoved ? "has" : ""}`,
        title: l10n.t("Lines of the older summary that are gone"),
      },
      icon("remove", { size: "12" }),
      l10n.t(" {0} disappeared", pluralText(counts.linesRemoved, l10n.t("{0} line"), l10n.t("{0} lines"))),
    ),
    h(
      "span",
      { class: "stat changed" },
      icon("diff-modified", { size: "12" }),
      l10n.t(" {0} changed", counts.linesChanged),
    ),
    h("span", { class: "stat added" }, icon("add", { size: "12" }), l10n.t(" {0} added", counts.linesAdded)),
    h("span", { class: "muted" }, l10n.t("({0} words removed, {1} added)", counts.wordsRemoved, counts.wordsAdded)),
  );
  const openBtn = h(
    "vscode-button",
    { secondary: true, icon: "diff", "data-testid": "open-diff-editor", "data-key": "open-diff-editor" },
    l10n.t("Open in Diff Editor"),
  );
  openBtn.addEventListener("click", () => view.send({ type: "openDiff", fromId: older.entryId, toId: newer.entryId }));
  const unchanged = h("vscode-checkbox", {
    label: l10n.t("Show unchanged lines"),
    checked: ui.showUnchanged,
    "data-testid": "show-unchanged",
  });
  unchanged.addEventListener("change", () => {
    ui.showUnchanged = (unchanged as unknown as { checked: boolean }).checked;
    view.saveAndRender();
  });
  const controls = h(
    "div",
    { class: "diff-controls" },
    h("label", { class: "muted" }, l10n.t("From")),
    fromSel,
    h("label", { class: "muted" }, l10n.t("to")),
    toSel,
  );
  // the pair shown is already selected in both lists, so picking it again changes nothing: a button
  const anyway = h(
    "vscode-button",
    { secondary: true, "data-testid": "diff-anyway", "data-key": "diff-anyway" },
    l10n.t("Compare Anyway"),
  );
  anyway.addEventListener("click", () => {
    ui.diffFrom = older.entryId;
    ui.diffTo = newer.entryId;
    view.saveAndRender();
  });
  const body = note
    ? [controls, h("p", { class: "muted diff-note", "data-testid": "diff-note" }, note), anyway]
    : [
        controls,
        h("div", { class: "diff-toolbar" }, stats, h("span", { class: "spacer" }), unchanged, openBtn),
        // beside the diff: what the newer summary lost of everything it summarized (not only of the older summary)
        newer.lost ? renderLost(view, newer.entryId, newer.lost) : null,
        renderDiffLines(diff.lines, diff.identical, ui.showUnchanged),
      ];
  const shown = body.filter((x): x is HTMLElement => x !== null);
  return collapsible(
    view,
    "diff",
    l10n.t("Summary diff"),
    `${summaryTitle(older)} ${ids.indexOf(older.entryId) + 1} → ${summaryTitle(newer)} ${toIndex + 1}`,
    shown,
  );
}

/** The diff table: `−`/`+`/`~` lines with old and new line numbers, folded runs of unchanged lines. */
function renderDiffLines(lines: DiffLine[], identical: boolean, showUnchanged: boolean): HTMLElement {
  const box = h("div", {
    class: "diff",
    role: "table",
    "aria-label": l10n.t("Summary diff"),
    "data-testid": "summary-diff",
  });
  if (identical) {
    box.appendChild(h("p", { class: "muted pad" }, l10n.t("The two summaries are identical.")));
    return box;
  }
  const keep = lines.map((l) => l.kind !== "same");
  if (!showUnchanged) {
    lines.forEach((l, i) => {
      if (l.kind === "same") return;
      for (let j = Math.max(0, i - CONTEXT); j <= Math.min(lines.length - 1, i + CONTEXT); j++) keep[j] = true;
    });
  }
  let skipped = 0;
  const flush = () => {
    if (skipped > 0)
      box.appendChild(
        h(
          "div",
          { class: "diff-skip muted", role: "row" },
          `⋯ ${pluralText(skipped, l10n.t("{0} unchanged line"), l10n.t("{0} unchanged lines"))}`,
        ),
      );
    skipped = 0;
  };
  lines.forEach((l, i) => {
    if (!showUnchanged && !keep[i]) {
      skipped++;
      return;
    }
    flush();
    const gutter = l.kind === "removed" ? "−" : l.kind === "added" ? "+" : l.kind === "changed" ? "~" : " ";
    const text = h("span", { class: "diff-text" });
    for (const seg of l.segments) {
      if (seg.op === "same") text.appendChild(document.createTextNode(seg.text));
      else text.appendChild(h(seg.op === "removed" ? "del" : "ins", { class: `w-${seg.op}` }, seg.text));
    }
    if (l.segments.every((x) => x.text.length === 0)) text.appendChild(document.createTextNode("\u00a0"));
    box.appendChild(
      h(
        "div",
        {
          class: `diff-line ${l.kind}`,
          role: "row",
          "data-kind": l.kind,
          "aria-label": l.kind === "same" ? undefined : l10n.t("{0} line", l.kind),
        },
        h("span", { class: "ln muted" }, l.oldLine !== undefined ? String(l.oldLine) : ""),
        h("span", { class: "ln muted" }, l.newLine !== undefined ? String(l.newLine) : ""),
        h("span", { class: "gutter" }, gutter),
        text,
      ),
    );
  });
  flush();
  return box;
}
