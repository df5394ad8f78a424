/**
 * A refusal in words (`core/access/words.ts`): it names each evidence and offers the ways out the
 * route chooser gives — *Anyway* / `--force` only where the evidence allows it — and the whole
 * text as a document.
 */

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { SessionAccess } from "../../../../src/core/access/access";
import { sessionAccess } from "../../../../src/core/access/gather";
import { ACTIONS } from "../../../../src/core/access/route";
import {
  accessRefusal,
  accessRefusalMarkdown,
  assertAccess,
  describeAccess,
  LiveSessionError,
} from "../../../../src/core/access/words";

function session(dir: string, ageMs: number): string {
  const file = path.join(dir, "s.jsonl");
  fs.writeFileSync(file, "{}\n");
  const when = new Date(Date.now() - ageMs);
  fs.utimesSync(file, when, when);
  return file;
}

describe("the refusal", () => {
  it("a recent write: Anyway in VS Code, --force on the command line, the bridge when it is not installed", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-access-write-"));
    try {
      const file = session(dir, 2000);
      const access = await sessionAccess(file, { guardSeconds: 30, header: { cwd: dir }, procRoot: null });
      assert.equal(access.strength, "possible");
      const error = accessRefusal(access, ACTIONS.compact, { bridgeInstalled: false });
      assert.equal(error.overridable, true);
      assert.deepEqual(error.offers, ["anyway", "install-bridge"]);
      assert.match(
        error.message,
        /^Refusing to compact this session while pi may have it open: the session file was written \d s ago by another program/,
      );
      assert.match(error.message, /Quit pi \(or run \/compact inside pi\)/);
      assert.match(error.message, /Install the live bridge so that a running pi does this itself\./);
      assert.match(error.message, /"Compact Anyway" goes ahead\. Nothing was written\.$/);
      const cli = describeAccess(access, ACTIONS.compact, error.offers, "cli");
      assert.match(cli, /--guard-seconds N sets it, 0 turns it off/);
      assert.match(cli, /--force goes ahead\./);
      const doc = accessRefusalMarkdown(error, file);
      assert.match(doc, /written \d+ s ago by another program — less than the 30 s guard/);
      assert.match(doc, /Install the live bridge \("Pi Context: Install Live Bridge"\)/);
      assert.match(
        doc,
        /"Compact Anyway" goes ahead \(once; a pi with the live bridge on the session still stops it\)/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a pi with the bridge and an action it cannot do: no Anyway; what to do in pi", () => {
    const access: SessionAccess = {
      file: "/s/a.jsonl",
      evidence: [{ kind: "bridge", strength: "certain", pid: 77, piVersion: "1.6.0" }],
      strength: "certain",
      processChecked: true,
      ownLastWrite: false,
    };
    const error = accessRefusal(access, ACTIONS.repairLeaf);
    assert.equal(error.overridable, false);
    assert.match(error.message, /pi 1\.6\.0 \(process 77\) has it open with the live bridge/);
    assert.match(error.message, /cannot do this through its bridge: use \/tree inside pi, or quit pi first\./);
    assert.doesNotMatch(error.message, /Anyway/);
    // the flows' last check: certain evidence stops a forced write too
    assert.throws(() => assertAccess(access, ACTIONS.compact, { force: true }), LiveSessionError);
    assert.doesNotThrow(() => assertAccess({ ...access, evidence: [], strength: "none" }, ACTIONS.compact, {}));
  });

  it(
    "a real pi process in the session's folder: named in the text and the document; Anyway allowed",
    { skip: process.platform !== "linux" },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-access-proc-"));
      const bin = path.join(dir, "pi");
      fs.writeFileSync(bin, "#!/bin/sh\nsleep 30\n", { mode: 0o755 });
      const child = spawn(bin, [], { cwd: dir, stdio: "ignore" });
      try {
        const file = session(dir, 3600_000);
        const look = () => sessionAccess(file, { guardSeconds: 30, header: { cwd: dir }, procRoot: "/proc" });
        let access = await look();
        for (let i = 0; i < 100 && !access.evidence.some((e) => e.kind === "process"); i++) {
          await new Promise((r) => setTimeout(r, 50));
          access = await look();
        }
        const error = accessRefusal(access, ACTIONS.compact, { bridgeInstalled: true });
        assert.deepEqual(error.offers, ["anyway", "reload-pi"]);
        assert.match(error.message, new RegExp(`a pi is running that may have it open \\(process ${child.pid} `));
        assert.match(error.message, /That pi has not loaded the live bridge: \/reload in pi/);
        const doc = accessRefusalMarkdown(error, file);
        assert.match(doc, new RegExp(`pi process ${child.pid} \\(may have it open\\): in the session's folder`));
        assert.match(doc, /`\/reload` in pi/);
      } finally {
        child.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
