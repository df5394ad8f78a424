import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { sessionAccess } from "../../../../src/core/access/gather";
import { ACTIONS } from "../../../../src/core/access/route";
import { describeAccess } from "../../../../src/core/access/words";
import { parseLsofCwd, parsePsOutput } from "../../../../src/core/proc/darwin";
import { parseBootTime, parseCmdline, parseProcStat } from "../../../../src/core/proc/linux";
import type { CommandRunner } from "../../../../src/core/proc/run";
import {
  descendantsOf,
  isPiCommandLine,
  piProcessesUnder,
  piSessionArguments,
  readProcessSnapshot,
} from "../../../../src/core/proc/table";
import { parseWin32Processes, splitWindowsCommandLine } from "../../../../src/core/proc/win32";
import { FIXTURES } from "../../../support/paths";

const recorded = (name: string): string => fs.readFileSync(path.join(FIXTURES, "proc", name), "utf8");

/** A runner that answers `ps`/`lsof`/PowerShell with recorded output and records what was run. */
function recordedRunner(answers: Record<string, string>, calls: string[][] = []): CommandRunner {
  return async (file, args) => {
    calls.push([file, ...args]);
    const key = Object.keys(answers).find((k) => file.endsWith(k));
    if (key === undefined) throw new Error(`unexpected command ${file}`);
    return answers[key]!;
  };
}

describe("process table: which command lines are pi", () => {
  it("accepts pi's own title, runtimes running a pi script or package, shell wrappers; refuses look-alikes", () => {
    const yes = [
      ["pi"],
      ["/usr/local/bin/pi", "--continue"],
      ["pi.exe"],
      ["C:\\tools\\pi.exe", "--session", "x"],
      ["node", "/home/u/.npm/lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"],
      ["C:\\Program Files\\nodejs\\node.exe", "C:\\npm\\node_modules\\@earendil-works\\pi-coding-agent\\dist\\cli.js"],
      ["node", "/x/bin/pi"],
      ["node22", "--no-warnings", "/x/bin/pi", "-c"],
      ["bun", "/x/pi.js"],
      ["/bin/sh", "/tmp/wrapper/pi"],
    ];
    const no = [
      ["node", "server.js"],
      ["pip", "install"],
      ["vim", "pi"],
      ["python3", "/x/pi"],
      ["cmd.exe", "/d", "/s", "/c", "pi.cmd"],
      ["node"],
      [],
      ["pi.js"],
      ["/opt/pipx/bin/pipx"],
    ];
    for (const argv of yes) assert.equal(isPiCommandLine(argv), true, argv.join(" "));
    for (const argv of no) assert.equal(isPiCommandLine(argv), false, argv.join(" "));
  });

  it("reads --session and --session-dir like pi's cli/args.js", () => {
    assert.deepEqual(piSessionArguments(["node", "cli.js", "--session", "/a/b.jsonl", "--session-dir", "/s"]), {
      sessionArg: "/a/b.jsonl",
      sessionDirArg: "/s",
    });
    assert.deepEqual(piSessionArguments(["pi", "--session"]), {}); // no value: pi ignores it too
  });
});

describe("process table: Linux /proc", () => {
  it("parses stat (a name with spaces and parentheses), boot time, cmdline with a rewritten title", () => {
    assert.deepEqual(
      parseProcStat("4242 (my (odd) name) S 4200 4242 4200 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3"),
      { ppid: 4200, startTicks: 987654 },
    );
    assert.equal(parseProcStat("garbage"), undefined);
    assert.equal(parseBootTime("cpu 1 2 3\nbtime 1764577513\nprocesses 9\n"), 1764577513000);
    assert.deepEqual(parseCmdline("pi\0\0\0\0\0\0\0\0"), ["pi"]);
    assert.deepEqual(parseCmdline("node\0/x/pi\0--session\0/s.jsonl\0"), ["node", "/x/pi", "--session", "/s.jsonl"]);
  });

  it("reads a fake /proc: parents, start times, cwd only for pi", async () => {
    const proc = fs.mkdtempSync(path.join(os.tmpdir(), "pi-proc-"));
    try {
      fs.writeFileSync(path.join(proc, "stat"), "cpu 1\nbtime 1764577513\n");
      const make = (pid: number, ppid: number, argv: string[], cwd: string): void => {
        fs.mkdirSync(path.join(proc, String(pid)));
        fs.writeFileSync(path.join(proc, String(pid), "cmdline"), argv.join("\0") + "\0");
        fs.writeFileSync(
          path.join(proc, String(pid), "stat"),
          `${pid} (x) S ${ppid} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 500 0`,
        );
        fs.symlinkSync(cwd, path.join(proc, String(pid), "cwd"));
      };
      make(100, 1, ["/bin/bash"], "/home/u");
      make(101, 100, ["pi"], "/home/u/app");
      make(102, 101, ["node", "/x/worker.js"], "/home/u/app");
      const snapshot = await readProcessSnapshot({ platform: "linux", procRoot: proc });
      assert.equal(snapshot.error, undefined);
      assert.deepEqual(
        snapshot.processes.map((p) => [p.pid, p.ppid, p.cwd]),
        [
          [100, 1, undefined],
          [101, 100, "/home/u/app"],
          [102, 101, undefined],
        ],
      );
      assert.equal(snapshot.processes[0]!.startedAt, 1764577513000 + 5000);
      assert.deepEqual(
        snapshot.pi.map((p) => p.pid),
        [101],
      );
      assert.deepEqual(
        descendantsOf(snapshot, 100).map((p) => p.pid),
        [101, 102],
      );
      assert.deepEqual(
        piProcessesUnder(snapshot, 100).map((p) => p.pid),
        [101],
      );
      assert.deepEqual(
        piProcessesUnder(snapshot, 101).map((p) => p.pid),
        [101],
      );
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  });

  it("no proc file system: an error, an empty table, never a throw", async () => {
    const snapshot = await readProcessSnapshot({ platform: "linux", procRoot: "/nonexistent/proc" });
    assert.deepEqual(snapshot.processes, []);
    assert.match(snapshot.error ?? "", /ENOENT/);
  });

  it(
    "finds a real node process that sets process.title = 'pi' (as pi 1.6.0 does) and its cwd",
    { skip: process.platform !== "linux" },
    async () => {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-title-")));
      const script = path.join(dir, "pi-like.js");
      fs.writeFileSync(script, 'process.title = "pi"; setTimeout(() => {}, 20000);\n');
      const child = spawn(process.execPath, [script, "--session", "x.jsonl"], { cwd: dir, stdio: "ignore" });
      try {
        let found;
        for (let i = 0; i < 50 && !found; i++) {
          await new Promise((r) => setTimeout(r, 50));
          found = (await readProcessSnapshot({ platform: "linux" })).pi.find((p) => p.pid === child.pid);
        }
        assert.ok(found, "the pi-like process is in the table");
        assert.deepEqual(found.argv, ["pi"]); // the title took the arguments' place
        assert.equal(found.cwd, dir);
        assert.equal(found.ppid, process.pid);
        assert.ok(found.startedAt! > Date.now() - 60_000 && found.startedAt! <= Date.now() + 1000);
      } finally {
        child.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("process table: macOS ps + lsof (recorded output)", () => {
  it("parses ps: pids, parents, local start times, commands with spaces", () => {
    const rows = parsePsOutput(recorded("darwin-ps.txt"));
    assert.equal(rows.length, 11);
    const helper = rows.find((r) => r.pid === 4810)!;
    assert.equal(helper.ppid, 612);
    assert.match(helper.command, /^\/Applications\/Visual Studio Code\.app\/.*--lang=en-US$/);
    const pi = rows.find((r) => r.pid === 5188)!;
    assert.deepEqual(pi.argv, ["pi"]);
    assert.equal(pi.startedAt, new Date(2026, 11, 1, 9, 12, 41).getTime());
  });

  it("parses the same columns from procps (recorded on Linux)", () => {
    const rows = parsePsOutput(recorded("linux-ps.txt"));
    assert.equal(rows.length, 12);
    assert.deepEqual(rows.find((r) => r.pid === 2015)!.argv, ["node", "/tmp/t.js"]);
    assert.equal(rows.find((r) => r.pid === 2)!.command, "[kthreadd]");
  });

  it("parses lsof -Fn with and without fcwd lines; unreadable folders are left out", () => {
    assert.deepEqual(
      [...parseLsofCwd(recorded("darwin-lsof.txt"))],
      [
        [5188, "/Users/ana/work/app"],
        [5230, "/Users/ana/work/app/packages/web"],
      ],
    );
    assert.deepEqual(
      [...parseLsofCwd(recorded("linux-lsof.txt"))],
      [
        [2015, "/work/wt/sessions/test/fixtures/proc"],
        [20883, "/work/main"],
      ],
    );
  });

  it("a snapshot runs ps once and lsof once, for the pi processes only", async () => {
    const calls: string[][] = [];
    const run = recordedRunner({ ps: recorded("darwin-ps.txt"), lsof: recorded("darwin-lsof.txt") }, calls);
    const snapshot = await readProcessSnapshot({ platform: "darwin", run });
    assert.deepEqual(calls, [
      ["/bin/ps", "-axww", "-o", "pid=,ppid=,lstart=,command="],
      ["/usr/sbin/lsof", "-a", "-d", "cwd", "-Fn", "-p", "5188,5230"],
    ]);
    assert.deepEqual(
      snapshot.pi.map((p) => [p.pid, p.cwd, p.sessionArg]),
      [
        [5188, "/Users/ana/work/app", undefined],
        [
          5230,
          "/Users/ana/work/app/packages/web",
          "/Users/ana/.pi/agent/sessions/--Users-ana-work-app--/2026-12-01T09-14-09-511Z_6f1d2c3a-0c4e-4d7f-9d1e-2b8f0e6a1c11.jsonl",
        ],
      ],
    );
    // the terminal whose shell is 5120 runs pi 5188
    assert.deepEqual(
      piProcessesUnder(snapshot, 5120).map((p) => p.pid),
      [5188],
    );
  });

  it("ps failing: an error, an empty table", async () => {
    const snapshot = await readProcessSnapshot({
      platform: "darwin",
      run: async () => {
        throw new Error("spawn /bin/ps ENOENT");
      },
    });
    assert.deepEqual(snapshot.pi, []);
    assert.match(snapshot.error!, /ENOENT/);
  });
});

describe("process table: Windows PowerShell CIM (recorded output)", () => {
  it("splits command lines like CommandLineToArgvW", () => {
    assert.deepEqual(splitWindowsCommandLine('"C:\\Program Files\\nodejs\\node.exe"  "C:\\a b\\cli.js" --x'), [
      "C:\\Program Files\\nodejs\\node.exe",
      "C:\\a b\\cli.js",
      "--x",
    ]);
    assert.deepEqual(splitWindowsCommandLine('a\\\\\\"b "c\\\\" d\\e'), ['a\\"b', "c\\", "d\\e"]);
    assert.deepEqual(splitWindowsCommandLine('x ""'), ["x", ""]);
    assert.deepEqual(splitWindowsCommandLine("  "), []);
  });

  it("parses the JSON: system processes by name, UTC start times, a lone object", () => {
    const rows = parseWin32Processes(recorded("win32-cim.json"));
    assert.equal(rows.length, 9);
    assert.deepEqual(rows[1]!.argv, ["System"]);
    const pi = rows.find((r) => r.pid === 7644)!;
    assert.equal(pi.ppid, 7500);
    assert.equal(pi.startedAt, Date.parse("2026-12-01T09:12:41.200Z"));
    assert.deepEqual(pi.argv.slice(2), [
      "--session",
      "C:\\Users\\ana\\.pi\\agent\\sessions\\--C--work-app--\\2026-12-01T09-12-41-000Z_0b7c9a10.jsonl",
    ]);
    assert.deepEqual(
      parseWin32Processes('{"p":9,"pp":1,"n":"pi.exe","c":"pi.exe -c","t":null}').map((r) => r.argv),
      [["pi.exe", "-c"]],
    );
    assert.deepEqual(parseWin32Processes(""), []);
    assert.throws(() => parseWin32Processes("Get-CimInstance : Access denied"), SyntaxError);
  });

  it("a snapshot: node.exe running pi's package is pi (the npm cmd shim is not), no cwd", async () => {
    const snapshot = await readProcessSnapshot({
      platform: "win32",
      run: recordedRunner({ "powershell.exe": recorded("win32-cim.json") }),
    });
    assert.deepEqual(
      snapshot.pi.map((p) => [p.pid, p.cwd, p.sessionArg !== undefined]),
      [
        [7644, undefined, true],
        [7812, undefined, false],
      ],
    );
    assert.deepEqual(
      piProcessesUnder(snapshot, 7420).map((p) => p.pid),
      [7644],
    );
  });
});

describe("the access model over the process table", () => {
  it("macOS: refuses with the process found in the session's folder, and names it", async () => {
    const run = recordedRunner({ ps: recorded("darwin-ps.txt"), lsof: recorded("darwin-lsof.txt") });
    const check = await sessionAccess("/nonexistent/s.jsonl", {
      guardSeconds: 0,
      header: { cwd: "/Users/ana/work/app" },
      processes: () => readProcessSnapshot({ platform: "darwin", run }),
    });
    // its session cannot be told (no session of that folder to attribute): it may have resumed this one
    assert.deepEqual(
      check.evidence.map((e) => e.kind === "process" && [e.pid, e.how, e.strength]),
      [[5188, "in-folder", "possible"]],
    );
    assert.match(
      describeAccess(check, ACTIONS.compact, []),
      /a pi is running that may have it open \(process 5188 “pi”, in the session's folder \/Users\/ana\/work\/app; which session it has open cannot be told\)/,
    );
    const other = await sessionAccess("/nonexistent/s.jsonl", {
      guardSeconds: 0,
      header: { cwd: "/Users/ana/elsewhere" },
      processes: () => readProcessSnapshot({ platform: "darwin", run }),
    });
    assert.equal(other.strength, "none");
  });

  it("Windows: the pi started with this session file, and the pi whose folder is unknown", async () => {
    const processes = () =>
      readProcessSnapshot({ platform: "win32", run: recordedRunner({ "powershell.exe": recorded("win32-cim.json") }) });
    const file = "C:\\Users\\ana\\.pi\\agent\\sessions\\--C--work-app--\\2026-12-01T09-12-41-000Z_0b7c9a10.jsonl";
    const check = await sessionAccess(file, { guardSeconds: 0, header: { cwd: "C:\\work\\app" }, processes });
    assert.deepEqual(
      check.evidence.map((e) => e.kind === "process" && [e.pid, e.how, e.strength]),
      [
        [7644, "session-argument", "probable"],
        [7812, "unknown-cwd", "possible"],
      ],
    );
    const text = describeAccess(check, ACTIONS.compact, []);
    assert.ok(
      text.includes(
        "pi is running on it (process 7644 “node.exe …/pi-coding-agent/dist/cli.js --session …/--C--work-app--/2026-12-01T09-12-41-000Z_0b7c9a10.jsonl”, started with this session)",
      ),
      text,
    );
    assert.match(text, /process 7812 .*its folder cannot be read on this system/);
  });

  it("procRoot: null looks at no process", async () => {
    let asked = false;
    const check = await sessionAccess("/nonexistent/s.jsonl", {
      guardSeconds: 0,
      procRoot: null,
      processes: async () => {
        asked = true;
        return { at: 0, platform: "linux", processes: [], pi: [] };
      },
    });
    assert.equal(check.strength, "none");
    assert.equal(check.processChecked, false);
    assert.equal(asked, false);
  });
});
