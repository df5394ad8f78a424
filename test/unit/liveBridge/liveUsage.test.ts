/** pi's live numbers over our analysis (`src/liveBridge/liveUsage.ts`) and the gauge's live badge. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { BRIDGE_VERSION, type BridgeState } from "../../../src/bridge/protocol";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { applyLiveState, matchingState } from "../../../src/liveBridge/liveUsage";
import { formatGaugeTokens } from "../../../src/shared/format";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { windowSourceText } from "../../../src/viewModel/sourceText";
import { buildUsageModel, usageRows } from "../../../src/viewModel/usage";
import { SessionBuilder } from "../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-live-usage-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

const SCRIPTED = { provider: "scripted", model: "small" };
const answer = (tokens: number) => ({ text: "ok", ...SCRIPTED, usage: { input: tokens - 10, output: 10 } });

/** A session with one answer of `tokens` usage on the scripted model (window from models.json), then `more` entries. */
function sessionWith(tokens: number, more: object[] = []): SessionFile {
  const b = new SessionBuilder({ id: "s", cwd: "/w" })
    .model("m", "scripted", "small")
    .user("u", [{ type: "text", text: "hi" }])
    .assistant("a", answer(tokens))
    .append(...more);
  return SessionFile.fromBytes(b.jsonl());
}

/** A session of `turns` answers on the scripted model whose usage grows by `step` tokens per turn from `start`. */
function growingSession(start: number, step: number, turns: number): SessionFile {
  const b = new SessionBuilder({ id: "s", cwd: "/w" }).model("m", "scripted", "small");
  for (let t = 0; t < turns; t++)
    b.user(`u${t}`, [{ type: "text", text: `q${t}` }]).assistant(`a${t}`, answer(start + t * step));
  return SessionFile.fromBytes(b.jsonl());
}

function agentWith(window: number, settings: object = {}): string {
  const dir = fresh("agent");
  fs.mkdirSync(dir);
  fs.writeFileSync(
    path.join(dir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: "http://127.0.0.1:1/v1",
          api: "openai-completions",
          apiKey: "k",
          models: [
            {
              id: "small",
              contextWindow: window,
              maxTokens: 1000,
              cost: { input: 0.7, output: 2.1, cacheRead: 0.07, cacheWrite: 0 },
            },
          ],
        },
      },
    }),
  );
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
  return dir;
}

function state(over: Partial<BridgeState>): BridgeState {
  return {
    seq: 3,
    at: 0,
    sessionFile: "/s.jsonl",
    leafId: "a",
    idle: true,
    activity: "idle",
    usage: { tokens: 9000, contextWindow: 16000, percent: 56.25 },
    model: { provider: "scripted", id: "small", contextWindow: 16000 },
    compaction: { enabled: true, reserveTokens: 4000, keepRecentTokens: 1000 },
    ...over,
  };
}

describe("pi's live numbers over our analysis", () => {
  const source = { pid: 4242, piVersion: "1.6.0", bridgeVersion: BRIDGE_VERSION };
  it("forecasts the turns until auto-compaction against the running pi's threshold, not the file's", () => {
    // our view: window 400,000 (models.json), reserve 16,384 → threshold 383,616; usage 200k, +1,000 per turn
    const analysis = analyzeLoaded(growingSession(195_000, 1000, 6), { agentDir: agentWith(400_000) });
    const own = analysis.inspect.forecast;
    assert.ok("turns" in own, JSON.stringify(own));
    assert.equal(own.threshold, 400_000 - 16384);
    assert.equal(own.turns, 184);
    // the running pi: window 262,144, reserve 16,384 → threshold 245,760; 200,000 now → 45,760 left
    const live = applyLiveState(
      analysis,
      state({
        usage: { tokens: 200_000, contextWindow: 262_144, percent: (200_000 / 262_144) * 100 },
        model: { provider: "scripted", id: "small", contextWindow: 262_144 },
        compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
      }),
      source,
    ).inspect;
    const f = live.forecast;
    assert.ok("turns" in f, JSON.stringify(f));
    assert.equal(f.threshold, 245_760);
    assert.equal(f.remainingTokens, 45_760);
    assert.equal(f.growthPerTurn, 1000);
    assert.equal(f.turns, 46);
    // auto-compaction off in the running pi: no forecast
    const off = applyLiveState(
      analysis,
      state({
        usage: { tokens: 200_000, contextWindow: 262_144, percent: 76.3 },
        compaction: { enabled: false, reserveTokens: 16384, keepRecentTokens: 20000 },
      }),
      source,
    ).inspect.forecast;
    assert.deepEqual(off, { unavailable: "auto-compaction is off" });
  });

  it("prices the current model at the running pi's catalog prices when its bridge sends them", () => {
    // the installed catalog (models.json here) says 0.7/2.1/0.07; the running pi (another version) 0.5/1.5/0.05
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(32000) });
    assert.deepEqual(analysis.inspect.cost.prices, { input: 0.7, output: 2.1, cacheRead: 0.07, cacheWrite: 0 });
    const running = { input: 0.5, output: 1.5, cacheRead: 0.05, cacheWrite: 0 };
    const live = applyLiveState(
      analysis,
      state({ model: { provider: "scripted", id: "small", contextWindow: 16000, cost: running } }),
      source,
    );
    assert.deepEqual(live.inspect.cost.prices, running);
    assert.deepEqual(live.prices("scripted", "small"), running, "what the previews price with");
    assert.deepEqual(live.inspect.cost.total, analysis.inspect.cost.total, "the session's cost stays what pi stored");
    assert.deepEqual(analysis.inspect.cost.prices?.input, 0.7, "input unchanged");
    // an older bridge (no cost) or a malformed cost: the installed catalog's prices, never $0
    for (const cost of [undefined, { input: -1, output: 1, cacheRead: 0, cacheWrite: 0 }, "free"]) {
      const other = applyLiveState(
        analysis,
        state({ model: { provider: "scripted", id: "small", contextWindow: 16000, ...(cost ? { cost } : {}) } }),
        source,
      );
      assert.deepEqual(other.inspect.cost.prices, analysis.inspect.cost.prices, JSON.stringify(cost));
      assert.deepEqual(other.prices("scripted", "small"), analysis.prices("scripted", "small"));
    }
  });
  it("the Prices row says where the prices come from: the running pi, or the installed catalog with an older bridge (trial 5)", () => {
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(32000) });
    const pricesRow = (a: typeof analysis) => Object.fromEntries(usageRows(buildUsageModel(a.inspect))).Prices;
    // no bridge: the prices are resolved like the window (models.json here)
    assert.equal(
      pricesRow(analysis),
      "$0.7/M in · $2.1/M out · $0.07/M cache read — models.json: providers.scripted, model small",
    );
    // bridge 1.2.0: the running pi's own catalog
    const running = { input: 0.5, output: 1.5, cacheRead: 0.05, cacheWrite: 0 };
    const live = applyLiveState(
      analysis,
      state({ model: { provider: "scripted", id: "small", contextWindow: 16000, cost: running } }),
      source,
    );
    assert.equal(pricesRow(live), "$0.5/M in · $1.5/M out · $0.05/M cache read — the running pi (pi 1.6.0, pid 4242)");
    // bridge 1.1.0 (no cost): the window is the running pi's, the prices are the installed resolution's — and it says so
    const older = applyLiveState(analysis, state({}), { ...source, bridgeVersion: "1.1.0" });
    assert.equal(windowSourceText(older.inspect.contextWindow), "the running pi (pi 1.6.0, pid 4242)");
    assert.equal(
      pricesRow(older),
      "$0.7/M in · $2.1/M out · $0.07/M cache read — models.json: providers.scripted, model small",
    );
    // … and for a model the running pi switched to: that model's prices from the installed catalog, not the file's model's
    const switched = applyLiveState(
      analysis,
      state({ model: { provider: "openai", id: "gpt-4o", contextWindow: 128000 } }),
      { ...source, bridgeVersion: "1.1.0" },
    );
    assert.deepEqual(switched.inspect.cost.prices, analysis.prices("openai", "gpt-4o"));
    assert.ok(switched.inspect.cost.prices && switched.inspect.cost.prices.input !== 0.7);
    assert.match(pricesRow(switched) ?? "", /— pi-context's snapshot of pi 1\.6\.0's catalog \(openai\/gpt-4o\)$/);
  });

  it("takes pi's tokens, window and compaction settings, and pi's threshold rule", () => {
    // our view: window 32000 from models.json, default reserve 16384
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(32000) });
    assert.equal(analysis.inspect.contextWindow.value, 32000);
    const live = applyLiveState(analysis, state({}), source);
    const i = live.inspect;
    assert.equal(i.contextTokens, 9000);
    assert.equal(i.usageKnown, true);
    assert.deepEqual(i.contextWindow, { value: 16000, source: "live", detail: "pi 1.6.0, pid 4242" });
    assert.equal(i.percent, 56.25);
    assert.equal(i.reserveTokens.value, 4000);
    assert.equal(i.keepRecentTokens.value, 1000);
    assert.equal(i.threshold, 12000);
    assert.equal(i.tokensUntilCompaction, 3000);
    assert.equal(i.shouldCompact, false);
    assert.equal(i.footer, "56.3%/16k (auto)");
    assert.equal(analysis.inspect.contextTokens, 5000, "input unchanged");
    const over = applyLiveState(
      analysis,
      state({ usage: { tokens: 12001, contextWindow: 16000, percent: 75.00625 } }),
      source,
    ).inspect;
    assert.equal(over.shouldCompact, true);
    assert.equal(
      applyLiveState(
        analysis,
        state({
          usage: { tokens: 12001, contextWindow: 16000, percent: 75 },
          compaction: { enabled: false, reserveTokens: 4000, keepRecentTokens: 1000 },
        }),
        source,
      ).inspect.shouldCompact,
      false,
    );
  });

  it("after a compaction (pi's ?), keeps our estimate as the number and pi's unknown state", () => {
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(16000) });
    const i = applyLiveState(
      analysis,
      state({ usage: { tokens: null, contextWindow: 16000, percent: null } }),
      source,
    ).inspect;
    assert.equal(i.usageKnown, false);
    assert.equal(i.contextTokens, analysis.inspect.contextTokens);
    assert.equal(i.footer, "?/16k (auto)");
  });

  it("after a compaction in the running pi: never the old size as an estimate, whichever of file and push comes first", () => {
    const agentDir = agentWith(16000);
    const before = sessionWith(9000);
    const compaction = {
      type: "compaction",
      id: "c",
      parentId: "a",
      timestamp: "2026-01-01T00:00:03.000Z",
      summary: "the summary",
      firstKeptEntryId: "a",
      tokensBefore: 9000,
    };
    const after = sessionWith(9000, [compaction]);
    const fileBefore = analyzeLoaded(before, { agentDir });
    const fileAfter = analyzeLoaded(after, { agentDir });
    assert.ok(fileAfter.inspect.contextTokens < 9000, "the file's estimate after the compaction is small");
    const text = (analysis: ReturnType<typeof analyzeLoaded>) =>
      buildGaugeView({
        session: { file: "/w/s.jsonl", analysis, pinned: false, updatedAt: 0, live: { ...source, activity: "idle" } },
        margin: 1000,
      }).text;
    const old = state({});
    const compacted = state({ leafId: "c", usage: { tokens: null, contextWindow: 16000, percent: null } });
    // pi's push first (the file not read yet): the last matching numbers, exact, until the file has it
    const shownAhead = matchingState(fileBefore, compacted, old);
    assert.equal(shownAhead, old);
    assert.equal(text(applyLiveState(fileBefore, shownAhead, source)), "π 56.3% · 9.0k/16k · live");
    // the file first (pi's push on its way): the file's estimate after the compaction, not pi's old 9,000
    const shownBehind = matchingState(fileAfter, old, old);
    assert.equal(shownBehind.usage?.tokens, null);
    assert.equal(
      text(applyLiveState(fileAfter, shownBehind, source)),
      `π ? · ≈${formatGaugeTokens(fileAfter.inspect.contextTokens)}/16k · live`,
    );
    // an answer pi reports before the file has it: pi's own count stands alone, at once
    const answered = state({ leafId: "a2", usage: { tokens: 9500, contextWindow: 16000, percent: 59.4 } });
    assert.equal(matchingState(fileBefore, answered, old), answered);
    // both agree: pi's own numbers
    assert.equal(matchingState(fileAfter, compacted, old), compacted);
    assert.equal(matchingState(fileBefore, old, undefined), old);
    // pi on another branch it wrote nothing for (a navigation): no lag
    assert.equal(matchingState(fileAfter, state({ leafId: "u" }), old).leafId, "u");
  });

  it("shows the live badge in the gauge text, tooltip and screen-reader label", () => {
    const analysis = applyLiveState(
      analyzeLoaded(sessionWith(5000), { agentDir: agentWith(16000) }),
      state({ activity: "streaming", idle: false }),
      source,
    );
    const v = buildGaugeView({
      session: {
        file: "/w/s.jsonl",
        analysis,
        pinned: false,
        updatedAt: 0,
        live: { ...source, activity: "streaming" },
      },
      margin: 1000,
    });
    assert.equal(v.text, "π 56.3% · 9.0k/16k · live");
    // Text from the bridge (pi's version) is escaped Markdown; compare what it renders as.
    assert.match(v.tooltip, /from pi 1\\\.6\\\.0 \(pid 4242\)/);
    const rendered = v.tooltip.replace(/\\([!-/:-@[-`{-~])/g, "$1");
    assert.match(rendered, /· \*\*live\*\* from pi 1\.6\.0 \(pid 4242\)/);
    assert.match(
      rendered,
      new RegExp(
        `\\| Live \\| the running pi \\(pid 4242, pi 1\\.6\\.0, bridge ${BRIDGE_VERSION.replace(/\./g, "\\.")}\\) reports these numbers; pi is streaming; Compact and Switch run in that pi \\|`,
      ),
    );
    assert.match(rendered, /\| Window \| 16,000 — the running pi \(pi 1\.6\.0, pid 4242\) \|/);
    assert.match(v.ariaLabel, /^live from the running pi, Pi Context 56.3 percent, 9,000 of 16,000 tokens/);
    const plain = buildGaugeView({
      session: { file: "/w/s.jsonl", analysis, pinned: false, updatedAt: 0 },
      margin: 1000,
    });
    assert.equal(plain.text, "π 56.3% · 9.0k/16k");
  });
});
