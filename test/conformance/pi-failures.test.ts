/**
 * Where pi 1.6.0 has no number or no session, against pi itself (oracle `failures` request, Node 22):
 * - random sessions with messages and context-edit replacements pi cannot measure (fast-check):
 *   pi-context says pi's estimate fails exactly where pi's `estimateProjectedContextTokens` throws or
 *   counts NaN, on an entry whose message pi fails on, and pi's `prepareCompaction` likewise; where
 *   pi has a number, it is ours;
 * - the CLI (`inspect`, `trim --dry-run`, `doctor`) prints no number as pi's where pi has none.
 *
 * Runs: PI_CONTEXT_FAILURE_RUNS (default 300).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../src/core/read/session";
import { analyzeLoaded } from "../../src/core/rules/analyze";
import { prepareCompaction } from "../../src/core/rules/compaction";
import { checkHealth } from "../../src/core/health/doctor";
import { runCli, writeOldSession } from "../support/cli";
import { REPO_ROOT } from "../support/paths";
import { assistantMessage } from "../support/session-builder";

type Attempt<T> = { ok: T } | { error: string };
interface FailuresView {
  open: Attempt<boolean>;
  leafId: unknown;
  leafIdType: string;
  entryCount: number;
  branch: Attempt<unknown[]>;
  projection: Attempt<{ entryId: unknown; roles: (string | null)[] }[]>;
  sessionContext: Attempt<number>;
  messages?: { entryId: unknown; role: string | null; tokens: Attempt<number | "NaN"> }[];
  contextEstimate?: Attempt<number | "NaN">;
  estimate?: Attempt<number | "NaN">;
  prepareCompaction?: Attempt<{ tokensBefore: number | "NaN"; firstKeptEntryId: string } | null>;
}
interface Oracle {
  failures(request: { entriesJsonl: string }): Promise<FailuresView>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_FAILURE_RUNS ?? 300);
let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-failures-"));
const NO_AGENT = path.join(tmp, "no-agent");
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

const T = "2026-01-01T00:00:00.000Z";

// content pi measures, and content it does not (throws: missing, not iterable, a null block, a
// block field without `.length`; NaN: a field whose `.length` is not a number)
const goodUserContent = fc.constantFrom<unknown>(
  "hello there",
  [{ type: "text", text: "a text block" }],
  [{ type: "image", data: "x", mimeType: "image/png" }],
);
const badUserContent = fc.constantFrom<unknown>(
  5,
  {},
  true,
  [null],
  [{ type: "text", text: 7 }],
  [{ type: "text", text: {} }],
);
const goodAssistantContent = fc.constantFrom<unknown>(
  [{ type: "text", text: "an answer" }],
  [
    { type: "thinking", thinking: "hmm" },
    { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } },
  ],
  "a string is iterated by character",
);
const badAssistantContent = fc.constantFrom<unknown>(
  [{ type: "text" }],
  [{ type: "text", text: 5 }],
  [{ type: "thinking" }],
  [{ type: "toolCall", id: "c1", name: "read" }],
  [{ type: "toolCall", id: "c1", arguments: {} }],
  [null],
  7,
  {},
);
const replacement = fc.constantFrom<unknown>(
  undefined, // no replacement key at all: pi's projection throws
  null,
  { content: "replaced" },
  { content: [{ type: "text", text: "replaced" }] },
  { content: [{ type: "text" }] },
  { content: [{ type: "text", text: 3 }] },
  { content: [null] },
  { content: [{ type: "thinking" }] },
);

const commonEntryArb = fc.oneof(
  fc.record({
    kind: fc.constant("user"),
    content: fc.oneof({ weight: 4, arbitrary: goodUserContent }, badUserContent),
  }),
  fc.record({
    kind: fc.constant("assistant"),
    content: fc.oneof({ weight: 4, arbitrary: goodAssistantContent }, badAssistantContent),
    usage: fc.constantFrom(0, 0, 40, 120),
    stopReason: fc.constantFrom("stop", "stop", "stop", "error", "aborted"),
  }),
  fc.record({
    kind: fc.constant("toolResult"),
    content: fc.oneof({ weight: 3, arbitrary: goodUserContent }, badUserContent),
  }),
  fc.record({
    kind: fc.constant("custom"),
    content: fc.oneof({ weight: 3, arbitrary: goodUserContent }, badUserContent),
  }),
  fc.record({
    kind: fc.constant("bash"),
    command: fc.constantFrom<unknown>("ls", "ls", undefined, 5),
    output: fc.constantFrom<unknown>("out", "out", null, []),
  }),
  fc.record({ kind: fc.constant("edit"), target: fc.nat(), replacement }),
  fc.record({
    kind: fc.constant("compaction"),
    kept: fc.nat(),
    summary: fc.constantFrom<unknown>("summary", "summary", undefined, 9),
  }),
);
// now and then a message entry without message: pi cannot build a context through it
const entryArb = fc.oneof(
  { weight: 15, arbitrary: commonEntryArb },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("nomsg"), message: fc.constantFrom<unknown>(undefined, null) }),
  },
);

/** A linear session from the generated entries (edits and compactions name earlier entries). */
function sessionOf(specs: readonly Record<string, unknown>[]): string {
  const lines: object[] = [{ type: "session", version: 3, id: "s", timestamp: T, cwd: "/tmp/p" }];
  const ids: string[] = [];
  let parent: string | null = null;
  specs.forEach((s, i) => {
    const id = `e${i}`;
    const base = { id, parentId: parent, timestamp: T };
    const message = (m: object) => ({ type: "message", ...base, message: { ...m, timestamp: 1 } });
    let line: object | undefined;
    switch (s.kind) {
      case "user":
        line = message({ role: "user", content: s.content });
        break;
      case "assistant":
        line = message(
          assistantMessage({
            content: s.content as unknown[],
            usage: s.usage as number,
            stopReason: s.stopReason as string,
          }),
        );
        break;
      case "toolResult":
        line = message({ role: "toolResult", toolCallId: "c1", toolName: "read", content: s.content, isError: false });
        break;
      case "custom":
        line = { type: "custom_message", ...base, customType: "x", content: s.content, display: true };
        break;
      case "bash":
        line = message({ role: "bashExecution", command: s.command, output: s.output, exitCode: 0 });
        break;
      case "edit":
        if (ids.length === 0) return;
        line = {
          type: "context_edit",
          ...base,
          targetId: ids[(s.target as number) % ids.length],
          replacement: s.replacement,
        };
        break;
      case "nomsg":
        line = { type: "message", ...base, ...(s.message === null ? { message: null } : {}) };
        break;
      case "compaction":
        if (ids.length === 0) return;
        line = {
          type: "compaction",
          ...base,
          summary: s.summary,
          firstKeptEntryId: ids[(s.kept as number) % ids.length],
          tokensBefore: 100,
        };
        break;
    }
    lines.push(line!);
    ids.push(id);
    parent = id;
  });
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

/** The oracle's verdict on a number: "throws", "nan", or the number. */
function verdict(a: Attempt<number | "NaN"> | undefined): "throws" | "nan" | number {
  if (!a) return "throws";
  if ("error" in a) return "throws";
  return a.ok === "NaN" ? "nan" : a.ok;
}

describe("pi's token estimate fails where pi's own estimateTokens fails (issue 43, kind 3)", () => {
  it(`random sessions with content pi cannot measure (${RUNS} runs): the footer's number and /compact`, async () => {
    const stats = { sessions: 0, contextFails: 0, footerFails: 0, compactFails: 0, nan: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(entryArb, { minLength: 1, maxLength: 12 }), async (specs) => {
        const jsonl = sessionOf(specs as Record<string, unknown>[]);
        const pi = await oracle.failures({ entriesJsonl: jsonl });
        stats.sessions++;
        const session = SessionFile.fromBytes(jsonl);
        const inspect = analyzeLoaded(session, { agentDir: NO_AGENT, projectSettings: "never" }).inspect;
        if (!("ok" in pi.projection)) {
          // pi cannot even build the context (a message entry without message, an edit without replacement)
          stats.contextFails++;
          assert.equal(inspect.estimateFailure?.stage, "context", `pi: ${pi.projection.error}\n${jsonl}`);
          return;
        }
        assert.notEqual(inspect.estimateFailure?.stage, "context", `pi builds this context\n${jsonl}`);
        const piFooter = verdict(pi.estimate);
        const ours = inspect.estimateFailure;
        if (typeof piFooter === "number") {
          assert.equal(ours, undefined, `pi has ${piFooter}, we say it fails: ${JSON.stringify(ours)}\n${jsonl}`);
          assert.equal(inspect.contextTokens, piFooter, jsonl);
        } else {
          stats.footerFails++;
          if (piFooter === "nan") stats.nan++;
          assert.ok(ours, `pi's estimate ${piFooter}; we show ${inspect.contextTokens}\n${jsonl}`);
          assert.equal(ours.kind, piFooter === "throws" ? "throws" : "nan", jsonl);
          const failing = (pi.messages ?? []).filter(
            (m) => m.entryId === ours.entryId && ("error" in m.tokens || m.tokens.ok === "NaN"),
          );
          assert.ok(failing.length > 0, `pi measures ${ours.entryId} fine\n${jsonl}`);
        }
        // /compact: pi's prepareCompaction with its default settings (as ours without settings)
        const piCompact = pi.prepareCompaction;
        const prepared = prepareCompaction(
          session,
          { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
          session,
        );
        const ourCompact = prepared.estimateFailure;
        if (piCompact && "error" in piCompact) {
          stats.compactFails++;
          assert.equal(ourCompact?.kind, "throws", `pi's /compact throws (${piCompact.error})\n${jsonl}`);
        } else if (piCompact?.ok && piCompact.ok.tokensBefore === "NaN") assert.ok(ourCompact, jsonl);
        else if (ourCompact) assert.equal(ourCompact.kind, "nan", `we say /compact throws; pi's does not\n${jsonl}`);
      }),
      { numRuns: RUNS },
    );
    console.log(`estimate failures: ${JSON.stringify(stats)}`);
    assert.ok(stats.footerFails > RUNS / 20, "the generator reaches failing footers");
    assert.ok(stats.compactFails > RUNS / 20, "and failing /compact");
    assert.ok(stats.contextFails > RUNS / 50, "and contexts pi cannot build");
  });

  it("the CLI says pi fails where pi has no number: inspect, trim --dry-run, doctor", async () => {
    const jsonl = sessionOf([
      { kind: "user", content: "hi" },
      { kind: "assistant", content: [{ type: "text", text: "ok" }], usage: 50, stopReason: "stop" },
      { kind: "user", content: "more" },
      { kind: "edit", target: 2, replacement: { content: [{ type: "text" }, null] } },
    ]);
    const pi = await oracle.failures({ entriesJsonl: jsonl });
    assert.equal(verdict(pi.estimate), "throws", "pi's footer throws on it");
    const file = writeOldSession(path.join(tmp, "k3.jsonl"), jsonl);
    const inspect = await runCli(["inspect", file, "--agent-dir", NO_AGENT]);
    assert.match(
      inspect.out,
      /^context {5}pi 1\.6\.0 cannot estimate this context: its estimateTokens throws on user message e2 \(line 4\): a block of the content is null \(from its context edit's replacement\)\.$/m,
    );
    assert.doesNotMatch(inspect.out, /^context +\d/m, "no number in the context row");
    const json = JSON.parse((await runCli(["inspect", file, "--agent-dir", NO_AGENT, "--json"])).out) as {
      estimateFailure: { kind: string; entryId: string; editId: string };
    };
    assert.deepEqual(
      [json.estimateFailure.kind, json.estimateFailure.entryId, json.estimateFailure.editId],
      ["throws", "e2", "e3"],
    );
    const trim = await runCli(["trim", file, "e2", "--dry-run", "--agent-dir", NO_AGENT]);
    assert.match(trim.out, /^Context \(pi has no estimate\) → 2 tokens\.$/m);
    assert.doesNotMatch(trim.out, /by pi's estimate/);
    const doctor = await runCli(["doctor", file, "--agent-dir", NO_AGENT, "--json"]);
    const findings = (JSON.parse(doctor.out) as { findings: { code: string; severity: string; entryId: string }[] })
      .findings;
    assert.deepEqual(
      findings.filter((f) => f.code === "estimate-fails").map((f) => [f.severity, f.entryId]),
      [["error", "e2"]],
    );
    assert.equal(doctor.code, 1);
  });
});

describe("lines pi cannot open, lines pi skips, every dangling reference (issue 43, kind 5)", () => {
  const t = T;
  const user = (id: string, parentId: string | null, content = "hi") => ({
    type: "message",
    id,
    parentId,
    timestamp: t,
    message: { role: "user", content, timestamp: 1 },
  });
  const jsonlOf = (lines: object[]) =>
    `${[{ type: "session", version: 3, id: "s", timestamp: t, cwd: "/tmp/p" }, ...lines].map((l) => JSON.stringify(l)).join("\n")}\n`;
  const doctor = async (file: string, ...flags: string[]) => {
    const r = await runCli(["doctor", file, "--agent-dir", NO_AGENT, "--json", ...flags]);
    return {
      code: r.code,
      findings: (JSON.parse(r.out) as { findings: { code: string; severity: string; message: string }[] }).findings,
    };
  };

  it("a message entry without message on the branch: pi cannot open the session; doctor error (exit 1), a leaf marker repairs it", async () => {
    const jsonl = jsonlOf([
      user("u1", null),
      { type: "message", id: "m1", parentId: "u1", timestamp: t },
      user("u2", "m1"),
    ]);
    const pi = await oracle.failures({ entriesJsonl: jsonl });
    assert.ok("error" in pi.projection && /reading 'role'/.test(pi.projection.error), JSON.stringify(pi.projection));
    assert.ok("error" in pi.sessionContext);
    const file = writeOldSession(path.join(tmp, "k5-on.jsonl"), jsonl);
    const inspect = await runCli(["inspect", file, "--agent-dir", NO_AGENT]);
    assert.match(
      inspect.out,
      /^context {5}pi 1\.6\.0 cannot open this session, at message m1 \(line 3\): it has no message/m,
    );
    const before = await doctor(file);
    assert.equal(before.code, 1, "non-zero doctor");
    const f = before.findings.find((x) => x.code === "missing-message")!;
    assert.equal(f.severity, "error");
    assert.match(f.message, /pi cannot open this session/);
    assert.doesNotMatch(f.message, /pi skips this line too/);
    const repaired = await doctor(file, "--repair");
    assert.equal(repaired.code, 0);
    const after = await oracle.failures({ entriesJsonl: fs.readFileSync(file, "utf8") });
    assert.ok("ok" in after.projection, "pi builds the context after the repair");
    assert.deepEqual("ok" in after.branch && after.branch.ok.slice(0, 1), ["u1"]);
  });

  it("off the branch: pi opens the session; a warning that names what would fail, not 'pi skips'", async () => {
    const jsonl = jsonlOf([
      user("u1", null),
      { type: "message", id: "m1", parentId: "u1", timestamp: t, message: null },
      user("u2", "u1"),
    ]);
    const pi = await oracle.failures({ entriesJsonl: jsonl });
    assert.ok("ok" in pi.projection);
    assert.equal(pi.entryCount, 3, "pi keeps the line as an entry");
    const file = writeOldSession(path.join(tmp, "k5-off.jsonl"), jsonl);
    const { code, findings } = await doctor(file);
    const f = findings.find((x) => x.code === "missing-message")!;
    assert.equal(f.severity, "warning");
    assert.match(f.message, /not on the current branch, so pi opens the session/);
    assert.doesNotMatch(f.message, /pi skips this line too/);
    assert.equal(code, 0);
  });

  it("lines pi really skips keep 'pi skips this line too' (pi's entry count agrees)", async () => {
    const jsonl = `${jsonlOf([user("u1", null)])}{"broken\nnull\n${JSON.stringify(user("u2", "u1"))}\n`;
    const pi = await oracle.failures({ entriesJsonl: jsonl });
    assert.equal(pi.entryCount, 2, "pi skips the malformed line and the null");
    const file = writeOldSession(path.join(tmp, "k5-skip.jsonl"), jsonl);
    const { findings } = await doctor(file);
    const skipped = findings.filter((x) => x.code === "malformed-line" || x.code === "not-an-entry");
    assert.equal(skipped.length, 2);
    for (const s of skipped) assert.match(s.message, /pi skips this line too/);
  });

  it("every dangling reference, also off the branch: a context edit's missing target, a label's, a compaction's firstKeptEntryId", async () => {
    const jsonl = jsonlOf([
      user("u1", null),
      user("b1", "u1", "a branch"),
      { type: "context_edit", id: "e1", parentId: "b1", timestamp: t, targetId: "gone", replacement: null },
      { type: "label", id: "l1", parentId: "e1", timestamp: t, targetId: "nowhere", label: "x" },
      {
        type: "compaction",
        id: "c1",
        parentId: "l1",
        timestamp: t,
        summary: "s",
        firstKeptEntryId: "zz",
        tokensBefore: 1,
      },
      user("u2", "u1", "the current branch"),
    ]);
    const pi = await oracle.failures({ entriesJsonl: jsonl });
    assert.deepEqual("ok" in pi.branch && pi.branch.ok, ["u1", "u2"], "the dangling entries are off pi's branch");
    const file = writeOldSession(path.join(tmp, "k5-dangling.jsonl"), jsonl);
    const { findings } = await doctor(file);
    assert.deepEqual(
      findings
        .filter((f) => ["edit-target-missing", "label-target-missing", "first-kept-missing"].includes(f.code))
        .map((f) => [f.code, f.severity, /not on the current branch/.test(f.message)]),
      [
        ["edit-target-missing", "info", true],
        ["label-target-missing", "info", true],
        ["first-kept-missing", "info", true],
      ],
    );
  });
});

describe("pi's leaf when the last line is not a normal entry (issue 43, kind 4)", () => {
  const tails = fc.constantFrom<unknown>(
    42,
    [],
    [1, 2],
    "a string",
    true,
    { type: "leaf", targetId: "e0" },
    { type: "leaf", parentId: "PARENT" },
    { type: "custom", id: { x: 1 }, parentId: "PARENT" },
    { type: "message", id: 7, parentId: "PARENT", message: { role: "user", content: "a message with a number id" } },
    { type: "message", parentId: "PARENT", message: { role: "user", content: "a message without id" } },
    { type: "custom", id: "", parentId: "PARENT" },
    { type: "custom", id: 0, parentId: "PARENT" },
    { type: "label", id: false, parentId: "PARENT", targetId: "e0", label: "x" },
  );

  it(`random sessions ending in such a line (${Math.ceil(RUNS / 2)} runs): pi's numbers, no leaf pi-context names, a doctor error`, async () => {
    const stats = { sessions: 0, withChain: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(commonEntryArb, { minLength: 1, maxLength: 8 }),
        tails,
        fc.nat(),
        async (specs, tail, at) => {
          const base = sessionOf(specs as Record<string, unknown>[]);
          const ids = base
            .trimEnd()
            .split("\n")
            .slice(1)
            .map((l) => (JSON.parse(l) as { id: string }).id);
          const parent = ids.length > 0 ? ids[at % ids.length]! : "not-in-the-file";
          const line = JSON.stringify(tail).replace('"PARENT"', JSON.stringify(parent));
          const jsonl = `${base}${line}\n`;
          const pi = await oracle.failures({ entriesJsonl: jsonl });
          if (!("ok" in pi.projection)) return;
          stats.sessions++;
          if (line.includes(parent)) stats.withChain++;
          const session = SessionFile.fromBytes(jsonl);
          const analysis = analyzeLoaded(session, { agentDir: NO_AGENT, projectSettings: "never" });
          const inspect = analysis.inspect;
          assert.ok(inspect.piLeaf, `no odd leaf seen\n${jsonl}`);
          assert.equal(inspect.leafId, null);
          const piEstimate = verdict(pi.estimate);
          if (typeof piEstimate === "number") {
            assert.equal(inspect.estimateFailure, undefined, jsonl);
            assert.equal(inspect.contextTokens, piEstimate, `pi's number at its own leaf\n${jsonl}`);
          } else assert.ok(inspect.estimateFailure, jsonl);
          assert.equal(inspect.piLeaf.branchEmpty, "ok" in pi.branch && pi.branch.ok.length === 0, jsonl);
          const report = checkHealth(analysis);
          assert.deepEqual(
            report.findings.filter((f) => f.code === "leaf-not-an-entry").map((f) => f.severity),
            ["error"],
          );
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    console.log(`odd leaves: ${JSON.stringify(stats)}`);
  });

  it("inspect names it, doctor (exit 1) offers a leaf marker; after --repair pi resumes at the conversation pi-context showed", async () => {
    for (const tail of ['{"type":"leaf","targetId":"e1"}', "42", '{"type":"custom","id":{"x":1},"parentId":"e0"}']) {
      const jsonl = `${sessionOf([
        { kind: "user", content: "hi" },
        { kind: "assistant", content: [{ type: "text", text: "ok" }], usage: 50, stopReason: "stop" },
      ])}${tail}\n`;
      const pi = await oracle.failures({ entriesJsonl: jsonl });
      const file = writeOldSession(path.join(tmp, `k4-${tail.length}.jsonl`), jsonl);
      const inspect = await runCli(["inspect", file, "--agent-dir", NO_AGENT]);
      assert.match(inspect.out, /^entries {5}2; leaf: .* — line 4 is .*, not an entry with a string id/m, tail);
      assert.equal(
        (
          JSON.parse((await runCli(["inspect", file, "--agent-dir", NO_AGENT, "--json"])).out) as {
            contextTokens: number;
          }
        ).contextTokens,
        verdict(pi.estimate),
        "pi's number",
      );
      const doctor = await runCli(["doctor", file, "--agent-dir", NO_AGENT]);
      assert.equal(doctor.code, 1);
      assert.match(doctor.out, /error {3}leaf-not-an-entry {2}\(line 4\)/);
      const repair = await runCli(["doctor", file, "--agent-dir", NO_AGENT, "--repair"]);
      assert.equal(repair.code, 0, repair.err);
      const after = await oracle.failures({ entriesJsonl: fs.readFileSync(file, "utf8") });
      const marker = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { id: string };
      assert.equal(after.leafId, marker.id, "pi's leaf is the marker");
      assert.deepEqual("ok" in after.branch && after.branch.ok, ["e0", "e1", marker.id]);
      assert.equal(verdict(after.estimate), 50, "pi's numbers are the conversation's again");
    }
  });
});
