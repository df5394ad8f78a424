/**
 * What every shared case asks of pi-context beyond pi's own numbers ("Extension behaviour beyond
 * pi" in test/fixtures/cases/*\/expected.md). pi's numbers themselves are checked in
 * shared-oracles.test.ts.
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { analyzeSession } from "../../../src/core/rules/analyze";
import { SessionFile } from "../../../src/core/read/session";
import { structureDiagnostics } from "../../../src/core/rules/tree";
import { expectationOf, UnsafeSessionWriteError } from "../../../src/core/flows/write";
import { FIXTURES } from "../../support/paths";

const CASES = path.join(FIXTURES, "cases");
const NO_AGENT = path.join(os.tmpdir(), "pi-context-no-agent-dir");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cases-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("shared cases: behaviour beyond pi", () => {
  it("02: the preview says the kept tail exceeds keepRecentTokens (a call and its results stay together)", async () => {
    const a = await analyzeSession(path.join(CASES, "02-trailing-toolresults-exceed-keep/session.jsonl"), {
      agentDir: NO_AGENT,
      projectSettings: "never",
    });
    const c = a.inspect.compaction!;
    assert.equal(c.firstKeptEntryId, "a2");
    assert.equal(c.isSplitTurn, true);
    assert.equal(c.keptTokens, 27021);
    assert.equal(c.keptExceedsKeepRecent, true);
  });

  it("03: the kept tail (21004) may exceed the budget; the cut is never at a tool result", async () => {
    const a = await analyzeSession(path.join(CASES, "03-trailing-pair-above-keep-budget/session.jsonl"), {
      agentDir: NO_AGENT,
      projectSettings: "never",
    });
    const c = a.inspect.compaction!;
    assert.equal(c.firstKeptEntryId, "u1");
    assert.equal(c.keptTokens, 21004);
    assert.equal(c.keptExceedsKeepRecent, true);
  });

  it("08: v1 is migrated in memory only, and we refuse to write to it", async () => {
    const p = path.join(CASES, "08-v1-migration-firstKeptEntryIndex/session.jsonl");
    const before = fs.readFileSync(p);
    const s = await SessionFile.open(p);
    assert.throws(
      () => expectationOf(s),
      (e: unknown) => e instanceof UnsafeSessionWriteError && /version 1/.test((e as Error).message),
    );
    assert.ok(fs.readFileSync(p).equals(before));
  });

  it("09: diagnostics name the truncated record and the unparseable fused line; nothing is written", async () => {
    const torn = await SessionFile.open(path.join(CASES, "09-truncated-final-line/session.jsonl"));
    assert.ok(torn.diagnostics.some((d) => d.message.startsWith("truncated final record at line 5 (164 bytes)")));
    assert.throws(() => expectationOf(torn), UnsafeSessionWriteError);
    const fused = await SessionFile.open(path.join(CASES, "09-truncated-final-line/session-fused.jsonl"));
    assert.ok(fused.diagnostics.some((d) => d.message.startsWith("unparseable line 5 (350 bytes)")));
    assert.equal(fused.byId.has("u3"), false, "the embedded entry is not guessed");
  });

  it("11: interleaved sibling branches raise a concurrent-writers warning; the leaf stays the last line", async () => {
    for (const name of ["session.jsonl", "session-clock-skew.jsonl"]) {
      const s = await SessionFile.open(path.join(CASES, "11-concurrent-writers-interleaved", name));
      assert.equal(s.leafId, "pB2");
      const warnings = structureDiagnostics(s).filter((d) => d.code === "concurrent-writers");
      assert.equal(warnings.length, 1, name);
      assert.equal(warnings[0]!.entryId, "a1");
    }
    // A navigation with a branch summary does not trigger it (tree fixture).
    const tree = await SessionFile.open(path.resolve(CASES, "../pi-1.6.0/tree.jsonl"));
    assert.equal(structureDiagnostics(tree).filter((d) => d.code === "concurrent-writers").length, 0);
  });

  it("13: file lists come from `details`, not from the summary's <read-files> blocks", async () => {
    const p = path.join(tmp, "13.jsonl");
    const text = fs.readFileSync(path.join(CASES, "13-file-lists-cumulative/session.jsonl"), "utf8");
    // A summary whose text blocks disagree with details: only details count.
    fs.writeFileSync(p, text.replace('"summary":"', '"summary":"<read-files>\\nbogus/file.ts\\n</read-files>\\n'));
    const a = await analyzeSession(p, {
      agentDir: path.join(CASES, "13-file-lists-cumulative/agent"),
      projectSettings: "never",
    });
    assert.deepEqual(a.inspect.compaction!.readFiles, ["README.md", "src/util.ts"]);
    assert.deepEqual(a.inspect.compaction!.modifiedFiles, ["NOTES.md", "docs/old.md", "src/parser.ts"]);
  });

  it("15: a branch summary hangs on its parentId, whatever its fromId", async () => {
    const s = await SessionFile.open(path.join(CASES, "15-branch-summary-tree/session.jsonl"));
    const bs1 = s.byId.get("bs1")!;
    assert.equal(bs1.parentId, "a1");
    assert.equal(bs1.fromId, "bA5");
    assert.deepEqual(
      s.children
        .get("a1")!
        .map((e) => e.id)
        .sort(),
      ["bA1", "bs1"],
    );
  });

  it("18: a 32 MB session generated by the case's own script gives pi's numbers", async () => {
    const file = path.join(tmp, "case18-32mb.jsonl");
    execFileSync(process.execPath, [path.join(CASES, "18-large-session-performance/generate.mjs"), file, "32"], {
      stdio: "ignore",
    });
    const oracle = JSON.parse(
      fs.readFileSync(path.join(CASES, "18-large-session-performance/oracle-32mb.json"), "utf8"),
    );
    const a = await analyzeSession(file, { agentDir: NO_AGENT, projectSettings: "never" });
    assert.equal(a.inspect.leafId, oracle.leafId);
    assert.equal(a.inspect.entryCount, oracle.entryCount);
    assert.equal(a.inspect.contextTokens, oracle.estimateProjectedContextTokens.tokens);
    assert.equal(a.inspect.contextWindow.value, 1000000);
    assert.equal(a.inspect.shouldCompact, false);
    const c = a.inspect.compaction!;
    assert.deepEqual(
      [c.firstKeptEntryId, c.isSplitTurn, c.summarizedEntryIds.length, c.turnPrefixEntryIds.length, c.tokensBefore],
      [
        oracle.prepareCompaction.firstKeptEntryId,
        true,
        oracle.prepareCompaction.messagesToSummarize.count,
        oracle.prepareCompaction.turnPrefix.count,
        oracle.prepareCompaction.tokensBefore,
      ],
    );
  });
});
