// pi's session commands in the real extension host (issue 42): Fork Session Here from a tree row
// (before a user message: the path before it, its text given back), Pi Context: Fork Session… through pi's
// message pick, Pi Context: Clone Session — each new session written next to its source (which is never
// touched), listed in Select Session's rows under its parent and shown at once — and Resume in pi:
// a terminal in the session's folder whose shell runs the user's pi (here a stand-in that records
// its arguments and folder) with `--session <file>`, for a file name no shell may mangle; refused
// while a pi has the session open.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import { after, afterEach, before, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { ForkCommandOutcome } from "../../src/sessions/fork";
import type { ResumeOutcome } from "../../src/sessions/resume";
import type { OpenPrompt } from "../../src/ui/prompter";
import { familyRows } from "../../src/viewModel/sessionPicker";
import { testWorkspace, waitFor } from "./env";
import {
  choosePick,
  fixture,
  installSession,
  makeAgentDir,
  piApi,
  setSetting,
  useAgentDir,
  whenSession,
} from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-fork-"));

/**
 * A stand-in for the user's pi: a package named like pi's whose `bin/pi` (a shell script) writes
 * its folder and arguments, NUL-separated, to `bin/call` and exits.
 */
function standInPi(): { exe: string; calls: string } {
  const pkg = path.join(tmp, "pi's package");
  fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
  fs.writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "1.6.0", bin: { pi: "bin/pi" } }),
  );
  const exe = path.join(pkg, "bin", "pi");
  fs.writeFileSync(
    exe,
    `#!/bin/sh\ndir=$(dirname "$0")\n{ printf '%s\\0' "$PWD"; for a in "$@"; do printf '%s\\0' "$a"; done; } > "$dir/call.tmp" && mv "$dir/call.tmp" "$dir/call"\n`,
    { mode: 0o755 },
  );
  return { exe, calls: path.join(pkg, "bin", "call") };
}

const lines = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("fork, clone and resume in pi", function () {
  this.timeout(60_000);
  let api: PiContextApi;
  let agentDir: string;
  let pi: { exe: string; calls: string };
  const terminals: vscode.Terminal[] = [];

  before(async () => {
    api = await piApi();
    agentDir = makeAgentDir(fixture("tree").agent);
    await useAgentDir(api, agentDir);
    pi = standInPi();
    await setSetting("pi.path", pi.exe);
    await waitFor(
      async () => (await api.services.pi.refresh()).install?.executable === pi.exe,
      10_000,
      "the stand-in as the user's pi",
    );
  });
  afterEach(async () => {
    if (api.fork.prompts.current) await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
  });
  after(async () => {
    for (const t of terminals) t.dispose();
    await setSetting("pi.path", undefined);
    await api.services.pi.refresh();
    await api.services.sessions.followLatest();
    await useAgentDir(api, undefined);
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    fs.rmSync(agentDir, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * A copy of pi's tree fixture as a session of the workspace, named `name`, shown in the tree;
   * written an hour ago (a fresh write by another program is the access model's evidence of a pi).
   */
  async function treeSession(name: string): Promise<string> {
    const file = installSession(agentDir, fixture("tree").jsonl, name);
    const hourAgo = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, hourAgo, hourAgo);
    await api.services.sessions.pin(file);
    await waitFor(
      () => api.sessionTree.provider.file === file && api.sessionTree.provider.model?.leafId === "bb6f6d3c",
      10_000,
      "the tree on the session",
    );
    return file;
  }

  it("Fork Session Here on a user message row: a new file before it, listed under its parent and shown at once", async () => {
    const source = await treeSession("2026-11-30T07-00-00-000Z_tree-fork.jsonl");
    const bytes = fs.readFileSync(source);
    const users = lines(source).filter((e) => e.type === "message" && (e.message as { role: string }).role === "user");
    const target = users[2]!;
    // the row itself, as the context menu passes it
    const element = api.sessionTree.provider.model!.elementOf(String(target.id));
    assert.ok(element, "the entry has a row");
    const outcome = (await vscode.commands.executeCommand("piContext.tree.forkHere", element)) as ForkCommandOutcome;
    assert.strictEqual(outcome.kind, "forked", JSON.stringify(outcome));
    if (outcome.kind !== "forked") return;
    assert.ok(fs.readFileSync(source).equals(bytes), "the source is untouched");
    assert.strictEqual(outcome.position, "before");
    assert.strictEqual(outcome.selectedText, "[task:t3] do t3");
    assert.strictEqual(path.dirname(outcome.file), path.dirname(source));
    assert.match(path.basename(outcome.file), /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$/);
    const forked = lines(outcome.file);
    assert.deepStrictEqual(
      {
        type: forked[0]!.type,
        version: forked[0]!.version,
        cwd: forked[0]!.cwd,
        parentSession: forked[0]!.parentSession,
      },
      { type: "session", version: 3, cwd: testWorkspace(), parentSession: source },
    );
    assert.strictEqual(forked.at(-1)!.id, outcome.leafId);
    assert.strictEqual(outcome.pathLeafId, target.parentId, "the path ends before the message");
    // shown at once: the gauge's session, the tree
    const current = api.services.sessions.current!;
    assert.strictEqual(current.file, outcome.file);
    assert.strictEqual(current.pinned, true);
    await waitFor(() => api.sessionTree.provider.file === outcome.file, 5000, "the tree on the fork");
    assert.strictEqual(api.sessionTree.provider.model!.leafId, outcome.leafId);
    // listed at once, under its parent (Select Session's rows)
    const listed = await api.services.sessions.listSessions();
    const rows = familyRows(listed);
    const row = rows.find((r) => r.info.file === outcome.file);
    assert.ok(row, "the fork is listed");
    assert.strictEqual(row.info.parentSession, source);
    assert.strictEqual(row.depth, 1);
    const parentIndex = rows.findIndex((r) => r.info.file === source);
    assert.ok(parentIndex >= 0 && rows.indexOf(row) > parentIndex, "under its parent");
  });

  it("Pi Context: Fork Session… offers pi's message pick; Pi Context: Clone Session copies the branch; pi's no-file cases write nothing", async () => {
    const source = await treeSession("2026-11-30T07-00-01-000Z_tree-pick.jsonl");
    const asked = api.fork.prompts.log.length;
    const pending = vscode.commands.executeCommand("piContext.forkSession") as Thenable<ForkCommandOutcome>;
    const prompt = (await waitFor(
      () => (api.fork.prompts.log.length > asked ? api.fork.prompts.current : undefined),
      8000,
      "the message pick",
    )) as OpenPrompt;
    assert.strictEqual(prompt.title, "Pi Context: Fork Session — from which message?");
    assert.strictEqual(api.fork.prompts.log.at(-1)!.items!.length, 6, "the six user messages");
    await choosePick(prompt, /do t4/);
    const picked = await pending;
    assert.strictEqual(picked.kind, "forked", JSON.stringify(picked));
    if (picked.kind !== "forked") return;
    assert.strictEqual(picked.selectedText, "[task:t4] do t4");
    await whenSession(api, (c) => c?.file === picked.file, 5000, "the fork shown");
    // clone the fork: at its leaf, the fork named as its parent
    const clone = (await vscode.commands.executeCommand("piContext.cloneSession")) as ForkCommandOutcome;
    assert.strictEqual(clone.kind, "forked", JSON.stringify(clone));
    if (clone.kind !== "forked") return;
    assert.strictEqual(clone.position, "at");
    assert.strictEqual(lines(clone.file)[0]!.parentSession, picked.file);
    const entriesOf = (file: string) =>
      lines(file)
        .slice(1)
        .filter((e) => e.type !== "label")
        .map((e) => e.id);
    assert.deepStrictEqual(entriesOf(clone.file), entriesOf(picked.file), "the same path");
    assert.strictEqual(clone.labelCount, picked.labelCount, "its labels re-created");
    // before the first user message pi writes no file: neither do we
    const dir = path.dirname(source);
    const count = fs.readdirSync(dir).length;
    const first = lines(source).find((e) => e.type === "message" && (e.message as { role: string }).role === "user")!;
    const nothing = (await vscode.commands.executeCommand("piContext.forkSession", first.id, source, {
      quiet: true,
    })) as ForkCommandOutcome;
    assert.strictEqual(nothing.kind, "nothing", JSON.stringify(nothing));
    assert.strictEqual(nothing.kind === "nothing" ? nothing.selectedText : "", "[task:t1] do t1");
    assert.strictEqual(fs.readdirSync(dir).length, count);
  });

  it("Resume in pi: a terminal in the session's folder runs the user's pi with --session <file>, the name unmangled", async () => {
    const source = await treeSession(`2026-11-30T07-00-02-000Z_it's "a" $HOME & \`x\` ;!.jsonl`);
    // another session shown (pinned) when the user resumes this one from Select Session's row
    await treeSession("2026-11-30T07-00-02-500Z_other.jsonl");
    fs.rmSync(pi.calls, { force: true });
    const outcome = (await vscode.commands.executeCommand("piContext.resumeInPi", source)) as ResumeOutcome;
    assert.strictEqual(outcome.kind, "opened", JSON.stringify(outcome));
    if (outcome.kind !== "opened") return;
    const terminal = vscode.window.terminals.find((t) => t.name === outcome.terminalName);
    assert.ok(terminal, `a terminal named ${outcome.terminalName}`);
    terminals.push(terminal);
    assert.match(outcome.terminalName, /^pi: /);
    const options = terminal.creationOptions as vscode.TerminalOptions;
    assert.strictEqual(options.name, outcome.terminalName);
    assert.strictEqual(options.cwd, testWorkspace(), "the session's folder");
    assert.strictEqual(options.shellPath, undefined, "the user's own shell");
    assert.deepStrictEqual(outcome.argv, [pi.exe, "--session", source]);
    assert.strictEqual(api.services.sessions.current?.file, source, "the resumed session is shown");
    assert.strictEqual(outcome.cwd, testWorkspace());
    // what the shell made of the line: exactly the folder and the arguments
    const call = (await waitFor(
      () => (fs.existsSync(pi.calls) ? fs.readFileSync(pi.calls, "utf8") : undefined),
      15_000,
      `the stand-in pi to run (typed: ${outcome.commandLine})`,
    )) as string;
    assert.deepStrictEqual(call.split("\0").slice(0, -1), [testWorkspace(), "--session", source]);
  });

  it("Resume in pi is refused while a pi has the session open; nothing runs", async () => {
    const source = await treeSession("2026-11-30T07-00-03-000Z_tree-live.jsonl");
    const guardFile = process.env.PI_CONTEXT_GUARD_PROCESSES!;
    assert.ok(guardFile && fs.existsSync(guardFile), "the runner sets PI_CONTEXT_GUARD_PROCESSES to a file");
    // a pi started with this session (any live process but this one, which is pi-context itself)
    const running = {
      pid: process.ppid,
      ppid: 1,
      argv: ["pi", "--session", source],
      command: `pi --session ${source}`,
      cwd: testWorkspace(),
      sessionArg: source,
    };
    fs.writeFileSync(guardFile, JSON.stringify([running]));
    fs.rmSync(pi.calls, { force: true });
    const before = vscode.window.terminals.length;
    try {
      const outcome = (await vscode.commands.executeCommand("piContext.resumeInPi", source)) as ResumeOutcome;
      assert.strictEqual(outcome.kind, "refused", JSON.stringify(outcome));
      assert.match(
        outcome.kind === "refused" ? outcome.message : "",
        /^Refusing to open a second pi on this session while pi may have it open: pi is running on it \(process \d+/,
      );
      assert.strictEqual(vscode.window.terminals.length, before, "no terminal");
      assert.strictEqual(fs.existsSync(pi.calls), false, "nothing ran");
    } finally {
      fs.writeFileSync(guardFile, "[]\n");
    }
  });
});
