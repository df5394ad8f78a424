/**
 * One model of who has a session open, one route for every action (issue 40), from the CLI, with
 * the REAL pi 1.6.0 and the shipped live bridge, and the machine's real process table (not the
 * test runners' empty one):
 *
 * - pi A runs with the bridge on session A. Session B of the same folder was written by another pi
 *   that has since quit, after pi A started. `trim`, `switch`, `compact` and `doctor --repair` on B
 *   are done by our file flow (before: refused, "pi is running on it" — the folder rule won over the
 *   bridge's announcement of A);
 * - the same commands on A are done by pi A itself through its bridge, and say so;
 * - two trims in a row on an idle session both succeed (our own last write is no evidence); a trim
 *   right after someone else wrote is refused, with `--force` offered; `--force` goes ahead.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { GUARD_PROCESSES_ENV } from "../../src/core/proc/guardTable";
import { installBridgeFile } from "../../src/liveBridge/installFile";
import { ensureBridgeBundle } from "../support/bridge-bundle";
import { runCli } from "../support/cli";
import { PiRpc, readSessionLines, writeScriptedAgentDir, type SessionLine } from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-access-"));
const home = path.join(tmp, "home");
const agentDir = path.join(tmp, "agent");
const project = path.join(tmp, "project");
let server: ScriptedServer;
const running: PiRpc[] = [];
const savedGuard = process.env[GUARD_PROCESSES_ENV];

before(async () => {
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, "notes.txt"), "notes\n".repeat(200));
  server = await startScriptedServer({ text: "Fallback answer." });
  writeScriptedAgentDir(agentDir, {
    baseURL: server.baseURL,
    contextWindow: 200_000,
    compaction: { reserveTokens: 16_384, keepRecentTokens: 200 },
  });
  installBridgeFile(agentDir, ensureBridgeBundle());
  // the machine's process table: the pis of this test are real processes in the project folder
  delete process.env[GUARD_PROCESSES_ENV];
});

after(async () => {
  if (savedGuard === undefined) delete process.env[GUARD_PROCESSES_ENV];
  else process.env[GUARD_PROCESSES_ENV] = savedGuard;
  for (const pi of running) await pi.kill().catch(() => undefined);
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function startPi(): Promise<PiRpc> {
  const pi = await PiRpc.start({ cwd: project, agentDir, home });
  running.push(pi);
  return pi;
}

/** Two turns: one with a `read` tool call (a result to trim), one plain answer. */
async function work(pi: PiRpc, tag: string): Promise<string> {
  server.script(
    { toolCall: true, tool: { id: `call-${tag}`, name: "read", arguments: JSON.stringify({ path: "notes.txt" }) } },
    { text: `Read the notes (${tag}).` },
  );
  await pi.prompt(`read notes.txt for ${tag}`);
  server.script({ text: `Second answer of ${tag}.` });
  await pi.prompt(`and now the second step of ${tag}`);
  return (await pi.command({ type: "get_state" })).data.sessionFile as string;
}

const resultId = (lines: SessionLine[], tag: string) =>
  lines.find((e) => e.type === "message" && (e.message as { toolCallId?: string }).toolCallId === `call-${tag}`)!.id;
const firstUser = (lines: SessionLine[]) => lines.find((e) => e.type === "message" && e.message?.role === "user")!.id;
const old = (file: string) => {
  const t = new Date(Date.now() - 600_000);
  fs.utimesSync(file, t, t);
};

describe("who has a session open decides the route (real pi 1.6.0, real bridge, real process table)", () => {
  let fileA: string;
  let fileB: string;
  let piA: PiRpc;

  before(async () => {
    piA = await startPi();
    fileA = await work(piA, "a");
    // B: another pi in the same folder, started after pi A, writes B and quits
    const piB = await startPi();
    fileB = await work(piB, "b");
    await piB.close();
    old(fileB); // a while ago (the write-age guard is not what this is about)
  });

  it("B (idle, same folder as the running pi A): trim, again, switch, compact and repair are ours", async () => {
    const lines = readSessionLines(fileB);
    const trim = await runCli(["trim", fileB, resultId(lines, "b"), "--agent-dir", agentDir]);
    assert.equal(trim.code, 0, trim.err);
    assert.match(trim.out, /^Trimmed: wrote 1 context edit/m);
    // right again: our own last write is no reason to refuse
    const restore = await runCli(["restore", fileB, resultId(lines, "b"), "--agent-dir", agentDir]);
    assert.equal(restore.code, 0, restore.err);
    const sw = await runCli(["switch", fileB, firstUser(lines), "--agent-dir", agentDir]);
    assert.equal(sw.code, 0, sw.err);
    assert.match(sw.out, /^switched: pi resumes at/m);
    // back to B's last answer, then compact with our summarizer (the scripted server)
    const back = await runCli(["switch", fileB, lines.at(-1)!.id, "--agent-dir", agentDir]);
    assert.equal(back.code, 0, back.err);
    server.script({ text: "## Goal\nSummary of B." });
    const compact = await runCli([
      "compact",
      fileB,
      "--yes",
      "--agent-dir",
      agentDir,
      "--base-url",
      server.baseURL,
      "--model",
      "scripted",
    ]);
    assert.equal(compact.code, 0, compact.err);
    assert.match(compact.out, /^Compacted: wrote compaction/m);
    const doctor = await runCli(["doctor", fileB, "--repair", "--agent-dir", agentDir]);
    assert.ok(doctor.code === 0, doctor.err);
    assert.doesNotMatch(`${trim.err}${sw.err}${compact.err}${doctor.err}`, /Refusing/);
  });

  it("A (open in pi A with the bridge): the running pi does each action, and the CLI says so", async () => {
    const lines = readSessionLines(fileA);
    const before = readSessionLines(fileA).length;
    const trim = await runCli(["trim", fileA, resultId(lines, "a"), "--agent-dir", agentDir]);
    assert.equal(trim.code, 0, trim.err);
    assert.match(trim.out, new RegExp(`pi 1\\.6\\.0 \\(process ${piA.pid}\\) did the trim through its live bridge`));
    const after = readSessionLines(fileA);
    assert.equal(after.length, before + 1);
    assert.equal(after.at(-1)!.type, "context_edit");
    // pi's own state knows it: its next request carries the note (pi appended it through its session manager)
    const sw = await runCli(["switch", fileA, firstUser(lines), "--agent-dir", agentDir]);
    assert.equal(sw.code, 0, sw.err);
    assert.match(sw.out, new RegExp(`pi 1\\.6\\.0 \\(process ${piA.pid}\\) switched through its live bridge`));
    const state = (await piA.command({ type: "get_state" })).data;
    assert.equal(state.sessionFile, fileA);
    const back = await runCli(["switch", fileA, after.at(-2)!.id, "--agent-dir", agentDir]);
    assert.equal(back.code, 0, back.err);
    // more work in pi A: something to compact
    for (let i = 0; i < 3; i++) {
      server.script({ text: `Long answer ${i}. ${"More details of the work on A. ".repeat(60)}` });
      await piA.prompt(`step ${i} of A ${"with context. ".repeat(40)}`);
    }
    server.script({ text: "## Goal\nSummary of A by pi." });
    const compact = await runCli(["compact", fileA, "--yes", "--agent-dir", agentDir]);
    assert.equal(compact.code, 0, compact.err);
    assert.match(
      compact.out,
      new RegExp(`pi 1\\.6\\.0 \\(process ${piA.pid}\\) compacted the session through its live bridge`),
    );
    assert.ok(
      readSessionLines(fileA).some((e) => e.type === "compaction"),
      "pi wrote its compaction",
    );
  });

  it("a trim right after someone else wrote is refused (nothing written, --force offered); --force goes ahead", async () => {
    // B's last answer (kept by the compaction above)
    const target = readSessionLines(fileB)
      .filter((e) => e.type === "message" && e.message?.role === "assistant")
      .at(-1)!.id;
    fs.utimesSync(fileB, new Date(), new Date()); // pi (or anyone) wrote it just now
    const bytes = fs.readFileSync(fileB);
    const refused = await runCli(["trim", fileB, target, "--agent-dir", agentDir]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /^Refusing to edit the context of this session while pi may have it open: the session file was written \d s ago by another program/,
    );
    assert.match(refused.err, /--force goes ahead/);
    assert.ok(fs.readFileSync(fileB).equals(bytes), "byte-identical");
    const forced = await runCli(["trim", fileB, target, "--agent-dir", agentDir, "--force"]);
    assert.equal(forced.code, 0, forced.err);
  });
});
