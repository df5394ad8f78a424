/**
 * "System prompt & tools" drilled down (inside the breakdown, under its row): what every request
 * carries before the conversation, by group (tools, MCP, context files, skills, pi's prompt,
 * extension sections); a group expands to its parts — each with its tokens, what it cost over the
 * branch's requests, whether a tool was ever called, and how to leave it out in pi. Text only.
 */

import type { FixedContextModel, FixedGroupModel } from "../../src/shared/fixedContext";
import { formatCount } from "../../src/shared/format";
import { h, icon } from "../dom";
import { pct } from "../format";
import type { View } from "../view";
import * as l10n from "@vscode/l10n";

/** The drill-down of the system category (`breakdown.fixed`). */
export function renderFixedContext(view: View, fixed: FixedContextModel): HTMLElement {
  const box = h("div", {
    class: "fixed",
    role: "list",
    "aria-label": l10n.t("System prompt & tools by part"),
    "data-testid": "fixed-context",
  });
  if (fixed.session) box.appendChild(h("p", { class: "fixed-session", role: "listitem" }, fixed.session));
  // how it is counted first: the bar's number is scaled, these are pi's estimate
  for (const note of fixed.notes) box.appendChild(h("p", { class: "fixed-note muted", role: "listitem" }, note));
  for (const g of fixed.groups) {
    box.appendChild(groupRow(view, g, fixed.total));
    if (view.ui.fixedGroups?.includes(g.id)) box.appendChild(groupItems(g));
  }
  return box;
}

function groupRow(view: View, g: FixedGroupModel, total: number): HTMLElement {
  const open = view.ui.fixedGroups?.includes(g.id) ?? false;
  const row = h(
    "button",
    {
      class: `fixed-group ${open ? "expanded" : ""}`,
      role: "listitem",
      "data-group": g.id,
      "data-tokens": String(g.tokens),
      "data-key": `fixed-${g.id}`,
      "aria-expanded": String(open),
      title: l10n.t("{0}: show each part", g.label),
    },
    h("span", { class: "chev" }, icon(open ? "chevron-down" : "chevron-right", { size: "14" })),
    h("span", { class: "fixed-label" }, g.label),
    h("span", { class: "cat-count muted" }, String(g.items.length)),
    h("span", { class: "cat-tokens" }, formatCount(g.tokens)),
    h("span", { class: "cat-pct muted" }, pct(g.tokens, total)),
  );
  row.addEventListener("click", () => {
    const groups = new Set(view.ui.fixedGroups ?? []);
    if (open) groups.delete(g.id);
    else groups.add(g.id);
    view.ui.fixedGroups = [...groups];
    view.saveAndRender();
  });
  return row;
}

function groupItems(g: FixedGroupModel): HTMLElement {
  const list = h("div", { class: "fixed-items", role: "list", "aria-label": g.label });
  for (const item of g.items) {
    list.appendChild(
      h(
        "div",
        {
          class: `fixed-item ${item.unused ? "unused" : ""}`,
          role: "listitem",
          "data-part": item.fullName,
          "data-kind": item.kind,
          title: item.fullName,
        },
        h("span", { class: "fixed-name" }, item.name),
        h("span", { class: "fixed-kind muted" }, item.kindLabel),
        h("span", { class: "fixed-tokens" }, formatCount(item.tokens)),
        h("span", { class: "fixed-use" }, item.use),
        h("span", { class: "fixed-removal muted" }, item.removal),
      ),
    );
  }
  return list;
}
