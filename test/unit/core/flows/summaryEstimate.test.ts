/**
 * The preview's "tokens after" against what really happened: at every compaction pi 1.6.0 wrote in
 * the fixtures, the plan made at its parent predicts a range, and pi's own estimate at the written
 * compaction (the "after" the result message shows) must fall inside it. The part without the
 * summary is exact; only the summary's size is guessed.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { planCompaction } from "../../../../src/core/flows/compact";
import { summaryTokenRange } from "../../../../src/core/flows/summarySize";
import { analyzeLoaded } from "../../../../src/core/rules/analyze";
import { SessionFile } from "../../../../src/core/read/session";
import { FIXTURES } from "../../../support/paths";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-estimate-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("the preview's after-estimate against pi's real compactions", () => {
  for (const name of ["long", "split", "overflow"]) {
    const lines = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (!line.includes('"type":"compaction"')) return;
      const entry = JSON.parse(line) as { id: string; summary: string };
      it(`${name} compaction ${entry.id}: pi's estimate after it lies in the predicted range`, async () => {
        const file = path.join(tmp, `${name}-${i}.jsonl`);
        fs.writeFileSync(file, lines.slice(0, i).join("\n") + "\n");
        const plan = await planCompaction(file, {
          agentDir: path.join(PI, `${name}.agent`),
          guardSeconds: 0,
          procRoot: null,
          maxOutputTokens: 8192,
        });
        const whole = await SessionFile.open(path.join(PI, `${name}.jsonl`));
        const real = analyzeLoaded(whole, { agentDir: path.join(PI, `${name}.agent`), leafId: entry.id }).inspect
          .contextTokens;
        const { low, high } = plan.estimatedTokensAfterRange;
        assert.ok(low <= real && real <= high, `real ${real} outside ≈${low}–${high}`);
        // the part without the summary is exact: only the summary is a guess
        assert.equal(real - plan.preview.tokensAfterWithoutSummary, Math.ceil(entry.summary.length / 4));
        assert.equal(plan.estimatedTokensAfter, high);
        assert.ok(low < high);
      });
    });
  }
});

describe("summaryTokenRange", () => {
  const base = {
    previousSummary: undefined,
    parts: 1,
    reusesPreviousSummary: false,
    maxOutputTokens: 8192,
    fileListsText: "",
  };

  it("a small summarized part gives a small summary (issue 18: ≈202 tokens summarized, 225 written)", () => {
    const r = summaryTokenRange({ ...base, summarizedTokens: 202 });
    assert.ok(r.low <= 225 && 225 <= r.high, JSON.stringify(r));
    assert.ok(r.high < 400, "not the old flat 1,000-token guess");
  });

  it("the low end allows a terse summary: a few words stay inside the range (trial: 25 tokens under a 50 floor)", () => {
    const r = summaryTokenRange({ ...base, summarizedTokens: 190_000, fileListsText: "" });
    assert.equal(r.low, 0);
    for (const written of [3, 24, 49])
      assert.ok(r.low <= written && written <= r.high, `${written}: ${JSON.stringify(r)}`);
  });

  it("grows with what is summarized and with the previous summary, bounded by the output limit", () => {
    const small = summaryTokenRange({ ...base, summarizedTokens: 2000 });
    const big = summaryTokenRange({ ...base, summarizedTokens: 40_000 });
    assert.ok(big.high > small.high);
    const updating = summaryTokenRange({ ...base, summarizedTokens: 2000, previousSummary: "x".repeat(4000) });
    assert.equal(updating.high, small.high + 1000);
    const huge = summaryTokenRange({ ...base, summarizedTokens: 700_000, maxOutputTokens: 4096 });
    assert.equal(huge.high, 4096);
    const split = summaryTokenRange({ ...base, summarizedTokens: 700_000, maxOutputTokens: 4096, parts: 2 });
    assert.equal(split.high, 8192, "two requests, two output limits");
  });

  it("a split turn with no history reuses the previous summary unchanged; file lists count exactly", () => {
    const lists = "\n\n<read-files>\na.ts\n</read-files>";
    const r = summaryTokenRange({
      ...base,
      summarizedTokens: 300,
      previousSummary: "p".repeat(800),
      reusesPreviousSummary: true,
      fileListsText: lists,
    });
    const listTokens = Math.ceil(lists.length / 4);
    assert.equal(r.low, 200 + listTokens, "the reused summary and the lists are all a summary surely has");
    assert.equal(r.high, 200 + Math.min(300, 200 + 75) + 100 + listTokens);
  });
});
