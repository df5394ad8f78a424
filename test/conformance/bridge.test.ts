/**
 * The live bridge inside the REAL pi 1.6.0 (`pi --mode rpc`, Node 22), installed into a temporary
 * agent dir exactly as "Pi Context: Install Live Bridge" does, driven against the scripted
 * OpenAI-compatible server; the VS Code side's client (`src/bridge/client.ts`) talks to it.
 *
 * - usage / model / window / compaction settings = pi's own (`get_session_stats`, `get_state`,
 *   pi's settings for the model incl. `modelOverrides`), pushed on every turn;
 * - a compaction through the bridge writes what pi's own `/compact` writes (a twin session driven
 *   by RPC `compact` with the same answers: same summary request, same entries modulo ids and
 *   timestamps), pi re-derives it (`--verify-compactions`) and loads it (`loadCheck`);
 * - a navigation through the bridge writes what pi's `/tree` (`navigateTree` from a command, the
 *   way the shared tree fixture was made) writes, in a twin session; `--verify-branch-summaries`;
 * - pi's wait errors while it streams, nothing queued; cancel; bad token; killed pi (stale);
 *   a bridge of another protocol; cleanup on exit; one bridge when loaded twice.
 */

import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { liveDir, readAnnouncements, removeStaleAnnouncements } from "../../src/bridge/announce";
import { BridgeError, connectBridge, type BridgeConnection } from "../../src/liveBridge/client";
import { bridgeStatus, installBridgeFile } from "../../src/liveBridge/installFile";
import {
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  type Announcement,
  type BridgeOps,
  type BridgeState,
} from "../../src/bridge/protocol";
import { analyzeSession } from "../../src/core/rules/analyze";
import { ensureBridgeBundle } from "../support/bridge-bundle";
import {
  messageText,
  node22Path,
  PI_CLI,
  PiRpc,
  readSessionLines,
  REPO_ROOT,
  writeScriptedAgentDir,
  type SessionLine,
} from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";

/** The parts of `oracle.mjs`'s answer these tests read. */
interface OracleView {
  settings: { compaction: { reserveTokens: number; keepRecentTokens: number } };
  verifyCompactions: { compactionId: string; match: boolean }[];
  verifyBranchSummaries: { branchSummaryId: string; match: boolean }[];
}

interface Oracle {
  loadCheck(request: {
    file: string;
    leaf?: string;
  }): Promise<{ leafId: string | null; pathIds: string[]; contextEntries: string[]; unchangedOnOpen: boolean }>;
  oracle(request: { file: string; args: string[] }): Promise<OracleView>;
  close(): Promise<void>;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bridge-"));
const home = path.join(tmp, "home");
const agentDir = path.join(tmp, "agent");
const COMPACTION = {
  reserveTokens: 4000,
  keepRecentTokens: 1000,
  modelOverrides: { "scripted/scripted-small": { keepRecentTokens: 1200 } },
};
let server: ScriptedServer;
let oracle: Oracle;
let bundle: string;
const running: PiRpc[] = [];
let cwdCounter = 0;

before(async () => {
  bundle = ensureBridgeBundle();
  fs.mkdirSync(home, { recursive: true });
  server = await startScriptedServer({ text: "## Goal\nScripted summary of the conversation.\n\n## Progress\n- done" });
  writeScriptedAgentDir(agentDir, { baseURL: server.baseURL, contextWindow: 16000, compaction: COMPACTION });
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

function newCwd(name = "project"): string {
  const cwd = path.join(tmp, `${name}-${++cwdCounter}`);
  fs.mkdirSync(cwd, { recursive: true });
  return cwd;
}

async function startPi(cwd: string, options: { agentDir?: string; extensions?: string[] } = {}): Promise<PiRpc> {
  const pi = await PiRpc.start({
    cwd,
    agentDir: options.agentDir ?? agentDir,
    home,
    ...(options.extensions ? { extensions: options.extensions } : {}),
  });
  running.push(pi);
  return pi;
}

/** One user turn answered with `answer` (plus ~500 tokens of filler so compaction has something to cut). */
async function turn(pi: PiRpc, prompt: string, answer: string): Promise<void> {
  server.script({ text: `${answer}\n\n${"Details of the work. ".repeat(60)}` });
  await pi.prompt(`${prompt}\n${"Context line for the task. ".repeat(40)}`);
}

async function sessionFileOf(pi: PiRpc): Promise<string> {
  return (await pi.command({ type: "get_state" })).data.sessionFile as string;
}

function announcementFor(pid: number, dir = agentDir): { file: string; announcement: Announcement } {
  const found = readAnnouncements(dir).filter(
    (r): r is { file: string; announcement: Announcement } => "announcement" in r && r.announcement.pid === pid,
  );
  assert.equal(found.length, 1, `one announcement for pid ${pid}: ${JSON.stringify(readAnnouncements(dir))}`);
  return found[0]!;
}

async function connect(pi: PiRpc, dir = agentDir): Promise<BridgeConnection> {
  return connectBridge(announcementFor(pi.pid, dir).announcement, { timeoutMs: 5000 });
}

const entries = readSessionLines;

/** Ids → file positions, timestamps and provider response ids dropped: two sessions written the same way compare equal. */
function normalize(lines: SessionLine[]): unknown[] {
  const ids = new Map<string, string>();
  lines.forEach((e, i) => ids.set(e.id, i === 0 ? "#header" : `#${i}`));
  const mapId = (v: unknown) => (typeof v === "string" && ids.has(v) ? ids.get(v) : v);
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === "timestamp" || k === "responseId" || k === "durationMs" || k === "cwd") continue;
        out[k] = ["id", "parentId", "firstKeptEntryId", "fromId", "targetId"].includes(k) ? mapId(x) : walk(x, k);
      }
      return out;
    }
    return key === undefined ? v : v;
  };
  return lines.map((e) => walk(e));
}

const textOf = messageText;

/** The id of the entry whose message (role) text starts with `prefix`. */
function entryIdOf(file: string, role: string, prefix: string): string {
  const e = entries(file).find(
    (x) => x.type === "message" && x.message?.role === role && textOf(x.message).startsWith(prefix),
  );
  assert.ok(e, `an entry ${role} "${prefix}" in ${file}`);
  return e.id;
}

async function waitForState(
  connection: BridgeConnection,
  check: (s: BridgeState) => boolean,
  timeoutMs = 5000,
): Promise<BridgeState> {
  if (check(connection.state)) return connection.state;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching state push within ${timeoutMs} ms; last ${JSON.stringify(connection.state)}`));
    }, timeoutMs);
    const off = connection.onState((s) => {
      if (check(s)) {
        clearTimeout(timer);
        off();
        resolve(s);
      }
    });
  });
}

function summaryRequests(from: number): { messages: unknown }[] {
  return server.requests
    .slice(from)
    .filter((r) => JSON.stringify(r.body.messages ?? []).includes("summar"))
    .map((r) => ({ messages: r.body.messages }));
}

describe("live bridge in the real pi 1.6.0", () => {
  it("is installed where pi discovers it, announces itself in a user-only directory and cleans up when pi quits", async () => {
    const status = bridgeStatus(agentDir, bundle);
    assert.equal(status.state, "current");
    const cwd = newCwd();
    const pi = await startPi(cwd);
    const commands = (await pi.command({ type: "get_commands" })).data.commands as {
      name: string;
      source: string;
      sourceInfo: { path: string };
    }[];
    const ours = commands.filter((c) => c.name.startsWith("pi-context-bridge"));
    assert.deepEqual(
      ours.map((c) => [c.name, c.source, c.sourceInfo.path]),
      [["pi-context-bridge", "extension", path.join(agentDir, "extensions", "pi-context-bridge.js")]],
    );
    await turn(pi, "t1: hello", "A1");
    const { file, announcement } = announcementFor(pi.pid);
    const state = (await pi.command({ type: "get_state" })).data;
    assert.equal(announcement.sessionFile, state.sessionFile);
    assert.equal(announcement.sessionId, state.sessionId);
    assert.equal(announcement.cwd, cwd);
    assert.equal(announcement.piVersion, process.env.PI_ORACLE_VERSION ?? "1.6.0");
    assert.equal(announcement.bridgeVersion, BRIDGE_VERSION);
    assert.equal(announcement.protocol, BRIDGE_PROTOCOL);
    assert.match(announcement.token, /^[0-9a-f]{64}$/);
    assert.equal(fs.statSync(liveDir(agentDir)).mode & 0o777, 0o700);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(path.dirname(announcement.socket), liveDir(agentDir));
    const sock = fs.lstatSync(announcement.socket);
    assert.ok(sock.isSocket());
    assert.equal(sock.mode & 0o077, 0, "socket not accessible to group/others");
    // `/pi-context-bridge` typed in pi: its status as a notification
    const since = pi.events.length;
    await pi.command({ type: "prompt", message: "/pi-context-bridge" });
    const notify = await pi.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", 5000, since);
    assert.match(
      String(notify.message),
      new RegExp(
        `pi-context live bridge ${BRIDGE_VERSION.replace(/\./g, "\\.")} \\(protocol ${BRIDGE_PROTOCOL}, pi 1\\.6\\.0\\): listening for .*\\.jsonl; 0 clients connected`,
      ),
    );
    await pi.close();
    assert.deepEqual(
      readAnnouncements(agentDir).filter((r) => "announcement" in r && r.announcement.pid === pi.pid),
      [],
    );
    assert.equal(fs.existsSync(file), false);
    assert.equal(fs.existsSync(announcement.socket), false);
  });

  it("reports pi's own usage, model, window and compaction settings, and pushes them on every turn", async () => {
    const pi = await startPi(newCwd());
    await turn(pi, "t1: read the parser", "A1");
    const connection = await connect(pi);
    try {
      const file = await sessionFileOf(pi);
      const stats = (await pi.command({ type: "get_session_stats" })).data;
      const piState = (await pi.command({ type: "get_state" })).data;
      const s = await connection.request("state", {});
      assert.deepEqual(s.usage, stats.contextUsage);
      assert.deepEqual(connection.welcome.state.usage, stats.contextUsage);
      assert.deepEqual(s.model, {
        provider: piState.model.provider,
        id: piState.model.id,
        contextWindow: piState.model.contextWindow,
        // the running pi's own prices (models.json's scripted model here), bridge 1.2.0
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      });
      if (piState.model.cost) assert.deepEqual(s.model!.cost, piState.model.cost);
      assert.equal(s.sessionFile, file);
      assert.equal(s.idle, true);
      assert.equal(s.activity, "idle");
      assert.equal(s.leafId, entries(file).at(-1)!.id);
      // pi's getCompactionSettings(model): the modelOverrides entry wins for keepRecentTokens
      const view = await oracle.oracle({ file, args: ["--agent-dir", agentDir] });
      assert.deepEqual(s.compaction, { enabled: true, reserveTokens: 4000, keepRecentTokens: 1200 });
      assert.equal(view.settings.compaction.keepRecentTokens, 1200);
      assert.equal(view.settings.compaction.reserveTokens, 4000);
      assert.deepEqual(s.branchSummary, { reserveTokens: 16384, skipPrompt: false });
      // our file-based core agrees with pi's live numbers
      const analysis = await analyzeSession(file, { agentDir });
      assert.equal(analysis.inspect.contextTokens, s.usage!.tokens);
      assert.equal(analysis.inspect.contextWindow.value, s.usage!.contextWindow);
      // a push per turn carries the new numbers
      const pushes: BridgeState[] = [];
      connection.onState((x) => pushes.push(x));
      for (const [i, t] of ["t2: edit it", "t3: run tests"].entries()) {
        const before = pushes.length;
        await turn(pi, t, `A${i + 2}`);
        const usage = (await pi.command({ type: "get_session_stats" })).data.contextUsage;
        const pushed = await waitForState(connection, (x) => x.usage?.tokens === usage.tokens && x.idle);
        assert.deepEqual(pushed.usage, usage);
        assert.ok(pushes.length > before, "at least one push for the turn");
      }
      const seqs = pushes.map((p) => p.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("compacts like pi's own /compact: same summary request, same entries, re-derived and loaded by pi", async () => {
    const cwd = newCwd("twins");
    const script = async (pi: PiRpc) => {
      for (let i = 1; i <= 6; i++)
        await turn(pi, `t${i}: step ${i} of the refactoring`, `Answer ${i}: done with step ${i}.`);
    };
    // through the bridge
    const live = await startPi(cwd);
    await script(live);
    const liveFile = await sessionFileOf(live);
    const connection = await connect(live);
    const from = server.requests.length;
    const result = await connection.request("compact", { customInstructions: "keep the parser details" });
    const liveRequests = summaryRequests(from);
    const after = await connection.request("state", {});
    const stats = (await live.command({ type: "get_session_stats" })).data;
    connection.close();
    await live.close();
    // pi's own /compact (RPC `compact` = AgentSession.compact) on a twin session
    const twin = await startPi(cwd);
    await script(twin);
    const twinFile = await sessionFileOf(twin);
    const from2 = server.requests.length;
    const own = (await twin.command({ type: "compact", customInstructions: "keep the parser details" }, 60_000)).data;
    const twinRequests = summaryRequests(from2);
    await twin.close();

    assert.equal(liveRequests.length, 1);
    assert.deepEqual(
      liveRequests.map((r) => r.messages),
      twinRequests.map((r) => r.messages),
    );
    assert.match(JSON.stringify(liveRequests[0]!.messages), /keep the parser details/);
    const liveEntries = entries(liveFile);
    const compaction = liveEntries.at(-1)!;
    assert.equal(compaction.type, "compaction");
    assert.equal(result.entryId, compaction.id);
    assert.equal(result.leafId, compaction.id);
    assert.equal(result.firstKeptEntryId, compaction.firstKeptEntryId);
    assert.equal(result.tokensBefore, compaction.tokensBefore);
    assert.equal(result.tokensBefore, own.tokensBefore);
    assert.equal(result.estimatedTokensAfter, own.estimatedTokensAfter);
    assert.deepEqual(normalize(liveEntries), normalize(entries(twinFile)));
    // pi's footer after a compaction: unknown until the next answer
    assert.deepEqual(after.usage, stats.contextUsage);
    assert.equal(after.usage!.tokens, null);
    const view = await oracle.oracle({ file: liveFile, args: ["--agent-dir", agentDir, "--verify-compactions"] });
    assert.deepEqual(
      view.verifyCompactions.map((v) => [v.compactionId, v.match]),
      [[compaction.id, true]],
    );
    const loaded = await oracle.loadCheck({ file: liveFile });
    assert.equal(loaded.leafId, compaction.id);
    assert.equal(loaded.contextEntries[0], `${compaction.id} compaction`);
    assert.equal(loaded.unchangedOnOpen, true);
  });

  it("navigates like pi's /tree (navigateTree from a command), labels like pi's label editor, with no prompt and no model call of its own", async () => {
    const cwd = newCwd("tree");
    const twinExtension = path.join(tmp, "twin-tree.js");
    fs.writeFileSync(
      twinExtension,
      [
        "export default function (pi) {",
        "  pi.registerCommand('test-nav', { handler: async (args, ctx) => {",
        "    const [target, summarize, label, ...rest] = args.split(' ');",
        "    await ctx.navigateTree(target, { summarize: summarize === '1', ...(label !== '-' ? { label } : {}), ...(rest.length ? { customInstructions: rest.join(' ') } : {}) });",
        "  } });",
        "  pi.registerCommand('test-label', { handler: async (args) => { const [target, label] = args.split(' '); pi.setLabel(target, label === '-' ? undefined : label); } });",
        "}",
      ].join("\n"),
    );
    type Ops = {
      nav(target: string, summarize: boolean, label?: string, instructions?: string): Promise<void>;
      label(target: string, label?: string): Promise<void>;
    };
    const scenario = async (pi: PiRpc, ops: Ops) => {
      const file = await sessionFileOf(pi);
      for (let i = 1; i <= 4; i++) await turn(pi, `t${i}: task ${i}`, `Answer ${i}.`);
      await ops.nav(entryIdOf(file, "assistant", "Answer 2."), true, "branch-A", "focus on task 3");
      await turn(pi, "t5: on the new branch", "Answer 5.");
      await ops.nav(entryIdOf(file, "user", "t3: task 3"), false);
      await turn(pi, "t6: a third branch", "Answer 6.");
      await ops.label(entryIdOf(file, "assistant", "Answer 1."), "checkpoint");
      await ops.label(entryIdOf(file, "assistant", "Answer 1."), undefined);
      await ops.nav(entryIdOf(file, "assistant", "Answer 4."), false, "back-to-4");
      return file;
    };
    // through the bridge
    const live = await startPi(cwd);
    await turn(live, "t0: warm up", "Answer 0.");
    const connection = await connect(live);
    const navResults: BridgeOps["navigate"]["result"][] = [];
    const requestsBefore: number[] = [];
    const liveFile = await scenario(live, {
      nav: async (targetId, summarize, label, instructions) => {
        requestsBefore.push(server.requests.length);
        navResults.push(
          await connection.request("navigate", {
            targetId,
            summarize,
            ...(label ? { label } : {}),
            ...(instructions ? { customInstructions: instructions } : {}),
          }),
        );
        requestsBefore.push(server.requests.length);
      },
      label: async (targetId, label) => {
        const r = await connection.request("setLabel", { targetId, ...(label ? { label } : {}) });
        assert.equal(r.entryId, entries(connection.state.sessionFile).at(-1)!.id);
      },
    });
    const liveLeaf = (await connection.request("state", {})).leafId;
    connection.close();
    await live.close();
    // the twin: pi's navigateTree from an RPC-run command (how the shared tree fixture was made)
    const twin = await startPi(cwd, { extensions: [twinExtension] });
    await turn(twin, "t0: warm up", "Answer 0.");
    const twinFile = await scenario(twin, {
      nav: async (target, summarize, label, instructions) => {
        await twin.prompt(
          `/test-nav ${target} ${summarize ? 1 : 0} ${label ?? "-"}${instructions ? ` ${instructions}` : ""}`,
        );
      },
      label: async (target, label) => {
        await twin.prompt(`/test-label ${target} ${label ?? "-"}`);
      },
    });
    const twinLeaf = (await twin.command({ type: "get_state" })).data;
    await twin.close();

    // same entries as pi's own navigation wrote, in the same places
    assert.deepEqual(normalize(entries(liveFile)), normalize(entries(twinFile)));
    const written = entries(liveFile);
    const types = written.map((e) => e.type);
    assert.equal(types.filter((t) => t === "branch_summary").length, 1);
    assert.equal(types.filter((t) => t === "label").length, 4, "branch-A, checkpoint, cleared, back-to-4");
    // the first navigation: summary request with pi's prompt + custom instructions; the others no model call
    assert.equal(requestsBefore[1]! - requestsBefore[0]!, 1);
    assert.match(JSON.stringify(server.requests[requestsBefore[0]!]!.body.messages), /focus on task 3/);
    assert.equal(requestsBefore[3]! - requestsBefore[2]!, 0);
    assert.equal(requestsBefore[5]! - requestsBefore[4]!, 0);
    assert.deepEqual(
      navResults.map((r) => [r.cancelled, r.entries.map((e) => e.type)]),
      [
        [false, ["branch_summary", "label"]],
        [false, []],
        [false, ["label"]],
      ],
    );
    const summary = written.find((e) => e.type === "branch_summary")!;
    assert.deepEqual(navResults[0].entries[0], { type: "branch_summary", id: summary.id, parentId: summary.parentId });
    assert.equal(
      navResults[1].newLeafId,
      written.find((e) => e.type === "message" && e.message?.role === "user" && textOf(e.message).startsWith("t3:"))!
        .parentId,
    );
    // nothing the bridge did reached the model or the session as a prompt
    assert.equal(
      written.filter((e) => e.type === "message" && textOf(e.message).includes("pi-context-bridge")).length,
      0,
    );
    assert.equal(liveLeaf, written.at(-1)!.id);
    assert.equal(twinLeaf.sessionFile, twinFile);
    const view = await oracle.oracle({ file: liveFile, args: ["--agent-dir", agentDir, "--verify-branch-summaries"] });
    assert.deepEqual(
      view.verifyBranchSummaries.map((v) => [v.branchSummaryId, v.match]),
      [[summary.id, true]],
    );
    const loaded = await oracle.loadCheck({ file: liveFile });
    assert.equal(loaded.leafId, written.at(-1)!.id);
    assert.equal(loaded.unchangedOnOpen, true);
  });

  it("answers requests while pi streams with pi's own wait error and queues nothing", async () => {
    const pi = await startPi(newCwd());
    await turn(pi, "t1: first", "Answer 1.");
    const file = await sessionFileOf(pi);
    const target = entryIdOf(file, "user", "t1: first");
    const connection = await connect(pi);
    try {
      const before = entries(file).length;
      const requests = server.requests.length;
      server.script({ chunks: ["Streaming ", "slowly ", "now ", "and ", "done."], chunkDelayMs: 250 });
      const since = pi.events.length;
      await pi.startPrompt("t2: a slow one");
      await pi.waitFor((l) => l.type === "message_update", 10_000, since);
      const streaming = await waitForState(connection, (s) => s.activity === "streaming");
      assert.equal(streaming.idle, false);
      const navigate = await connection.request("navigate", { targetId: target, summarize: true }).then(
        () => assert.fail("navigate succeeded while streaming"),
        (e: BridgeError) => e,
      );
      assert.equal(navigate.code, "busy");
      assert.equal(navigate.message, "Wait for the current response to finish before navigating the session tree.");
      const compact = await connection.request("compact", {}).then(
        () => assert.fail("compact succeeded while streaming"),
        (e: BridgeError) => e,
      );
      assert.equal(compact.code, "busy");
      assert.equal(compact.message, "Wait for the current response to finish before compacting.");
      await pi.waitFor((l) => l.type === "agent_settled", 20_000, since);
      await new Promise((r) => setTimeout(r, 300));
      const written = entries(file).slice(before);
      assert.deepEqual(
        written.map((e) => (e.type === "message" ? e.message?.role : e.type)),
        ["user", "assistant"],
      );
      assert.equal(server.requests.length, requests + 1, "no summary request was queued");
      const idle = await connection.request("state", {});
      assert.equal(idle.idle, true);
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("cancels a compaction it started (pi aborts; nothing written) and rejects unknown entries with pi's message", async () => {
    const pi = await startPi(newCwd());
    for (let i = 1; i <= 4; i++) await turn(pi, `t${i}: step`, `Answer ${i}.`);
    const file = await sessionFileOf(pi);
    const connection = await connect(pi);
    try {
      const before = fs.readFileSync(file, "utf8");
      const requests = server.requests.length;
      server.script({ text: "## Goal\npartial", hang: true });
      const controller = new AbortController();
      const pending = connection.request("compact", {}, { signal: controller.signal });
      await server.waitForRequests(requests + 1, 10_000);
      const during = await waitForState(connection, (s) => s.activity === "compacting");
      assert.equal(during.idle, false);
      controller.abort();
      const error = await pending.then(
        () => assert.fail("compaction finished"),
        (e: BridgeError) => e,
      );
      assert.equal(error.code, "cancelled");
      assert.equal(fs.readFileSync(file, "utf8"), before);
      assert.equal((await connection.request("state", {})).idle, true);
      const unknown = await connection.request("navigate", { targetId: "deadbeef" }).then(
        () => assert.fail("navigated to an unknown entry"),
        (e: BridgeError) => e,
      );
      assert.equal(unknown.code, "failed");
      assert.equal(unknown.message, "Entry deadbeef not found");
      const label = await connection.request("setLabel", { targetId: "deadbeef", label: "x" }).then(
        () => assert.fail("labelled an unknown entry"),
        (e: BridgeError) => e,
      );
      assert.equal(label.message, "Entry deadbeef not found");
      // pi's /name through the bridge (pi.setSessionName): pi writes the session_info entry itself
      const named = await connection.request("setSessionName", { name: "  Live\r\nname  " });
      assert.equal(named.name, "Live name");
      const last = fs.readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!;
      assert.deepEqual((({ type, name }) => ({ type, name }))(JSON.parse(last) as { type: string; name: string }), {
        type: "session_info",
        name: "Live name",
      });
      const empty = await connection.request("setSessionName", { name: " \n " }).then(
        () => assert.fail("named the session with an empty name"),
        (e: BridgeError) => e,
      );
      assert.equal(empty.message, "Session name cannot be empty");
      assert.equal((await connection.request("cancel", {})).cancelled, false, "nothing of ours to cancel");
    } finally {
      connection.close();
      await pi.close();
    }
  });

  it("refuses a wrong token and a malformed hello, and stays usable", async () => {
    const pi = await startPi(newCwd());
    try {
      const { announcement } = announcementFor(pi.pid);
      const wrong = { ...announcement, token: announcement.token.replace(/^./, (c) => (c === "0" ? "1" : "0")) };
      const t0 = Date.now();
      const error = await connectBridge(wrong, { timeoutMs: 5000 }).then(
        () => assert.fail("connected with a wrong token"),
        (e: BridgeError) => e,
      );
      assert.equal(error.code, "unauthorized");
      assert.match(error.message, /refused the connection: wrong token/);
      assert.ok(Date.now() - t0 < 2000);
      // raw: a request before hello
      const answer = await new Promise<string>((resolve) => {
        const socket = net.createConnection(announcement.socket);
        let text = "";
        socket.on("data", (d) => (text += d.toString()));
        socket.on("close", () => resolve(text));
        socket.write(JSON.stringify({ type: "request", id: 1, op: "state", params: {} }) + "\n");
      });
      assert.deepEqual(JSON.parse(answer.trim()), {
        type: "error",
        code: "unauthorized",
        message: "The live bridge refused the connection: wrong token.",
      });
      const ok = await connect(pi);
      assert.equal((await ok.request("state", {})).idle, true);
      ok.close();
    } finally {
      await pi.close();
    }
  });

  it("reports a killed pi as stale without hanging, and its leftovers are cleaned up", async () => {
    const pi = await startPi(newCwd());
    for (let i = 1; i <= 4; i++) await turn(pi, `t${i}: something`, `Answer ${i}.`);
    const { file, announcement } = announcementFor(pi.pid);
    const connection = await connect(pi);
    const closed = new Promise<BridgeError>((resolve) => connection.onClose(resolve));
    server.script({ text: "never", hang: true });
    const requests = server.requests.length;
    const pending = connection.request("compact", {}).then(
      () => assert.fail("request survived pi"),
      (e: BridgeError) => e,
    );
    await server.waitForRequests(requests + 1, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await pi.kill();
    const reason = await closed;
    assert.equal(reason.code, "closed");
    const failed = await pending;
    assert.equal(failed.code, "closed");
    assert.ok(Date.now() - t0 < 2000, "no hang");
    // leftovers: announcement + socket of a dead pid
    assert.ok(fs.existsSync(file));
    assert.ok(fs.existsSync(announcement.socket));
    const stale = await connectBridge(announcement, { timeoutMs: 5000 }).then(
      () => assert.fail("connected to a dead pi"),
      (e: BridgeError) => e,
    );
    assert.equal(stale.code, "stale");
    assert.match(stale.message, /is stale: that pi is no longer running/);
    // the socket alone (a pid reused by another process): refused → stale too
    const reused = await connectBridge({ ...announcement, pid: process.pid }, { timeoutMs: 5000 }).then(
      () => assert.fail("connected to a dead socket"),
      (e: BridgeError) => e,
    );
    assert.equal(reused.code, "stale");
    assert.match(reused.message, /nothing listens on its socket \(ECONNREFUSED\)/);
    assert.deepEqual(
      removeStaleAnnouncements(agentDir, Date.now()).filter((f) => f !== file),
      [],
      "only the dead pi's file is stale",
    );
    assert.equal(fs.existsSync(announcement.socket), false);
    // the same leftover again: the next bridge that starts removes it
    fs.writeFileSync(file, JSON.stringify(announcement), { mode: 0o600 });
    const next = await startPi(newCwd());
    try {
      announcementFor(next.pid);
      assert.equal(fs.existsSync(file), false, "the next bridge removed the stale announcement");
    } finally {
      await next.close();
    }
    server.reset();
  });

  it("tells a bridge of another protocol apart (client before connecting, bridge on hello)", async () => {
    const otherDir = path.join(tmp, "agent-other");
    writeScriptedAgentDir(otherDir, { baseURL: server.baseURL });
    const other = bundle
      .replace(/var BRIDGE_PROTOCOL = \d+;/, "var BRIDGE_PROTOCOL = 99;")
      .replace(/var BRIDGE_VERSION = "[^"]+";/, 'var BRIDGE_VERSION = "9.9.9";');
    assert.notEqual(other, bundle);
    installBridgeFile(otherDir, other);
    assert.equal(bridgeStatus(otherDir, bundle).state, "outdated");
    const pi = await startPi(newCwd(), { agentDir: otherDir });
    try {
      const { announcement } = announcementFor(pi.pid, otherDir);
      assert.equal(announcement.protocol, 99);
      assert.equal(announcement.bridgeVersion, "9.9.9");
      const error = await connectBridge(announcement).then(
        () => assert.fail("connected to protocol 99"),
        (e: BridgeError) => e,
      );
      assert.equal(error.code, "protocol");
      assert.match(
        error.message,
        new RegExp(
          `has pi-context bridge 9\\.9\\.9 \\(protocol 99\\); this extension needs protocol ${BRIDGE_PROTOCOL} .*Pi Context: Install Live Bridge`,
        ),
      );
      // the bridge itself refuses a client of another protocol
      const refused = await connectBridge({ ...announcement, protocol: BRIDGE_PROTOCOL }).then(
        () => assert.fail(`bridge accepted protocol ${BRIDGE_PROTOCOL}`),
        (e: BridgeError) => e,
      );
      assert.equal(refused.code, "protocol");
      assert.match(refused.message, /has pi-context bridge 9\.9\.9 \(protocol 99\)/);
    } finally {
      await pi.close();
    }
  });

  it("stays one bridge when pi loads two copies (installed and -e): one announcement, navigation still works", async () => {
    const copy = path.join(tmp, "copy", "pi-context-bridge.js");
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.copyFileSync(path.join(agentDir, "extensions", "pi-context-bridge.js"), copy);
    const pi = await startPi(newCwd(), { extensions: [copy] });
    try {
      const commands = ((await pi.command({ type: "get_commands" })).data.commands as { name: string }[])
        .filter((c) => c.name.startsWith("pi-context-bridge"))
        .map((c) => c.name);
      assert.deepEqual(commands.sort(), ["pi-context-bridge:1", "pi-context-bridge:2"]);
      await turn(pi, "t1: one", "Answer 1.");
      await turn(pi, "t2: two", "Answer 2.");
      const file = await sessionFileOf(pi);
      const connection = await connect(pi); // asserts exactly one announcement
      const r = await connection.request("navigate", { targetId: entryIdOf(file, "assistant", "Answer 1.") });
      assert.equal(r.cancelled, false);
      assert.equal(r.newLeafId, entryIdOf(file, "assistant", "Answer 1."));
      connection.close();
    } finally {
      await pi.close();
    }
  });
  it(
    "works the same in pi's interactive terminal UI (a pseudo-terminal): navigation and compaction, pi shows them, cleanup on SIGTERM",
    {
      skip: spawnSync("script", ["--version"]).status !== 0 ? "no `script` (util-linux) for a pseudo-terminal" : false,
    },
    async () => {
      const cwd = newCwd("tui");
      const node = await node22Path();
      const child = spawn("script", ["-q", "-c", `${node} ${PI_CLI}`, "/dev/null"], {
        cwd,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: home,
          PI_CODING_AGENT_DIR: agentDir,
          PI_OFFLINE: "1",
          TERM: "xterm-256color",
          COLUMNS: "120",
          LINES: "40",
        },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let screen = "";
      child.stdout.on("data", (d: Buffer) => (screen = (screen + d.toString("utf8")).slice(-200_000)));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      const until = async (check: () => boolean, what: string, timeoutMs = 20_000) => {
        const deadline = Date.now() + timeoutMs;
        while (!check()) {
          if (Date.now() > deadline)
            throw new Error(
              `timed out waiting for ${what}; screen: ${screen.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "").slice(-1000)}`,
            );
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      try {
        const mine = () => readAnnouncements(agentDir).find((r) => "announcement" in r && r.announcement.cwd === cwd);
        await until(() => mine() !== undefined, "the bridge of the TUI pi");
        const { announcement } = mine() as { announcement: Announcement };
        const file = announcement.sessionFile;
        const assistants = () =>
          fs.existsSync(file) ? entries(file).filter((e) => e.message?.role === "assistant").length : 0;
        await new Promise((r) => setTimeout(r, 500)); // the editor takes keys once the UI is up
        for (let i = 1; i <= 3; i++) {
          server.script({ text: `Answer ${i}. ${"Details of the work. ".repeat(250)}` });
          child.stdin.write(`t${i}: typed in the terminal ${"context ".repeat(40)}`);
          await new Promise((r) => setTimeout(r, 200));
          child.stdin.write("\r");
          await until(() => assistants() === i, `answer ${i}`);
        }
        const connection = await connectBridge(announcement, { timeoutMs: 5000 });
        try {
          await waitForState(connection, (x) => x.idle);
          const compacted = await connection.request("compact", {});
          assert.equal(entries(file).at(-1)!.id, compacted.entryId);
          assert.equal(entries(file).at(-1)!.type, "compaction");
          const plain = () => screen.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "").replace(/\x1b\][^\x07]*\x07/g, "");
          await until(
            () => plain().includes("Compacted from") && plain().includes("?/16k (auto)"),
            "pi's TUI to show the compaction and the ? footer",
          );
          const target = entryIdOf(file, "user", "t2:");
          const nav = await connection.request("navigate", { targetId: target, summarize: true, label: "tui" });
          assert.deepEqual(
            nav.entries.map((e) => e.type),
            ["branch_summary", "label"],
          );
          const written = entries(file);
          assert.equal(
            written.find((e) => e.type === "branch_summary")!.parentId,
            written.find((e) => e.id === target)!.parentId,
          );
          await until(() => plain().includes("Branch summary"), "pi's TUI to show the branch summary");
        } finally {
          connection.close();
        }
        child.kill("SIGTERM");
        await exited;
        await until(
          () => mine() === undefined && !fs.existsSync(announcement.socket),
          "the bridge to clean up after SIGTERM",
          5000,
        );
      } finally {
        child.kill("SIGKILL");
      }
    },
  );
});
