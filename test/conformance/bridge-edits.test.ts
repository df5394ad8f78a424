/**
 * Context edits through the live bridge inside the REAL pi 1.6.0 (`pi --mode rpc`, Node 22, the
 * shipped bridge bundle installed into a temporary agent dir), against the scripted
 * OpenAI-compatible server, which records every request pi sends:
 *
 * - pi idle: the edits our planner makes on the file are appended by pi at once (pi's own
 *   `appendContextEdit`, one entry per draft, chained from pi's leaf), pi's own
 *   `getContextUsage()` equals our estimate of the edited file, and the next request pi sends
 *   carries the note instead of the tool output;
 * - pi streaming: the batch is queued (state `queued`, the file unchanged), handed to pi at its
 *   `turn_end` boundary, appended after the turn's tool result, and the very next request of the
 *   same run carries the note (the request before it still had the output); state `applied`;
 * - pi's messages for bad targets, a leaf that moved, a queued batch cancelled (nothing appended).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { readAnnouncements } from "../../src/bridge/announce";
import type { Announcement, BridgeState } from "../../src/bridge/protocol";
import { planContextEdits } from "../../src/core/flows/contextEdit";
import { analyzeSession } from "../../src/core/rules/analyze";
import { BridgeError, connectBridge, type BridgeConnection } from "../../src/liveBridge/client";
import { installBridgeFile } from "../../src/liveBridge/installFile";
import { ensureBridgeBundle } from "../support/bridge-bundle";
import { PiRpc, readSessionLines, writeScriptedAgentDir, type SessionLine } from "../support/pi-rpc";
import { startScriptedServer, type RecordedRequest, type ScriptedServer } from "../support/scripted-openai";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bridge-edits-"));
const home = path.join(tmp, "home");
const agentDir = path.join(tmp, "agent");
let server: ScriptedServer;
const running: PiRpc[] = [];
let counter = 0;

/** 6,000 characters a test can find in a request. */
const BIG = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, "0")} of the BIG-FILE-MARKER\n`)
  .join("")
  .padEnd(6000, "x");

before(async () => {
  const bundle = ensureBridgeBundle();
  fs.mkdirSync(home, { recursive: true });
  server = await startScriptedServer({ text: "Fallback answer." });
  writeScriptedAgentDir(agentDir, {
    baseURL: server.baseURL,
    contextWindow: 16000,
    compaction: { reserveTokens: 4000, keepRecentTokens: 1000 },
  });
  installBridgeFile(agentDir, bundle);
});

after(async () => {
  for (const pi of running) await pi.kill().catch(() => undefined);
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function startPi(): Promise<{ pi: PiRpc; cwd: string }> {
  const cwd = path.join(tmp, `project-${++counter}`);
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(cwd, "big.txt"), BIG);
  fs.writeFileSync(path.join(cwd, "small.txt"), "small file\n");
  const pi = await PiRpc.start({ cwd, agentDir, home });
  running.push(pi);
  return { pi, cwd };
}

async function connect(pi: PiRpc): Promise<BridgeConnection> {
  const found = readAnnouncements(agentDir).filter(
    (r): r is { file: string; announcement: Announcement } => "announcement" in r && r.announcement.pid === pi.pid,
  );
  assert.equal(found.length, 1);
  return connectBridge(found[0]!.announcement, { timeoutMs: 5000 });
}

/** pi reads `file` with a tool call (`callId`), then answers `answer`. */
async function readTurn(pi: PiRpc, file: string, callId: string, answer: string): Promise<void> {
  server.script(
    { toolCall: true, tool: { id: callId, name: "read", arguments: JSON.stringify({ path: file }) } },
    { text: answer },
  );
  await pi.prompt(`please read ${file}`);
}

function resultOf(lines: SessionLine[], callId: string): SessionLine {
  const r = lines.find(
    (e) =>
      e.type === "message" &&
      e.message?.role === "toolResult" &&
      (e.message as { toolCallId?: string }).toolCallId === callId,
  );
  assert.ok(r, `a tool result for ${callId}`);
  return r;
}

/** The `tool` messages of a recorded request, by `tool_call_id`. */
function toolMessages(request: RecordedRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of (request.body.messages ?? []) as { role: string; tool_call_id?: string; content: unknown }[])
    if (m.role === "tool" && m.tool_call_id)
      out.set(m.tool_call_id, typeof m.content === "string" ? m.content : JSON.stringify(m.content));
  return out;
}

async function waitForState(connection: BridgeConnection, check: (s: BridgeState) => boolean, ms = 10_000) {
  if (check(connection.state)) return connection.state;
  return new Promise<BridgeState>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching state within ${ms} ms: ${JSON.stringify(connection.state)}`));
    }, ms);
    const off = connection.onState((s) => {
      if (check(s)) {
        clearTimeout(timer);
        off();
        resolve(s);
      }
    });
  });
}

describe("context edits through the live bridge in the real pi 1.6.0", () => {
  it("pi idle: appended by pi at once; pi's getContextUsage and its next request carry the note", async () => {
    const { pi } = await startPi();
    await readTurn(pi, "big.txt", "call_big", "Read the big file.");
    const file = (await pi.command({ type: "get_state" })).data.sessionFile as string;
    const result = resultOf(readSessionLines(file), "call_big");
    const connection = await connect(pi);
    try {
      const plan = await planContextEdits(file, [{ action: "omit", targetId: result.id }], {
        guardSeconds: 0,
        procRoot: null,
      });
      const prep = plan.preparation;
      assert.deepEqual(
        prep.edits.map((e) => `${e.targetId} ${e.effect}`),
        [`${result.id} note`],
      );
      const note = (prep.drafts[0]!.replacement as { content: { text: string }[] }).content[0]!.text;
      assert.match(note, /^\[pi-context: output of read big\.txt removed — 1,5\d\d tokens\]$/);
      const before = readSessionLines(file);
      const r = await connection.request("contextEdit", { drafts: prep.drafts, leafId: prep.leafId });
      assert.equal(r.status, "applied");
      assert.equal(r.entries.length, 1);
      assert.equal(r.entries[0]!.targetId, result.id);
      assert.equal(r.leafId, r.entries[0]!.id);
      // pi wrote exactly our draft, hanging off the leaf we planned at
      const lines = readSessionLines(file);
      assert.equal(lines.length, before.length + 1);
      const edit = lines.at(-1)!;
      assert.deepEqual(
        {
          type: edit.type,
          id: edit.id,
          parentId: edit.parentId,
          targetId: edit.targetId,
          replacement: edit.replacement,
        },
        {
          type: "context_edit",
          id: r.entries[0]!.id,
          parentId: prep.leafId,
          targetId: result.id,
          replacement: prep.drafts[0]!.replacement,
        },
      );
      // pi's own numbers = our estimate of the edited file = the planner's tokensAfter
      const usage = (await pi.command({ type: "get_session_stats" })).data.contextUsage as { tokens: number };
      const ours = await analyzeSession(file, { agentDir });
      assert.equal(usage.tokens, prep.tokensAfter.tokens);
      assert.equal(ours.inspect.contextTokens, usage.tokens);
      assert.ok(usage.tokens < prep.pureTokensBefore - 1400, `${usage.tokens} vs ${prep.pureTokensBefore}`);
      const pushed = await waitForState(connection, (s) => s.usage?.tokens === usage.tokens);
      assert.deepEqual(
        pushed.contextEdits?.map((b) => [b.batchId, b.status, b.entryIds]),
        [[r.batchId, "applied", [r.entries[0]!.id]]],
      );
      // the next request pi sends carries the note, not the file
      const from = server.requests.length;
      server.script({ text: "Next answer." });
      await pi.prompt("what did the file say?");
      const sent = server.requests.slice(from);
      assert.equal(sent.length, 1);
      assert.equal(toolMessages(sent[0]!).get("call_big"), note);
      assert.ok(!JSON.stringify(sent[0]!.body).includes("BIG-FILE-MARKER"), "the output is not sent");
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("pi streaming: queued, handed to pi at turn_end; the next request of the same run carries the note", async () => {
    const { pi } = await startPi();
    await readTurn(pi, "big.txt", "call_big", "Read the big file.");
    const file = (await pi.command({ type: "get_state" })).data.sessionFile as string;
    const big = resultOf(readSessionLines(file), "call_big");
    const connection = await connect(pi);
    try {
      const from = server.requests.length;
      server.script(
        { toolCall: true, tool: { id: "call_small", arguments: '{"path":"small.txt"}' }, chunkDelayMs: 1500 },
        { text: "Read the small file too." },
      );
      const since = pi.events.length;
      await pi.startPrompt("now read small.txt");
      await server.waitForRequests(from + 1, 10_000);
      await waitForState(connection, (s) => s.activity === "streaming");
      const plan = await planContextEdits(file, [{ action: "omit", targetId: big.id }], {
        guardSeconds: 0,
        procRoot: null,
      });
      const linesBefore = readSessionLines(file).length;
      const r = await connection.request("contextEdit", { drafts: plan.preparation.drafts });
      assert.equal(r.status, "queued");
      assert.deepEqual(r.entries, []);
      const queued = await waitForState(
        connection,
        (s) => s.contextEdits?.some((b) => b.batchId === r.batchId) ?? false,
      );
      assert.equal(queued.contextEdits!.find((b) => b.batchId === r.batchId)!.status, "queued");
      assert.equal(readSessionLines(file).filter((e) => e.type === "context_edit").length, 0, "nothing appended yet");
      assert.ok(readSessionLines(file).length >= linesBefore);
      await pi.waitFor((l) => l.type === "agent_settled", 30_000, since);
      const applied = await waitForState(
        connection,
        (s) => s.contextEdits?.find((b) => b.batchId === r.batchId)?.status === "applied",
      );
      const batch = applied.contextEdits!.find((b) => b.batchId === r.batchId)!;
      const lines = readSessionLines(file);
      const edit = lines.find((e) => e.type === "context_edit")!;
      assert.deepEqual(batch.entryIds, [edit.id]);
      assert.equal(edit.targetId, big.id);
      // appended at the turn boundary: after the new tool result, before the next answer
      const small = resultOf(lines, "call_small");
      assert.equal(edit.parentId, small.id);
      const answer = lines.find((e) => e.parentId === edit.id)!;
      assert.equal(answer.message?.role, "assistant");
      // the request that read small.txt still had the big output; the next one (same run) the note
      const sent = server.requests.slice(from);
      assert.equal(sent.length, 2);
      assert.ok(toolMessages(sent[0]!).get("call_big")!.includes("BIG-FILE-MARKER"));
      assert.equal(
        toolMessages(sent[1]!).get("call_big"),
        (plan.preparation.drafts[0]!.replacement as { content: { text: string }[] }).content[0]!.text,
      );
      assert.equal(toolMessages(sent[1]!).get("call_small"), "small file\n");
      const usage = (await pi.command({ type: "get_session_stats" })).data.contextUsage as { tokens: number };
      assert.equal((await analyzeSession(file, { agentDir })).inspect.contextTokens, usage.tokens);
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("an assistant removed while its tool runs: pi's boundary also omits the result that arrived since the plan (no orphan is sent)", async () => {
    const { pi } = await startPi();
    await readTurn(pi, "small.txt", "call_small", "Read the small file.");
    const file = (await pi.command({ type: "get_state" })).data.sessionFile as string;
    const connection = await connect(pi);
    try {
      const from = server.requests.length;
      server.script(
        {
          toolCall: true,
          tool: { id: "call_slow", name: "bash", arguments: JSON.stringify({ command: "sleep 2; echo slow-done" }) },
        },
        { text: "Ran it." },
      );
      const since = pi.events.length;
      await pi.startPrompt("run the slow command");
      // the call is in the file, its result is not (the tool is still running)
      let call: SessionLine | undefined;
      for (let i = 0; i < 100 && !call; i++) {
        call = readSessionLines(file).find((e) => JSON.stringify(e.message?.content ?? "").includes("call_slow"));
        if (!call) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(call, "the assistant's tool call was written");
      assert.ok(
        !readSessionLines(file).some(
          (e) => e.message?.role === "toolResult" && (e.message as { toolCallId?: string }).toolCallId === "call_slow",
        ),
      );
      const plan = await planContextEdits(file, [{ action: "omit", targetId: call.id }], {
        guardSeconds: 0,
        procRoot: null,
      });
      const r = await connection.request("contextEdit", { drafts: plan.preparation.drafts });
      assert.equal(r.status, "queued");
      await pi.waitFor((l) => l.type === "agent_settled", 30_000, since);
      const applied = await waitForState(
        connection,
        (s) => s.contextEdits?.find((b) => b.batchId === r.batchId)?.status === "applied",
      );
      const slow = resultOf(readSessionLines(file), "call_slow");
      const batch = applied.contextEdits!.find((b) => b.batchId === r.batchId)!;
      // the result first, then its assistant: every prefix pi appends is pairing-safe (issue 43)
      assert.deepEqual(batch.targetIds, [slow.id, call.id]);
      // neither the rest of that run nor the next prompt sends the result without its call
      server.script({ text: "Next answer." });
      await pi.prompt("and now?");
      const sent = server.requests.slice(from + 1);
      assert.equal(sent.length, 2);
      for (const request of sent) assert.ok(!toolMessages(request).has("call_slow"), "no orphaned tool result is sent");
      const usage = (await pi.command({ type: "get_session_stats" })).data.contextUsage as { tokens: number };
      assert.equal((await analyzeSession(file, { agentDir })).inspect.contextTokens, usage.tokens);
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("refuses with pi's messages (unknown target, bad replacement) and a leaf that moved; a queued batch can be withdrawn", async () => {
    const { pi } = await startPi();
    await readTurn(pi, "big.txt", "call_big", "Read the big file.");
    const file = (await pi.command({ type: "get_state" })).data.sessionFile as string;
    const big = resultOf(readSessionLines(file), "call_big");
    const connection = await connect(pi);
    try {
      const fail = (params: object) =>
        connection.request("contextEdit", params as never).then(
          () => assert.fail("accepted"),
          (e: BridgeError) => e,
        );
      const unknown = await fail({ drafts: [{ type: "context_edit", targetId: "deadbeef", replacement: null }] });
      assert.equal(unknown.code, "failed");
      assert.equal(unknown.message, "Entry deadbeef not found");
      const moved = await fail({
        drafts: [{ type: "context_edit", targetId: big.id, replacement: null }],
        leafId: big.id,
      });
      assert.equal(moved.code, "failed");
      assert.match(moved.message, /moved on since the edits were planned/);
      const bad = await fail({ drafts: [{ type: "context_edit", targetId: big.id, replacement: { text: "x" } }] });
      assert.equal(bad.code, "bad-request");
      assert.equal(bad.message, "Context edit replacement must be null or contain string/array content");
      assert.equal(readSessionLines(file).filter((e) => e.type === "context_edit").length, 0);
      // queued while streaming, withdrawn before the boundary: nothing is appended
      server.script({ chunks: ["slow ", "answer ", "now."], chunkDelayMs: 400 });
      const since = pi.events.length;
      await pi.startPrompt("a slow question");
      await waitForState(connection, (s) => s.activity === "streaming");
      const drafts = [{ type: "context_edit" as const, targetId: big.id, replacement: null }];
      const queued = await connection.request("contextEdit", { drafts });
      assert.equal(queued.status, "queued");
      assert.deepEqual(await connection.request("cancelContextEdit", { batchId: queued.batchId }), { cancelled: true });
      assert.deepEqual(await connection.request("cancelContextEdit", { batchId: queued.batchId }), {
        cancelled: false,
      });
      await pi.waitFor((l) => l.type === "agent_settled", 30_000, since);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(readSessionLines(file).filter((e) => e.type === "context_edit").length, 0);
      const state = await connection.request("state", {});
      assert.equal(state.contextEdits!.find((b) => b.batchId === queued.batchId)!.status, "cancelled");
    } finally {
      connection.close();
      await pi.close();
    }
  });
});
