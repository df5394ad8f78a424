/**
 * What a compaction's summary lost: the file paths, commands, identifiers and numbers of its
 * summarised range that neither the summary nor the kept part contain (`LostModel`, computed by the
 * host). Each item is a chip that reveals the entry it came from in the Pi Session tree. Shown in
 * an expanded compaction card and beside the summary diff. Each kind's chips are one Tab stop; the
 * arrow keys move between them (`rovingFocus`).
 */

import type { LostModel } from "../../src/shared/protocol";
import { plural } from "../../src/shared/format";
import { h, icon } from "../dom";
import { rovingFocus } from "../focus";
import type { View } from "../view";

/** Chips shown per kind before "… N more". */
const PER_KIND = 30;

const KINDS: [LostModel["items"][number]["kind"], string, string][] = [
  ["path", "Paths", "file"],
  ["command", "Commands", "terminal"],
  ["identifier", "Identifiers", "symbol-variable"],
  ["number", "Numbers", "symbol-number"],
];

/** The totals in words: `lost 5 of 5 commands, 3 of 40 numbers · kept all 9 paths`. */
function totalsText(lost: LostModel): string {
  const gone: string[] = [];
  const kept: string[] = [];
  for (const [kind, label] of KINDS) {
    const t = lost.totals[kind];
    if (!t.found) continue;
    if (t.lost) gone.push(`${t.lost} of ${t.found} ${label.toLowerCase()}`);
    else kept.push(`all ${t.found} ${label.toLowerCase()}`);
  }
  if (!gone.length && !kept.length) return "no paths, commands, identifiers or numbers to compare";
  return [gone.length ? `lost ${gone.join(", ")}` : "lost nothing", kept.length ? `kept ${kept.join(", ")}` : ""]
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
      h("strong", null, " Not in the summary or the kept part: "),
      h("span", { class: "muted" }, totalsText(lost)),
    ),
  );
  const canReveal = view.state.capabilities.revealEntry;
  for (const [kind, label, ic] of KINDS) {
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
          title: `${item.text}\nfirst in entry ${item.entryId}${item.count > 1 ? `, ${plural(item.count, "time")} in the summarised range` : ""}${canReveal ? " — click to reveal it in the tree" : ""}`,
          disabled: !canReveal,
        },
        item.text.length > 80 ? `${item.text.slice(0, 79)}…` : item.text,
      );
      chip.addEventListener("click", () => view.send({ type: "revealEntry", entryId: item.entryId }));
      chips.appendChild(chip);
      buttons.push(chip as HTMLButtonElement);
    }
    rovingFocus(chips, buttons, `${label} not in the summary (arrow keys move between them)`);
    if (items.length > PER_KIND)
      chips.appendChild(h("span", { class: "muted small" }, `… ${items.length - PER_KIND} more`));
    row.appendChild(chips);
    box.appendChild(row);
  }
  if (lost.more > 0) box.appendChild(h("div", { class: "muted small" }, `… and ${lost.more} more not listed`));
  if (lost.truncated)
    box.appendChild(h("div", { class: "muted small" }, "The summarised range was too long to scan completely."));
  return box;
}
