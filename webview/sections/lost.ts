/**
 * What a compaction's summary lost: the file paths, commands, identifiers and numbers of its
 * summarized range that neither the summary nor the kept part contain (`LostModel`, computed by the
 * host). Each item is a chip that reveals the entry it came from in the Pi Session tree. Shown in
 * an expanded compaction card and beside the summary diff. Each kind's chips are one Tab stop; the
 * arrow keys move between them (`rovingFocus`).
 */

import type { LostModel } from "../../src/shared/protocol";
import { pluralText } from "../../src/shared/format";
import { h, icon } from "../dom";
import { rovingFocus } from "../focus";
import type { View } from "../view";
import * as l10n from "@vscode/l10n";

/** Chips shown per kind before "… N more". */
const PER_KIND = 30;

type LostKind = LostModel["items"][number]["kind"];
const KINDS: [LostKind, string][] = [
  ["path", "file"],
  ["command", "terminal"],
  ["identifier", "symbol-variable"],
  ["number", "symbol-number"],
];

/** A kind's words: its heading, `3 of 5 commands` (lost) and `all 5 commands` (kept), each its own string. */
function kindTexts(kind: LostKind): {
  label: string;
  lostOf: (lost: number, found: number) => string;
  all: (found: number) => string;
} {
  switch (kind) {
    case "path":
      return {
        label: l10n.t("Paths"),
        lostOf: (l, f) => l10n.t("{0} of {1} paths", l, f),
        all: (f) => l10n.t("all {0} paths", f),
      };
    case "command":
      return {
        label: l10n.t("Commands"),
        lostOf: (l, f) => l10n.t("{0} of {1} commands", l, f),
        all: (f) => l10n.t("all {0} commands", f),
      };
    case "identifier":
      return {
        label: l10n.t("Identifiers"),
        lostOf: (l, f) => l10n.t("{0} of {1} identifiers", l, f),
        all: (f) => l10n.t("all {0} identifiers", f),
      };
    case "number":
      return {
        label: l10n.t("Numbers"),
        lostOf: (l, f) => l10n.t("{0} of {1} numbers", l, f),
        all: (f) => l10n.t("all {0} numbers", f),
      };
  }
}

/** The totals in words: `lost 5 of 5 commands, 3 of 40 numbers · kept all 9 paths`. */
function totalsText(lost: LostModel): string {
  const gone: string[] = [];
  const kept: string[] = [];
  for (const [kind] of KINDS) {
    const t = lost.totals[kind];
    if (!t.found) continue;
    const words = kindTexts(kind);
    if (t.lost) gone.push(words.lostOf(t.lost, t.found));
    else kept.push(words.all(t.found));
  }
  if (!gone.length && !kept.length) return l10n.t("no paths, commands, identifiers or numbers to compare");
  return [
    gone.length ? l10n.t("lost {0}", gone.join(", ")) : l10n.t("lost nothing"),
    kept.length ? l10n.t("kept {0}", kept.join(", ")) : "",
  ]
    .filter(Boolean)
    .join(" · ");
}

/** The block (`data-testid="lost-<entryId>"`). */
export function renderLost(view: View, entryId: string, lost: LostModel): HTMLElement {
  const box = h("div", { class: "lost", "data-testid": `lost-${entryId}` });
  box.appendChild(
    h(
      "div",
      { class: "lost-head" },
      icon("search-stop", { size: "14" }),
      h("strong", null, l10n.t(" Not in the summary or the kept part: ")),
      h("span", { class: "muted" }, totalsText(lost)),
    ),
  );
  const canReveal = view.state.capabilities.revealEntry;
  for (const [kind, ic] of KINDS) {
    const label = kindTexts(kind).label;
    const items = lost.items.filter((i) => i.kind === kind);
    if (!items.length) continue;
    const row = h("div", { class: "lost-row", "data-kind": kind });
    row.appendChild(h("span", { class: "lost-kind muted" }, icon(ic, { size: "12" }), ` ${label}`));
    const chips = h("span", { class: "lost-chips" });
    const buttons: HTMLButtonElement[] = [];
    for (const item of items.slice(0, PER_KIND)) {
      const chip = h(
        "button",
        {
          class: `lost-chip mono${kind === "command" ? " command" : ""}`,
          title: l10n.t(
            "{0}\nfirst in entry {1}{2}{3}",
            item.text,
            item.entryId,
            item.count > 1
              ? l10n.t(", {0} in the summarized range", pluralText(item.count, l10n.t("{0} time"), l10n.t("{0} times")))
              : "",
            canReveal ? l10n.t(" — click to reveal it in the tree") : "",
          ),
          disabled: !canReveal,
        },
        item.text.length > 80 ? `${item.text.slice(0, 79)}…` : item.text,
      );
      chip.addEventListener("click", () => view.send({ type: "revealEntry", entryId: item.entryId }));
      chips.appendChild(chip);
      buttons.push(chip as HTMLButtonElement);
    }
    rovingFocus(chips, buttons, l10n.t("{0} not in the summary (arrow keys move between them)", label));
    if (items.length > PER_KIND)
      chips.appendChild(h("span", { class: "muted small" }, l10n.t("… {0} more", items.length - PER_KIND)));
    row.appendChild(chips);
    box.appendChild(row);
  }
  if (lost.more > 0)
    box.appendChild(h("div", { class: "muted small" }, l10n.t("… and {0} more not listed", lost.more)));
  if (lost.truncated)
    box.appendChild(
      h("div", { class: "muted small" }, l10n.t("The summarized range was too long to scan completely.")),
    );
  return box;
}
