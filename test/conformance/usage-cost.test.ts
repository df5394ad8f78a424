/**
 * Session usage, cost and cache misses against pi 1.6.0 itself: on every session file of the
 * shared fixtures (the four pi-written sessions with their agent dirs, every case, the real
 * session) and on random usage-heavy sessions (fast-check: branches, abandoned branches, edited
 * and omitted messages, compaction and branch-summary usage, `usage` entries incl. cache warming,
 * tool results with usage, model switches, long pauses, cache writes, zero and error usage), pi's
 * footer statistics, `getSessionStats` tokens / cost / message counts, the footer's latest cache
 * hit rate, `getUsageCostBreakdown`, `computeCacheWaste` and `collectCacheMisses` must equal ours
 * exactly (same floating-point sums: both add in file order).
 *
 * Runs: PI_CONTEXT_USAGE_RUNS (default 200).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../src/core/read/session";
import { scanCache, cacheTtl } from "../../src/core/rules/cache";
import { calculateCost, pricesOf, priceLookup } from "../../src/core/rules/cost";
import { catalogModel, readModelsConfig, resolveContextWindow } from "../../src/core/rules/models";
import catalogData from "../../src/core/data/model-catalog.json";
import { sessionUsage } from "../../src/core/rules/usage";
import { FIXTURES, REPO_ROOT } from "../support/paths";
import { piUsage } from "../support/session-builder";

interface UsageOracle {
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  cost: number;
  messages: Record<string, number>;
  latestCacheHitRate: number | null;
  footerStats: string;
  breakdown: { key: string; cost: number; tokens: number }[];
  cacheWaste: { missedTokens: number; missedCost: number; missCount: number };
  cacheMisses: { entryId: string; missedTokens: number; missedCost: number; idleMs: number; modelChanged: boolean }[];
  cacheTtlMs: number;
}
interface Oracle {
  cost(request: {
    provider: string;
    modelId: string;
    usages: { input: number; output: number; cacheRead: number; cacheWrite: number; cacheWrite1h?: number }[];
  }): Promise<{ model: { cost: unknown } | null; costs: Record<string, number>[] | null }>;
  usage(request: {
    file?: string;
    entriesJsonl?: string;
    agentDir?: string;
    agentFiles?: Record<string, unknown>;
  }): Promise<UsageOracle>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_USAGE_RUNS ?? 200);
let oracle: Oracle;
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
});

/** Ours, in the oracle's shape. */
function ours(session: SessionFile, agentDir: string | undefined): UsageOracle {
  const u = sessionUsage(session.records);
  const config = readModelsConfig(agentDir ?? "/nonexistent-agent-dir");
  const prices = priceLookup((p, id) => resolveContextWindow(p, id, config).model);
  const scan = scanCache(session.records, prices, cacheTtl(undefined));
  return {
    tokens: {
      input: u.totals.input,
      output: u.totals.output,
      cacheRead: u.totals.cacheRead,
      cacheWrite: u.totals.cacheWrite,
      total: u.totalTokens,
    },
    cost: u.totals.cost,
    messages: u.messages,
    latestCacheHitRate: u.latestCacheHitRate,
    footerStats: u.footer,
    breakdown: u.byModel,
    cacheWaste: scan.reBilled,
    cacheMisses: [...scan.cold]
      .filter(([, c]) => c.counted)
      .map(([entryId, c]) => ({
        entryId,
        missedTokens: c.missedTokens,
        missedCost: c.missedCost,
        idleMs: c.idleMs,
        modelChanged: c.causes.some((k) => k.kind === "model-change"),
      })),
    cacheTtlMs: 300000,
  };
}

function compare(mine: UsageOracle, pi: UsageOracle, label: string): void {
  assert.deepEqual(mine.tokens, pi.tokens, `${label}: tokens`);
  assert.equal(mine.cost, pi.cost, `${label}: cost`);
  assert.deepEqual(mine.messages, pi.messages, `${label}: messages`);
  assert.equal(mine.latestCacheHitRate, pi.latestCacheHitRate, `${label}: latest cache hit rate`);
  assert.equal(mine.footerStats, pi.footerStats, `${label}: footer`);
  assert.deepEqual(mine.breakdown, pi.breakdown, `${label}: breakdown`);
  assert.deepEqual(mine.cacheWaste, pi.cacheWaste, `${label}: cache waste`);
  assert.deepEqual(mine.cacheMisses, pi.cacheMisses, `${label}: cache misses`);
  assert.equal(pi.cacheTtlMs, 300000, "pi's CACHE_TTL_MS");
}

function sessionFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sessionFiles(p));
    else if (e.name.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}

describe("usage and cost equal pi's footer and /session", () => {
  const files = sessionFiles(FIXTURES);

  it("every shared fixture, case and real session", async () => {
    assert.ok(files.length >= 15, `found ${files.length} session files`);
    let withUsage = 0;
    for (const file of files) {
      const agent = file.replace(/\.jsonl$/, ".agent");
      const agentDir = fs.existsSync(agent) ? agent : undefined;
      const pi = await oracle.usage({ file, ...(agentDir ? { agentDir } : {}) });
      const session = await SessionFile.open(file);
      compare(ours(session, agentDir), pi, path.relative(FIXTURES, file));
      if (pi.tokens.total > 0) withUsage++;
    }
    assert.ok(withUsage >= 6, `${withUsage} files with usage`);
  });

  it("the long fixture's totals, as pi's footer prints them", async () => {
    const session = await SessionFile.open(path.join(FIXTURES, "pi-1.6.0", "long.jsonl"));
    const u = sessionUsage(session.records);
    assert.equal(u.footer, "↑274k ↓2.5k R274k CH50.0% $0.306");
    assert.equal(u.totals.input, 273651);
    assert.equal(u.promptTokens, 273651 + 273610);
    assert.deepEqual(
      u.byModel.map((r) => r.key),
      ["scripted/scripted-small", "Tools/summaries"],
    );
  });

  it("prices: pi-ai's calculateCost on catalog models, tiered ones included", async () => {
    const keys = Object.keys((catalogData as { models: Record<string, { cost?: { tiers?: unknown[] } }> }).models);
    const tiered = keys.filter(
      (k) => (catalogData as { models: Record<string, { cost?: { tiers?: unknown[] } }> }).models[k]!.cost?.tiers,
    );
    assert.ok(tiered.length > 10, `${tiered.length} tiered models`);
    const picks = [...tiered.slice(0, 40), ...keys.filter((_, i) => i % 37 === 0)];
    let compared = 0;
    for (const key of picks) {
      const slash = key.indexOf("/");
      const provider = key.slice(0, slash);
      const modelId = key.slice(slash + 1);
      const usages = [
        { input: 1e6, output: 1e6, cacheRead: 1e6, cacheWrite: 1e6 },
        { input: 120000, output: 3000, cacheRead: 0, cacheWrite: 5000, cacheWrite1h: 2000 },
        { input: 50000, output: 10, cacheRead: 40000, cacheWrite: 0 },
        { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        { input: 100001, output: 1, cacheRead: 0, cacheWrite: 0 },
        { input: 99999, output: 1, cacheRead: 1, cacheWrite: 0 },
      ];
      const pi = await oracle.cost({ provider, modelId, usages });
      assert.ok(pi.model, key);
      const prices = pricesOf(catalogModel(provider, modelId));
      assert.ok(prices, `${key} has prices`);
      usages.forEach((u, i) => {
        const { totalFromProvider: _from, ...expected } = pi.costs![i]!;
        void _from;
        assert.deepEqual(calculateCost(prices, u), expected, `${key} usage ${i}`);
        compared++;
      });
    }
    assert.ok(compared > 200);
  });

  it(`random usage-heavy sessions (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(usageRecipe, async (recipe) => {
        const jsonl = buildUsageSession(recipe);
        const pi = await oracle.usage({ entriesJsonl: jsonl, agentFiles: { "models.json": MODELS_JSON } });
        const dir = fs.mkdtempSync(path.join(REPO_ROOT, "out", "usage-"));
        try {
          const file = path.join(dir, "s.jsonl");
          fs.writeFileSync(file, jsonl);
          fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify(MODELS_JSON));
          const session = await SessionFile.open(file);
          compare(ours(session, dir), pi, "random session");
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// random sessions with usage

const MODELS_JSON = {
  providers: {
    p: {
      baseUrl: "http://127.0.0.1:9/v1",
      api: "openai-completions",
      apiKey: "k",
      models: [
        { id: "m", contextWindow: 100000, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
        { id: "m2", contextWindow: 100000, cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 } },
      ],
    },
  },
};

type Step = { kind: number; a: number; b: number; c: number; gap: number; parent: number };
const usageRecipe = fc.array(
  fc.record({
    kind: fc.nat({ max: 99 }),
    a: fc.nat({ max: 200000 }),
    b: fc.nat({ max: 200000 }),
    c: fc.nat({ max: 99 }),
    gap: fc.oneof(fc.nat({ max: 5000 }), fc.nat({ max: 900000 })),
    parent: fc.nat({ max: 99 }),
  }),
  { minLength: 1, maxLength: 50 },
);

function usageOf(s: Step, model: { input: number; output: number; cacheRead: number; cacheWrite: number }) {
  if (s.c % 11 === 0) return piUsage();
  const prompt = 100 + (s.a % 60000);
  const cacheRead = s.c % 3 === 0 ? 0 : Math.floor(prompt * ((s.b % 100) / 100));
  const cacheWrite = s.c % 4 === 0 ? Math.floor((prompt - cacheRead) / 2) : 0;
  const input = prompt - cacheRead - cacheWrite;
  const output = 1 + (s.b % 3000);
  const cost = {
    input: (model.input / 1e6) * input,
    output: (model.output / 1e6) * output,
    cacheRead: (model.cacheRead / 1e6) * cacheRead,
    cacheWrite: (model.cacheWrite / 1e6) * cacheWrite,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: prompt + output, cost };
}

/** A session of user/assistant turns with the usage-bearing entries pi counts, in random order and shape. */
function buildUsageSession(steps: Step[]): string {
  let t = Date.parse("2026-03-01T00:00:00.000Z");
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: "usage-s", timestamp: new Date(t).toISOString(), cwd: "/tmp/u" }),
  ];
  const ids: string[] = [];
  const assistants: string[] = [];
  steps.forEach((s, i) => {
    t += s.gap;
    const id = `e${String(i).padStart(4, "0")}`;
    const parentId = ids.length === 0 ? null : s.parent < 85 ? ids[ids.length - 1]! : ids[s.parent % ids.length]!;
    const base = { id, parentId, timestamp: new Date(t).toISOString() };
    const model = s.c % 7 === 0 ? "m2" : "m";
    const prices = MODELS_JSON.providers.p.models[model === "m" ? 0 : 1]!.cost;
    const k = s.kind;
    let entry: Record<string, unknown>;
    if (k < 25)
      entry = {
        type: "message",
        ...base,
        message: { role: "user", content: [{ type: "text", text: `q${i}` }], timestamp: t },
      };
    else if (k < 62) {
      const stopReason = s.c % 11 === 0 ? "error" : s.c % 5 === 0 ? "toolUse" : "stop";
      const content: unknown[] = [{ type: "text", text: `a${i}` }];
      if (stopReason === "toolUse")
        content.push({ type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: "ls" } });
      const message: Record<string, unknown> = {
        role: "assistant",
        content,
        api: "openai-completions",
        provider: "p",
        model,
        usage: usageOf(s, prices),
        stopReason,
        timestamp: t,
      };
      if (s.c % 13 === 0) message.responseModel = "routed";
      entry = { type: "message", ...base, message };
      assistants.push(id);
    } else if (k < 72) {
      const message: Record<string, unknown> = {
        role: "toolResult",
        toolCallId: `c${i}`,
        toolName: "bash",
        content: [{ type: "text", text: "ok" }],
        isError: false,
        timestamp: t,
      };
      if (s.c % 3 === 0) message.usage = usageOf({ ...s, c: 1 }, prices);
      entry = { type: "message", ...base, message };
    } else if (k < 78)
      entry = {
        type: "compaction",
        ...base,
        summary: "S",
        firstKeptEntryId: ids[s.a % Math.max(1, ids.length)] ?? id,
        tokensBefore: s.a,
        ...(s.c % 2 === 0 ? { usage: usageOf({ ...s, c: 1 }, prices) } : {}),
        fromHook: false,
      };
    else if (k < 82)
      entry = {
        type: "branch_summary",
        ...base,
        fromId: ids[s.b % Math.max(1, ids.length)] ?? "root",
        summary: "B",
        ...(s.c % 2 === 0 ? { usage: usageOf({ ...s, c: 1 }, prices) } : {}),
      };
    else if (k < 87)
      entry = {
        type: "usage",
        ...base,
        kind: s.c % 3 === 0 ? "other" : "cache_warm",
        provider: "p",
        model,
        usage: usageOf({ ...s, c: 1 + (s.c % 2) }, prices),
      };
    else if (k < 91 && assistants.length)
      entry = { type: "context_edit", ...base, targetId: assistants[s.a % assistants.length], replacement: null };
    else if (k < 95) entry = { type: "thinking_level_change", ...base, thinkingLevel: ["off", "low", "high"][s.a % 3] };
    else entry = { type: "model_change", ...base, provider: "p", modelId: model };
    lines.push(JSON.stringify(entry));
    ids.push(id);
  });
  return `${lines.join("\n")}\n`;
}
