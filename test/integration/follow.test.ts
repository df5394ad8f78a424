// Following the right session among several, in the real extension host: two sessions written at
// the same time never make the gauge flap ("2 live", one-click switch); two terminals running a
// pi-like process (test/fixtures/pi-like/pi-like.js: process.title "pi", cwd = the workspace) in
// different sessions → the gauge follows the focused terminal; every surface shows pi's label;
// Pi Context: Name Session… appends pi's session_info entry.
import * as assert from "assert";
import { spawn, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { after, afterEach, before, describe, it } from "mocha";
import { sessionLabel } from "../../src/core/rules/sessionLabel";
import type { PiContextApi } from "../../src/extension";
import { repoRoot, testWorkspace } from "./env";
import {
  assistantMessage,
  header,
  jsonl,
  makeAgentDir,
  newId,
  piApi,
  sessionDir,
  useAgentDir,
  userMessage,
  waitForCondition,
  whenSession,
} from "./sessionHelpers";

const PI_LIKE = path.join(repoRoot, "test", "fixtures", "pi-like", "pi-like.js");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("following among many sessions", () => {
  let api: PiContextApi;
  const dirs: string[] = [];
  const terminals: vscode.Terminal[] = [];
  const timers: NodeJS.Timeout[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    api = await piApi();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill();
    for (const t of timers.splice(0)) clearInterval(t);
    for (const t of terminals.splice(0)) t.dispose();
    await api.services.sessions.followLatest();
  });
  after(async () => {
    await useAgentDir(api, undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A session whose first user message is `first`; then `append()` adds one answer. */
  function session(dir: string, name: string, first: string) {
    const file = path.join(sessionDir(dir), name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const u = newId();
    let parent = u;
    fs.writeFileSync(file, jsonl([header(), userMessage(u, null, first)]));
    let tokens = 1000;
    return {
      file,
      append: () => {
        const a = newId();
        fs.appendFileSync(file, jsonl([assistantMessage(a, parent, "ok", (tokens += 10))]));
        parent = a;
      },
    };
  }

  it("two pis writing two sessions at the same time: the gauge never flaps, says 2 live, switches in one click", async function () {
    this.timeout(40_000);
    if (process.platform !== "linux" && process.platform !== "darwin") this.skip();
    const dir = makeAgentDir();
    dirs.push(dir);
    fs.mkdirSync(sessionDir(dir), { recursive: true });
    // two pi processes (pi-like: pi's process title, cwd and header), each writing 8 times a second:
    // the process table ties each to the session it started (the access model's "N live")
    const a = { file: path.join(sessionDir(dir), "2026-12-01T08-00-00-000Z_a.jsonl") };
    const b = { file: path.join(sessionDir(dir), "2026-12-01T08-00-01-000Z_b.jsonl") };
    const start = (file: string, first: string) => {
      const child = spawn(process.execPath, [PI_LIKE, file, testWorkspace(), "125", first], { stdio: "ignore" });
      children.push(child);
    };
    start(a.file, "first session");
    await waitForCondition(() => fs.existsSync(a.file), 10_000, "the first pi's session");
    await sleep(1500); // the second pi starts later: each owns the session it started
    start(b.file, "second session");
    await waitForCondition(() => fs.existsSync(b.file), 10_000, "the second pi's session");
    await useAgentDir(api, dir); // both exist when pi-context first looks (no "new session appeared")
    const first = (await whenSession(api, (c) => c !== undefined, 5000, "a session"))!.file;
    const seen = new Set<string>();
    const sub = api.services.sessions.onDidChange((c) => c && seen.add(c.file));
    const deadline = Date.now() + 4000;
    while (Date.now() < deadline) {
      seen.add(api.services.sessions.current!.file);
      await sleep(50);
    }
    sub.dispose();
    assert.deepStrictEqual([...seen], [first], "the current session stayed while both were written");
    await waitForCondition(() => api.statusBar.snapshot().text.includes("2 live"), 5000, "the gauge to say 2 live");
    const other = first === a.file ? b.file : a.file;
    const tooltip = api.statusBar.snapshot().tooltip;
    assert.ok(tooltip.includes("command:piContext.switchLiveSession?"), tooltip);
    // the one click: the tooltip's link runs this command with the other file
    await vscode.commands.executeCommand("piContext.switchLiveSession", other);
    await whenSession(api, (c) => c?.file === other, 5000, "the other live session");
    const after = new Set<string>();
    for (let i = 0; i < 30; i++) {
      after.add(api.services.sessions.current!.file);
      await sleep(50);
    }
    assert.deepStrictEqual([...after], [other], "stays on the session switched to");
  });

  it("two terminals, each running a pi-like process in its own session: the gauge follows the focused terminal", async function () {
    this.timeout(60_000);
    if (process.platform !== "linux" && process.platform !== "darwin") this.skip();
    const dir = makeAgentDir();
    dirs.push(dir);
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    await useAgentDir(api, dir);
    const start = (name: string, file: string, first: string): vscode.Terminal => {
      const t = vscode.window.createTerminal({
        name,
        shellPath: "/bin/sh",
        shellArgs: [
          "-c",
          `node ${JSON.stringify(PI_LIKE)} ${JSON.stringify(file)} ${JSON.stringify(testWorkspace())} 300 ${JSON.stringify(first)}; sleep 600`,
        ],
        cwd: testWorkspace(),
      });
      terminals.push(t);
      return t;
    };
    const s1 = path.join(own, "2026-12-01T09-00-00-000Z_one.jsonl");
    const s2 = path.join(own, "2026-12-01T09-00-05-000Z_two.jsonl");
    const t1 = start("pi one", s1, "task of terminal one");
    await waitForCondition(() => fs.existsSync(s1), 10_000, "the first pi-like session");
    await sleep(1500); // the second process starts later: each owns the sessions it started
    const t2 = start("pi two", s2, "task of terminal two");
    await waitForCondition(() => fs.existsSync(s2), 10_000, "the second pi-like session");
    for (const [terminal, file] of [
      [t1, s1],
      [t2, s2],
      [t1, s1],
    ] as const) {
      terminal.show();
      const c = await whenSession(
        api,
        (x) => x?.file === file && x.followedBy === "terminal",
        15_000,
        `${terminal.name}'s session`,
      );
      assert.strictEqual(c!.label, file === s1 ? "task of terminal one" : "task of terminal two");
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++) {
        seen.add(api.services.sessions.current!.file);
        await sleep(50);
      }
      assert.deepStrictEqual([...seen], [file], `never flaps while ${terminal.name} is focused`);
      assert.match(api.statusBar.snapshot().text, /2 live/);
    }
  });

  it("every surface shows pi's label for an unnamed session; Pi Context: Name Session… writes pi's session_info", async function () {
    this.timeout(30_000);
    const dir = makeAgentDir();
    dirs.push(dir);
    const s = session(dir, "2026-12-01T10-00-00-000Z_label.jsonl", "Refactor the parser\nand its tests");
    s.append();
    await useAgentDir(api, dir);
    const want = "Refactor the parser and its tests"; // pi: control characters → space
    const c = await whenSession(api, (x) => x?.file === s.file, 5000, "the session");
    assert.strictEqual(c!.label, want);
    assert.ok(api.statusBar.snapshot().tooltip.includes(want), "gauge tooltip");
    assert.ok(String(api.sessionTree.treeView.description).startsWith(want), "Pi Session view description");
    const [listed] = await api.services.sessions.listSessions();
    assert.strictEqual(sessionLabel(listed!), want, "Select Session row");
    // the live-session guard refuses a file written in the last 30 s: pi is idle since an hour
    const hourAgo = new Date(Date.now() - 3600_000);
    fs.utimesSync(s.file, hourAgo, hourAgo);
    const outcome = (await vscode.commands.executeCommand("piContext.nameSession", s.file, "  My\r\nSession ")) as {
      kind: string;
      via: string;
      name: string;
    };
    assert.deepStrictEqual([outcome.kind, outcome.via, outcome.name], ["named", "file", "My Session"]);
    const last = JSON.parse(fs.readFileSync(s.file, "utf8").trimEnd().split("\n").pop()!);
    assert.strictEqual(last.type, "session_info");
    assert.strictEqual(last.name, "My Session");
    await whenSession(api, (x) => x?.label === "My Session", 5000, "the new name on the gauge");
    assert.ok(api.statusBar.snapshot().tooltip.includes("My Session"));
  });
});
