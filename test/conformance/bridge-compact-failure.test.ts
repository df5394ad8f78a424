/**
 * When pi's own compaction fails, through the live bridge in the REAL pi 1.6.0 (`pi --mode rpc`,
 * Node 22) against the scripted OpenAI-compatible server (issue 44 item 10):
 * - pi's auto-compaction at the threshold whose summary hits the model's output limit (pi #9512:
 *   `finish_reason: "length"`) fails in pi; the bridge pushes pi's `session_compact_failed` (reason,
 *   pi's error text) in the state, once, marked as not ours; a failing `compact` a client asked for
 *   is marked as the client's (its response carries the error);
 * - a summary made by another summarizer (`compact` with `summary`, bridge 1.3.0): pi appends it as
 *   its own compaction (pi's `tokensBefore`, our cut and file lists, `fromHook`), asks its model
 *   nothing, and loads the file; a summary planned for another cut is refused, nothing written.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { readAnnouncements } from "../../src/bridge/announce";
import { BRIDGE_VERSION, type Announcement, type BridgeState } from "../../src/bridge/protocol";
import { planCompaction, providedCompactionOf } from "../../src/core/flows/compact";
import { BridgeError, connectBridge, type BridgeConnection } from "../../src/liveBridge/client";
import { installBridgeFile } from "../../src/liveBridge/installFile";
import { ensureBridgeBundle } from "../support/bridge-bundle";
import { PiRpc, readSessionLines, REPO_ROOT, writeScriptedAgentDir } from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";

interface Oracle {
  loadCheck(request: { file: string }): Promise<{ leafId: string | null; unchangedOnOpen: boolean }>;
  close(): Promise<void>;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bridge-failure-"));
const home = path.join(tmp, "home");
const agentDir = path.join(tmp, "agent");
let server: ScriptedServer;
let oracle: Oracle;
const running: PiRpc[] = [];
let n = 0;

before(async () => {
  const bundle = ensureBridgeBundle();
  fs.mkdirSync(home, { recursive: true });
  server = await startScriptedServer({ text: "## Goal\nScripted summary.\n\n## Progress\n- done" });
  writeScriptedAgentDir(agentDir, {
    baseURL: server.baseURL,
    contextWindow: 16000,
    compaction: { reserveTokens: 4000, keepRecentTokens: 1000 },
  });
  installBridgeFile(agentDir, bundle);
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});

after(async () => {
  for (const pi of running) await pi.kill().catch(() => undefined);
  await oracle?.close();
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function startPi(): Promise<{ pi: PiRpc; connection: BridgeConnection; file: string }> {
  const cwd = path.join(tmp, `project-${++n}`);
  fs.mkdirSync(cwd, { recursive: true });
  const pi = await PiRpc.start({ cwd, agentDir, home });
  running.push(pi);
  await turn(pi, "t1: start the parser refactoring", "Answer 1.");
  const found = readAnnouncements(agentDir).filter(
    (r): r is { file: string; announcement: Announcement } => "announcement" in r && r.announcement.pid === pi.pid,
  );
  assert.equal(found.length, 1);
  assert.equal(found[0]!.announcement.bridgeVersion, BRIDGE_VERSION);
  const connection = await connectBridge(found[0]!.announcement, { timeoutMs: 5000 });
  const file = (await pi.command({ type: "get_state" })).data.sessionFile as string;
  return { pi, connection, file };
}

/** One turn with ~500 tokens of filler (something to compact); `usage`: what the answer reports. */
async function turn(pi: PiRpc, prompt: string, answer: string, usage?: Record<string, unknown>): Promise<void> {
  server.script({ text: `${answer}\n\n${"Details of the work. ".repeat(60)}`, ...(usage ? { usage } : {}) });
  await pi.prompt(`${prompt}\n${"Context line for the task. ".repeat(40)}`);
}

async function waitForState(
  connection: BridgeConnection,
  check: (s: BridgeState) => boolean,
  timeoutMs = 20_000,
): Promise<BridgeState> {
  if (check(connection.state)) return connection.state;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching state within ${timeoutMs} ms; last ${JSON.stringify(connection.state)}`));
    }, timeoutMs);
    const off = connection.onState((s) => {
      if (!check(s)) return;
      clearTimeout(timer);
      off();
      resolve(s);
    });
  });
}

describe("pi's failed compactions and summaries of another summarizer, through the live bridge", () => {
  it("an auto-compaction whose summary hits the output limit: pushed with pi's reason, once, not ours", async () => {
    const { pi, connection, file } = await startPi();
    await turn(pi, "t2: go on", "Answer 2.");
    const first: BridgeState = connection.state;
    assert.equal(first.compactionFailure, undefined, "no failure before");
    const before = readSessionLines(file).length;
    // the next answer reports more than pi's threshold (16,000 − 4,000): pi compacts after the turn,
    // and its summary request is answered with finish_reason "length" (a split turn asks twice)
    server.script(
      {
        text: `Answer 3.\n\n${"Details of the work. ".repeat(60)}`,
        usage: { prompt_tokens: 12_500, completion_tokens: 200, total_tokens: 12_700 },
      },
      { text: "## Goal\nA summary cut off at the", finishReason: "length" },
      { text: "## Goal\nA prefix cut off at the", finishReason: "length" },
    );
    await pi.prompt(`t3: the last step\n${"Context line for the task. ".repeat(40)}`);
    const state = await waitForState(connection, (s) => s.compactionFailure !== undefined);
    const f = state.compactionFailure!;
    assert.deepEqual(
      { seq: f.seq, reason: f.reason, aborted: f.aborted, byClient: f.byClient, fromExtension: f.fromExtension },
      { seq: 1, reason: "threshold", aborted: false, byClient: false, fromExtension: false },
    );
    assert.equal(
      f.errorMessage,
      "Auto-compaction failed: Summarization failed: generation hit the token cap and the summary is incomplete",
    );
    // nothing was written for it
    assert.ok(
      readSessionLines(file)
        .slice(before)
        .every((e) => e.type !== "compaction"),
    );
    // the state keeps the same failure (seq 1) until the next one: a client reports it once
    const again = await connection.request("state", {});
    assert.equal(again.compactionFailure?.seq, 1);
    server.reset(); // an answer for a second summary request that was not needed
    connection.close();
  });

  it("a summary from another summarizer: pi appends it as its compaction, asks its model nothing, loads the file", async () => {
    const { pi, connection, file } = await startPi();
    for (let i = 2; i <= 4; i++) await turn(pi, `t${i}: step ${i}`, `Answer ${i}.`);
    await waitForState(connection, (s) => s.idle);
    const plan = await planCompaction(file, { agentDir, guardSeconds: 0, procRoot: null, maxOutputTokens: 2000 });
    const summary = providedCompactionOf(plan, { summary: "## Goal\nThe parser refactoring (our summarizer).\n" });
    const requests = server.requests.length;
    const result = await connection.request("compact", { summary }, { timeoutMs: 30_000 });
    assert.equal(server.requests.length, requests, "pi's model was not asked");
    const entry = readSessionLines(file).at(-1)!;
    assert.equal(entry.type, "compaction");
    assert.equal(entry.id, result.entryId);
    assert.equal(entry.summary, summary.summary);
    assert.equal(entry.firstKeptEntryId, plan.preparation.firstKeptEntryId);
    assert.equal(entry.tokensBefore, plan.preparation.tokensBefore, "pi's own tokensBefore = our plan's");
    assert.equal(entry.fromHook, true, "pi marks a summary an extension gave it");
    assert.deepEqual(entry.details, summary.details);
    const load = await oracle.loadCheck({ file });
    assert.equal(load.leafId, entry.id);
    assert.equal(load.unchangedOnOpen, true);
    // pi goes on from its new compaction
    await turn(pi, "t5: after our summary", "Answer 5.");
    const t5 = readSessionLines(file).find(
      (e) => e.type === "message" && e.message?.role === "user" && JSON.stringify(e.message).includes("t5:"),
    );
    assert.equal(t5?.parentId, entry.id);
    assert.equal(connection.state.compactionFailure, undefined);
    connection.close();
  });

  it("a summary planned for another cut is refused: nothing written; the failure is the client's", async () => {
    const { pi, connection, file } = await startPi();
    for (let i = 2; i <= 4; i++) await turn(pi, `t${i}: step ${i}`, `Answer ${i}.`);
    await waitForState(connection, (s) => s.idle);
    const plan = await planCompaction(file, { agentDir, guardSeconds: 0, procRoot: null, maxOutputTokens: 2000 });
    const summary = { ...providedCompactionOf(plan, { summary: "## Goal\nstale" }), firstKeptEntryId: "deadbeef" };
    const bytes = fs.readFileSync(file);
    const error = await connection.request("compact", { summary }, { timeoutMs: 30_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.code, "failed");
    assert.match(error.message, /the session changed since it was planned\. Nothing was written\./);
    assert.ok(fs.readFileSync(file).equals(bytes), "nothing written");
    const state = await waitForState(connection, (s) => s.compactionFailure !== undefined);
    assert.equal(state.compactionFailure!.byClient, true, "a client's own failure: its response said so");
    // and pi works on
    await turn(pi, "t5: still fine", "Answer 5.");
    connection.close();
  });
});
