/**
 * The panel opens with its state and gets the slow parts after (issue 17): a `detailsPending`
 * state plus its details equals the full state; details of another leaf are not applied; a long
 * history is thinned for the chart without changing any number the panel shows.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded, analyzeSession, type Analysis } from "../../../src/core/rules/analyze";
import { applyPanelDetails, type HistoryModel, type HistoryPoint } from "../../../src/shared/protocol";
import { downsampleHistory } from "../../../src/viewModel/history";
import { buildPanelState, panelDetailSteps, panelStateSteps } from "../../../src/viewModel/panelState";
import { FIXTURES as ROOT } from "../../support/paths";
import { TRIM_AGENT_DIR, trimSession } from "../../support/trim-session";

const FIXTURES = path.join(ROOT, "pi-1.6.0");

/** The state built in two parts (state, then details) equals the full state; @returns the full state. */
function splitEqualsFull(file: string, analysis: Analysis) {
  const input = { file, session: analysis.session, analysis, pinned: false, updatedAt: 1 };
  const first = buildPanelState(input, { details: false });
  const full = buildPanelState(input);
  const steps = panelDetailSteps(analysis.session, first);
  let step = steps.next();
  let count = 0;
  while (!step.done) {
    count++;
    step = steps.next();
  }
  // at least one step per compaction on the path and per trim suggestion
  const compactions = full.summaries.filter((s) => s.type === "compaction").length;
  assert.ok(count >= compactions + (full.trim?.suggestions.length ?? 0), `${count} steps`);
  assert.equal(applyPanelDetails(first, step.value), true);
  assert.deepEqual(first, full);
  return full;
}

describe("panel details after the state", () => {
  it("the trim session: suggestions are sent with saves 0 and pending, their savings after", () => {
    const session = SessionFile.fromBytes(trimSession().jsonl());
    const analysis = analyzeLoaded(session, { agentDir: TRIM_AGENT_DIR, projectSettings: "never" });
    const first = buildPanelState(
      { file: "/trim.jsonl", session, analysis, pinned: false, updatedAt: 1 },
      { details: false },
    );
    assert.ok(first.trim!.suggestions.length >= 2);
    assert.ok(first.trim!.suggestions.every((s) => s.tokensSaved === 0));
    const full = splitEqualsFull("/trim.jsonl", analysis);
    assert.ok(full.trim!.suggestions.every((s) => s.tokensSaved > 0));
  });

  it("long: the state without lost items and savings, then its details, equals the full state", async () => {
    const file = path.join(FIXTURES, "long.jsonl");
    const analysis = await analyzeSession(file, { agentDir: path.join(FIXTURES, "long.agent") });
    splitEqualsFull(file, analysis);
    const input = { file, session: analysis.session, analysis, pinned: false, updatedAt: 1 };
    const first = buildPanelState(input, { details: false });
    assert.equal(first.detailsPending, true);
    assert.ok(first.summaries.every((s) => s.lost === undefined));
    const full = buildPanelState(input);
    assert.equal(full.detailsPending, undefined);
    const compactions = full.summaries.filter((s) => s.type === "compaction");
    assert.equal(compactions.length, 4);
    assert.ok(compactions.every((s) => s.lost));

    const steps = panelDetailSteps(analysis.session, first);
    let step = steps.next();
    let count = 0;
    while (!step.done) {
      count++;
      step = steps.next();
    }
    const details = step.value;
    // one step per compaction on the path and per trim suggestion
    assert.equal(count, 4 + (first.trim?.suggestions.length ?? 0));
    assert.deepEqual(Object.keys(details.lost).sort(), compactions.map((s) => s.entryId).sort());

    // another leaf's details are not applied
    const other = structuredClone(first);
    assert.equal(applyPanelDetails(other, { ...details, leafId: "elsewhere" }), false);
    assert.equal(other.detailsPending, true);

    assert.equal(applyPanelDetails(first, details), true);
    assert.deepEqual(first, full);
    // applied once
    assert.equal(applyPanelDetails(first, details), false);
  });
});

/** A history of `tokens.length` points, cold where `cold` says, with compactions before the given turns. */
function history(tokens: number[], cold: boolean[], compactionsAt: number[]): HistoryModel {
  const points: HistoryPoint[] = tokens.map((t, i) => ({
    turn: i,
    entryId: `e${i}`,
    timestamp: "",
    tokens: t,
    cache: {
      hitRate: 0.5,
      promptTokens: t,
      cacheRead: t / 2,
      ...(cold[i] ? { cold: { missedTokens: t, missedCost: t / 1e6, counted: true, causes: [] } } : {}),
    },
  }));
  return {
    turns: points.length,
    points,
    compactions: compactionsAt.map((at, i) => ({ entryId: `c${i}`, timestamp: "", tokensBefore: 1, atPoint: at })),
  };
}

describe("history for the chart", () => {
  it("at most the given points are returned as they are", () => {
    const h = history([5, 1, 9], [false, true, false], [1]);
    assert.equal(downsampleHistory(h, 3), h);
  });

  it("a long history keeps turns, compactions, every cold turn, both ends, each bucket's lowest and highest", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 60 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 19 })), {
          minLength: 1,
          maxLength: 400,
        }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (max, raw, compactionSeeds) => {
          const tokens = raw.map(([t]) => t);
          const cold = raw.map(([, c]) => c === 0); // about one turn in 20
          const at = compactionSeeds.map((s) => s % (tokens.length + 1)).sort((a, b) => a - b);
          const h = history(tokens, cold, at);
          const thin = downsampleHistory(h, max);
          if (tokens.length <= max) return assert.equal(thin, h);
          assert.equal(thin.turns, tokens.length);
          assert.equal(thin.compactions, h.compactions);
          const turns = thin.points.map((p) => p.turn);
          // a subset of the points, unchanged, in turn order
          assert.deepEqual(
            turns,
            [...turns].sort((a, b) => a - b),
          );
          assert.equal(new Set(turns).size, turns.length);
          for (const p of thin.points) assert.equal(p, h.points[p.turn]);
          const kept = new Set(turns);
          assert.ok(kept.has(0) && kept.has(tokens.length - 1));
          for (const c of h.compactions) {
            if (c.atPoint > 0) assert.ok(kept.has(c.atPoint - 1));
            if (c.atPoint < tokens.length) assert.ok(kept.has(c.atPoint));
          }
          // every cold turn, so their count and cost stay exact
          for (const p of h.points) if (p.cache?.cold) assert.ok(kept.has(p.turn));
          // the chart's extremes
          assert.ok(thin.points.some((p) => p.tokens === Math.max(...tokens)));
          assert.ok(thin.points.some((p) => p.tokens === Math.min(...tokens)));
          const extras = h.points.filter((p) => p.cache?.cold).length + 2 * h.compactions.length + 2;
          assert.ok(thin.points.length <= max + extras, `${thin.points.length} points for max ${max}`);
        },
      ),
    );
  });

  it("the state in steps: four yields between its five parts, the same state as built at once", async () => {
    const file = path.join(FIXTURES, "long.jsonl");
    const analysis = await analyzeSession(file, { agentDir: path.join(FIXTURES, "long.agent") });
    const input = { file, session: analysis.session, analysis, pinned: false, updatedAt: 1 };
    for (const details of [false, true]) {
      const steps = panelStateSteps(input, { details });
      let step = steps.next();
      let yields = 0;
      while (!step.done) {
        yields++;
        step = steps.next();
      }
      assert.equal(yields, 4);
      assert.deepEqual(step.value, buildPanelState(input, { details }));
      assert.equal(step.value.detailsPending, details ? undefined : true);
    }
  });
});
