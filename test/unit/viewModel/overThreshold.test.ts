/**
 * Above the auto-compaction threshold with nothing pi can summarize: pi 1.6.0 `_runAutoCompaction`
 * gets nothing from `prepareCompaction` and does not compact, so no surface may say "pi
 * auto-compacts at its next check" (trial: the panel said so while Compact said "Nothing to compact").
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { autoCompactsWhen } from "../../../src/shared/format";
import { buildGauge } from "../../../src/viewModel/gauge";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { SessionBuilder } from "../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-over-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** One question and one answer whose provider usage is `tokens` (far more than the text). */
function session(tokens: number, turns = 1): SessionFile {
  const b = new SessionBuilder({ id: "s", cwd: "/w" }).model("m", "p", "m16k");
  for (let t = 0; t < turns; t++)
    b.user(`u${t}`, [{ type: "text", text: "word ".repeat(t === turns - 1 ? 10 : 2000) }]).assistant(`a${t}`, {
      text: "ok",
      model: "m16k",
      usage: { input: tokens - 10, output: 10 },
    });
  return SessionFile.fromBytes(b.jsonl());
}

function agent(): string {
  const dir = fs.mkdtempSync(path.join(tmp, "agent-"));
  fs.writeFileSync(
    path.join(dir, "models.json"),
    JSON.stringify({
      providers: {
        p: {
          baseUrl: "http://127.0.0.1:1/v1",
          api: "openai-completions",
          apiKey: "k",
          models: [{ id: "m16k", contextWindow: 16000, maxTokens: 1000 }],
        },
      },
    }),
  );
  fs.writeFileSync(
    path.join(dir, "settings.json"),
    JSON.stringify({ compaction: { reserveTokens: 4000, keepRecentTokens: 1000 } }),
  );
  return dir;
}

const tooltipOf = (s: SessionFile, agentDir: string) =>
  buildGaugeView({
    session: { file: "/w/s.jsonl", analysis: analyzeLoaded(s, { agentDir }), pinned: false, updatedAt: 0 },
    margin: 1000,
    locale: "en-US",
  }).tooltip.replace(/\\([!-/:-@[-`{-~])/g, "$1");

describe("above the threshold with nothing to summarize", () => {
  const agentDir = agent();
  it("says pi finds nothing to summarize and does not compact — in the panel's gauge and the tooltip", () => {
    const small = session(15_000); // 15,000 reported, one short exchange: nothing before the kept part
    const inspect = analyzeLoaded(small, { agentDir }).inspect;
    assert.equal(inspect.shouldCompact, true);
    assert.equal(inspect.compaction, null);
    const g = buildGauge(inspect);
    assert.equal(g.nothingToCompact, "Nothing to compact (session too small).");
    const tip = tooltipOf(small, agentDir);
    assert.ok(
      tip.includes(
        "pi would auto-compact, but it finds nothing to summarize (Nothing to compact (session too small)), so it does not compact",
      ),
      tip,
    );
    assert.ok(!tip.includes(autoCompactsWhen()), tip);
  });
  it("with something to summarize: pi auto-compacts at its next check, as before", () => {
    const big = session(15_000, 3); // two long exchanges before the last: they can be summarized
    const inspect = analyzeLoaded(big, { agentDir }).inspect;
    assert.equal(inspect.shouldCompact, true);
    assert.notEqual(inspect.compaction, null);
    assert.equal(buildGauge(inspect).nothingToCompact, undefined);
    assert.ok(tooltipOf(big, agentDir).includes(autoCompactsWhen()));
  });
});
