/**
 * The doctor on every shared case (test/fixtures/cases) and pi 1.6.0 fixture: what each case's
 * expected.md asks beyond pi is reported (08 old format, 09 torn / fused final line, 11 concurrent
 * writers, 18 large session), and nothing else — pi's own sessions are healthy. (02/03 ask for the
 * compaction preview, see cases-beyond-pi.test.ts; 12 for the session listing.)
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { checkHealth, diagnose, contextOf } from "../../../../src/core/health/doctor";
import { SessionFile } from "../../../../src/core/read/session";
import { analyzeLoaded } from "../../../../src/core/rules/analyze";
import { FIXTURES } from "../../../support/paths";

const CASES = path.join(FIXTURES, "cases");
const NO_AGENT = "/nonexistent-pi-context-agent";

async function codesOf(file: string, agentDir = NO_AGENT): Promise<string[]> {
  const session = await SessionFile.open(file);
  const report = checkHealth(analyzeLoaded(session, { agentDir, projectSettings: "never" }));
  return report.findings.map(
    (f) => `${f.severity}:${f.code}${f.entryId ? `@${f.entryId}` : ""}${f.line ? `:${f.line}` : ""}`,
  );
}

describe("doctor on the shared cases and pi's own sessions", () => {
  it("pi 1.6.0's sessions (long, tree, split, overflow after pi's recovery) are healthy", async () => {
    for (const name of ["long", "tree", "split", "overflow"])
      assert.deepEqual(
        await codesOf(
          path.join(FIXTURES, "pi-1.6.0", `${name}.jsonl`),
          path.join(FIXTURES, "pi-1.6.0", `${name}.agent`),
        ),
        [],
        name,
      );
  });

  it("pi's overflow session cut before its recovery: the overflow error, what pi does next, a compaction offered", async () => {
    const lines = fs.readFileSync(path.join(FIXTURES, "pi-1.6.0/overflow.jsonl"), "utf8").split("\n");
    const at = lines.findIndex((l) => l.includes('"stopReason":"error"'));
    const session = SessionFile.fromBytes(`${lines.slice(0, at + 1).join("\n")}\n`);
    const analysis = analyzeLoaded(session, {
      agentDir: path.join(FIXTURES, "pi-1.6.0/overflow.agent"),
      projectSettings: "never",
    });
    const report = checkHealth(analysis);
    const f = report.findings.find((x) => x.code === "context-overflow");
    assert.ok(f, JSON.stringify(report.findings.map((x) => x.code)));
    assert.equal(f.entryId, JSON.parse(lines[at]!).id);
    assert.match(f.message, /maximum context length is 16000 tokens/);
    assert.match(f.message, /Before the next prompt pi omits this attempt and runs an overflow compaction/);
    assert.equal(f.severity, "warning", "pi recovers by itself (auto-compaction on, same model, something to compact)");
    assert.equal(f.repair?.kind, "compaction");
  });

  it("every case: the findings its expected.md asks for, nothing spurious (demo models: unknown window)", async () => {
    const expected: Record<string, string[]> = {
      "01-repeated-compaction-kept-window/session.jsonl": [],
      "02-trailing-toolresults-exceed-keep/session.jsonl": [],
      "03-trailing-pair-above-keep-budget/session.jsonl": [],
      "05-zero-usage-fallback/session.jsonl": [],
      "06-usage-totaltokens-vs-components/session.jsonl": [],
      "08-v1-migration-firstKeptEntryIndex/session.jsonl": ["warning:old-version:1"],
      "09-truncated-final-line/session.jsonl": ["warning:truncated-final-line:5"],
      "09-truncated-final-line/session-fused.jsonl": ["warning:malformed-line:5"],
      "11-concurrent-writers-interleaved/session.jsonl": ["warning:concurrent-writers@a1:6"],
      "11-concurrent-writers-interleaved/session-clock-skew.jsonl": ["warning:concurrent-writers@a1:6"],
      "13-file-lists-cumulative/session.jsonl": [],
      "15-branch-summary-tree/session.jsonl": [],
      "17-token-estimate-rules/session.jsonl": [],
    };
    for (const [name, want] of Object.entries(expected)) {
      const file = path.join(CASES, name);
      const agent = fs.existsSync(path.join(path.dirname(file), "agent"))
        ? path.join(path.dirname(file), "agent")
        : NO_AGENT;
      const got = (await codesOf(file, agent)).filter((c) => !c.includes("unknown-window"));
      assert.deepEqual(got, want, name);
    }
    // 09: the messages the case asks for
    const torn = await SessionFile.open(path.join(CASES, "09-truncated-final-line/session.jsonl"));
    const msg = checkHealth(analyzeLoaded(torn, { agentDir: NO_AGENT })).findings[0]!.message;
    assert.match(msg, /^truncated final record at line 5 \(164 bytes\)/);
    const fused = await SessionFile.open(path.join(CASES, "09-truncated-final-line/session-fused.jsonl"));
    assert.match(
      checkHealth(analyzeLoaded(fused, { agentDir: NO_AGENT })).findings[0]!.message,
      /^unparseable line 5 \(350 bytes\)/,
    );
  });

  it("18: a session pi loads slowly (the case's generator, threshold scaled down)", async () => {
    const file = path.join(os.tmpdir(), `pi-context-case18-${process.pid}.jsonl`);
    execFileSync(process.execPath, [path.join(CASES, "18-large-session-performance/generate.mjs"), file, "2"]);
    try {
      const session = await SessionFile.open(file);
      const analysis = analyzeLoaded(session, { agentDir: NO_AGENT });
      const report = diagnose(session, { ...contextOf(analysis), slowLoadBytes: 1024 * 1024 });
      const codes = report.findings.map((f) => f.code);
      assert.deepEqual(codes, ["slow-load"], "a healthy generated session: only its size");
      assert.match(report.findings[0]!.message, /pi 1\.6\.0 reads and parses every line at every open/);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
