/**
 * "Resume in pi"'s command line (src/core/pi/resume.ts): the shell family, the quoting of each
 * family — checked by the real shells of this machine (sh, bash, dash, zsh, fish, whichever are
 * installed) reading the line and handing a program exactly the argument it was given, for awkward
 * and random paths —, the refusals, the program (pi's executable, else Node + pi's CLI script) and
 * the working directory.
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import {
  commandLine,
  quoteArgument,
  resumeArgv,
  resumeCwd,
  shellKindOf,
  UnquotableArgumentError,
  type ShellKind,
} from "../../../../src/core/pi/resume";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-resume-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("shellKindOf", () => {
  it("by the shell's file name; POSIX for the rest; no shell: PowerShell on Windows", () => {
    const cases: [string | undefined, NodeJS.Platform, ShellKind][] = [
      ["/bin/bash", "linux", "posix"],
      ["/usr/bin/zsh", "darwin", "posix"],
      ["/bin/sh", "linux", "posix"],
      ["/usr/local/bin/fish", "darwin", "fish"],
      ["C:\\Program Files\\PowerShell\\7\\pwsh.exe", "win32", "powershell"],
      ["C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "win32", "powershell"],
      ["C:\\WINDOWS\\System32\\cmd.exe", "win32", "cmd"],
      ["C:\\Program Files\\Git\\bin\\bash.exe", "win32", "posix"],
      ["/opt/microsoft/powershell/7/pwsh", "linux", "powershell"],
      [undefined, "win32", "powershell"],
      [undefined, "linux", "posix"],
      ["", "darwin", "posix"],
    ];
    for (const [shell, platform, kind] of cases) assert.equal(shellKindOf(shell, platform), kind, String(shell));
  });
});

describe("quoteArgument", () => {
  it("each family's quoting", () => {
    assert.equal(quoteArgument("/home/me/.pi/s.jsonl", "posix"), "/home/me/.pi/s.jsonl");
    assert.equal(quoteArgument("--session", "posix"), "--session");
    assert.equal(quoteArgument("it's a $HOME.jsonl", "posix"), `'it'\\''s a $HOME.jsonl'`);
    assert.equal(quoteArgument("=x", "posix"), "'=x'", "zsh expands = first");
    assert.equal(quoteArgument("~x", "posix"), "'~x'");
    assert.equal(quoteArgument("", "posix"), "''");
    assert.equal(quoteArgument(`a\\'b`, "fish"), `'a\\\\\\'b'`);
    assert.equal(quoteArgument("it's ‘x’", "powershell"), "'it''s ‘‘x’’'");
    assert.equal(quoteArgument("C:\\Users\\me\\a b.jsonl", "cmd"), '"C:\\Users\\me\\a b.jsonl"');
  });
  it('refuses control characters everywhere, and " or % in cmd.exe', () => {
    for (const kind of ["posix", "fish", "powershell", "cmd"] as const) {
      assert.throws(() => quoteArgument("a\nb", kind), UnquotableArgumentError);
      assert.throws(() => quoteArgument("a\rb", kind), UnquotableArgumentError);
      assert.throws(() => quoteArgument("a\u001b[2Jb", kind), UnquotableArgumentError);
      assert.throws(() => quoteArgument("a\u009bb", kind), UnquotableArgumentError);
    }
    assert.throws(() => quoteArgument("100%.jsonl", "cmd"), /cmd\.exe expands/);
    assert.throws(() => quoteArgument('a"b', "cmd"), UnquotableArgumentError);
    assert.equal(quoteArgument("100%.jsonl", "posix"), "'100%.jsonl'");
  });
  it("commandLine: PowerShell calls a quoted program with &", () => {
    assert.equal(
      commandLine(["/usr/bin/pi", "--session", "/s/a b.jsonl"], "posix"),
      "/usr/bin/pi --session '/s/a b.jsonl'",
    );
    assert.equal(
      commandLine(["C:\\pi\\pi.cmd", "--session", "C:\\s\\a.jsonl"], "powershell"),
      "& 'C:\\pi\\pi.cmd' '--session' 'C:\\s\\a.jsonl'",
    );
    assert.equal(
      commandLine(["C:\\pi\\pi.cmd", "--session", "C:\\s\\a.jsonl"], "cmd"),
      '"C:\\pi\\pi.cmd" "--session" "C:\\s\\a.jsonl"',
    );
  });
});

/** The shells on this machine, with how each runs one command line. */
const SHELLS: { name: string; kind: ShellKind; args: (line: string) => string[] }[] = [
  { name: "sh", kind: "posix" as const, args: (l: string) => ["-c", l] },
  { name: "bash", kind: "posix" as const, args: (l: string) => ["--norc", "--noprofile", "-c", l] },
  { name: "dash", kind: "posix" as const, args: (l: string) => ["-c", l] },
  { name: "zsh", kind: "posix" as const, args: (l: string) => ["-f", "-c", l] },
  { name: "fish", kind: "fish" as const, args: (l: string) => ["--no-config", "-c", l] },
].filter((s) => {
  try {
    execFileSync("which", [s.name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
});

describe(`the real shells read the line back (${SHELLS.map((s) => s.name).join(", ") || "none installed"})`, () => {
  // a program that prints the arguments it got, as JSON
  const echo = path.join(tmp, "echo args.js");
  fs.writeFileSync(echo, "process.stdout.write(JSON.stringify(process.argv.slice(2)))");
  const NASTY = [
    "/home/me/.pi/agent/sessions/--home-me-proj--/2026-12-01T10-00-00-000Z_0190.jsonl",
    'it\'s "a" $HOME `id` $(id) !x !! ~ * ? [a] {a,b} ; & | < > # \\ %s %PATH% ^',
    "-starts-with-a-dash",
    "=starts-with-equals",
    "~/tilde",
    "spaces  and\ttabs-refused",
    "ünïcödé 日本語 🙂 ‘quoted’ “double”",
    "'",
    "''",
    "\\'",
    "",
    "trailing backslash\\",
    "$'ansi'",
    "a'b\\c\"d",
  ].filter((s) => !s.includes("\t"));

  for (const shell of SHELLS)
    it(`${shell.name}: awkward and random paths arrive as one argument, unchanged`, () => {
      // one shell per batch of arguments: each must arrive as one argument, unchanged, in order
      const check = (args: string[]) => {
        const line = commandLine([process.execPath, echo, ...args], shell.kind);
        const out = execFileSync(shell.name, shell.args(line), {
          encoding: "utf8",
          env: { PATH: process.env.PATH, HOME: tmp },
        });
        assert.deepEqual(JSON.parse(out), args, `${shell.name}: ${line}`);
      };
      check(NASTY);
      fc.assert(
        fc.property(
          fc.array(
            fc.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s)),
            { maxLength: 25 },
          ),
          (args) => check(args),
        ),
        { numRuns: 12 },
      );
    });
});

describe("resumeArgv and resumeCwd", () => {
  it("pi's executable when it is a file, else Node + pi's CLI script, else nothing", () => {
    const exe = path.join(tmp, "pi");
    fs.writeFileSync(exe, "#!/bin/sh\n");
    assert.deepEqual(resumeArgv({ executable: exe, cliPath: "/pkg/dist/cli.js" }, "/s/a.jsonl", "/node"), [
      exe,
      "--session",
      "/s/a.jsonl",
    ]);
    // a package dir given as the pi (setting, --pi): its executable is that folder
    assert.deepEqual(resumeArgv({ executable: tmp, cliPath: "/pkg/dist/cli.js" }, "/s/a.jsonl", "/node"), [
      "/node",
      "/pkg/dist/cli.js",
      "--session",
      "/s/a.jsonl",
    ]);
    assert.deepEqual(resumeArgv({ cliPath: "/pkg/dist/cli.js" }, "/s/../s/a.jsonl", "/node")?.slice(2), [
      "--session",
      "/s/a.jsonl",
    ]);
    assert.equal(resumeArgv({ cliPath: "/pkg/dist/cli.js" }, "/s/a.jsonl"), undefined);
  });
  it("the header's cwd when it is a folder", () => {
    assert.equal(resumeCwd(tmp), tmp);
    assert.equal(resumeCwd(path.join(tmp, "gone")), undefined);
    assert.equal(resumeCwd(path.join(tmp, "echo args.js")), undefined);
    assert.equal(resumeCwd("relative"), undefined);
    assert.equal(resumeCwd(undefined), undefined);
  });
});
