/**
 * The live-session refusal's way forward: when "Anyway" is safe (the write-age guard alone, and the
 * process check ran and found no pi), and the whole text of the refusal as a document.
 */

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  checkLiveSession,
  describeLive,
  isOverridable,
  liveRefusalMarkdown,
  liveSessionError,
} from "../../../../src/core/flows/live";

function session(dir: string, ageMs: number): string {
  const file = path.join(dir, "s.jsonl");
  fs.writeFileSync(file, "{}\n");
  const when = new Date(Date.now() - ageMs);
  fs.utimesSync(file, when, when);
  return file;
}

describe("the live-session refusal", () => {
  it("a recent write alone, with the process check done: overridable, and the text says so", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-ok-"));
    try {
      const file = session(dir, 2000);
      const check = await checkLiveSession(file, { guardSeconds: 30, sessionCwd: dir, procRoot: "/proc" });
      assert.equal(check.live, true);
      assert.equal(check.processChecked, process.platform === "linux");
      if (process.platform !== "linux") return;
      assert.equal(isOverridable(check), true);
      const error = liveSessionError(check, "compact");
      assert.equal(error.overridable, true);
      assert.match(error.message, /No pi process was found on it: if nothing else writes to it, "Anyway" goes ahead\./);
      assert.match(describeLive(check, "compact", "cli"), /--guard-seconds 0 goes ahead/);
      const doc = liveRefusalMarkdown(error, file, false);
      assert.match(doc, /written \d+ s ago — less than the 30 s guard/);
      assert.match(doc, /Install the live bridge \("Pi Context: Install Live Bridge"\)/);
      assert.match(doc, /"Anyway" goes ahead \(the time check is skipped once; a pi process is still looked for/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("no process check (no /proc): not overridable — a pi could run unseen", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-noproc-"));
    try {
      const check = await checkLiveSession(session(dir, 2000), { guardSeconds: 30, procRoot: null });
      assert.equal(check.live, true);
      assert.equal(check.processChecked, false);
      assert.equal(isOverridable(check), false);
      assert.doesNotMatch(describeLive(check), /Anyway/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "a running pi in the session's folder: never overridable, even with an old file; the document names the process",
    { skip: process.platform !== "linux" },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-proc-"));
      const bin = path.join(dir, "pi");
      fs.writeFileSync(bin, "#!/bin/sh\nsleep 30\n", { mode: 0o755 });
      const child = spawn(bin, [], { cwd: dir, stdio: "ignore" });
      try {
        const file = session(dir, 2000);
        // the real process table (the test runner's injected table sees no pi); wait until it lists the child
        let both = await checkLiveSession(file, { guardSeconds: 30, sessionCwd: dir, procRoot: "/proc" });
        for (let i = 0; i < 100 && !both.reasons.some((r) => r.kind === "pi-process"); i++) {
          await new Promise((r) => setTimeout(r, 50));
          both = await checkLiveSession(file, { guardSeconds: 30, sessionCwd: dir, procRoot: "/proc" });
        }
        // one reason per matching process: the table may be read while the shell forks (kinds, not counts)
        assert.deepEqual([...new Set(both.reasons.map((r) => r.kind))].sort(), ["pi-process", "recent-write"]);
        assert.equal(isOverridable(both), false);
        const old = await checkLiveSession(session(dir, 3600_000), {
          guardSeconds: 30,
          sessionCwd: dir,
          procRoot: "/proc",
        });
        assert.equal(isOverridable(old), false);
        const error = liveSessionError(both, "compact");
        assert.equal(error.overridable, false);
        const doc = liveRefusalMarkdown(error, file, true);
        assert.match(doc, new RegExp(`pi process ${child.pid} is running in the session's folder`));
        assert.doesNotMatch(doc, /Anyway/);
        assert.doesNotMatch(doc, /Install the live bridge/, "installed: start pi again instead");
        assert.match(doc, /start pi again \(or `\/reload` in it\)/);
      } finally {
        child.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
