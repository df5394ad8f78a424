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
import { runCli, writeOldSession } from "../support/cli";
import { REPO_ROOT } from "../support/paths";

type Attempt<T> = { ok: T } | { error: string };
interface FailuresView {
  open: Attempt<boolean>;
  leafId: unknown;
  leafIdType: string;
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
const usage = (total: number) => ({
  input: total,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: total,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

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
  null,
  { content: "replaced" },
  { content: [{ type: "text", text: "replaced" }] },
  { content: [{ type: "text" }] },
  { content: [{ type: "text", text: 3 }] },
  { content: [null] },
  { content: [{ type: "thinking" }] },
);

const entryArb = fc.oneof(
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
        line = message({
          role: "assistant",
          content: s.content,
          api: "openai-completions",
          provider: "p",
          model: "m",
          usage: usage(s.usage as number),
          stopReason: s.stopReason,
        });
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
    const stats = { sessions: 0, footerFails: 0, compactFails: 0, nan: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(entryArb, { minLength: 1, maxLength: 12 }), async (specs) => {
        const jsonl = sessionOf(specs as Record<string, unknown>[]);
        const pi = await oracle.failures({ entriesJsonl: jsonl });
        if (!("ok" in pi.projection)) return; // pi cannot even build the context (an edit without replacement…)
        stats.sessions++;
        const session = SessionFile.fromBytes(jsonl);
        const inspect = analyzeLoaded(session, { agentDir: NO_AGENT, projectSettings: "never" }).inspect;
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
