/**
 * The history sparkline: the context size every assistant response reported, compactions as
 * vertical marks (title: `tokensBefore`), the auto-compaction threshold dashed. SVG built with
 * `s()`; text only through `textContent`.
 */

import type { GaugeModel, HistoryModel } from "../../src/shared/protocol";
import { formatCount, plural } from "../../src/shared/format";
import { h, s } from "../dom";

/** The viewBox (the SVG is stretched to the panel's width). */
const W = 600;
const H = 64;
const PAD = 4;

/** The sparkline and its caption; y scale = max(window, the points, the compactions' tokensBefore). */
export function renderHistory(history: HistoryModel, g: GaugeModel): HTMLElement {
  const points = history.points;
  const max = Math.max(
    g.window ?? 0,
    ...points.map((p) => p.tokens),
    ...history.compactions.map((c) => c.tokensBefore ?? 0),
    1,
  );
  const x = (i: number) => (points.length <= 1 ? W / 2 : PAD + (i * (W - 2 * PAD)) / (points.length - 1));
  const y = (t: number) => H - PAD - (t / max) * (H - 2 * PAD);
  const svg = s("svg", {
    viewBox: `0 0 ${W} ${H}`,
    preserveAspectRatio: "none",
    class: "spark",
    role: "img",
    "aria-label": `Context tokens per turn, ${points.length} turns, ${history.compactions.length} compactions`,
  });
  if (g.threshold !== null)
    svg.appendChild(s("line", { x1: 0, x2: W, y1: y(g.threshold), y2: y(g.threshold), class: "spark-threshold" }));
  for (const c of history.compactions) {
    const cx = c.atPoint <= 0 ? PAD : c.atPoint >= points.length ? W - PAD : (x(c.atPoint - 1) + x(c.atPoint)) / 2;
    const line = s("line", { x1: cx, x2: cx, y1: 0, y2: H, class: "spark-compaction" });
    const title = s("title");
    title.textContent = `compaction ${c.entryId}${c.tokensBefore !== null ? ` — tokensBefore ${formatCount(c.tokensBefore)}` : ""}`;
    line.appendChild(title);
    svg.appendChild(line);
  }
  const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(" ");
  svg.appendChild(
    s("path", { d: `${d} L${x(points.length - 1).toFixed(1)},${H} L${x(0).toFixed(1)},${H} Z`, class: "spark-area" }),
  );
  svg.appendChild(s("path", { d, class: "spark-line" }));
  const last = points[points.length - 1]!;
  svg.appendChild(s("circle", { cx: x(points.length - 1), cy: y(last.tokens), r: 2.5, class: "spark-dot" }));
  const caption = h(
    "div",
    { class: "spark-caption muted" },
    h("span", null, `Context per turn · ${plural(points.length, "turn")}`),
    h(
      "span",
      { class: "legend" },
      h("span", { class: "legend-compaction" }),
      plural(history.compactions.length, "compaction"),
    ),
    g.threshold !== null ? h("span", { class: "legend" }, h("span", { class: "legend-threshold" }), "threshold") : null,
  );
  return h("div", { class: "history", "data-testid": "history" }, svg, caption);
}
