/**
 * `pi-context fork` / `pi-context clone`: the new session next to the source (listed by
 * `pi-context sessions` under its parent at once), the message given back, the resume line for the
 * user's pi and shell, `--json`, refusals and usage errors with their exit codes.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { encodeSessionDirName } from "../../../src/core/read/locate";
import { runCli } from "../../support/cli";
import { SessionBuilder } from "../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-fork-"));
const savedShell = process.env.SHELL;
after(() => {
  if (savedShell === undefined) delete process.env.SHELL;
  else process.env.SHELL = savedShell;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A project folder, an agent dir and one session of that folder in pi's place; returns all three. */
function setup(name: string): { folder: string; agent: string; file: string } {
  const folder = path.join(tmp, name, "project");
  fs.mkdirSync(folder, { recursive: true });
  const agent = path.join(tmp, name, "agent");
  const dir = path.join(agent, "sessions", encodeSessionDirName(folder));
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "2026-11-30T06-33-35-854Z_source.jsonl");
  fs.writeFileSync(
    file,
    new SessionBuilder(folder)
      .user("u1", "fix the parser please")
      .assistant("a1", { text: "done" })
      .label("l1", "a1", "parser fixed")
      .user("u2", "now the \u001b[31mlexer\u001b[0m, it's slow")
      .assistant("a2", { text: "faster" })
      .jsonl(),
  );
  return { folder, agent, file };
}

/** A pi package with an executable `bin/pi` (what `--pi` points at). */
function fakePi(): string {
  const pkg = path.join(tmp, "pi pkg");
  fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
  fs.mkdirSync(path.join(pkg, "dist", "bundle"), { recursive: true });
  fs.writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "1.6.0", bin: { pi: "dist/bundle/cli.js" } }),
  );
  fs.writeFileSync(path.join(pkg, "dist", "bundle", "cli.js"), "#!/usr/bin/env node\n");
  const exe = path.join(pkg, "bin", "pi");
  fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
  return exe;
}

describe("pi-context fork / clone", () => {
  it("forks before a user message: a new session listed under its parent, the message, the resume line", async () => {
    const { folder, agent, file } = setup("before");
    const before = fs.readFileSync(file);
    process.env.SHELL = "/bin/bash";
    const exe = fakePi();
    const r = await runCli(["fork", file, "u2", "--pi", exe]);
    assert.equal(r.code, 0, r.err);
    assert.ok(fs.readFileSync(file).equals(before), "the source is untouched");
    const created = fs.readdirSync(path.dirname(file)).filter((f) => f !== path.basename(file));
    assert.equal(created.length, 1);
    const forked = path.join(path.dirname(file), created[0]!);
    const lines = r.out.split("\n");
    assert.match(lines[0]!, /^forked 2026-11-30T06-33-35-854Z_source\.jsonl before u2 “now the .*lexer.*, it's slow”$/);
    assert.equal(lines[1], `new session ${forked}`);
    assert.match(r.out, /2 entries of the path \+ 1 label, \d+ bytes; pi resumes after a1 “done”/);
    // the message, with its escape codes made visible (never sent to the terminal)
    assert.ok(!r.out.includes("\u001b"), "no raw escape reaches the terminal");
    assert.match(r.out, /send it again to continue\):\nnow the .*\[31mlexer.*\[0m, it's slow\n/);
    assert.match(
      r.out,
      new RegExp(
        `resume it in pi:\\n  '${exe.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}' --session ${forked.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
      ),
    );
    // pi-context sessions lists it at once, under its parent
    const listed = await runCli(["sessions", "--cwd", folder, "--agent-dir", agent, "--json"]);
    assert.equal(listed.code, 0, listed.err);
    const rows = JSON.parse(listed.out) as { file: string; depth: number; parentSession: string | null }[];
    const row = rows.find((x) => x.file === forked);
    assert.ok(row, listed.out);
    assert.equal(row.parentSession, file);
    assert.equal(row.depth, 1);
    assert.equal(rows.find((x) => x.file === file)?.depth, 0);
  });

  it("clone --json: the leaf's path, no message, the resume argv for $SHELL", async () => {
    const { file, folder } = setup("clone");
    process.env.SHELL = "/usr/bin/fish";
    const r = await runCli(["clone", file, "--json", "--pi", fakePi()]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as Record<string, unknown> & {
      resume: { argv: string[]; cwd: string; command: string };
    };
    assert.equal(j.forked, true);
    assert.equal(j.entryId, "a2");
    assert.equal(j.position, "at");
    assert.equal(j.entries, 4, "u1, a1, u2, a2: the label entry leaves the path");
    assert.equal(j.labels, 1);
    assert.equal(j.pathLeafId, "a2");
    assert.equal(j.selectedText, null);
    assert.equal(j.source, file);
    assert.equal(path.dirname(j.file as string), path.dirname(file));
    assert.deepEqual(j.resume.argv.slice(1), ["--session", j.file]);
    assert.equal(j.resume.cwd, folder);
    assert.equal(j.resume.command, `'${j.resume.argv[0]}' --session ${String(j.file)}`);
    const header = JSON.parse(fs.readFileSync(j.file as string, "utf8").split("\n")[0]!) as Record<string, unknown>;
    assert.equal(header.parentSession, file);
    assert.equal(header.id, j.sessionId);
  });

  it("refusals exit 1 and write nothing; usage errors exit 2", async () => {
    const { file } = setup("refuse");
    const dir = path.dirname(file);
    const count = () => fs.readdirSync(dir).length;
    let r = await runCli(["fork", file, "u1"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /Nothing before this message.*Nothing was written\.\n\nthe message:\nfix the parser please/s);
    r = await runCli(["fork", file, "u1", "--json"]);
    assert.equal(r.code, 1);
    assert.equal((JSON.parse(r.out) as { selectedText: string }).selectedText, "fix the parser please");
    r = await runCli(["fork", file, "missing"]);
    assert.equal(r.code, 1);
    assert.equal(r.err, "pi-context fork: Invalid entry ID for forking.");
    r = await runCli(["fork", path.join(dir, "gone.jsonl"), "a1"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /gone\.jsonl: no such file\./);
    assert.equal(count(), 1);
    assert.equal((await runCli(["fork", file])).code, 2);
    assert.equal((await runCli(["clone", file, "a1"])).code, 2);
    assert.equal((await runCli(["fork", file, "a1", "--force"])).code, 2);
    assert.equal(count(), 1);
    r = await runCli(["fork", "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.out, /pi-context fork <session\.jsonl> <entryId> \[--json\] \[--pi PATH\]/);
  });
});
