/**
 * The session doctor against pi 1.6.0 itself (oracle, Node 22):
 * - every repairable kind on a purpose-built file: before, pi-ai's transformMessages output has the
 *   orphaned results the doctor reports (or pi cannot build the context); `pi-context doctor
 *   --repair` appends; after, pi loads the file, what it sends has no orphaned tool result, the
 *   doctor reports no error, and the earlier bytes are untouched;
 * - random sessions (fast-check): the doctor's pairing errors are exactly pi-ai's orphaned results,
 *   and after the repair pi-ai has none and pi loads the file;
 * - pi-ai's failure classifiers: our copy of its overflow patterns is verbatim, and our verdicts
 *   (overflow, retryable) equal `isContextOverflow` / `isRetryableAssistantError` on a corpus.
 *
 * Runs: PI_CONTEXT_DOCTOR_RUNS (default 300).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { contextOverflowKind, isRetryableError, OVERFLOW_PATTERNS } from "../../src/core/health/failures";
import { appended, codes, doctorOf, repairOf } from "../support/doctor";
import { assistantMessage } from "../support/session-builder";
import { buildSession, recipeArb, type Recipe } from "../support/random-session";
import { SessionBuilder } from "../support/session-builder";
import { REPO_ROOT } from "../support/paths";
import { runCli, writeOldSession } from "../support/cli";

interface LlmView {
  leafId: string | null;
  orphanResults: { entryId: string; toolCallId: string }[];
}
interface LoadView {
  leafId: string | null;
  pathIds: string[];
  contextEntries: string[];
  contextMessages: { entryId: string; role: string }[];
  unchangedOnOpen: boolean;
}
interface OpenView {
  unchangedOnOpen: boolean;
  appendedOnOpen: string | null;
  entries: { id: string; parentId: string | null; type: string }[];
  leafId: string | null;
}
interface Oracle {
  piOpen(request: { file: string }): Promise<OpenView>;
  llm(request: { entriesJsonl?: string; file?: string }): Promise<LlmView>;
  loadCheck(request: { entriesJsonl?: string; file?: string }): Promise<LoadView>;
  classify(request: {
    messages: object[];
    contextWindow?: number;
  }): Promise<{ overflowPatterns: string[]; verdicts: { overflow: boolean; retryable: boolean }[] }>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_DOCTOR_RUNS ?? 300);
let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-doctor-conf-"));
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const cli = runCli;

let n = 0;
function fileOf(jsonl: string): string {
  return writeOldSession(path.join(tmp, `s${++n}.jsonl`), jsonl);
}

const base = () => new SessionBuilder().user("u1", "question").assistant("a1", { text: "answer", usage: 50 });

/** `pi-context doctor --repair` on the file, then pi's verdict; returns the file's bytes before and after. */
async function repairAndCheck(jsonl: string): Promise<{ before: Buffer; after: Buffer; load: LoadView }> {
  const file = fileOf(jsonl);
  const before = fs.readFileSync(file);
  const agent = path.join(tmp, "no-agent");
  const { code, out, err } = await cli(["doctor", file, "--agent-dir", agent, "--repair"]);
  assert.equal(code, 0, `${out}\n${err}`);
  const afterBytes = fs.readFileSync(file);
  assert.ok(afterBytes.length > before.length, "something was appended");
  assert.ok(afterBytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
  const load = await oracle.loadCheck({ file });
  assert.equal(load.unchangedOnOpen, true, "pi opens the file without rewriting it");
  const llm = await oracle.llm({ file });
  assert.deepEqual(llm.orphanResults, [], "pi-ai sends no orphaned tool result");
  const again = await cli(["doctor", file, "--agent-dir", agent, "--json"]);
  const findings = (JSON.parse(again.out) as { findings: { severity: string; code: string }[] }).findings;
  assert.deepEqual(
    findings.filter((f) => f.severity === "error").map((f) => f.code),
    [],
  );
  assert.equal(again.code, 0);
  return { before, after: afterBytes, load };
}

describe("doctor --repair, checked by pi 1.6.0", () => {
  it("orphaned, dropped-call, separated and duplicate results: pi-ai agrees before, sends none after", async () => {
    const b = base()
      .result("t0", "zz", "orphan")
      .assistant("a2", { calls: [{ id: "c1" }], stopReason: "error" })
      .result("t1", "c1", "of the failed answer")
      .assistant("a3", { calls: [{ id: "c2" }] })
      .custom("cm", "note between call and result")
      .result("t2", "c2", "separated")
      .assistant("a4", { calls: [{ id: "c3" }] })
      .result("t3", "c3", "one")
      .result("t4", "c3", "two")
      .assistant("a5", { text: "end" });
    const jsonl = b.jsonl();
    const piBefore = await oracle.llm({ entriesJsonl: jsonl });
    const ours = doctorOf(jsonl).report;
    assert.deepEqual(
      piBefore.orphanResults.map((o) => o.entryId).sort(),
      ours.findings
        .filter((f) => f.severity === "error")
        .map((f) => f.entryId)
        .sort(),
    );
    const { load } = await repairAndCheck(jsonl);
    // the omitted results send no message any more; the paired one still does
    const sent = new Set(load.contextMessages.map((m) => m.entryId));
    for (const id of ["t0", "t1", "t2", "t4"]) assert.ok(!sent.has(id), id);
    assert.ok(sent.has("t3"));
  });

  it("two results after a failed answer closed the call (seed -1136789131): pi-ai agrees before, sends none after", async () => {
    const jsonl = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .assistant("e1", { stopReason: "aborted" })
      .result("r1", "c1", "R")
      .result("r2", "c1", "R again")
      .assistant("a3", { text: "end" })
      .jsonl();
    const piBefore = await oracle.llm({ entriesJsonl: jsonl });
    const ours = doctorOf(jsonl).report.findings.filter((f) => f.severity === "error");
    assert.deepEqual(piBefore.orphanResults.map((o) => o.entryId).sort(), ["r1", "r2"]);
    assert.deepEqual(
      ours.map((f) => `${f.code}@${f.entryId}`),
      ["separated-result@r1", "duplicate-result@r2"],
    );
    const { load } = await repairAndCheck(jsonl);
    const sent = new Set(load.contextMessages.map((m) => m.entryId));
    for (const id of ["r1", "r2"]) assert.ok(!sent.has(id), id);
  });

  it("a compaction that keeps from a tool result: the kept result is omitted", async () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .result("t1", "c1", "out")
      .assistant("a3", { text: "done" })
      .compaction("k1", "t1")
      .user("u3", "after");
    const jsonl = b.jsonl();
    assert.deepEqual(
      (await oracle.llm({ entriesJsonl: jsonl })).orphanResults.map((o) => o.entryId),
      ["t1"],
    );
    await repairAndCheck(jsonl);
  });

  it("an invalid context-edit replacement: pi cannot build the context before; restored after", async () => {
    const b = base().user("u2", "more").edit("e1", "u2", { text: "not content" }).assistant("a2", { text: "x" });
    const jsonl = b.jsonl();
    assert.deepEqual(
      codes(doctorOf(jsonl).report).filter((c) => c.startsWith("error")),
      ["error:edit-invalid-replacement@e1"],
    );
    await assert.rejects(oracle.loadCheck({ entriesJsonl: jsonl }), /pi oracle: /, "pi throws on it");
    const { load } = await repairAndCheck(jsonl);
    assert.ok(load.contextEntries.some((e) => e.startsWith("u2 ")));
  });

  it("a branch that runs into a parent cycle: a leaf marker; pi loads the file at the marker", async () => {
    // (pi itself is never run on the looping file: getBranch would not return)
    const b = base().user("u2", "fine").user("x", "x", "y").user("y", "y", "x");
    const jsonl = b.jsonl();
    assert.deepEqual(
      codes(doctorOf(jsonl).report).filter((c) => c.startsWith("error")),
      ["error:path-cycle@y"],
    );
    const { after: bytes, load } = await repairAndCheck(jsonl);
    const marker = JSON.parse(bytes.toString().trimEnd().split("\n").pop()!) as { id: string; parentId: string };
    assert.equal(load.leafId, marker.id);
    assert.deepEqual(load.pathIds, ["u1", "a1", "u2", marker.id]);
  });
});

describe("doctor --end-line = what pi 1.6.0 does when it opens a session whose last line has no newline", () => {
  const torn = (jsonl: string, tail: string) => `${jsonl}${tail}`;
  const orphan = () =>
    base().result("t9", "zz", "a result whose call was lost").assistant("a2", { text: "ok", usage: 60 });
  const cases: Record<string, string> = {
    // an interrupted write: half an entry
    "a fragment pi skips": torn(orphan().jsonl(), '{"type":"message","id":"x1","parentId":"a2","timestamp":"2026'),
    // a whole entry whose newline never came: pi keeps it as an entry
    "a whole entry without its newline": orphan().jsonl().replace(/\n$/, ""),
    // cut inside a multi-byte character (pi's StringDecoder makes it U+FFFD)
    "a fragment cut inside a UTF-8 character": torn(
      orphan().jsonl(),
      Buffer.from('{"text":"caf\xc3', "latin1").toString("latin1"),
    ),
    "spaces only": torn(orphan().jsonl(), "   "),
  };
  for (const [name, jsonl] of Object.entries(cases))
    it(`${name}: the same bytes as pi's own fix, pi appends nothing afterwards; then the repair`, async () => {
      const bytes = name.includes("UTF-8") ? Buffer.from(jsonl, "latin1") : Buffer.from(jsonl);
      const ours = path.join(tmp, `end-${++n}.jsonl`);
      writeOldSession(ours, "");
      fs.writeFileSync(ours, bytes);
      const old = new Date(Date.now() - 3600_000);
      fs.utimesSync(ours, old, old);
      const pi = await oracle.piOpen({ file: ours }); // pi works on a copy
      assert.equal(pi.appendedOnOpen, JSON.stringify("\n"), "pi's own fix is one newline");
      const agent = path.join(tmp, "no-agent");
      // without --end-line the repair refuses, and says where the fix is
      const refused = await cli(["doctor", ours, "--agent-dir", agent, "--repair"]);
      assert.equal(refused.code, 1);
      assert.match(refused.out + refused.err, /pi-context doctor --end-line/);
      assert.ok(fs.readFileSync(ours).equals(bytes), "nothing written");
      const { code, out, err } = await cli(["doctor", ours, "--agent-dir", agent, "--end-line"]);
      assert.match(out, /ended the last line \(\d+ bytes? without a newline\) as pi does/, `${out}\n${err}`);
      assert.equal(code, 1, "the orphaned result is still an error"); // exit code: the file as it is now
      assert.ok(
        fs.readFileSync(ours).equals(Buffer.concat([bytes, Buffer.from("\n")])),
        "exactly one newline appended",
      );
      const after = await oracle.piOpen({ file: ours });
      assert.equal(after.unchangedOnOpen, true, "pi appends nothing now");
      assert.deepEqual(after.entries, pi.entries, "pi reads the same entries as after its own fix");
      // now the repair appends after it, and pi loads the result
      const repaired = await cli(["doctor", ours, "--agent-dir", agent, "--repair"]);
      assert.equal(repaired.code, 0, `${repaired.out}\n${repaired.err}`);
      const load = await oracle.loadCheck({ file: ours });
      assert.equal(load.unchangedOnOpen, true);
      assert.deepEqual((await oracle.llm({ file: ours })).orphanResults, []);
    });

  it("a file pi does not repair (its first line is no header) is refused, nothing written", async () => {
    const file = fileOf(
      `${JSON.stringify({ type: "message", id: "m", parentId: null, timestamp: "t" })}\n{"type":"ses`,
    );
    const before = fs.readFileSync(file);
    const pi = await oracle.piOpen({ file }).catch((e: Error) => e);
    if (!(pi instanceof Error))
      assert.equal(pi.unchangedOnOpen, true, "pi appends nothing to a file that is no session");
    const r = await cli(["doctor", file, "--agent-dir", path.join(tmp, "no-agent"), "--end-line"]);
    assert.notEqual(r.code, 0);
    assert.ok(fs.readFileSync(file).equals(before));
  });
});

describe("doctor and pi-ai 1.6.0 agree on random sessions", () => {
  it(`pairing errors = pi-ai's orphaned results; after the repair pi-ai has none (${RUNS} runs)`, async () => {
    const stats = { sessions: 0, withErrors: 0, repaired: 0, appended: 0 };
    await fc.assert(
      fc.asyncProperty(recipeArb, async (recipe: Recipe) => {
        const { jsonl } = buildSession(recipe);
        stats.sessions++;
        const d = doctorOf(jsonl, { window: 0 });
        const pairingErrors = d.report.findings
          .filter((f) => f.severity === "error" && /result$/.test(f.code))
          .map((f) => f.entryId!)
          .sort();
        const pi = await oracle.llm({ entriesJsonl: jsonl });
        assert.deepEqual(pairingErrors, pi.orphanResults.map((o) => o.entryId).sort());
        if (pairingErrors.length === 0) return;
        stats.withErrors++;
        const plan = repairOf(d);
        assert.deepEqual(plan.remaining, [], "the plan proves itself");
        const repaired = appended(jsonl, plan);
        const piAfter = await oracle.llm({ entriesJsonl: repaired });
        assert.deepEqual(piAfter.orphanResults, [], "pi-ai sends no orphaned result after the repair");
        const load = await oracle.loadCheck({ entriesJsonl: repaired });
        assert.equal(load.leafId, plan.entries[plan.entries.length - 1]!.id);
        assert.equal(
          doctorOf(repaired, { window: 0 }).report.findings.filter(
            (f) => /result$/.test(f.code) && f.severity === "error",
          ).length,
          0,
        );
        stats.repaired++;
        stats.appended += plan.entries.length;
      }),
      { numRuns: RUNS },
    );
    console.log(`doctor vs pi-ai: ${JSON.stringify(stats)}`);
    assert.ok(stats.withErrors > RUNS / 20, `enough sessions with pairing errors (${stats.withErrors})`);
  });
});

describe("pi-ai 1.6.0's failure classifiers", () => {
  it("our overflow patterns are pi-ai's, verbatim and in order", async () => {
    const { overflowPatterns } = await oracle.classify({ messages: [] });
    assert.deepEqual(
      OVERFLOW_PATTERNS.map((p) => `${p.source}/${p.flags}`),
      overflowPatterns,
    );
  });

  it("overflow and retryable verdicts equal pi-ai's on a corpus of provider errors and usages", async () => {
    const errors = [
      '400: {"message":"This model\'s maximum context length is 16000 tokens. However, your messages resulted in 25086 tokens."}',
      "prompt is too long: 213462 tokens > 200000 maximum",
      '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
      "github-copilot API error (413): {}",
      "Your input exceeds the context window of this model",
      "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
      "Rate limit: too many tokens per minute",
      "ThrottlingException: Too many tokens, please wait before trying again.",
      "Throttling error: Too many tokens",
      "503: upstream overloaded",
      "429 Too Many Requests",
      '429 {"error":{"code":"insufficient_quota"}}',
      "read ECONNRESET",
      "request id 15034: bad request",
      "401 invalid api key",
      "400 status code (no body)",
      "the request exceeds the available context size, try increasing it",
      "",
    ];
    const messages: Record<string, unknown>[] = [];
    for (const e of errors) {
      messages.push(assistantMessage({ stopReason: "error", ...(e ? { errorMessage: e } : {}) }));
      messages.push(assistantMessage({ stopReason: "error", provider: "cerebras", ...(e ? { errorMessage: e } : {}) }));
    }
    for (const [stopReason, input, output, cacheRead] of [
      ["stop", 15000, 10, 2000],
      ["stop", 1000, 10, 0],
      ["length", 15900, 0, 0],
      ["length", 15900, 5, 0],
      ["length", 10000, 0, 0],
    ] as const)
      messages.push(assistantMessage({ stopReason, usage: { input, output, cacheRead }, text: "x" }));
    for (const window of [undefined, 16000]) {
      const pi = await oracle.classify({ messages, ...(window ? { contextWindow: window } : {}) });
      const ours = messages.map((m) => {
        const u = m.usage as { input: number; output: number; cacheRead: number };
        const answer = {
          stopReason: m.stopReason as string,
          ...(typeof m.errorMessage === "string" ? { errorMessage: m.errorMessage } : {}),
          provider: m.provider as string,
          input: u.input,
          output: u.output,
          cacheRead: u.cacheRead,
        };
        return { overflow: contextOverflowKind(answer, window) !== undefined, retryable: isRetryableError(answer) };
      });
      assert.deepEqual(ours, pi.verdicts, `window ${window}`);
    }
  });
});
