/**
 * The breakdown of the headline by category (a list under the bar): tokens, share of the window,
 * entry count; a category with entries expands to its largest entries (each reveals itself in the
 * Pi Session tree), "Show all N" asks the host for the full list (`requestCategory`); an editable
 * entry's scissors button picks it for context surgery (the trim section previews it). "System
 * prompt & tools" expands to its parts instead (`fixedContext.ts`).
 */

import type { CategoryModel } from "../../src/shared/protocol";
import { formatCount } from "../../src/shared/format";
import { h, icon } from "../dom";
import { pct } from "../format";
import type { View } from "../view";
import { CATEGORY_CLASS } from "./bar";
import { selectForTrim } from "./trim";
import { renderFixedContext } from "./fixedContext";
import * as l10n from "@vscode/l10n";

/** Entry kinds pi's `appendContextEdit` accepts (message roles and `custom_message`). */
const EDITABLE_KINDS = new Set(["user", "assistant", "toolResult", "custom_message"]);

/** The category rows and the counting note (`view.state.breakdown` and `gauge` set). */
export function renderBreakdown(view: View): HTMLElement {
  const st = view.state;
  const ui = view.ui;
  const b = st.breakdown!;
  const g = st.gauge!;
  const window = g.window ?? b.total;
  const list = h("div", {
    class: "breakdown",
    role: "list",
    "aria-label": l10n.t("Breakdown by category"),
    "data-testid": "breakdown",
  });
  for (const c of b.categories) {
    const fixed = c.id === "system" ? b.fixed : undefined;
    const expandable = fixed ? fixed.groups.length > 0 || fixed.notes.length > 0 : c.top.length > 0;
    const expanded = ui.expandedCategory === c.id && expandable;
    const row = h(
      expandable ? "button" : "div",
      {
        class: `cat-row ${expanded ? "expanded" : ""} ${c.tokens === 0 ? "zero" : ""}`,
        role: expandable ? undefined : "listitem",
        "data-category": c.id,
        "data-tokens": String(c.tokens),
        "data-key": `cat-${c.id}`,
        "aria-expanded": expandable ? String(expanded) : undefined,
        title: !expandable
          ? c.label
          : fixed
            ? l10n.t("{0}: show each part", c.label)
            : l10n.t("{0}: show the largest entries", c.label),
      },
      h(
        "span",
        { class: "chev" },
        expandable ? icon(expanded ? "chevron-down" : "chevron-right", { size: "14" }) : null,
      ),
      h("span", { class: `swatch ${CATEGORY_CLASS[c.id]}` }),
      h("span", { class: "cat-label" }, c.label),
      h("span", { class: "cat-count muted" }, c.entryCount ? `${c.entryCount}` : ""),
      h("span", { class: "cat-tokens" }, formatCount(c.tokens)),
      h("span", { class: "cat-pct muted" }, pct(c.tokens, window)),
    );
    if (expandable) {
      row.addEventListener("click", () => {
        ui.expandedCategory = expanded ? undefined : c.id;
        view.saveAndRender();
      });
    }
    list.appendChild(row);
    if (expanded) list.appendChild(fixed ? renderFixedContext(view, fixed) : renderCategoryEntries(view, c));
  }
  const note = h(
    "p",
    { class: "note muted" },
    b.method === "scaled"
      ? l10n.t(
          "Counted with pi's estimator (chars/4) per message; messages up to the last provider usage scaled ×{0} to it, so the parts add up to {1}.",
          b.scale.toFixed(2),
          formatCount(b.total),
        )
      : l10n.t("Counted with pi's estimator (chars/4) per message; the parts add up to {0}.", formatCount(b.total)),
  );
  return h("div", { class: "breakdown-wrap" }, list, note);
}

/** The largest entries of a category (all of them once the host sent the full list). */
function renderCategoryEntries(view: View, c: CategoryModel): HTMLElement {
  const entries = view.categoryFull.get(c.id) ?? c.top;
  const box = h("div", { class: "cat-entries", role: "list", "aria-label": l10n.t("Largest entries: {0}", c.label) });
  for (const e of entries) {
    const label = [e.kind, e.tool].filter(Boolean).join(" · ");
    const row = h(
      "button",
      {
        class: "entry-row",
        role: "listitem",
        "data-entry": e.entryId,
        "data-key": `entry-${c.id}-${e.entryId}`,
        title: view.state.capabilities.revealEntry
          ? l10n.t("Reveal in the Pi Session tree")
          : l10n.t("Show the Pi Session tree"),
      },
      h("span", { class: "mono entry-id" }, e.entryId),
      h("span", { class: "entry-kind muted" }, label),
      h("span", { class: "entry-preview" }, e.preview ?? ""),
      h("span", { class: "entry-tokens" }, formatCount(e.tokens)),
    );
    row.addEventListener("click", () => view.send({ type: "revealEntry", entryId: e.entryId }));
    const editable = view.state.capabilities.trim && view.state.trim && EDITABLE_KINDS.has(e.kind);
    if (!editable) {
      box.appendChild(row);
      continue;
    }
    const trim = h(
      "button",
      {
        class: "entry-trim",
        "data-trim": e.entryId,
        "data-key": `entry-trim-${c.id}-${e.entryId}`,
        title: l10n.t("Trim: preview removing it (a note for a tool result) in Context surgery"),
        "aria-label": `Trim ${label} ${e.entryId}`,
      },
      icon("screen-cut", { size: "14" }),
    );
    trim.addEventListener("click", () => {
      selectForTrim(view, [{ entryId: e.entryId, choice: "default" }]);
      setTimeout(() => document.getElementById("trim-section")?.scrollIntoView({ block: "start" }), 0);
    });
    box.appendChild(h("div", { class: "entry-line" }, row, trim));
  }
  if (!view.categoryFull.has(c.id) && c.entryCount > c.top.length) {
    const more = h("vscode-button", { secondary: true, class: "more" }, l10n.t("Show all {0}", c.entryCount));
    more.addEventListener("click", () => view.send({ type: "requestCategory", category: c.id }));
    box.appendChild(more);
  }
  return box;
}
