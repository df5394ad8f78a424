/**
 * `pi-context` itself: the help text, `inspect` on the shared pi 1.6.0 fixtures and on files that
 * are no sessions, and the wording rules (full sentences, thousands separators, no internal labels).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { formatUsage } from "../../../src/cli/args";
import { cliCommands } from "../../../src/cli/main";
import { FIXTURES } from "../../support/paths";
import { runCli } from "../../support/cli";
import { SessionBuilder } from "../../support/session-builder";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-"));

const run = runCli;

describe("pi-context CLI", () => {
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("help: every command once, continuation lines aligned under the first argument, the environment once", async () => {
    const { code, out } = await run(["--help"]);
    assert.equal(code, 0);
    for (const c of ["inspect", "compact", "tree", "switch", "doctor"])
      assert.equal(out.split(`\n  pi-context ${c} <session.jsonl>`).length - 1, 1, c);
    assert.equal(out.split("PI_CONTEXT_API_KEY").length - 1, 1, "the key variables are listed once");
    assert.doesNotMatch(out, /API key: /, "no per-command API key lines");
    const lines = out.split("\n");
    const usage = lines.slice(lines.indexOf("usage:") + 1, lines.indexOf("", lines.indexOf("usage:")));
    let column = 0;
    for (const line of usage) {
      const m = /^ {2}(pi-context \S+ )/.exec(line);
      if (m) column = 2 + m[1]!.length;
      else assert.equal(line.length - line.trimStart().length, column, `aligned: ${JSON.stringify(line)}`);
    }
    assert.match(out, /exit codes: 0 done, 1 refused or failed \(nothing written\), 2 usage error\.\n/);
    assert.match(out, /doctor: 0 no errors, 1 errors found \(after --repair: errors left\), 2 usage error\.$/);
    assert.equal((await run([])).code, 2);
  });

  it('every command takes --help and -h: its usage on stdout, exit 0, nothing run (not "--help needs a value")', async () => {
    assert.deepEqual([...cliCommands.keys()].sort(), [
      "clone",
      "compact",
      "doctor",
      "fork",
      "inspect",
      "restore",
      "sessions",
      "summarize",
      "switch",
      "tree",
      "trim",
    ]);
    for (const name of cliCommands.keys())
      for (const args of [
        [name, "--help"],
        [name, "-h"],
        [name, "session.jsonl", "--help"],
        ["help", name],
      ]) {
        const r = await run(args);
        assert.equal(r.code, 0, `${args.join(" ")}: ${r.err}`);
        assert.equal(r.err, "", args.join(" "));
        assert.ok(r.out.startsWith(`usage:\n  pi-context ${name} `), `${args.join(" ")}: ${r.out}`);
        assert.equal(r.out.split("\n  pi-context ").length - 1, 1, `only ${name}'s usage`);
      }
    // the key lines stay in a command's own help
    assert.match((await run(["compact", "--help"])).out, /API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY/);
    // help for a command that does not exist is the unknown-command error, as `pi-context bogus`
    for (const args of [["help", "bogus"], ["bogus"]]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.out, "", args.join(" "));
      assert.ok(r.err.startsWith('Unknown command "bogus".\n\npi-context — '), r.err);
    }
    // after `--` it is an argument like any other
    assert.notEqual((await run(["inspect", "--", "--help"])).code, 0);
  });

  it('an unknown flag at the end is "Unknown flag", not "needs a value"; a known one without its value says so', async () => {
    for (const args of [
      ["inspect", "s.jsonl", "--bogus"],
      ["tree", "s.jsonl", "--bogus"],
      ["doctor", "s.jsonl", "--fix"],
      ["switch", "s.jsonl", "e1", "--yes"],
      ["compact", "s.jsonl", "--overwrite"],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(" "));
      assert.match(r.err, new RegExp(`^Unknown flag ${args.at(-1)}\\.\nusage:`), `${args.join(" ")}: ${r.err}`);
    }
    const r = await run(["inspect", "s.jsonl", "--agent-dir"]);
    assert.equal(r.code, 2);
    assert.equal(r.err, "--agent-dir needs a value.");
    assert.equal(
      (await run(["switch", "s.jsonl", "e1", "--bogus", "--label"])).err.split("\n")[0],
      "Unknown flag --bogus.",
    );
    // a flag where the value should be: that value is missing (the flag is not taken as the value)
    for (const args of [
      ["switch", "s.jsonl", "e1", "--label", "--dry-run"],
      ["compact", "s.jsonl", "--instructions", "--yes"],
      ["inspect", "s.jsonl", "--leaf", "--json"],
      ["tree", "s.jsonl", "--filter", "--json"],
    ]) {
      const m = await run(args);
      assert.equal(m.code, 2, args.join(" "));
      assert.match(m.err, new RegExp(`^${args.at(-2)} needs a value`), m.err);
    }
    // `--` ends the flags: a file whose name starts with --
    const dashed = path.join(tmp, "--dashed.jsonl");
    fs.copyFileSync(path.join(PI, "tree.jsonl"), dashed);
    const d = await run(["tree", "--json", "--", dashed]);
    assert.equal(d.code, 0, d.err);
    assert.equal(JSON.parse(d.out).file, dashed);
  });

  it("number flags: decimal numbers only — empty, blank, hex, binary, Infinity and 1e400 are usage errors (exit 2)", async () => {
    const bad = ["", " ", "0x10", "0b1", "0o7", "Infinity", "1e400", "-1", "NaN", "1_000", "12abc"];
    for (const value of bad)
      for (const args of [
        ["inspect", "s.jsonl", "--context-window", value],
        ["doctor", "s.jsonl", "--context-window", value],
        ["trim", "s.jsonl", "e1", "--guard-seconds", value],
        ["restore", "s.jsonl", "e1", "--guard-seconds", value],
        ["doctor", "s.jsonl", "--guard-seconds", value],
        ["switch", "s.jsonl", "e1", "--guard-seconds", value],
        ["compact", "s.jsonl", "--guard-seconds", value],
        ["compact", "s.jsonl", "--max-output-tokens", value],
        ["compact", "s.jsonl", "--summarizer-window", value],
      ]) {
        const r = await run(args);
        assert.equal(r.code, 2, `${JSON.stringify(args)}: ${r.err}`);
        assert.match(r.err, new RegExp(`^${args.at(-2)} must be a (positive|non-negative) number\\.`), r.err);
      }
    const ok = await run(["inspect", path.join(PI, "tree.jsonl"), "--context-window", "2e5", "--json"]);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(JSON.parse(ok.out).contextWindow.value, 200000);
  });

  it("a missing file: the same 'no such file.' in every command, never a raw ENOENT; exit 1", async () => {
    const missing = path.join(tmp, "missing.jsonl");
    for (const args of [
      ["inspect", missing],
      ["tree", missing],
      ["doctor", missing],
      ["compact", missing, "--dry-run"],
      ["trim", missing, "e1", "--dry-run"],
      ["restore", missing, "e1"],
      ["switch", missing, "e1", "--dry-run"],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 1, args.join(" "));
      assert.ok(r.err.includes(`${missing}: no such file.`), `${args[0]}: ${r.err}`);
      assert.doesNotMatch(r.err, /ENOENT/, args[0]);
    }
  });

  it("formatUsage re-indents any command's usage", () => {
    assert.equal(
      formatUsage("pi-context x <a> [--b]\n  [--c]\n  API key: X", 4),
      "    pi-context x <a> [--b]\n                 [--c]",
    );
  });

  it("inspect: words and separators, not internal labels", async () => {
    const { code, out } = await run([
      "inspect",
      path.join(PI, "long.jsonl"),
      "--agent-dir",
      path.join(PI, "long.agent"),
      "--leaf",
      "55df30c5",
    ]);
    assert.equal(code, 0);
    assert.match(out, /^session +long scripted session$/m);
    assert.match(out, /^entries +162; leaf 55df30c5$/m);
    assert.match(
      out,
      /^window +16,000 tokens, from models\.json: .*long\.agent\/models\.json \(providers\.scripted\.models, id scripted-small\)$/m,
    );
    assert.match(
      out,
      /^context +12,458 tokens = 77\.9% of the window \(last reported usage 11,302 \+ estimate of later messages 1,156\)$/m,
    );
    assert.match(out, /^reserve +4,000 tokens \(global settings: .*settings\.json\)$/m);
    assert.match(
      out,
      /^threshold +12,000 tokens \(window − reserve\); over by 458 tokens: pi auto-compacts at its next check/m,
    );
    assert.match(out, /^ {2}summarized +35 entries, ≈6,546 tokens \(\+ the summary of compaction 9bfb1fa5\)$/m);
    assert.doesNotMatch(out, /models-json:|shouldCompact|DISABLED/, "no internal labels");
    assert.doesNotMatch(
      out,
      /\b(?:12458|11302|16000|12000|4000|3000|6546|3377|4686)\b/,
      "every number with separators",
    );
  });

  it("inspect of a session with no answer yet: one usage row", async () => {
    const file = path.join(tmp, "header-only.jsonl");
    fs.writeFileSync(file, `${fs.readFileSync(path.join(PI, "tree.jsonl"), "utf8").split("\n")[0]}\n`);
    const { code, out } = await run(["inspect", file]);
    assert.equal(code, 0);
    assert.deepEqual(
      out.split("\n").filter((l) => l.startsWith("usage")),
      ["usage       no usage reported yet"],
    );
  });

  it("inspect --leaf with an id the file does not have: pi's 'not found', exit 1, no numbers of another leaf", async () => {
    const r = await run([
      "inspect",
      path.join(PI, "long.jsonl"),
      "--agent-dir",
      path.join(PI, "long.agent"),
      "--leaf",
      "nope",
    ]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(r.err, "pi-context inspect: Entry nope not found.");
    const json = await run(["inspect", path.join(PI, "long.jsonl"), "--leaf", "null", "--json"]);
    assert.equal(json.code, 0, "--leaf null (an empty context) stays allowed");
  });

  it("inspect of a file that is not a pi session: a clear error, exit 1", async () => {
    const readme = path.join(tmp, "README.md");
    fs.writeFileSync(readme, "# not a session\n");
    let r = await run(["inspect", readme]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(
      r.err,
      `pi-context inspect: ${readme} is not a pi session: its first line is not a session header ({"type":"session",…}).`,
    );
    const empty = path.join(tmp, "empty.jsonl");
    fs.writeFileSync(empty, "");
    r = await run(["inspect", empty, "--json"]);
    assert.equal(r.code, 1);
    assert.equal(r.err, `pi-context inspect: ${empty} is empty: not a pi session.`);
    r = await run(["inspect", path.join(tmp, "missing.jsonl")]);
    assert.equal(r.code, 1);
    assert.equal(r.err, `pi-context inspect: ${path.join(tmp, "missing.jsonl")}: no such file.`);
    r = await run(["inspect", readme, "--nope=1"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^Unknown flag --nope\.\nusage:\n {2}pi-context inspect/);
  });

  it("compact --json with nothing to compact: JSON on stdout (also --dry-run), exit 1; the text mode says it on stderr", async () => {
    const file = path.join(tmp, "small.jsonl");
    fs.writeFileSync(file, new SessionBuilder({ id: "s", cwd: tmp }).user("u1", "hi").jsonl());
    // written an hour ago: nobody has it open (a recent write would be refused first)
    const hourAgo = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, hourAgo, hourAgo);
    const agent = ["--agent-dir", path.join(tmp, "no-agent"), "--base-url", "http://127.0.0.1:9/v1"];
    for (const flags of [
      ["--dry-run", "--json"],
      ["--json", "--yes"],
    ]) {
      const r = await run(["compact", file, ...flags, ...agent]);
      assert.equal(r.code, 1, r.err);
      assert.deepEqual(JSON.parse(r.out), {
        ...(flags.includes("--dry-run") ? { dryRun: true } : {}),
        compacted: false,
        nothingToCompact: "nothing-to-compact",
        message: "Nothing to compact (session too small).",
      });
    }
    const text = await run(["compact", file, "--dry-run", ...agent]);
    assert.equal(text.code, 1);
    assert.equal(text.out, "");
    assert.equal(text.err, "Nothing to compact (session too small).");
  });
});

describe("pi-context CLI, output into a closed pipe", () => {
  it("`pi-context tree … | head`: no EPIPE stack trace, the command's own exit code", async () => {
    const { spawn } = await import("node:child_process");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-pipe-"));
    try {
      // a session whose tree is far more than a pipe's buffer (64 kB): the CLI is still writing when the reader goes
      const file = path.join(dir, "long.jsonl");
      const lines = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: dir })];
      let parent: string | null = null;
      for (let i = 0; i < 4000; i++) {
        const id = `m${i}`;
        const content = `question ${i} ${"x".repeat(60)}`;
        lines.push(
          JSON.stringify({ type: "message", id, parentId: parent, timestamp: "t", message: { role: "user", content } }),
        );
        parent = id;
      }
      fs.writeFileSync(file, lines.join("\n") + "\n");
      const cli = path.join(__dirname, "../../../src/cli/main.js");
      const child = spawn(process.execPath, [cli, "tree", file], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.stdout.once("data", () => child.stdout.destroy()); // `head -1`: read a little, then close
      const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
      assert.equal(stderr, "", "nothing on stderr");
      assert.equal(code, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
