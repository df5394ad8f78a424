/**
 * The history sparkline: the context size every assistant response reported, compactions as
 * vertical marks (title: `tokensBefore`), the auto-compaction threshold dashed, its values (the top
 * of the scale, 0 and the threshold; the first and the last turn); under it the
 * prompt-cache strip: each request's cache hit rate as a bar, cold turns in the error colour with
 * their cost and likely cause in the title (and a ring on the sparkline). SVG built with `s()`;
 * text only through `textContent`.
 */

import type { GaugeModel, HistoryModel, HistoryPoint, UsageModel } from "../../src/shared/protocol";
import { formatCount, formatDollars, formatTokens, pluralText } from "../../src/shared/format";
import { h, s } from "../dom";
import * as l10n from "@vscode/l10n";

/** The viewBox (the SVG is stretched to the panel's width). */
const W = 600;
const H = 64;
const PAD = 4;

const CACHE_H = 18;

/** A cold turn's title: what was re-sent, what it cost, why. */
function coldTitle(p: HistoryPoint): string {
  const c = p.cache!;
  const cold = c.cold!;
  return [
    l10n.t(
      "Turn {0} ({1}): cache cold — {2} tokens re-sent, {3} above the cache-read price{4}",
      p.turn + 1,
      p.entryId,
      formatCount(cold.missedTokens),
      formatDollars(cold.missedCost),
      cold.counted ? "" : l10n.t(" (after a compaction: not in pi's Cache Re-billed)"),
    ),
    l10n.t(
      "hit rate {0}% ({1} of {2} prompt tokens from the cache)",
      ((c.hitRate ?? 0) * 100).toFixed(1),
      formatCount(c.cacheRead),
      formatCount(c.promptTokens),
    ),
    ...cold.causes.map((cause) => `likely: ${cause}`),
  ].join("\n");
}

/** A cache bar's title: a cold turn's {@link coldTitle}, else its hit rate. */
function barTitle(p: HistoryPoint): string {
  const c = p.cache!;
  return c.cold
    ? coldTitle(p)
    : l10n.t(
        "Turn {0}: cache hit rate {1}% ({2} of {3} prompt tokens)",
        p.turn + 1,
        ((c.hitRate ?? 0) * 100).toFixed(1),
        formatCount(c.cacheRead),
        formatCount(c.promptTokens),
      );
}

/**
 * The cache strip: one bar per point, height = hit rate (`turns`: all points, shown or not).
 * A bar gets its `<title>` when the pointer first comes over it: a long session has up to 600
 * bars (the host thins the chart to `HISTORY_CHART_POINTS`), and their titles were a third of the
 * chart's render.
 */
function renderCacheStrip(points: HistoryPoint[], turns: number, x: (turn: number) => number): SVGElement {
  const strip = s("svg", {
    viewBox: `0 0 ${W} ${CACHE_H}`,
    preserveAspectRatio: "none",
    class: "spark-cache",
    role: "img",
    "aria-label": l10n.t("Prompt cache hit rate per turn, {0} cold turns", points.filter((p) => p.cache?.cold).length),
    "data-testid": "history-cache",
  });
  const width = Math.max(1, Math.min(8, (W - 2 * PAD) / Math.max(1, turns) - 1));
  points.forEach((p, i) => {
    const rate = p.cache?.hitRate;
    if (rate === null || rate === undefined) return;
    const cold = Boolean(p.cache!.cold);
    // the bar is the hit rate; a cold turn keeps at least a third of the height so it stays visible
    const height = Math.max(cold ? (CACHE_H - 2) / 3 : 1, rate * (CACHE_H - 2));
    strip.appendChild(
      s("rect", {
        x: (x(p.turn) - width / 2).toFixed(1),
        y: (CACHE_H - height).toFixed(1),
        width: width.toFixed(1),
        height: height.toFixed(1),
        class: cold ? "cache-bar cold" : "cache-bar",
        "data-point": i,
      }),
    );
  });
  strip.addEventListener("pointerover", (ev) => {
    const bar = ev.target as SVGElement;
    const p = points[Number(bar.dataset?.point)];
    if (!p || bar.firstChild) return;
    const title = s("title");
    title.textContent = barTitle(p);
    bar.appendChild(title);
  });
  return strip;
}

/**
 * The sparkline and its caption; y scale = max(window, the points, the compactions' tokensBefore);
 * x = each point's `turn` among all `turns` (a long history comes thinned, every cold turn kept).
 */
export function renderHistory(history: HistoryModel, g: GaugeModel, usage: UsageModel | null = null): HTMLElement {
  const points = history.points;
  const turns = Math.max(history.turns, points.length);
  const max = Math.max(
    g.window ?? 0,
    ...points.map((p) => p.tokens),
    ...history.compactions.map((c) => c.tokensBefore ?? 0),
    1,
  );
  const x = (turn: number) => (turns <= 1 ? W / 2 : PAD + (turn * (W - 2 * PAD)) / (turns - 1));
  const y = (t: number) => H - PAD - (t / max) * (H - 2 * PAD);
  const svg = s("svg", {
    viewBox: `0 0 ${W} ${H}`,
    preserveAspectRatio: "none",
    class: "spark",
    role: "img",
    "aria-label": l10n.t("Context tokens per turn, {0} turns, {1} compactions", turns, history.compactions.length),
  });
  if (g.threshold !== null)
    svg.appendChild(s("line", { x1: 0, x2: W, y1: y(g.threshold), y2: y(g.threshold), class: "spark-threshold" }));
  for (const c of history.compactions) {
    const cx = c.atPoint <= 0 ? PAD : c.atPoint >= turns ? W - PAD : (x(c.atPoint - 1) + x(c.atPoint)) / 2;
    const line = s("line", { x1: cx, x2: cx, y1: 0, y2: H, class: "spark-compaction" });
    const title = s("title");
    title.textContent = `compaction ${c.entryId}${c.tokensBefore !== null ? l10n.t(" — tokensBefore {0}", formatCount(c.tokensBefore)) : ""}`;
    line.appendChild(title);
    svg.appendChild(line);
  }
  const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.turn).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(" ");
  const last = points[points.length - 1]!;
  svg.appendChild(
    s("path", {
      d: `${d} L${x(last.turn).toFixed(1)},${H} L${x(points[0]!.turn).toFixed(1)},${H} Z`,
      class: "spark-area",
    }),
  );
  svg.appendChild(s("path", { d, class: "spark-line" }));
  svg.appendChild(s("circle", { cx: x(last.turn), cy: y(last.tokens), r: 2.5, class: "spark-dot" }));
  const caching = Boolean(usage?.reportedCache) && points.some((p) => p.cache);
  if (caching)
    points.forEach((p) => {
      if (!p.cache?.cold) return;
      const ring = s("circle", { cx: x(p.turn), cy: y(p.tokens), r: 2.5, class: "spark-cold" });
      const title = s("title");
      title.textContent = coldTitle(p);
      ring.appendChild(title);
      svg.appendChild(ring);
    });
  const coldCount = points.filter((p) => p.cache?.cold).length;
  const coldCost = points.reduce((sum, p) => sum + (p.cache?.cold?.missedCost ?? 0), 0);
  const caption = h(
    "div",
    { class: "spark-caption muted" },
    h("span", null, l10n.t("Context per turn · {0}", pluralText(turns, l10n.t("{0} turn"), l10n.t("{0} turns")))),
    h(
      "span",
      { class: "legend" },
      h("span", { class: "legend-compaction" }),
      pluralText(history.compactions.length, l10n.t("{0} compaction"), l10n.t("{0} compactions")),
    ),
    g.threshold !== null
      ? h("span", { class: "legend" }, h("span", { class: "legend-threshold" }), l10n.t("threshold"))
      : null,
    caching ? h("span", { class: "legend" }, h("span", { class: "legend-cache" }), l10n.t("cache hit rate")) : null,
    caching
      ? h(
          "span",
          {
            class: "legend",
            "data-testid": "history-cold",
            title: usage ? l10n.t("Cache lifetime assumed: {0}", usage.cacheTtl.source) : undefined,
          },
          h("span", { class: "legend-cold" }),
          coldCount
            ? `${pluralText(coldCount, l10n.t("{0} cold turn"), l10n.t("{0} cold turns"))} · ${formatDollars(coldCost)}`
            : l10n.t("no cold turn"),
        )
      : null,
  );
  return h(
    "div",
    { class: "history", "data-testid": "history" },
    h("div", { class: "spark-frame" }, svg, ...yAxis(max, g.threshold, y)),
    caching ? renderCacheStrip(points, turns, x) : null,
    xAxis(turns),
    caption,
  );
}

/**
 * The chart's values: the top of the scale and 0 on the left, the auto-compaction threshold at its
 * dashed line on the right (HTML over the stretched SVG, whose own text would be distorted).
 */
function yAxis(max: number, threshold: number | null, y: (tokens: number) => number): HTMLElement[] {
  const at = (tokens: number) => `${(y(tokens) / H) * 100}%`;
  const label = (cls: string, testid: string, text: string, top: string) => {
    const el = h("span", { class: `spark-y spark-y-${cls}`, "data-testid": testid, "aria-hidden": "true" }, text);
    el.style.top = top;
    return el;
  };
  const out = [label("max", "history-y-max", formatTokens(max), at(max)), label("zero", "history-y-zero", "0", at(0))];
  if (threshold !== null && threshold < max)
    out.push(
      label("threshold", "history-y-threshold", l10n.t("auto-compact {0}", formatTokens(threshold)), at(threshold)),
    );
  return out;
}

/** The turns under the chart: the first and the last (the x scale of the chart and the cache strip). */
function xAxis(turns: number): HTMLElement {
  return h(
    "div",
    { class: "spark-x muted", "aria-hidden": "true" },
    h("span", { "data-testid": "history-x-first" }, l10n.t("turn {0}", 1)),
    turns > 1 ? h("span", { "data-testid": "history-x-last" }, l10n.t("turn {0}", formatCount(turns))) : null,
  );
}
