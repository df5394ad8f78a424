/**
 * Context surgery: the suggestions (each with the tokens it saves; "Select" picks its items), the
 * largest items in the context (kind, tokens by pi's estimate, age, a short text; edited items show
 * their state and note, items a running pi has not applied yet are "pending"), and for the picked
 * items what to do (Trim / Remove / Replace with a note / Restore) with the host's preview: tokens
 * now → after on a bar with the auto-compaction threshold, the distance to auto-compaction after,
 * the prompt-cache effect (and its cost where prices are known), every planned edit with cascades
 * and refusals. "Apply" runs the trim command, which writes (or lets the running pi write).
 *
 * Session text goes in through `textContent` only (`h`).
 */

import { formatCount, pluralText } from "../../src/shared/format";
import type { TrimSectionModel } from "../../src/shared/protocol";
import type { TrimChoice, TrimItem, TrimPreviewModel, TrimRequestItem, TrimSuggestion } from "../../src/shared/trim";
import { append, h, icon } from "../dom";
import { short } from "../format";
import type { View } from "../view";
import { collapsible } from "../widgets";
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

const CHOICES: [TrimChoice, string][] = [
  ["default", "Trim (a note for tool results, remove the rest)"],
  ["remove", "Remove from context"],
  ["note", "Replace with a note"],
  ["restore", "Restore original"],
];

const EFFECT_ICONS: Record<TrimPreviewModel["edits"][number]["effect"], string> = {
  omit: "trash",
  note: "note",
  replace: "edit",
  restore: "history",
};
const EFFECT_WORDS: Record<TrimPreviewModel["edits"][number]["effect"], string> = {
  omit: "removed",
  note: "note",
  replace: "replaced",
  restore: "restored",
};

/** Select `items` (added to the selection; an entry picked twice keeps the later choice), preview, render. */
export function selectForTrim(view: View, items: readonly TrimRequestItem[]): void {
  const byId = new Map(view.ui.trimSelection.map((i) => [i.entryId, i]));
  for (const item of items) byId.set(item.entryId, item);
  view.ui.trimSelection = [...byId.values()];
  view.ui.trimChoice =
    new Set(view.ui.trimSelection.map((i) => i.choice)).size > 1 ? "mixed" : (items[0]?.choice ?? "default");
  view.ui.openSections.trim = true;
  view.requestTrimPreview();
}

function age(item: TrimItem): string {
  return item.turnsAgo === 0
    ? l10n.t("this turn")
    : item.turnsAgo === 1
      ? l10n.t("1 turn ago")
      : l10n.t("{0} turns ago", item.turnsAgo);
}

function renderSuggestion(view: View, s: TrimSuggestion): HTMLElement {
  const picked = s.actions.every((a) => view.ui.trimSelection.some((i) => i.entryId === a.entryId));
  const select = h(
    "vscode-button",
    { secondary: true, class: "trim-select", "data-key": `trim-suggestion-${s.kind}`, disabled: picked },
    picked ? l10n.t("Selected") : l10n.t("Select"),
  );
  select.addEventListener("click", () => selectForTrim(view, s.actions));
  return h(
    "div",
    { class: "trim-suggestion", role: "listitem", "data-suggestion": s.kind },
    icon("lightbulb", { size: "14" }),
    h("div", { class: "trim-suggestion-text" }, h("strong", null, s.title), h("span", { class: "muted" }, s.detail)),
    view.state.detailsPending
      ? h("span", { class: "trim-saves muted", title: l10n.t("Estimating what it saves…") }, l10n.t("saves …"))
      : h("span", { class: "trim-saves", "data-value": String(s.tokensSaved) }, `saves ${formatCount(s.tokensSaved)}`),
    select,
  );
}

function renderItem(view: View, item: TrimItem, pending: ReadonlySet<string>): HTMLElement {
  const selected = view.ui.trimSelection.some((i) => i.entryId === item.entryId);
  const box = h("vscode-checkbox", {
    "data-key": `trim-item-${item.entryId}`,
    checked: selected,
    disabled: !item.editable,
    "aria-label": `Select ${KIND_WORDS[item.kind]} ${item.entryId}`,
    title: item.editable ? l10n.t("Select for trimming") : (item.notEditable ?? l10n.t("not editable")),
  });
  box.addEventListener("change", () => {
    const on = (box as unknown as { checked: boolean }).checked;
    if (on) {
      const choice = view.ui.trimChoice === "mixed" ? "default" : view.ui.trimChoice;
      selectForTrim(view, [{ entryId: item.entryId, choice: item.edit && choice === "default" ? "restore" : choice }]);
    } else {
      view.ui.trimSelection = view.ui.trimSelection.filter((i) => i.entryId !== item.entryId);
      view.requestTrimPreview();
    }
  });
  const state = item.edit
    ? h(
        "span",
        { class: `trim-state ${item.edit.kind}`, title: item.edit.note ?? "" },
        icon(item.edit.kind === "removed" ? "trash" : "note", { size: "12" }),
        item.edit.kind === "removed" ? l10n.t(" removed") : l10n.t(" note: {0}", item.edit.note ?? ""),
      )
    : null;
  const row = h(
    "div",
    {
      class: `trim-item ${item.edit ? `edited ${item.edit.kind}` : ""} ${item.editable ? "" : "locked"}`,
      role: "listitem",
      "data-entry": item.entryId,
      "data-tokens": String(item.tokens),
    },
    box,
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
    ),
    h("span", { class: "trim-tokens" }, formatCount(item.tokens)),
    h("span", { class: "trim-age muted" }, age(item)),
  );
  return row;
}

/** Tokens now → after against the window, with the auto-compaction threshold. */
function renderPreviewBar(p: TrimPreviewModel): HTMLElement {
  const total = Math.max(p.window ?? 0, p.pureTokensNow, p.tokensAfter, 1);
  const bar = h("div", {
    class: "trim-bar",
    role: "img",
    "aria-label": l10n.t("{0} tokens now, {1} after", formatCount(p.pureTokensNow), formatCount(p.tokensAfter)),
  });
  for (const [cls, tokens, label] of [
    ["now", p.pureTokensNow, "now"],
    ["after", p.tokensAfter, "after"],
  ] as const) {
    const track = h("div", { class: "trim-track" });
    const fill = h("div", { class: `trim-fill ${cls} ${cls === "after" ? `level-${p.levelAfter}` : ""}` });
    fill.style.width = `${(tokens / total) * 100}%`;
    track.appendChild(fill);
    if (p.threshold !== null && p.window !== null) {
      const marker = h("div", {
        class: "trim-threshold",
        title: l10n.t("auto-compaction at {0}", formatCount(p.threshold)),
      });
      marker.style.left = `${(p.threshold / total) * 100}%`;
      track.appendChild(marker);
    }
    bar.appendChild(
      h(
        "div",
        { class: "trim-bar-row" },
        h("span", { class: "muted" }, label),
        track,
        h("span", { class: "trim-tokens", "data-testid": `trim-${cls}`, "data-value": String(tokens) }, short(tokens)),
      ),
    );
  }
  return bar;
}

function renderPreview(view: View, p: TrimPreviewModel): HTMLElement {
  const facts = h("ul", { class: "trim-facts" });
  const fact = (ic: string, text: string, cls = "") =>
    append(facts, [h("li", { class: cls }, icon(ic, { size: "14" }), ` ${text}`)]);
  const saved = p.tokensSaved >= 0 ? `saves ${formatCount(p.tokensSaved)}` : `adds ${formatCount(-p.tokensSaved)}`;
  fact(
    "arrow-right",
    l10n.t(
      "{0} → {1} tokens ({2}) by pi's estimate; pi shows {3} now.",
      formatCount(p.pureTokensNow),
      formatCount(p.tokensAfter),
      saved,
      formatCount(p.tokensNow),
    ),
  );
  if (p.threshold !== null && p.autoCompaction)
    fact(
      p.compactsAfter ? "warning" : "dashboard",
      p.compactsAfter
        ? l10n.t(
            "Still above the auto-compaction threshold ({0}) after: pi compacts at its next check.",
            formatCount(p.threshold),
          )
        : l10n.t(
            "{0} tokens until auto-compaction after ({1} now).",
            formatCount(p.untilCompactionAfter ?? 0),
            formatCount(p.untilCompactionNow ?? 0),
          ),
      p.compactsAfter ? "warn" : "",
    );
  if (p.cache) {
    fact(
      "database",
      l10n.t(
        "Prompt cache: the next request sends ≈{0} tokens uncached (from {1} on); {2} stay cached.",
        formatCount(p.cache.resentTokens),
        p.cache.earliestEntryId,
        formatCount(p.cache.cachedTokens),
      ),
    );
    if (p.cost)
      fact(
        "credit-card",
        l10n.t(
          "${0} once on the next request, then ${1} less per request{2}.",
          p.cost.oneOffExtra.toFixed(4),
          p.cost.perRequestSaving.toFixed(4),
          p.cost.breakEvenRequests !== null
            ? l10n.t(
                "; pays off after {0}",
                pluralText(p.cost.breakEvenRequests, l10n.t("{0} request"), l10n.t("{0} requests")),
              )
            : "",
        ),
      );
    else if (p.priceNote) fact("info", p.priceNote, "muted");
  }
  fact(
    "save",
    l10n.t(
      "Appends {0} in one write ({1} bytes).",
      pluralText(p.edits.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
      formatCount(p.bytes),
    ),
  );
  const edits = h("div", { class: "trim-edits", role: "list", "aria-label": l10n.t("Planned context edits") });
  for (const e of p.edits)
    edits.appendChild(
      h(
        "div",
        {
          class: `trim-edit ${e.cascade ? "cascade" : ""}`,
          role: "listitem",
          "data-entry": e.targetId,
          "data-effect": e.effect,
        },
        icon(EFFECT_ICONS[e.effect], { size: "14" }),
        h("span", { class: "trim-what" }, e.text || e.targetId),
        h("span", { class: "muted" }, e.cascade ? `${EFFECT_WORDS[e.effect]} — ${e.cause}` : EFFECT_WORDS[e.effect]),
        h("span", { class: "trim-tokens" }, `${short(e.tokensBefore)} → ${short(e.tokensAfter)}`),
      ),
    );
  for (const r of p.refused)
    edits.appendChild(
      h(
        "div",
        { class: "trim-edit refused", role: "listitem", "data-entry": r.targetId },
        icon("circle-slash", { size: "14" }),
        h("span", null, `${r.targetId}: ${r.message}`),
      ),
    );
  if (p.unchanged.length)
    edits.appendChild(
      h(
        "div",
        { class: "trim-edit muted", role: "listitem" },
        icon("check", { size: "14" }),
        h("span", null, l10n.t("Unchanged (already shown that way): {0}", p.unchanged.join(", "))),
      ),
    );
  const apply = h(
    "vscode-button",
    {
      icon: "check",
      "data-key": "trim-apply",
      "data-action": "trim-apply",
      disabled: p.edits.length === 0 || !view.state.capabilities.trim,
    },
    view.state.gauge?.live ? l10n.t("Apply in pi") : l10n.t("Apply"),
  );
  apply.addEventListener("click", () => {
    const id = view.trimPreview?.requestId;
    if (id !== undefined) view.send({ type: "applyTrim", requestId: id, items: view.ui.trimSelection });
  });
  const clear = h("vscode-button", { secondary: true, "data-key": "trim-clear" }, l10n.t("Clear selection"));
  clear.addEventListener("click", () => {
    view.ui.trimSelection = [];
    view.ui.trimNote = undefined;
    view.requestTrimPreview();
  });
  return h(
    "div",
    { class: "trim-preview", "data-testid": "trim-preview" },
    renderPreviewBar(p),
    facts,
    edits,
    h("div", { class: "trim-actions" }, apply, clear),
  );
}

/**
 * "Summarize Messages…": with two or more items ticked, the span from the earliest to the latest
 * of them (in context order); else the host asks for the ends (Pi: Summarize These Messages…).
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

function renderSelection(view: View): HTMLElement | null {
  const sel = view.ui.trimSelection;
  if (sel.length === 0) return null;
  const select = h("vscode-single-select", {
    class: "trim-choice",
    "data-key": "trim-choice",
    "aria-label": l10n.t("What should happen"),
  });
  if (view.ui.trimChoice === "mixed")
    select.appendChild(h("vscode-option", { value: "mixed", selected: true }, l10n.t("As suggested")));
  for (const [value, label] of CHOICES)
    select.appendChild(h("vscode-option", { value, selected: view.ui.trimChoice === value }, label));
  select.addEventListener("change", () => {
    const value = (select as unknown as { value: string }).value as TrimChoice | "mixed";
    if (value === "mixed") return;
    view.ui.trimChoice = value;
    view.ui.trimSelection = view.ui.trimSelection.map((i) => ({ entryId: i.entryId, choice: value }));
    view.requestTrimPreview();
  });
  const head = h(
    "div",
    { class: "trim-selection" },
    h("strong", null, l10n.t("{0} selected", pluralText(sel.length, l10n.t("{0} item"), l10n.t("{0} items")))),
    select,
  );
  if (view.ui.trimChoice === "note" && sel.length === 1) {
    const note = h("vscode-textfield", {
      class: "trim-note",
      "data-key": "trim-note",
      placeholder: l10n.t("The note the model sees instead (empty: pi Context's note)"),
      value: view.ui.trimNote ?? "",
    });
    note.addEventListener("change", () => {
      view.ui.trimNote = (note as unknown as { value: string }).value;
      view.ui.trimSelection = sel.map((i) => ({
        entryId: i.entryId,
        choice: "note",
        ...(view.ui.trimNote ? { note: view.ui.trimNote } : {}),
      }));
      view.requestTrimPreview();
    });
    head.appendChild(note);
  }
  const box = h("div", { class: "trim-selected", "data-testid": "trim-selection" }, head);
  const tp = view.trimPreview;
  if (!tp || tp.preview === undefined) box.appendChild(h("p", { class: "muted" }, l10n.t("Preparing the preview…")));
  else if (tp.preview === null) box.appendChild(h("p", { class: "warn" }, tp.error ?? l10n.t("No preview.")));
  else box.appendChild(renderPreview(view, tp.preview));
  return box;
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
  body.push(h("h4", null, l10n.t("Largest items in context ({0})", formatCount(t.itemCount))), items);
  const selection = renderSelection(view);
  if (selection) body.push(selection);
  const quick = h(
    "vscode-button",
    { secondary: true, icon: "list-selection", "data-key": "trim-open" },
    l10n.t("Trim Context…"),
  );
  quick.addEventListener("click", () => view.send({ type: "openTrim" }));
  const span = summarizeButton(view, t.items);
  body.push(h("div", { class: "trim-actions" }, quick, ...(span ? [span] : [])));
  const description = [
    pluralText(t.itemCount, l10n.t("{0} item"), l10n.t("{0} items")),
    t.editedCount ? l10n.t("{0} edited", t.editedCount) : "",
    t.pending.length ? l10n.t("{0} pending", t.pending.length) : "",
    t.suggestions.length ? pluralText(t.suggestions.length, l10n.t("{0} suggestion"), l10n.t("{0} suggestions")) : "",
  ]
    .filter(Boolean)
    .join(" · ");
  const section = collapsible(view, "trim", l10n.t("Context surgery"), description, body);
  section.setAttribute("data-testid", "trim-section");
  section.id = "trim-section";
  return section;
}
