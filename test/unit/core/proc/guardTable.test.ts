// The live-session guard's replaceable process table (PI_CONTEXT_GUARD_PROCESSES): test runners set
// it so a test that appends never depends on the pi processes other people run on this machine.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, it } from "node:test";
import { sessionAccess } from "../../../../src/core/access/gather";
import { GUARD_PROCESSES_ENV, guardProcessesFromEnv } from "../../../../src/core/proc/guardTable";
import { readProcessSnapshot } from "../../../../src/core/proc/table";

const pi = (pid: number, cwd: string) => ({ pid, ppid: 1, argv: ["pi"], command: "pi", cwd });

describe("the guard's process table from PI_CONTEXT_GUARD_PROCESSES", () => {
  const saved = process.env[GUARD_PROCESSES_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[GUARD_PROCESSES_ENV];
    else process.env[GUARD_PROCESSES_ENV] = saved;
  });

  it("unset or empty: undefined (the machine's table is read)", async () => {
    assert.equal(await guardProcessesFromEnv({}), undefined);
    assert.equal(await guardProcessesFromEnv({ [GUARD_PROCESSES_ENV]: "" }), undefined);
  });

  it("inline JSON, a file, an array or a snapshot", async () => {
    assert.deepEqual((await guardProcessesFromEnv({ [GUARD_PROCESSES_ENV]: "[]" }))?.pi, []);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-guard-"));
    try {
      const file = path.join(dir, "table.json");
      fs.writeFileSync(file, JSON.stringify({ at: 1, platform: "linux", processes: [], pi: [pi(42, "/w")] }));
      const snapshot = await guardProcessesFromEnv({ [GUARD_PROCESSES_ENV]: file });
      assert.deepEqual(
        snapshot?.pi.map((p) => [p.pid, p.cwd]),
        [[42, "/w"]],
      );
      fs.writeFileSync(file, JSON.stringify([pi(7, "/x"), { ...pi(8, "/y"), sessionArg: "abc" }]));
      const again = await guardProcessesFromEnv({ [GUARD_PROCESSES_ENV]: file }); // read on every call
      assert.deepEqual(
        again?.pi.map((p) => [p.pid, p.sessionArg]),
        [
          [7, undefined],
          [8, "abc"],
        ],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a misconfigured value fails loudly, naming the variable (never a silent 'no pi runs')", async () => {
    for (const value of ["[", "{}", '[{"pid":"1"}]', "/nonexistent/guard.json", '[{"pid":1,"ppid":0,"argv":"pi"}]'])
      await assert.rejects(
        guardProcessesFromEnv({ [GUARD_PROCESSES_ENV]: value }),
        /PI_CONTEXT_GUARD_PROCESSES/,
        value,
      );
  });

  it("the guard uses it instead of the machine's table; explicit options still win", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-guard-"));
    try {
      process.env[GUARD_PROCESSES_ENV] = JSON.stringify([pi(4242, dir)]);
      const found = await sessionAccess("/nonexistent/s.jsonl", { guardSeconds: 0, header: { cwd: dir } });
      assert.deepEqual(
        found.evidence.map((e) => e.kind === "process" && [e.pid, e.how]),
        [[4242, "in-folder"]],
      );
      const explicit = await sessionAccess("/nonexistent/s.jsonl", {
        guardSeconds: 0,
        header: { cwd: dir },
        processes: async () => ({ at: 0, platform: "linux", processes: [], pi: [] }),
      });
      assert.equal(explicit.strength, "none", "options.processes wins over the variable");
      assert.equal(
        (await sessionAccess("/nonexistent/s.jsonl", { guardSeconds: 0, header: { cwd: dir }, procRoot: null }))
          .strength,
        "none",
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "with '[]' a real pi running in the session's folder is not seen by the guard (tests are independent of the machine)",
    { skip: process.platform !== "linux" },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-guard-"));
      const bin = path.join(dir, "pi");
      fs.writeFileSync(bin, "#!/bin/sh\nsleep 30\n", { mode: 0o755 });
      const child = spawn(bin, [], { cwd: dir, stdio: "ignore" });
      try {
        // the machine's table sees it…
        for (let i = 0; i < 200; i++) {
          if ((await readProcessSnapshot()).pi.some((p) => p.pid === child.pid)) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const real = await sessionAccess("/nonexistent/s.jsonl", {
          guardSeconds: 0,
          header: { cwd: dir },
          procRoot: "/proc",
        });
        assert.ok(real.evidence.some((e) => e.kind === "process" && e.pid === child.pid));
        // …the guard under the runner's '[]' does not
        process.env[GUARD_PROCESSES_ENV] = "[]";
        assert.equal(
          (await sessionAccess("/nonexistent/s.jsonl", { guardSeconds: 0, header: { cwd: dir } })).strength,
          "none",
        );
      } finally {
        child.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
