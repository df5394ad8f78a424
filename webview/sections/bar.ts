/**
 * The context bar: one segment per breakdown category over the window, the reserve band after the
 * auto-compaction threshold, and an axis (`0`, `auto-compact 12k`, `16k`) whose labels are placed
 * from their measured widths after layout (`src/shared/axis.ts`), so they never overlap.
 */

import type { CategoryId, CategoryModel, GaugeModel } from "../../src/shared/protocol";
import { formatCount, formatWindowTokens, tokensText } from "../../src/shared/format";
import { placeAxisLabels, type AxisLabel } from "../../src/shared/axis";
import { h } from "../dom";
import * as l10n from "@vscode/l10n";

/** The colour class of each category (bar segments and breakdown swatches; colours in bar.css). */
export const CATEGORY_CLASS: Record<CategoryId, string> = {
  system: "c-system",
  summaries: "c-summaries",
  user: "c-user",
  assistantText: "c-assistant",
  thinking: "c-thinking",
  toolCalls: "c-toolcalls",
  toolResults: "c-toolresults",
  other: "c-other",
  free: "c-free",
  reserve: "c-reserve",
};

/** The bar of a gauge: scale = max(window, used); without a window only the segments. */
export function renderBar(g: GaugeModel, categories: CategoryModel[]): HTMLElement {
  const total = Math.max(g.window ?? 0, g.used);
  const bar = h("div", {
    class: "bar",
    role: "img",
    "aria-label": l10n.t(
      "{0} of {1} tokens used",
      formatCount(g.used),
      g.window !== null ? formatCount(g.window) : "?",
    ),
  });
  const track = h("div", { class: "bar-track" });
  if (total > 0) {
    for (const c of categories) {
      if (c.tokens <= 0 || c.id === "free") continue;
      const seg = h("div", {
        class: `seg ${CATEGORY_CLASS[c.id]}`,
        title: `${c.label}: ${tokensText(c.tokens)}`,
      });
      seg.style.width = `${(c.tokens / total) * 100}%`;
      track.appendChild(seg);
    }
    if (g.threshold !== null && g.window !== null) {
      const marker = h("div", {
        class: `threshold ${g.tokensUntilCompaction !== null && g.tokensUntilCompaction < 0 ? "crossed" : ""}`,
        title: l10n.t("auto-compaction threshold: window − reserveTokens = {0}", formatCount(g.threshold)),
      });
      marker.style.left = `${(g.threshold / total) * 100}%`;
      track.appendChild(marker);
      const band = h("div", {
        class: "reserve-band",
        title: l10n.t("reserve: {0} tokens", formatCount(g.window - g.threshold)),
      });
      band.style.left = `${(g.threshold / total) * 100}%`;
      band.style.width = `${((g.window - g.threshold) / total) * 100}%`;
      track.appendChild(band);
    }
  }
  bar.appendChild(track);
  if (g.window !== null && total > 0) {
    // labels are placed after layout (measured text, see layoutAxes): never overlapping
    const scale = h("div", { class: "bar-scale", "data-testid": "bar-scale" });
    scale.appendChild(
      h("span", { class: "tick start", "data-tick": "start", "data-at": "0", "data-align": "start" }, "0"),
    );
    if (g.threshold !== null) {
      scale.appendChild(
        h(
          "span",
          {
            class: "tick threshold-label",
            "data-tick": "threshold",
            "data-at": String(g.threshold / total),
            "data-align": "center",
            title: l10n.t("auto-compaction threshold: window − reserveTokens = {0}", formatCount(g.threshold)),
          },
          `${g.autoCompaction ? l10n.t("auto-compact") : l10n.t("threshold (auto off)")} ${formatWindowTokens(g.threshold)}`,
        ),
      );
    }
    scale.appendChild(
      h(
        "span",
        {
          class: "tick end",
          "data-tick": "end",
          "data-at": String(g.window / total),
          "data-align": "end",
          title: l10n.t("context window: {0}", formatCount(g.window)),
        },
        formatWindowTokens(g.window),
      ),
    );
    bar.appendChild(scale);
  }
  return bar;
}

/** Gap between two axis labels (px). */
const AXIS_GAP = 8;
/** Height of one row of axis labels (px). */
const AXIS_ROW = 16;

/** Place the labels of every bar scale under `root` by their measured widths (after each render and resize). */
export function layoutAxes(root: HTMLElement): void {
  for (const scale of root.querySelectorAll<HTMLElement>(".bar-scale")) {
    const width = scale.clientWidth;
    if (width <= 0) continue;
    const els = [...scale.querySelectorAll<HTMLElement>(".tick")];
    const labels: AxisLabel[] = els.map((el) => ({
      id: el.dataset.tick ?? "",
      at: Number(el.dataset.at ?? "0") * width,
      width: el.getBoundingClientRect().width,
      align: (el.dataset.align as AxisLabel["align"]) ?? "center",
      priority: el.dataset.tick === "threshold" ? 2 : el.dataset.tick === "end" ? 1 : 0,
    }));
    const placed = placeAxisLabels(labels, width, AXIS_GAP);
    let rows = 1;
    els.forEach((el, i) => {
      const p = placed[i]!;
      el.hidden = p.hidden;
      el.style.left = `${p.left}px`;
      el.style.top = `${p.row * AXIS_ROW + 1}px`;
      el.dataset.row = String(p.row);
      if (!p.hidden) rows = Math.max(rows, p.row + 1);
    });
    scale.style.height = `${rows * AXIS_ROW}px`;
  }
}
