/**
 * The write flows' preflight checks against pi 1.6.0 itself (issue 43, kinds 2 and 1):
 * - a session pi cannot open at its leaf — duplicate ids closing a parent cycle on the leaf's
 *   path (pi's `getBranch` runs until it fails, in a child process with a deadline), a message entry
 *   without message on the branch, a last line that is no entry pi can name: `trim`, `restore`,
 *   `switch` and `compact --yes` refuse before anything is sent or written (the summarizer gets no
 *   request), name the problem and the doctor's repair; after `doctor --repair` pi opens it;
 * - `switch` to an entry whose context pi would send tool results without their call (pi-ai is the
 *   judge): refused, unless `--allow-unpaired`.
 */

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { SessionBuilder } from "../support/session-builder";
import { runCli, writeOldSession } from "../support/cli";
import { REPO_ROOT } from "../support/paths";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";

interface Oracle {
  failures(request: { entriesJsonl: string }): Promise<{ projection: { ok?: unknown; error?: string } }>;
  llm(request: { entriesJsonl: string; leaf?: string }): Promise<{ orphanResults: { entryId: string }[] }>;
  loadCheck(request: { file: string }): Promise<{ leafId: string; pathIds: string[] }>;
  close(): Promise<void>;
}

let oracle: Oracle;
let server: ScriptedServer;
let node22: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-preflight-"));
const AGENT = ["--agent-dir", path.join(tmp, "no-agent")];
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
  const setup = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/setup.mjs")).href)) as {
    ensureConformanceInstall(): { node22Path: string };
  };
  node22 = setup.ensureConformanceInstall().node22Path;
  server = await startScriptedServer();
});
after(async () => {
  await oracle?.close();
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A conversation long enough to compact (keepRecentTokens 20000 by default: big tool outputs). */
function conversation(): SessionBuilder {
  return new SessionBuilder(tmp)
    .user("u1", "read the files")
    .assistant("a1", { calls: [{ id: "c1" }], usage: 9000 })
    .result("r1", "c1", "x".repeat(60_000))
    .assistant("a2", { text: "read it", usage: 24000 })
    .user("u2", "and the next one")
    .assistant("a3", { calls: [{ id: "c2" }], usage: 25000 })
    .result("r2", "c2", "y".repeat(60_000))
    .assistant("a4", { text: "done", usage: 40000 });
}

/** Every write command on `file`: each refused (exit 1), nothing written, no summarizer request. */
async function assertEveryWriteRefused(file: string, problem: RegExp): Promise<void> {
  const bytes = fs.readFileSync(file);
  server.reset();
  const commands: string[][] = [
    ["trim", file, "r1", ...AGENT],
    ["restore", file, "r1", ...AGENT],
    ["switch", file, "u2", "--summarize", "--base-url", server.baseURL, ...AGENT],
    ["compact", file, "--yes", "--base-url", server.baseURL, ...AGENT],
  ];
  for (const args of commands) {
    const r = await runCli(args);
    assert.equal(r.code, 1, `${args[0]}: ${r.out}\n${r.err}`);
    assert.match(r.err, /pi 1\.6\.0 cannot open this session where pi-context would write:/, args[0]);
    assert.match(r.err, problem, args[0]);
    assert.match(
      r.err,
      /Refusing to .* it: nothing was sent or written\. Repair it first with pi-context doctor --repair/,
    );
    assert.ok(fs.readFileSync(file).equals(bytes), `${args[0]} wrote nothing`);
  }
  assert.equal(server.requests.length, 0, "no summarizer tokens were spent");
}

describe("write flows refuse a session pi cannot open (issue 43, kind 2)", () => {
  it("duplicate ids close a parent cycle on the leaf's path: pi's getBranch never returns; every write refuses, doctor --repair fixes it", async () => {
    // the second "a3" makes u2 → a3 → u2 … : the leaf's path loops
    const jsonl = `${conversation().jsonl()}${JSON.stringify({
      type: "message",
      id: "a3",
      parentId: "a4",
      timestamp: "2026-01-01T01:00:00.000Z",
      message: { role: "user", content: "again", timestamp: 1 },
    })}\n${JSON.stringify({ type: "label", id: "u2x", parentId: "a3", timestamp: "t", targetId: "u1", label: "l" })}\n`.replace(
      '"id":"u2","parentId":"a2"',
      '"id":"u2","parentId":"a3"',
    );
    const file = writeOldSession(path.join(tmp, "cycle.jsonl"), jsonl);
    // pi itself on a copy, in a child with a deadline: getBranch fails (array length) or runs out of time/memory
    const copy = path.join(tmp, "cycle-copy.jsonl");
    fs.copyFileSync(file, copy);
    const pi = spawnSync(
      node22,
      [
        "--max-old-space-size=256",
        path.join(REPO_ROOT, "test/conformance/oracle/oracle.mjs"),
        copy,
        "--no-project-settings",
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    assert.ok(pi.status !== 0 || pi.signal !== null, `pi opened the looping session:\n${pi.stdout.slice(0, 500)}`);
    await assertEveryWriteRefused(file, /The current branch runs into a parent cycle/);
    const repair = await runCli(["doctor", file, ...AGENT, "--repair"]);
    assert.equal(repair.code, 0, repair.err);
    const load = await oracle.loadCheck({ file });
    const marker = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { id: string };
    assert.equal(load.leafId, marker.id, "pi opens it at the doctor's marker");
  });

  it("a message entry without message on the branch, a last line that is not an entry: every write refuses", async () => {
    const missing = `${conversation().jsonl()}${JSON.stringify({ type: "message", id: "m1", parentId: "a4", timestamp: "t" })}\n`;
    assert.ok("error" in (await oracle.failures({ entriesJsonl: missing })).projection, "pi cannot build the context");
    await assertEveryWriteRefused(
      writeOldSession(path.join(tmp, "missing.jsonl"), missing),
      /message entry m1 has message undefined/,
    );
    const odd = `${conversation().jsonl()}{"type":"leaf","targetId":"a4"}\n`;
    await assertEveryWriteRefused(
      writeOldSession(path.join(tmp, "odd.jsonl"), odd),
      /The last line \(line 10\) is an entry with no id/,
    );
  });
});

describe("switch to a context with tool results without their call (issue 43, kind 1)", () => {
  it("refused, unless --allow-unpaired; pi-ai 1.6.0 agrees the target's context has orphaned results", async () => {
    // a batch written in the old order: the assistant's omit before its result's
    const jsonl = new SessionBuilder(tmp)
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }], usage: 100 })
      .result("r1", "c1", "output")
      .assistant("a2", { text: "ok", usage: 120 })
      .edit("e1", "a1", null)
      .edit("e2", "r1", null)
      .jsonl();
    assert.deepEqual(
      (await oracle.llm({ entriesJsonl: jsonl, leaf: "e1" })).orphanResults.map((o) => o.entryId),
      ["r1"],
      "at e1 pi sends r1 without its call",
    );
    const file = writeOldSession(path.join(tmp, "unpaired.jsonl"), jsonl);
    const before = fs.readFileSync(file);
    const dry = await runCli(["switch", file, "e1", "--dry-run", ...AGENT]);
    assert.match(dry.out, /^unpaired {6}tool result r1 \(read c1\) answers no call in the context/m);
    const refused = await runCli(["switch", file, "e1", ...AGENT]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /refused: at e1 pi would send 1 tool result without its call \(r1\)/);
    assert.ok(fs.readFileSync(file).equals(before), "nothing written");
    const anyway = await runCli(["switch", file, "e1", "--allow-unpaired", ...AGENT]);
    assert.equal(anyway.code, 0, anyway.err);
    const load = await oracle.loadCheck({ file });
    assert.ok(load.pathIds.includes("e1"));
    // the switch to a clean entry needs no flag
    const clean = await runCli(["switch", file, "e2", "--guard-seconds", "0", ...AGENT]);
    assert.equal(clean.code, 0, clean.err);
  });
});
