// Session discovery, following and live refresh, in the real extension host.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { PiSessionSource } from "../../src/sessions/source";
import { testAgentDir, testWorkspace } from "./env";
import {
  assistantMessage,
  header,
  jsonl,
  makeAgentDir,
  newId,
  piApi,
  sessionDir,
  setSetting,
  smallSession,
  touchLater,
  useAgentDir,
  userMessage,
  waitForCondition,
  whenSession,
} from "./sessionHelpers";

describe("sessions", () => {
  let api: PiContextApi;
  const tempDirs: string[] = [];
  const agent = (configFrom?: string): string => {
    const d = makeAgentDir(configFrom);
    tempDirs.push(d);
    return d;
  };

  before(async () => {
    api = await piApi();
  });

  after(async () => {
    await api.services.sessions.followLatest();
    await setSetting("sessionDirs", undefined);
    await setSetting("pollIntervalMs", undefined);
    await useAgentDir(api, undefined);
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("uses PI_CODING_AGENT_DIR when piContext.agentDir is empty", async () => {
    await useAgentDir(api, undefined);
    assert.strictEqual(api.services.sessions.agentDir(), testAgentDir());
    assert.strictEqual(api.services.sessions.discovery?.phase, "ready");
    assert.strictEqual(api.services.sessions.discovery?.workspace, true);
    assert.ok(api.services.sessions.discovery?.searchedDirs.includes(sessionDir(testAgentDir())));
  });

  it("finds sessions by header cwd and follows the most recently written one", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const a = path.join(own, "2026-01-01T00-00-00-000Z_a.jsonl");
    fs.writeFileSync(a, smallSession(1000, "session a").text);
    // same folder, other cwd (the folder name encoding is lossy): never attributed to this workspace
    const foreign = path.join(own, "2026-01-02T00-00-00-000Z_foreign.jsonl");
    fs.writeFileSync(foreign, smallSession(2000, "foreign", "/somewhere/else").text);
    touchLater(foreign, 5);
    // not a pi session at all
    fs.writeFileSync(path.join(own, "2026-01-03T00-00-00-000Z_junk.jsonl"), '{"type":"message"}\n');
    await useAgentDir(api, dir);
    const current = await whenSession(api, (c) => c?.file === a, 5000, "session a");
    assert.ok(current);
    assert.strictEqual(current.pinned, false);
    assert.strictEqual(current.agentDir, dir);
    assert.strictEqual(current.workspaceFolder?.uri.fsPath, testWorkspace());
    assert.strictEqual(current.session.records.length, 3);
    assert.strictEqual(current.analysis.inspect.contextTokens, 1000);
    assert.strictEqual(current.analysis.inspect.contextWindow.value, 200000);
    const list = await api.services.sessions.listSessions();
    assert.deepStrictEqual(
      list.map((s) => path.basename(s.file)),
      [path.basename(a)],
    );
    assert.strictEqual(list[0].firstMessage, "session a");
    assert.strictEqual(api.services.sessions.discovery?.sessionCount, 1);
  });

  it("shows appended entries quickly, and a torn line only once it is complete", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "live.jsonl");
    const s = smallSession(5000, "live");
    fs.writeFileSync(file, s.text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === file && c.session.records.length === 3, 5000, "live session");

    const latencies: number[] = [];
    let parent = s.leafId;
    for (let i = 0; i < 5; i++) {
      const u = newId();
      const a = newId();
      const tokens = 6000 + i * 1000;
      const t0 = Date.now();
      fs.appendFileSync(
        file,
        jsonl([userMessage(u, parent, `step ${i}`), assistantMessage(a, u, `done ${i}`, tokens)]),
      );
      await whenSession(
        api,
        (c) => c?.analysis.inspect.contextTokens === tokens,
        3000,
        `contextTokens ${tokens} in ${file} (${fs.statSync(file).size} bytes)`,
      );
      latencies.push(Date.now() - t0);
      parent = a;
      await new Promise((r) => setTimeout(r, 50));
    }
    console.log(`append → onDidChange latency (ms): ${latencies.join(", ")}`);
    assert.ok(Math.min(...latencies) < 150, `fastest update took ${Math.min(...latencies)} ms`);

    // a torn line: half of it now, the rest later
    const u = newId();
    const line = JSON.stringify(userMessage(u, parent, "torn"));
    const before = api.services.sessions.current!.session.records.length;
    fs.appendFileSync(file, line.slice(0, 40));
    await api.services.sessions.refresh();
    assert.strictEqual(api.services.sessions.current!.session.records.length, before, "a torn line is not an entry");
    fs.appendFileSync(file, line.slice(40) + "\n");
    const c = await whenSession(
      api,
      (x) => (x?.session.records.length ?? 0) === before + 1,
      3000,
      "completed torn line",
    );
    assert.strictEqual(c?.session.leafId, u);
  });

  it("coalesces a burst of appends into few updates", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "burst.jsonl");
    const s = smallSession(1000, "burst");
    fs.writeFileSync(file, s.text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === file && c.session.records.length === 3, 5000, "burst session");
    const source = api.services.sessions as PiSessionSource;
    const before = source.stats.updates;
    let parent = s.leafId;
    for (let i = 0; i < 50; i++) {
      const id = newId();
      fs.appendFileSync(file, jsonl([userMessage(id, parent, `burst ${i}`)]));
      parent = id;
    }
    await whenSession(api, (c) => c?.session.records.length === 53, 4000, "all 50 appended entries");
    await new Promise((r) => setTimeout(r, 300));
    const updates = source.stats.updates - before;
    console.log(`50 appends → ${updates} update batches`);
    assert.ok(updates <= 10, `${updates} update batches for 50 appends`);
  });

  it("the fallback poll catches writes when no file events arrive", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "polled.jsonl");
    const s = smallSession(1000, "polled");
    fs.writeFileSync(file, s.text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === file, 5000, "polled session");
    const source = api.services.sessions as PiSessionSource;
    await setSetting("pollIntervalMs", 200);
    source.setWatchersEnabled(false);
    try {
      const polls = source.stats.pollDetected;
      const events = source.stats.events;
      const a = newId();
      fs.appendFileSync(file, jsonl([assistantMessage(a, s.leafId, "polled", 2500)]));
      await whenSession(api, (c) => c?.analysis.inspect.contextTokens === 2500, 3000, "append seen by the poll");
      assert.ok(source.stats.pollDetected > polls, "the poll found the change");
      assert.strictEqual(source.stats.events, events, "no watcher events while watchers are off");
      // a new session, too
      const other = path.join(own, "polled-2.jsonl");
      fs.writeFileSync(other, smallSession(3000, "polled 2").text);
      touchLater(other, 1);
      await whenSession(api, (c) => c?.file === other, 3000, "new session seen by the poll");
    } finally {
      source.setWatchersEnabled(true);
      await setSetting("pollIntervalMs", undefined);
    }
  });

  it("switches when pi starts a new session; pin keeps one, Follow Latest unpins", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const first = path.join(own, "2026-02-01T00-00-00-000Z_first.jsonl");
    fs.writeFileSync(first, smallSession(1111, "first").text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === first, 5000, "first session");

    const second = path.join(own, "2026-02-02T00-00-00-000Z_second.jsonl");
    fs.writeFileSync(second, smallSession(2222, "second").text);
    touchLater(second, 1);
    await whenSession(api, (c) => c?.file === second, 3000, "switch to the new session");

    await api.services.sessions.pin(first);
    assert.strictEqual(api.services.sessions.current?.file, first);
    assert.strictEqual(api.services.sessions.current?.pinned, true);
    const third = path.join(own, "2026-02-03T00-00-00-000Z_third.jsonl");
    fs.writeFileSync(third, smallSession(3333, "third").text);
    touchLater(third, 2);
    await api.services.sessions.refresh();
    await new Promise((r) => setTimeout(r, 300));
    assert.strictEqual(api.services.sessions.current?.file, first, "a pinned session stays");

    await vscode.commands.executeCommand("piContext.followLatest");
    await whenSession(api, (c) => c?.file === third && !c.pinned, 3000, "latest after Follow Latest");
  });

  it("a deleted pinned session: one information message, then the latest session again (no loop)", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const latest = path.join(own, "2026-02-10T00-00-00-000Z_latest.jsonl");
    const pinned = path.join(own, "2026-02-09T00-00-00-000Z_pinned.jsonl");
    fs.writeFileSync(pinned, smallSession(1500, "to be pinned").text);
    fs.writeFileSync(latest, smallSession(2500, "latest").text);
    touchLater(latest, 1);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === latest, 5000, "latest session");
    await api.services.sessions.pin(pinned);
    assert.strictEqual(api.services.sessions.current?.pinned, true);
    const source = api.services.sessions as PiSessionSource;
    const before = source.notices.length;
    fs.rmSync(pinned);
    await whenSession(
      api,
      (c) => c?.file === latest && !c.pinned,
      5000,
      "the latest session after the pinned one was deleted",
    );
    // several poll rounds later: still exactly one message
    await new Promise((r) => setTimeout(r, 2500));
    const shown = source.notices.slice(before);
    assert.deepStrictEqual(shown, [
      `The pinned session “to be pinned” (${path.basename(pinned)}) was deleted; following the latest session again.`,
    ]);
    assert.strictEqual(api.services.sessions.current?.file, latest);
  });

  it("handles a session folder created later, a deleted session and a rewritten one", async () => {
    const dir = agent();
    fs.rmSync(path.join(dir, "sessions"), { recursive: true });
    await useAgentDir(api, dir);
    assert.strictEqual(api.services.sessions.current, undefined);
    assert.strictEqual(api.services.sessions.discovery?.sessionCount, 0);

    // pi creates the folder with the first session
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const older = path.join(own, "2026-03-01T00-00-00-000Z_older.jsonl");
    fs.writeFileSync(older, smallSession(4000, "older").text);
    await whenSession(api, (c) => c?.file === older, 4000, "session in a folder created later");
    const newer = path.join(own, "2026-03-02T00-00-00-000Z_newer.jsonl");
    fs.writeFileSync(newer, smallSession(5000, "newer").text);
    touchLater(newer, 1);
    await whenSession(api, (c) => c?.file === newer, 4000, "newer session");

    // rewritten in place (pi's migration rewrites whole files): read again from scratch
    const rewritten = smallSession(7777, "rewritten");
    fs.writeFileSync(newer, rewritten.text);
    touchLater(newer, 3);
    await whenSession(
      api,
      (c) => c?.file === newer && c.analysis.inspect.contextTokens === 7777,
      4000,
      "rewritten session re-read",
    );

    fs.rmSync(newer);
    await whenSession(api, (c) => c?.file === older, 4000, "fall back to the remaining session after a delete");
    fs.rmSync(older);
    await whenSession(api, (c) => c === undefined, 4000, "no session after deleting all");
  });

  it("honours pi's sessionDir setting and piContext.sessionDirs", async () => {
    const dir = agent();
    const custom = path.join(dir, "custom-sessions");
    fs.mkdirSync(custom);
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ sessionDir: custom }));
    const inCustom = path.join(custom, "s.jsonl");
    fs.writeFileSync(inCustom, smallSession(1234, "custom dir").text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === inCustom, 4000, "session in pi's sessionDir");

    const extra = path.join(dir, "extra");
    fs.mkdirSync(extra);
    const inExtra = path.join(extra, "e.jsonl");
    fs.writeFileSync(inExtra, smallSession(4321, "extra dir").text);
    touchLater(inExtra, 2);
    await setSetting("sessionDirs", [extra]);
    await whenSession(api, (c) => c?.file === inExtra, 4000, "session in piContext.sessionDirs");
    await setSetting("sessionDirs", undefined);
    await whenSession(api, (c) => c?.file === inCustom, 4000, "back to pi's sessionDir");
  });

  it("re-analyses when pi's settings change (watcher on the agent dir)", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "s.jsonl");
    fs.writeFileSync(file, smallSession(1000, "settings").text);
    await useAgentDir(api, dir);
    await whenSession(api, (c) => c?.file === file, 4000, "session");
    assert.strictEqual(api.services.sessions.current?.analysis.inspect.reserveTokens.value, 16384);
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 30000 } }));
    const c = await whenSession(
      api,
      (x) => x?.analysis.inspect.reserveTokens.value === 30000,
      4000,
      "new reserveTokens",
    );
    assert.strictEqual(c?.analysis.inspect.reserveTokens.source, "global");
    assert.strictEqual(c?.analysis.inspect.threshold, 200000 - 30000);
  });

  it("a header written later (empty file first) is picked up", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    await useAgentDir(api, dir);
    const file = path.join(own, "late.jsonl");
    fs.writeFileSync(file, "");
    await api.services.sessions.refresh();
    assert.strictEqual(api.services.sessions.current, undefined);
    fs.appendFileSync(file, JSON.stringify(header()).slice(0, 20));
    await api.services.sessions.refresh();
    assert.strictEqual(api.services.sessions.current, undefined);
    const s = smallSession(999, "late");
    fs.writeFileSync(file, s.text);
    await whenSession(api, (c) => c?.file === file && c.session.leafId === s.leafId, 4000, "late session");
    await waitForCondition(() => api.services.sessions.discovery?.sessionCount === 1);
  });
});
