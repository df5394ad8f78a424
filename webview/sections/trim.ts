/**
 * Context surgery: the suggestions (each with the tokens it saves; "Add to plan" takes its items),
 * the largest items in the context (kind, tokens by pi's estimate, age, a short text; edited items
 * show their state and note, items a running pi has not applied yet are "pending"), each row with
 * its own actions — *Replace with a note*, *Remove*, *Remove images*, and *Restore original* for an
 * edited item. An action puts the row into the plan (the same action again takes it out); nothing
 * is chosen for the user. The plan and its preview follow the list (`trimPlan.ts`), and a bar with
 * the plan's numbers and its Apply button stays at the bottom of the view while the section is on
 * screen.
 *
 * Session text goes in through `textContent` only (`h`).
 */

import { formatCount, pluralText } from "../../src/shared/format";
import type { TrimSectionModel } from "../../src/shared/protocol";
import type { TrimChoice, TrimItem, TrimSuggestion } from "../../src/shared/trim";
import { h, icon } from "../dom";
import type { View } from "../view";
import { rovingFocus } from "../focus";
import { collapsible } from "../widgets";
import { planWord, renderPlan, renderPlanDock, selectForTrim, unplan } from "./trimPlan";

export { selectForTrim } from "./trimPlan";
import * as l10n from "@vscode/l10n";

const KIND_WORDS: Record<TrimItem["kind"], string> = {
  user: "user",
  assistant: "assistant",
  toolResult: "tool result",
  custom: "custom",
  bashExecution: "bash",
  system: "system",
  compactionSummary: "compaction",
  branchSummary: "branch summary",
  other: "entry",
};

const KIND_ICONS: Record<TrimItem["kind"], string> = {
  user: "account",
  assistant: "sparkle",
  toolResult: "tools",
  custom: "extensions",
  bashExecution: "terminal",
  system: "gear",
  compactionSummary: "fold",
  branchSummary: "git-merge",
  other: "comment",
};

/** An action of a row: what it plans for the item. */
interface RowAction {
  choice: TrimChoice;
  icon: string;
  label: string;
  title: string;
}

/** The actions a row offers (none for an item pi cannot edit). */
export function rowActions(item: TrimItem): RowAction[] {
  if (!item.editable) return [];
  const out: RowAction[] = [];
  if (item.edit) {
    out.push({
      choice: "restore",
      icon: "history",
      label: l10n.t("Restore original"),
      title: l10n.t(
        "Restore original: {0} tokens in the context again (the content is written into the session file again)",
        formatCount(item.edit.originalTokens),
      ),
    });
    // a tool result "removed" keeps a note while its call is sent: for it, Restore is the only other state
    if (item.edit.kind === "replaced" && item.kind !== "toolResult")
      out.push({
        choice: "remove",
        icon: "trash",
        label: l10n.t("Remove"),
        title: l10n.t("Remove from the context instead of the note"),
      });
    return out;
  }
  if (item.kind === "toolResult")
    out.push({
      choice: "default",
      icon: "note",
      label: l10n.t("Replace with a note"),
      title: l10n.t("Replace the output with a short note: the tool, what it worked on, its size"),
    });
  else
    out.push(
      {
        choice: "remove",
        icon: "trash",
        label: l10n.t("Remove"),
        title: l10n.t("Remove from the context (an assistant message takes its tool results with it)"),
      },
      {
        choice: "note",
        icon: "note",
        label: l10n.t("Replace with a note"),
        title: l10n.t("Replace the content with a short note saying what was there (editable in the plan)"),
      },
    );
  if (item.images > 0)
    out.push({
      choice: "strip-images",
      icon: "file-media",
      label: l10n.t("Remove images"),
      title: l10n.t(
        "Keep the text, remove its {0}",
        pluralText(item.images, l10n.t("{0} image"), l10n.t("{0} images")),
      ),
    });
  return out;
}

function age(item: TrimItem): string {
  return item.turnsAgo === 0
    ? l10n.t("this turn")
    : item.turnsAgo === 1
      ? l10n.t("1 turn ago")
      : l10n.t("{0} turns ago", item.turnsAgo);
}

function renderSuggestion(view: View, s: TrimSuggestion): HTMLElement {
  const planned = s.actions.every((a) =>
    view.ui.trimSelection.some((i) => i.entryId === a.entryId && i.choice === a.choice),
  );
  const button = h(
    "vscode-button",
    { secondary: true, class: "trim-select", "data-key": `trim-suggestion-${s.kind}` },
    planned ? l10n.t("Take out of plan") : l10n.t("Add to plan"),
  );
  button.addEventListener("click", () =>
    planned
      ? unplan(
          view,
          s.actions.map((a) => a.entryId),
        )
      : selectForTrim(view, s.actions),
  );
  return h(
    "div",
    { class: `trim-suggestion ${planned ? "planned" : ""}`, role: "listitem", "data-suggestion": s.kind },
    icon("lightbulb", { size: "14" }),
    h("div", { class: "trim-suggestion-text" }, h("strong", null, s.title), h("span", { class: "muted" }, s.detail)),
    view.state.detailsPending
      ? h("span", { class: "trim-saves muted", title: l10n.t("Estimating what it saves…") }, l10n.t("saves …"))
      : h(
          "span",
          { class: "trim-saves", "data-value": String(s.tokensSaved) },
          l10n.t("saves {0}", formatCount(s.tokensSaved)),
        ),
    button,
  );
}

function renderItem(view: View, item: TrimItem, pending: ReadonlySet<string>): HTMLElement {
  const planned = view.ui.trimSelection.find((i) => i.entryId === item.entryId);
  const state = item.edit
    ? h(
        "span",
        { class: `trim-state ${item.edit.kind}`, title: item.edit.note ?? "" },
        icon(item.edit.kind === "removed" ? "trash" : "note", { size: "12" }),
        item.edit.kind === "removed" ? l10n.t(" removed") : l10n.t(" note: {0}", item.edit.note ?? ""),
      )
    : null;
  const actions = h("span", { class: "trim-row-actions" });
  const buttons: HTMLButtonElement[] = [];
  for (const a of rowActions(item)) {
    const on = planned?.choice === a.choice;
    const b = h(
      "button",
      {
        class: "trim-act",
        "aria-label": `${a.label}: ${item.tool ?? item.text ?? item.entryId}`,
        "aria-pressed": on ? "true" : "false",
        title: on ? l10n.t("{0} (planned; click to take it out of the plan)", a.title) : a.title,
        "data-key": `trim-act-${item.entryId}-${a.choice}`,
        "data-choice": a.choice,
      },
      icon(a.icon, { size: "16" }),
    );
    b.addEventListener("click", () =>
      on ? unplan(view, [item.entryId]) : selectForTrim(view, [{ entryId: item.entryId, choice: a.choice }]),
    );
    actions.appendChild(b);
    buttons.push(b);
  }
  if (buttons.length)
    rovingFocus(actions, buttons, l10n.t("Actions for {0} (arrow keys move between them)", item.tool ?? item.entryId));
  if (!item.editable)
    actions.appendChild(
      icon("lock", { size: "14", class: "muted", title: item.notEditable ?? l10n.t("not editable") }),
    );
  return h(
    "div",
    {
      class: `trim-item ${item.edit ? `edited ${item.edit.kind}` : ""} ${item.editable ? "" : "locked"} ${planned ? "planned" : ""}`,
      role: "listitem",
      "data-entry": item.entryId,
      "data-tokens": String(item.tokens),
      ...(planned ? { "data-planned": planned.choice } : {}),
    },
    icon(KIND_ICONS[item.kind], { size: "14", class: "trim-kind", title: KIND_WORDS[item.kind] }),
    h(
      "span",
      { class: "trim-text" },
      h("span", { class: "trim-what" }, item.tool ?? item.text ?? item.entryId),
      item.tool && item.text ? h("span", { class: "muted" }, ` ${item.text}`) : null,
    ),
    h(
      "span",
      { class: "trim-meta" },
      state,
      pending.has(item.entryId) ? h("vscode-badge", { class: "pending" }, l10n.t("pending")) : null,
      planned
        ? h("span", { class: `trim-planned ${planned.choice}` }, `→ ${planWord(planned.choice, item.kind)}`)
        : null,
    ),
    h("span", { class: "trim-tokens" }, formatCount(item.tokens)),
    h("span", { class: "trim-age muted" }, age(item)),
    actions,
  );
}

/** The context surgery section (`view.state.trim` set). */
export function renderTrimSection(view: View): HTMLElement | null {
  const t: TrimSectionModel | null = view.state.trim;
  if (!t) return null;
  const pending = new Set(t.pending);
  const body: Node[] = [];
  if (t.suggestions.length) {
    const list = h("div", { class: "trim-suggestions", role: "list", "aria-label": l10n.t("Suggestions") });
    for (const s of t.suggestions) list.appendChild(renderSuggestion(view, s));
    body.push(h("h4", null, l10n.t("Suggestions")), list);
  }
  const items = h("div", {
    class: "trim-items",
    role: "list",
    "aria-label": l10n.t("Largest items in context"),
    "data-testid": "trim-items",
  });
  for (const item of t.items) items.appendChild(renderItem(view, item, pending));
  body.push(
    h(
      "div",
      { class: "trim-list-head" },
      h("h4", null, l10n.t("Largest items in context ({0})", formatCount(t.itemCount))),
      h(
        "span",
        { class: "muted small" },
        l10n.t("Pick an action on a row to plan it; nothing is written before Apply."),
      ),
    ),
    items,
  );
  const plan = renderPlan(view);
  if (plan) body.push(plan);
  const quick = h(
    "vscode-button",
    { secondary: true, icon: "list-selection", "data-key": "trim-open" },
    l10n.t("Trim Context…"),
  );
  quick.addEventListener("click", () => view.send({ type: "openTrim" }));
  const span = summarizeButton(view, t.items);
  body.push(h("div", { class: "trim-actions" }, quick, ...(span ? [span] : [])));
  const dock = renderPlanDock(view);
  if (dock) body.push(dock);
  const description = [
    pluralText(t.itemCount, l10n.t("{0} item"), l10n.t("{0} items")),
    t.editedCount ? l10n.t("{0} edited", t.editedCount) : "",
    t.pending.length ? l10n.t("{0} pending", t.pending.length) : "",
    t.suggestions.length ? pluralText(t.suggestions.length, l10n.t("{0} suggestion"), l10n.t("{0} suggestions")) : "",
    view.ui.trimSelection.length
      ? pluralText(view.ui.trimSelection.length, l10n.t("{0} planned"), l10n.t("{0} planned"))
      : "",
  ]
    .filter(Boolean)
    .join(" · ");
  const section = collapsible(view, "trim", l10n.t("Context surgery"), description, body);
  section.setAttribute("data-testid", "trim-section");
  section.id = "trim-section";
  return section;
}

/**
 * "Summarize Messages…": with two or more items ticked, the span from the earliest to the latest
 * of them (in context order); else the host asks for the ends (Pi Context: Summarize These Messages…).
 */
function summarizeButton(view: View, items: readonly TrimItem[]): HTMLElement | null {
  if (!view.state.capabilities.summarizeSpan) return null;
  const ticked = view.ui.trimSelection
    .map((s) => items.find((i) => i.entryId === s.entryId))
    .filter((i): i is TrimItem => i !== undefined)
    .sort((a, b) => a.contextIndex - b.contextIndex);
  const button = h(
    "vscode-button",
    {
      secondary: true,
      icon: "fold",
      "data-key": "trim-summarize",
      title:
        ticked.length >= 2
          ? l10n.t("Replace the messages from {0} to {1} with one summary", ticked[0]!.entryId, ticked.at(-1)!.entryId)
          : l10n.t("Replace a span of messages with one summary (tick two items for its ends, or pick them)"),
    },
    ticked.length >= 2 ? l10n.t("Summarize Messages Between…") : l10n.t("Summarize Messages…"),
  );
  button.addEventListener("click", () =>
    view.send(
      ticked.length >= 2
        ? { type: "summarizeSelection", fromId: ticked[0]!.entryId, toId: ticked.at(-1)!.entryId }
        : { type: "summarizeSpan" },
    ),
  );
  return button;
}
