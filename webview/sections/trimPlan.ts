/**
 * The plan of the Context surgery section: every planned change on its own row (what happens to the
 * item, its tokens before → after, a button to take it out; a note's text for a *Replace with a
 * note* of a message), then the host's preview — what else changes to keep tool calls and results
 * paired, refusals, changes that change nothing, tokens now → after on a bar with the
 * auto-compaction threshold, the distance to auto-compaction, the prompt-cache effect and its cost,
 * the bytes appended.
 *
 * The dock (`renderPlanDock`) stays at the bottom of the view while the section is on screen: the
 * plan's headline and its button, worded as what it does — *Trim 2 items*, *Restore 1 item*,
 * *Apply 3 changes* (*… in pi* when a running pi applies them). A plan that makes the context
 * larger (a restore) asks first, in the dock, with the tokens it adds to every request and the
 * bytes it appends; nothing is applied by one click.
 */

import { formatCount, formatDollars, pluralText } from "../../src/shared/format";
import type { TrimChoice, TrimItem, TrimPreviewModel, TrimRequestItem } from "../../src/shared/trim";
import { append, h, icon } from "../dom";
import { short } from "../format";
import type { View } from "../view";
import * as l10n from "@vscode/l10n";

const EFFECT_ICONS: Record<TrimPreviewModel["edits"][number]["effect"], string> = {
  omit: "trash",
  note: "note",
  replace: "edit",
  restore: "history",
};

const CHOICE_ICONS: Record<TrimChoice, string> = {
  default: "note",
  remove: "trash",
  note: "note",
  restore: "history",
  "strip-images": "file-media",
};

/** What a planned choice does to an item, in a word or two. */
export function planWord(choice: TrimChoice, kind: TrimItem["kind"] | undefined): string {
  switch (choice) {
    case "default":
      return kind === "toolResult" ? l10n.t("note") : l10n.t("remove");
    case "remove":
      return l10n.t("remove");
    case "note":
      return l10n.t("note");
    case "restore":
      return l10n.t("restore");
    case "strip-images":
      return l10n.t("no images");
  }
}

/** Add `items` to the plan (an entry planned twice keeps the later choice), preview, render. */
export function selectForTrim(view: View, items: readonly TrimRequestItem[]): void {
  const byId = new Map(view.ui.trimSelection.map((i) => [i.entryId, i]));
  for (const item of items) byId.set(item.entryId, item);
  view.ui.trimSelection = [...byId.values()];
  view.ui.openSections.trim = true;
  view.requestTrimPreview();
}

/** Take `entryIds` out of the plan, preview again. */
export function unplan(view: View, entryIds: readonly string[]): void {
  const out = new Set(entryIds);
  view.ui.trimSelection = view.ui.trimSelection.filter((i) => !out.has(i.entryId));
  view.requestTrimPreview();
}

/** The requestId whose growing plan the user is asked to confirm (a new preview asks again). */
let confirming: number | undefined;

/** The current preview, when it answers the current plan. */
function currentPreview(view: View): TrimPreviewModel | undefined {
  const tp = view.trimPreview;
  return tp?.preview ?? undefined;
}

/** Tokens now → after on a bar against the window, with the auto-compaction threshold. */
function renderPreviewBar(p: TrimPreviewModel): HTMLElement {
  const total = Math.max(p.window ?? 0, p.baselineTokens, p.tokensAfter, 1);
  const bar = h("div", {
    class: "trim-bar",
    role: "img",
    "aria-label": l10n.t("{0} tokens now, {1} after", formatCount(p.baselineTokens), formatCount(p.tokensAfter)),
  });
  for (const [cls, tokens, label] of [
    ["now", p.baselineTokens, l10n.t("now")],
    ["after", p.tokensAfter, l10n.t("after")],
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

/** The facts of a preview with edits: auto-compaction, the prompt cache and its cost, the bytes. */
function renderFacts(p: TrimPreviewModel): HTMLElement {
  const facts = h("ul", { class: "trim-facts" });
  const fact = (ic: string, text: string, cls = "") =>
    append(facts, [h("li", { class: cls }, icon(ic, { size: "14" }), ` ${text}`)]);
  if (p.failureNow || p.failureAfter) {
    // pi has no number on one side: never call pi-context's count pi's
    fact(
      "arrow-right",
      l10n.t(
        "{0} → {1}",
        p.failureNow ? l10n.t("pi has no estimate now") : l10n.t("{0} tokens now", formatCount(p.baselineTokens)),
        p.failureAfter ? l10n.t("pi has no estimate after") : l10n.t("{0} tokens after", formatCount(p.tokensAfter)),
      ),
    );
    for (const failure of [p.failureNow, p.failureAfter]) if (failure) fact("error", failure, "trim-estimate-failure");
  } else
    fact(
      "arrow-right",
      l10n.t(
        "{0} → {1} tokens by pi's estimate (chars/4; pi shows {2} now and counts from chars/4 after an edit until its next answer).",
        formatCount(p.baselineTokens),
        formatCount(p.tokensAfter),
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
        // a restore (tokens added): every later request costs more, never "-$x less"
        p.cost.perRequestSaving < 0
          ? l10n.t(
              "{0} once on the next request, then {1} more per request.",
              formatDollars(p.cost.oneOffExtra),
              formatDollars(-p.cost.perRequestSaving),
            )
          : l10n.t(
              "{0} once on the next request, then {1} less per request{2}.",
              formatDollars(p.cost.oneOffExtra),
              formatDollars(p.cost.perRequestSaving),
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
    p.restoreBytes > 0
      ? l10n.t(
          "Appends {0} in one write ({1} bytes; {2} of them the restored originals).",
          pluralText(p.edits.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
          formatCount(p.bytes),
          formatCount(p.restoreBytes),
        )
      : l10n.t(
          "Appends {0} in one write ({1} bytes).",
          pluralText(p.edits.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
          formatCount(p.bytes),
        ),
  );
  return facts;
}

/** One planned change: what happens to the item, tokens before → after, take it out (and a note's text). */
function renderPlanRow(view: View, choice: TrimChoice, entryId: string, p: TrimPreviewModel | undefined): HTMLElement {
  const listed = view.state.trim?.items.find((i) => i.entryId === entryId);
  const edit = p?.edits.find((e) => e.targetId === entryId && !e.cascade);
  const refused = p?.refused.find((r) => r.targetId === entryId);
  const same = p?.unchanged.includes(entryId);
  const text = listed ? (listed.tool ?? listed.text ?? entryId) : (edit?.text ?? entryId);
  const remove = h(
    "button",
    {
      class: "trim-act",
      "aria-label": l10n.t("Take {0} out of the plan", text),
      title: l10n.t("Take it out of the plan"),
      "data-key": `trim-unplan-${entryId}`,
    },
    icon("close", { size: "16" }),
  );
  remove.addEventListener("click", () => unplan(view, [entryId]));
  const status = refused
    ? h("span", { class: "warn" }, l10n.t("refused: {0}", refused.message))
    : same
      ? h("span", { class: "muted" }, l10n.t("already so — nothing to write"))
      : edit
        ? h("span", { class: "trim-tokens" }, `${short(edit.tokensBefore)} → ${short(edit.tokensAfter)}`)
        : h("span", { class: "muted" }, "…");
  const row = h(
    "div",
    { class: `trim-plan-row ${choice}`, role: "listitem", "data-entry": entryId, "data-choice": choice },
    icon(CHOICE_ICONS[choice], { size: "14" }),
    h("span", { class: "trim-what" }, text),
    h("span", { class: `trim-planned ${choice}` }, planWord(choice, listed?.kind)),
    status,
    remove,
  );
  if (choice !== "note" || listed?.kind === "toolResult") return row;
  const planned = view.ui.trimSelection.find((i) => i.entryId === entryId);
  const note = h("vscode-textfield", {
    class: "trim-note",
    "data-key": `trim-note-${entryId}`,
    "aria-label": l10n.t("The note the model sees instead of {0}", text),
    placeholder: l10n.t("The note the model sees instead (empty: Pi Context's note)"),
    value: planned?.note ?? "",
  });
  note.addEventListener("change", () => {
    const value = (note as unknown as { value: string }).value;
    view.ui.trimSelection = view.ui.trimSelection.map((i) =>
      i.entryId === entryId ? { entryId, choice: "note", ...(value.trim() ? { note: value } : {}) } : i,
    );
    view.requestTrimPreview();
  });
  return h("div", { class: "trim-plan-item" }, row, note);
}

/** The plan (planned rows, then the host's preview), or null while nothing is planned. */
export function renderPlan(view: View): HTMLElement | null {
  const sel = view.ui.trimSelection;
  if (sel.length === 0) return null;
  const tp = view.trimPreview;
  const p = currentPreview(view);
  const rows = h("div", { class: "trim-plan-rows", role: "list", "aria-label": l10n.t("Planned changes") });
  for (const item of sel) rows.appendChild(renderPlanRow(view, item.choice, item.entryId, p));
  const box = h(
    "div",
    { class: "trim-plan", "data-testid": "trim-plan" },
    h("h4", null, l10n.t("Plan: {0}", pluralText(sel.length, l10n.t("{0} change"), l10n.t("{0} changes")))),
    rows,
  );
  if (!tp || tp.preview === undefined) box.appendChild(h("p", { class: "muted" }, l10n.t("Preparing the preview…")));
  else if (tp.preview === null) box.appendChild(h("p", { class: "warn" }, tp.error ?? l10n.t("No preview.")));
  else {
    const also = tp.preview.edits.filter((e) => e.cascade);
    if (also.length) {
      const list = h("div", { class: "trim-edits", role: "list", "aria-label": l10n.t("Also changed") });
      for (const e of also)
        list.appendChild(
          h(
            "div",
            { class: "trim-edit cascade", role: "listitem", "data-entry": e.targetId, "data-effect": e.effect },
            icon(EFFECT_ICONS[e.effect], { size: "14" }),
            h("span", { class: "trim-what" }, e.text || e.targetId),
            h("span", { class: "muted" }, e.cause),
            h("span", { class: "trim-tokens" }, `${short(e.tokensBefore)} → ${short(e.tokensAfter)}`),
          ),
        );
      box.append(h("p", { class: "muted small" }, l10n.t("Also, to keep tool calls and their results paired:")), list);
    }
    if (tp.preview.edits.length > 0) box.append(renderPreviewBar(tp.preview), renderFacts(tp.preview));
    else box.appendChild(h("p", { class: "muted" }, l10n.t("Nothing would be written: the context stays as it is.")));
  }
  return box;
}

/** What the plan does, as a verb: every planned item restored, none, or both kinds. */
function planVerb(view: View): "trim" | "restore" | "apply" {
  const choices = view.ui.trimSelection.map((i) => i.choice);
  if (choices.every((c) => c === "restore")) return "restore";
  if (choices.every((c) => c !== "restore")) return "trim";
  return "apply";
}

function verbLabel(view: View): string {
  const n = view.ui.trimSelection.length;
  const live = view.state.gauge?.live ? l10n.t(" in pi") : "";
  switch (planVerb(view)) {
    case "restore":
      return `${pluralText(n, l10n.t("Restore {0} item"), l10n.t("Restore {0} items"))}${live}`;
    case "trim":
      return `${pluralText(n, l10n.t("Trim {0} item"), l10n.t("Trim {0} items"))}${live}`;
    case "apply":
      return `${pluralText(n, l10n.t("Apply {0} change"), l10n.t("Apply {0} changes"))}${live}`;
  }
}

/** The plan's headline: `7,100 → 4,000 tokens (saves 3,100)`, `(adds 12,791)`. */
function headline(p: TrimPreviewModel): string {
  const d = p.tokensSaved;
  return l10n.t(
    "{0} → {1} tokens ({2})",
    formatCount(p.baselineTokens),
    formatCount(p.tokensAfter),
    d >= 0 ? l10n.t("saves {0}", formatCount(d)) : l10n.t("adds {0}", formatCount(-d)),
  );
}

/**
 * The dock at the bottom of the view: the plan's headline, its button (worded by what it does) and
 * Clear; for a plan that makes the context larger, the question before anything is applied.
 */
export function renderPlanDock(view: View): HTMLElement | null {
  const sel = view.ui.trimSelection;
  if (sel.length === 0) return null;
  const tp = view.trimPreview;
  const p = currentPreview(view);
  const ready = p !== undefined && p.edits.length > 0 && view.state.capabilities.trim;
  const grows = p !== undefined && p.tokensSaved < 0;
  const apply = () => {
    const id = view.trimPreview?.requestId;
    if (id !== undefined) view.send({ type: "applyTrim", requestId: id, items: view.ui.trimSelection });
  };
  const dock = h("div", {
    class: `trim-dock ${grows ? "grows" : ""}`,
    role: "region",
    "aria-label": l10n.t("Plan"),
    "data-testid": "trim-dock",
  });
  if (grows && tp && confirming === tp.requestId) {
    const yes = h(
      "vscode-button",
      { icon: "history", "data-key": "trim-confirm", "data-action": "trim-confirm" },
      verbLabel(view),
    );
    yes.addEventListener("click", () => {
      confirming = undefined;
      apply();
    });
    const no = h("vscode-button", { secondary: true, "data-key": "trim-confirm-cancel" }, l10n.t("Cancel"));
    no.addEventListener("click", () => {
      confirming = undefined;
      view.saveAndRender();
    });
    dock.append(
      h(
        "div",
        { class: "trim-confirm", role: "alert", "data-testid": "trim-confirm" },
        icon("warning", { size: "16" }),
        h(
          "span",
          null,
          l10n.t(
            "This makes the context larger: {0} more tokens in every request from now on ({1} → {2} by pi's estimate), and {3} bytes appended to the session file. Apply it?",
            formatCount(-p!.tokensSaved),
            formatCount(p!.baselineTokens),
            formatCount(p!.tokensAfter),
            formatCount(p!.bytes),
          ),
        ),
      ),
      h("div", { class: "trim-dock-buttons" }, yes, no),
    );
    return dock;
  }
  const button = h(
    "vscode-button",
    {
      icon: grows ? "history" : "check",
      "data-key": "trim-apply",
      "data-action": "trim-apply",
      disabled: !ready,
      title: grows ? l10n.t("Makes the context larger: asks first") : "",
    },
    grows ? `${verbLabel(view)}…` : verbLabel(view),
  );
  button.addEventListener("click", () => {
    if (!ready) return;
    if (grows) {
      confirming = tp?.requestId;
      view.saveAndRender();
    } else apply();
  });
  const clear = h("vscode-button", { secondary: true, "data-key": "trim-clear" }, l10n.t("Clear plan"));
  clear.addEventListener("click", () => {
    view.ui.trimSelection = [];
    view.requestTrimPreview();
  });
  const summary = h(
    "span",
    { class: `trim-dock-text ${grows ? "warn" : ""}`, "data-testid": "trim-dock-text" },
    h("strong", null, pluralText(sel.length, l10n.t("{0} planned"), l10n.t("{0} planned"))),
    " · ",
    p === undefined
      ? l10n.t("preparing the preview…")
      : p.edits.length === 0
        ? l10n.t("nothing would be written")
        : headline(p),
  );
  dock.append(summary, h("div", { class: "trim-dock-buttons" }, button, clear));
  return dock;
}
