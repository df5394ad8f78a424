/**
 * Usage, cost, cache and forecast as the gauge tooltip and the panel show them, on the shared pi
 * fixtures (pi's own footer string, checked by the conformance test, appears verbatim), and the
 * colour option (pi's footer colours beside the threshold colours).
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import { analyzeSession } from "../../../src/core/rules/analyze";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { buildGauge, levelFor } from "../../../src/viewModel/gauge";
import { buildPanelState } from "../../../src/viewModel/panelState";
import { buildUsageModel, coldCauseText, formatDuration, usageRows } from "../../../src/viewModel/usage";
import { keepInstructions, lostSummary } from "../../../src/viewModel/lostItems";
import { FIXTURES as ROOT } from "../../support/paths";

const FIXTURES = path.join(ROOT, "pi-1.6.0");
const analyze = (name: string) =>
  analyzeSession(path.join(FIXTURES, `${name}.jsonl`), { agentDir: path.join(FIXTURES, `${name}.agent`) });

describe("usage in the tooltip and the panel", () => {
  it("long: pi's footer statistics, /session tokens, cost by model, prices, cache", async () => {
    const analysis = await analyze("long");
    const m = buildUsageModel(analysis.inspect, analysis.model?.reasoning);
    assert.equal(m.footer, "↑274k ↓2.5k R274k CH50.0% $0.306");
    assert.equal(m.model, "scripted/scripted-small"); // not a reasoning model: no thinking level (pi's footer)
    assert.equal(m.prices, "$1/M in · $2/M out · $0.1/M cache read");
    const rows = Object.fromEntries(usageRows(m));
    assert.equal(rows.Usage, "↑274k ↓2.5k R274k CH50.0% $0.306 — pi's footer, every entry of the file");
    assert.equal(rows.Tokens, "input 547,261 (cached 273,610 = 50.0%) · output 2,491 · total 549,752");
    assert.match(
      rows.Cost!,
      /^\$0\.306 \(stored by pi with each answer\); scripted\/scripted-small \$0\.295, Tools\/summaries \$0\.011$/,
    );
    assert.match(
      rows.Cache!,
      /hit rate 50\.0% on the last turn · \d+ cold turns on this path .*pi's Cache Re-billed \$0\.204 \(65 misses\)/,
    );
    const view = buildGaugeView({
      session: { file: analysis.session.filePath, analysis, pinned: false, updatedAt: 0 },
      margin: 10000,
    });
    // every row is escaped Markdown (model ids come from the session); compare what it renders as
    const rendered = view.tooltip.replace(/\\([!-/:-@[-`{-~])/g, "$1");
    assert.ok(view.tooltip.includes("| Cost | \\$0\\.306"), view.tooltip);
    assert.ok(
      rendered.includes("| Usage | ↑274k ↓2.5k R274k CH50.0% $0.306 — pi's footer, every entry of the file |"),
      view.tooltip,
    );
    assert.ok(rendered.includes("| Cost | $0.306"));
  });

  it("the history points carry each request's hit rate and cold marks with causes", async () => {
    const analysis = await analyze("long");
    const state = buildPanelState({
      file: analysis.session.filePath,
      session: analysis.session,
      analysis,
      pinned: false,
      updatedAt: 0,
    });
    const points = state.history!.points;
    assert.ok(points.every((p) => p.cache && p.cache.hitRate !== null));
    const cold = points.filter((p) => p.cache?.cold);
    assert.ok(cold.length > 10);
    assert.ok(cold.some((p) => p.cache!.cold!.causes.some((c) => c.startsWith("a compaction"))));
    assert.ok(cold.every((p) => p.cache!.cold!.missedCost > 0));
    assert.equal(state.usage!.cold.count, analysis.inspect.cache.cold.count);
    // every compaction on the path says what it lost
    const compactions = state.summaries.filter((s) => s.type === "compaction");
    assert.equal(compactions.length, 4);
    assert.ok(compactions.every((s) => s.lost));
    assert.equal(
      lostSummary(compactions[0]!.lost!.totals),
      "lost 5 of 5 commands; kept all 9 file paths, all 216 numbers",
    );
    assert.match(
      keepInstructions(compactions[0]!.lost!),
      /^Keep these verbatim in the summary: `ls -la src && wc -l src\/\*\.ts`, /,
    );
  });

  it("colours: our threshold colours by default, pi's footer colours as an option", async () => {
    const analysis = await analyze("long");
    const inspect = { ...analysis.inspect, percent: 75, usageKnown: true, contextTokens: 1000, threshold: 12000 };
    assert.equal(levelFor(inspect, 1000, "threshold"), "normal");
    assert.equal(levelFor(inspect, 1000, "piFooter"), "warning");
    assert.equal(levelFor({ ...inspect, percent: 90 }, 1000, "piFooter"), "warning"); // pi: strict >
    assert.equal(levelFor({ ...inspect, percent: 90.1 }, 1000, "piFooter"), "error");
    assert.equal(levelFor({ ...inspect, percent: 95, usageKnown: false }, 1000, "piFooter"), "normal"); // pi shows ?
    assert.equal(buildGauge(inspect, 1000, "piFooter").levelBasis, "piFooter");
    const view = buildGaugeView({
      session: { file: "f", analysis: { ...analysis, inspect }, pinned: false, updatedAt: 0 },
      margin: 1000,
      colors: "piFooter",
    });
    assert.equal(view.level, "warning");
    assert.ok(view.tooltip.includes("Above 70 % of the context window (pi's footer colours"));
  });

  it("words: durations and causes", () => {
    assert.equal(formatDuration(40_000), "40s");
    assert.equal(formatDuration(12 * 60_000), "12m");
    assert.equal(formatDuration(65 * 60_000), "1h 05m");
    assert.equal(
      coldCauseText({ kind: "pause", idleMs: 12 * 60_000, ttlMs: 300_000 }),
      "a pause of 12m (the cache lives 5m)",
    );
    assert.equal(coldCauseText({ kind: "model-change", from: "a/x", to: "b/y" }), "the model changed (a/x → b/y)");
  });
});
