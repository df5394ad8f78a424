/**
 * "Compact up to here" through the live bridge inside the REAL pi 1.6.0 (`pi --mode rpc`), with the
 * scripted OpenAI-compatible server as pi's model: `compact` with `keepFrom` makes pi cut where we
 * asked (the bridge moves the cut of pi's own preparation in `session_before_compact`), and pi's
 * summary requests, the entry it appends and the context it loads are exactly what our file flow
 * plans for the same file (`planCompaction` with `keepFrom`): same conversation text sent, same
 * `firstKeptEntryId`, `tokensBefore`, file lists, `fromHook: false`; a split turn when the entry is
 * an assistant mid-turn. Entries pi would not cut at are refused with nothing written, and a session
 * pi's own `/compact` finds too small says why.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { readAnnouncements } from "../../src/bridge/announce";
import { BridgeError, connectBridge, type BridgeConnection } from "../../src/liveBridge/client";
import { installBridgeFile } from "../../src/liveBridge/installFile";
import { bridgeSupportsKeepFrom, type Announcement } from "../../src/bridge/protocol";
import { planCompaction, type CompactionPlan } from "../../src/core/flows/compact";
import { ensureBridgeBundle } from "../support/bridge-bundle";
import { messageText, PiRpc, readSessionLines, REPO_ROOT, writeScriptedAgentDir } from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { runCli } from "../support/cli";

interface Oracle {
  loadCheck(request: { file: string }): Promise<{
    leafId: string | null;
    contextMessages: { entryId: string; role: string }[];
    unchangedOnOpen: boolean;
  }>;
  close(): Promise<void>;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-keep-from-"));
const home = path.join(tmp, "home");
const agentDir = path.join(tmp, "agent");
let server: ScriptedServer;
let oracle: Oracle;
const running: PiRpc[] = [];
let cwdCounter = 0;

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

async function startPi(): Promise<{ pi: PiRpc; cwd: string }> {
  const cwd = path.join(tmp, `project-${++cwdCounter}`);
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(cwd, "notes.md"), "the notes of the project\n");
  const pi = await PiRpc.start({ cwd, agentDir, home });
  running.push(pi);
  return { pi, cwd };
}

async function connect(pi: PiRpc): Promise<BridgeConnection> {
  const found = readAnnouncements(agentDir).filter(
    (r): r is { file: string; announcement: Announcement } => "announcement" in r && r.announcement.pid === pi.pid,
  );
  assert.equal(found.length, 1);
  assert.ok(bridgeSupportsKeepFrom(found[0]!.announcement.bridgeVersion));
  return connectBridge(found[0]!.announcement, { timeoutMs: 5000 });
}

/** Turns with ~500 tokens each; turn 3 reads notes.md (a tool call and its result, then the answer). */
async function converse(pi: PiRpc, turns = 6): Promise<void> {
  for (let i = 1; i <= turns; i++) {
    if (i === 3)
      server.script({
        toolCall: true,
        tool: { name: "read", arguments: JSON.stringify({ path: "notes.md" }), id: "call_3" },
      });
    server.script({ text: `Answer ${i}: done with step ${i}.\n\n${"Details of the work. ".repeat(60)}` });
    await pi.prompt(`t${i}: step ${i} of the refactoring\n${"Context line for the task. ".repeat(40)}`);
  }
}

async function sessionFileOf(pi: PiRpc): Promise<string> {
  return (await pi.command({ type: "get_state" })).data.sessionFile as string;
}

/** The id of the message entry of `role` whose text starts with `prefix`. */
function idOf(file: string, role: string, prefix: string): string {
  const e = readSessionLines(file).find(
    (x) => x.type === "message" && x.message?.role === role && messageText(x.message).startsWith(prefix),
  );
  assert.ok(e, `${role} "${prefix}"`);
  return e.id;
}

function plan(file: string, keepFrom: string): Promise<CompactionPlan> {
  return planCompaction(file, { agentDir, guardSeconds: 0, procRoot: null, maxOutputTokens: 2048, keepFrom });
}

/**
 * What a summary request says about the session (our prompts are worded differently from pi's, on
 * purpose; the conversation, the previous summary and the focus are the same): the serialized
 * conversation, and the `Additional focus:` paragraph.
 */
function sessionPart(prompt: string): { conversation: string; focus: string | null } {
  const tagged = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(prompt);
  const headed = /^# Conversation\n([\s\S]*)\n\n# Instructions\n/.exec(prompt);
  const conversation = tagged?.[1] ?? headed?.[1];
  assert.ok(conversation, `a conversation in ${prompt.slice(0, 200)}`);
  return { conversation, focus: /\n\nAdditional focus: ([\s\S]*)$/.exec(prompt)?.[1] ?? null };
}

/** The user message texts of the summary requests pi sent since request `from`. */
function summaryPrompts(from: number): string[] {
  return server.requests
    .slice(from)
    .map((r) => r.body.messages ?? [])
    .filter((m) => JSON.stringify(m).includes("summar"))
    .map((m) => messageText(m.find((x) => x.role === "user") as { content: unknown }));
}

describe("Compact up to here through the live bridge in the real pi 1.6.0", () => {
  it("at a user message: pi sends our summary request, writes our cut as its own entry, loads the context we predicted", async () => {
    const { pi } = await startPi();
    await converse(pi);
    const file = await sessionFileOf(pi);
    const keepFrom = idOf(file, "user", "t3:");
    const ours = await plan(file, keepFrom);
    assert.equal(ours.preview.isSplitTurn, false);
    const connection = await connect(pi);
    const from = server.requests.length;
    const result = await connection.request("compact", { keepFrom });
    connection.close();
    assert.deepEqual(summaryPrompts(from).map(sessionPart), [sessionPart(ours.historyRequest!.prompt)]);
    const entry = readSessionLines(file).at(-1)!;
    assert.equal(entry.type, "compaction");
    assert.equal(result.entryId, entry.id);
    assert.equal(result.firstKeptEntryId, keepFrom);
    assert.equal(entry.firstKeptEntryId, ours.preparation.firstKeptEntryId);
    assert.equal(entry.tokensBefore, ours.preparation.tokensBefore);
    assert.deepEqual(entry.details, { readFiles: ours.preparation.readFiles, modifiedFiles: [] });
    assert.equal(entry.fromHook, false);
    const loaded = await oracle.loadCheck({ file });
    assert.equal(loaded.leafId, entry.id);
    const kept = ours.preparation.keptEntries.flatMap((e) =>
      e.roles.filter((r) => r !== "system").map((r) => `${e.record.id} ${r}`),
    );
    assert.deepEqual(
      loaded.contextMessages.map((m) => `${m.entryId} ${m.role}`),
      [`${entry.id} system`, `${entry.id} compactionSummary`, ...kept],
    );
    await pi.close();
  });

  it("at an assistant mid-turn: a split turn (history + turn prefix requests), the read file in the lists", async () => {
    const { pi } = await startPi();
    await converse(pi);
    const file = await sessionFileOf(pi);
    const keepFrom = idOf(file, "assistant", "Answer 3:");
    const ours = await planCompaction(file, {
      agentDir,
      guardSeconds: 0,
      procRoot: null,
      maxOutputTokens: 2048,
      keepFrom,
      customInstructions: "keep the step numbers",
    });
    assert.equal(ours.preview.isSplitTurn, true);
    assert.deepEqual(ours.preparation.readFiles, ["notes.md"]);
    const connection = await connect(pi);
    const from = server.requests.length;
    await connection.request("compact", { keepFrom, customInstructions: "keep the step numbers" });
    connection.close();
    const sent = summaryPrompts(from).map(sessionPart);
    assert.deepEqual(sent, [sessionPart(ours.historyRequest!.prompt), sessionPart(ours.turnPrefixRequest!.prompt)]);
    assert.equal(sent[0]!.focus, "keep the step numbers");
    const entry = readSessionLines(file).at(-1)!;
    assert.equal(entry.firstKeptEntryId, keepFrom);
    assert.deepEqual(entry.details, { readFiles: ["notes.md"], modifiedFiles: [] });
    assert.equal(entry.tokensBefore, ours.preparation.tokensBefore);
    assert.match(String(entry.summary), /\*\*Turn Context \(split turn\):\*\*/);
    await pi.close();
  });

  it("refuses a tool result and an entry of no context, writing nothing; a session too small for pi's /compact says why", async () => {
    const { pi } = await startPi();
    await converse(pi);
    const file = await sessionFileOf(pi);
    const toolResult = readSessionLines(file).find((x) => x.type === "message" && x.message?.role === "toolResult")!;
    const bytes = fs.readFileSync(file);
    const connection = await connect(pi);
    for (const keepFrom of [toolResult.id, "nonexistent"]) {
      const error = await connection.request("compact", { keepFrom }).then(
        () => assert.fail("compacted"),
        (e: unknown) => e as BridgeError,
      );
      assert.equal(error.code, "failed");
      assert.match(error.message, keepFrom === "nonexistent" ? /not in pi's context/ : /does not cut at entry/);
    }
    assert.ok(fs.readFileSync(file).equals(bytes), "nothing written");
    const state = await connection.request("state", {});
    assert.equal(state.activity, "idle");
    connection.close();
    await pi.close();

    const small = await startPi();
    await converse(small.pi, 1);
    const smallFile = await sessionFileOf(small.pi);
    const second = idOf(smallFile, "assistant", "Answer 1:");
    const c2 = await connect(small.pi);
    const error = await c2.request("compact", { keepFrom: second }).then(
      () => assert.fail("compacted"),
      (e: unknown) => e as BridgeError,
    );
    assert.equal(error.code, "failed");
    assert.match(error.message, /its own \/compact has nothing to summarize \(Nothing to compact/);
    c2.close();
    await small.pi.close();
  });
  it("the CLI on a session pi has open: compact --keep-from and summarize are done by that pi", async () => {
    const { pi } = await startPi();
    await converse(pi);
    const file = await sessionFileOf(pi);
    const keepFrom = idOf(file, "user", "t4:");
    const compacted = await runCli([
      "compact",
      file,
      "--keep-from",
      keepFrom,
      "--yes",
      "--json",
      "--agent-dir",
      agentDir,
    ]);
    assert.equal(compacted.code, 0, compacted.err);
    const c = JSON.parse(compacted.out) as { compacted: boolean; by: number; firstKeptEntryId: string };
    assert.deepEqual([c.compacted, c.by, c.firstKeptEntryId], [true, pi.pid, keepFrom]);
    assert.equal(readSessionLines(file).at(-1)!.firstKeptEntryId, keepFrom);

    const from = idOf(file, "user", "t5:");
    const to = idOf(file, "assistant", "Answer 5:");
    const saved = process.env.PI_CONTEXT_API_KEY;
    process.env.PI_CONTEXT_API_KEY = "k-cli";
    server.script({ text: "## Goal\nStep 5 of the refactoring." });
    try {
      const summarized = await runCli([
        "summarize",
        file,
        from,
        to,
        "--yes",
        "--json",
        "--agent-dir",
        agentDir,
        "--base-url",
        server.baseURL,
        "--model",
        "m",
      ]);
      assert.equal(summarized.code, 0, summarized.err);
      const j = JSON.parse(summarized.out) as { summarized: boolean; by: number; entries: { targetId: string }[] };
      assert.deepEqual([j.summarized, j.by], [true, pi.pid]);
      // written in the pairing-safe order (core/rules/batchOrder.ts): the hidden answer first, then the summary
      assert.deepEqual(
        j.entries.map((e) => e.targetId),
        [to, from],
      );
      const edits = readSessionLines(file).filter((e) => e.type === "context_edit");
      assert.deepEqual(
        edits.map((e) => [e.targetId, e.replacement === null]),
        [
          [to, true],
          [from, false],
        ],
      );
      assert.match(messageText(edits[1]!.replacement as { content: unknown }), /^\[pi-context: summary of 2 messages/);
    } finally {
      if (saved === undefined) delete process.env.PI_CONTEXT_API_KEY;
      else process.env.PI_CONTEXT_API_KEY = saved;
    }
    await pi.close();
  });
});
