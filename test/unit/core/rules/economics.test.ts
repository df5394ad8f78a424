/**
 * The economics rules on hand-made inputs whose answers are worked out here: prices (pi-ai's
 * numbers), the reduction break-even, the forecast, the cache report's causes and per-turn rates,
 * usage totals with broken entries. pi's own numbers on real files are in
 * `test/conformance/usage-cost.test.ts`.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { cacheReport, cacheTtl, CACHE_TTL_MS } from "../../../../src/core/rules/cache";
import { calculateCost, pricesOf, priceTokens, NO_PRICES } from "../../../../src/core/rules/cost";
import { buildProjection } from "../../../../src/core/rules/context";
import { forecastCompaction, hasForecast } from "../../../../src/core/rules/forecast";
import { catalogModel } from "../../../../src/core/rules/models";
import { cacheStateAt, priceReduction } from "../../../../src/core/rules/reduction";
import { sessionUsage } from "../../../../src/core/rules/usage";
import { analyzeSession } from "../../../../src/core/rules/analyze";
import { formatDollars } from "../../../../src/shared/format";
import { FIXTURES } from "../../../support/paths";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-econ-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const MINI = { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 };

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

describe("prices", () => {
  it("pi-ai's calculateCost: 1M of each for claude-sonnet-4-5 = $22.05 (pi 1.6.0, run)", () => {
    const prices = pricesOf(catalogModel("anthropic", "claude-sonnet-4-5"));
    assert.deepEqual(prices, SONNET);
    close(calculateCost(prices!, { input: 1e6, output: 1e6, cacheRead: 1e6, cacheWrite: 1e6 }).total, 22.05, "total");
    // 1-hour cache writes at twice the input rate
    close(
      calculateCost(SONNET, { input: 0, output: 0, cacheRead: 0, cacheWrite: 1e6, cacheWrite1h: 1e6 }).total,
      6,
      "1h",
    );
  });

  it("tiers apply above their prompt size; malformed prices are unknown, never $0", () => {
    const tiered = { ...MINI, tiers: [{ inputTokensAbove: 1000, input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 }] };
    close(priceTokens(tiered, { input: 1000 }), 0.00015, "at the boundary: base");
    close(priceTokens(tiered, { input: 1001 }), 0.001001, "above: tier");
    assert.equal(pricesOf({ cost: { input: 1, output: "2", cacheRead: 0, cacheWrite: 0 } }), undefined);
    assert.equal(pricesOf({ cost: { input: -1, output: 2, cacheRead: 0, cacheWrite: 0 } }), undefined);
    assert.equal(pricesOf(undefined), undefined);
    assert.deepEqual(pricesOf({ cost: { ...MINI, tiers: [{ inputTokensAbove: "x" }] } }), MINI);
  });

  it("dollars: pi's three decimals, two significant digits below a tenth of a cent", () => {
    assert.equal(formatDollars(0.3059939999999999), "$0.306");
    assert.equal(formatDollars(0.00031), "$0.00031");
    assert.equal(formatDollars(0.0000456), "$0.000046");
    assert.equal(formatDollars(0), "$0.000");
    assert.equal(formatDollars(Number.NaN), "$?");
  });
});

describe("reduction pricing (compaction and trim)", () => {
  const base = { tokensBefore: 100000, tokensAfter: 20000, sessionPrices: SONNET };
  const request = { inputTokens: 80000, outputTokens: 2000, prices: MINI };

  it("warm cache: the saved tokens are cache reads; re-writing the kept part costs once", () => {
    const e = priceReduction({ ...base, request, cache: "warm" });
    assert.equal(e.savedTokensPerRequest, 80000);
    close(e.requestCost, 0.15 * 0.08 + 0.6 * 0.002, "summary request");
    close(e.savedCostPerRequest, 80000 * 0.3e-6, "per request");
    close(e.cacheRewriteCost, 20000 * (3.75 - 0.3) * 1e-6, "re-write");
    // n·0.024 − 0.069 − 0.0132 ≥ 0 first at n = 4
    assert.equal(e.breakEvenRequests, 4);
    assert.equal(e.breakEvenBasis, "cost");
    assert.deepEqual(e.warmRate, { perMillion: 0.3, kind: "cacheRead" });
  });

  it("no caching: every saved token is an input token; an expired cache has no re-write penalty", () => {
    const none = priceReduction({ ...base, request, cache: "none" });
    close(none.savedCostPerRequest, 0.24, "per request");
    assert.equal(none.breakEvenRequests, 1);
    const cold = priceReduction({ ...base, request, cache: "cold" });
    close(cold.cacheRewriteCost, -80000 * (3.75 - 0.3) * 1e-6, "cold: the first request saves at the write rate");
    assert.equal(cold.breakEvenRequests, 1);
  });

  it("a trim: no request, only the part after the change is re-written", () => {
    const e = priceReduction({
      tokensBefore: 50000,
      tokensAfter: 45000,
      rewrittenTokens: 10000,
      sessionPrices: SONNET,
      cache: "warm",
    });
    assert.equal(e.requestCost, 0);
    close(e.cacheRewriteCost, 10000 * 3.45e-6, "re-write");
    // n·5000·0.3e-6 ≥ 0.0345 → n = 23
    assert.equal(e.breakEvenRequests, 23);
  });

  it("without prices the break-even is in tokens; nothing saved = no break-even", () => {
    const e = priceReduction({
      tokensBefore: 100000,
      tokensAfter: 20000,
      request: { inputTokens: 80000, outputTokens: 2000 },
      cache: "warm",
    });
    assert.equal(e.requestCost, null);
    assert.equal(e.savedCostPerRequest, null);
    assert.equal(e.breakEvenBasis, "tokens");
    assert.equal(e.breakEvenRequests, 2); // 2 × 80,000 ≥ 82,000
    const none = priceReduction({ tokensBefore: 1000, tokensAfter: 1200, cache: "none", sessionPrices: SONNET });
    assert.equal(none.breakEvenBasis, "none");
    assert.equal(none.breakEvenRequests, null);
  });

  it("the cache state from the last request's time and the lifetime", () => {
    assert.equal(cacheStateAt(false, 0, CACHE_TTL_MS, 1), "none");
    assert.equal(cacheStateAt(true, 1000, CACHE_TTL_MS, 1000 + CACHE_TTL_MS - 1), "warm");
    assert.equal(cacheStateAt(true, 1000, CACHE_TTL_MS, 1000 + CACHE_TTL_MS), "cold");
    assert.match(cacheTtl("anthropic").source, /300 s/);
    assert.match(cacheTtl("openai").source, /5–10 min/);
  });
});

/** A session file from entry objects (header added), opened. */
async function sessionOf(name: string, entries: Record<string, unknown>[]): Promise<SessionFile> {
  const file = path.join(tmp, `${name}.jsonl`);
  const header = { type: "session", version: 3, id: name, timestamp: "2026-05-01T10:00:00.000Z", cwd: "/tmp/p" };
  fs.writeFileSync(file, [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n");
  return SessionFile.open(file);
}

const T0 = Date.parse("2026-05-01T10:00:00.000Z");
function usage(input: number, cacheRead: number, cacheWrite = 0, output = 100) {
  const c = {
    input: (3 * input) / 1e6,
    output: (15 * output) / 1e6,
    cacheRead: (0.3 * cacheRead) / 1e6,
    cacheWrite: (3.75 * cacheWrite) / 1e6,
    total: 0,
  };
  c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost: c };
}
let seq = 0;
function chain(): {
  user: (t: number) => Record<string, unknown>;
  asst: (t: number, u: unknown, model?: string) => Record<string, unknown>;
  other: (t: number, e: Record<string, unknown>) => Record<string, unknown>;
  ids: string[];
} {
  const ids: string[] = [];
  const next = (t: number, body: Record<string, unknown>) => {
    const id = `id${++seq}`;
    const entry = { ...body, id, parentId: ids[ids.length - 1] ?? null, timestamp: new Date(T0 + t).toISOString() };
    ids.push(id);
    return entry;
  };
  return {
    ids,
    user: (t) => next(t, { type: "message", message: { role: "user", content: "go", timestamp: T0 + t } }),
    asst: (t, u, model = "claude-sonnet-4-5") =>
      next(t, {
        type: "message",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "ok" }],
          provider: "anthropic",
          model,
          usage: u,
          stopReason: "stop",
          timestamp: T0 + t,
        },
      }),
    other: (t, e) => next(t, e),
  };
}

describe("the cache report", () => {
  it("hit rates per turn, cold turns with their causes and costs, pi's count kept apart", async () => {
    const c = chain();
    const entries = [
      c.user(0),
      c.asst(1000, usage(200, 0, 10000)), // writes the cache
      c.user(2000),
      c.asst(3000, usage(300, 10000, 200)), // warm
      c.user(10 * 60_000), // a 10-minute pause
      c.asst(10 * 60_000 + 1000, usage(10500, 0, 0)), // cold: pause
      c.other(10 * 60_000 + 2000, { type: "thinking_level_change", thinkingLevel: "high" }),
      c.user(10 * 60_000 + 3000),
      c.asst(10 * 60_000 + 4000, usage(11000, 0, 0)), // cold: thinking change
      c.user(10 * 60_000 + 5000),
      c.asst(10 * 60_000 + 6000, usage(100, 11000, 0), "claude-opus-4-5"), // model change but warm: not cold
    ];
    const compaction = c.other(10 * 60_000 + 7000, {
      type: "compaction",
      summary: "S",
      firstKeptEntryId: c.ids[9],
      tokensBefore: 11200,
    });
    entries.push(
      compaction,
      c.user(10 * 60_000 + 8000),
      c.asst(10 * 60_000 + 9000, usage(3000, 0, 0), "claude-opus-4-5"),
    );
    const session = await sessionOf("cache", entries);
    const report = cacheReport(session.records, buildProjection(session).path, NO_PRICES, "anthropic");
    const turns = report.turns;
    assert.equal(turns.length, 6);
    assert.deepEqual(
      turns.map((t) => t.hitRate),
      [0, 10000 / 10500, 0, 0, 11000 / 11100, 0],
    );
    const causes = turns.map((t) => t.cold?.causes.map((k) => k.kind).join("+") ?? "");
    assert.deepEqual(causes, ["", "", "pause", "thinking-change", "", "compaction"]);
    assert.equal(turns[2]!.cold!.missedTokens, 10500 - 0);
    // nothing read from the cache and no price known: pi prices the read rate at 0
    close(turns[2]!.cold!.missedCost, 10500 * 3e-6, "pause miss");
    const priced = cacheReport(session.records, buildProjection(session).path, () => SONNET, "anthropic");
    close(priced.turns[2]!.cold!.missedCost, 10500 * (3 - 0.3) * 1e-6, "pause miss at the catalog's read rate");
    // pi counts the pause and the thinking change; the turn after the compaction is ours only
    assert.deepEqual(
      turns.map((t) => t.cold?.counted ?? null),
      [null, null, true, true, null, false],
    );
    assert.equal(report.reBilled.missCount, 2);
    assert.equal(report.cold.count, 3);
    // after the compaction: min(11100, 3000) − 0 = 3000 missed
    assert.equal(turns[5]!.cold!.missedTokens, 3000);
    assert.equal(report.reportedCache, true);
    const pause = turns[2]!.cold!.causes[0] as { kind: "pause"; idleMs: number; ttlMs: number };
    assert.equal(pause.idleMs, 10 * 60_000 + 1000 - 3000);
    assert.equal(pause.ttlMs, CACHE_TTL_MS);
  });

  it("a provider that never reports caching has no cold turns", async () => {
    const c = chain();
    const session = await sessionOf("nocache", [
      c.user(0),
      c.asst(1, usage(5000, 0)),
      c.user(2),
      c.asst(3, usage(9000, 0)),
    ]);
    const report = cacheReport(session.records, buildProjection(session).path, NO_PRICES, "x");
    assert.equal(report.reportedCache, false);
    assert.equal(report.cold.count, 0);
  });
});

describe("usage totals", () => {
  it("counts tool results' usage and reports entries pi could not read", async () => {
    const c = chain();
    const broken = c.asst(3, undefined);
    const tool = c.other(4, {
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: "x",
        toolName: "t",
        content: [],
        isError: false,
        usage: usage(5, 0, 0, 5),
        timestamp: T0,
      },
    });
    const session = await sessionOf("usage", [c.user(0), c.asst(1, usage(1000, 500, 50)), broken, tool]);
    const u = sessionUsage(session.records);
    assert.deepEqual(u.totals, {
      input: 1005,
      output: 105,
      cacheRead: 500,
      cacheWrite: 50,
      cost: usage(1000, 500, 50).cost.total + usage(5, 0, 0, 5).cost.total,
    });
    assert.deepEqual(u.incomplete, [broken.id]);
    assert.equal(u.latestCacheHitRate, null); // the latest assistant has no usage
    assert.equal(u.promptTokens, 1555);
    assert.deepEqual(
      u.byModel.map((r) => r.key),
      ["anthropic/claude-sonnet-4-5", "Tools/summaries"],
    );
  });
});

describe("the forecast", () => {
  function path(points: number[], compactionAfter?: number) {
    return points.flatMap((tokens, i) => {
      const r = {
        type: "message",
        role: "assistant",
        id: `a${i}`,
        stopReason: "stop",
        usageTokens: tokens,
      } as unknown as import("../../../../src/core/read/entries").EntryRecord;
      return compactionAfter === i ? [r, { type: "compaction", id: "c" } as never] : [r];
    });
  }
  const input = { tokens: 4200, threshold: 10000, autoCompaction: true, usageKnown: true };

  it("mean growth of the recent turns since the last compaction", () => {
    const f = forecastCompaction(path([1000, 2000, 3000, 4000]), input);
    assert.ok(hasForecast(f));
    assert.equal(f.growthPerTurn, 1000);
    assert.equal(f.turns, 6); // 5,800 tokens left at 1,000 per turn
    assert.equal(f.basisTurns, 3);
    assert.deepEqual([f.fromEntryId, f.toEntryId], ["a0", "a3"]);
    // only turns after the compaction count: 3 differences needed
    assert.deepEqual(forecastCompaction(path([9000, 500, 1500, 2500], 0), input), {
      unavailable: "fewer than 3 turns since the last compaction",
    });
  });

  it("only when meaningful", () => {
    const p = path([1000, 2000, 3000, 4000]);
    assert.ok(!hasForecast(forecastCompaction(p, { ...input, autoCompaction: false })));
    assert.ok(!hasForecast(forecastCompaction(p, { ...input, usageKnown: false })));
    assert.ok(!hasForecast(forecastCompaction(p, { ...input, threshold: null })));
    assert.ok(!hasForecast(forecastCompaction(p, { ...input, tokens: 10001 })));
    assert.ok(!hasForecast(forecastCompaction(path([4000, 3000, 3500, 2000]), input)));
    assert.ok(!hasForecast(forecastCompaction(path([1000, 1001, 1002, 1003]), { ...input, threshold: 1_000_000 })));
  });

  it("on the long fixture's leaf, with the inspect fields", async () => {
    const dir = `${FIXTURES}/pi-1.6.0`;
    const analysis = await analyzeSession(`${dir}/long.jsonl`, { agentDir: `${dir}/long.agent` });
    const r = analysis.inspect;
    assert.ok(r.usage.totals.cost > 0.3);
    assert.equal(r.cost.total, r.usage.totals.cost);
    assert.deepEqual(r.cost.prices, { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 });
    assert.ok(r.cache.turns.length > 0);
    const json = JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
    for (const key of ["usage", "cost", "cache", "forecast"]) assert.ok(key in json, key);
  });
});
