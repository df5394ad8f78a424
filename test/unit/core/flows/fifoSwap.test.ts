/**
 * A session file swapped for a FIFO while a write flow's question is open (issue 43, kind 6): the
 * change check after the question must not block on the FIFO's open (it would wait for a writer
 * forever — in the CLI a hang, in the extension host a frozen window). Each flow runs in a child
 * process, so a blocking open fails the test by its deadline instead of hanging the test runner.
 */

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionBuilder } from "../../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-fifo-swap-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const FLOWS = path.resolve(__dirname, "../../../../src/core/flows");

/** Run `body` (JavaScript, `file` and the flows' modules in scope) in a child process; its output and whether it ended in time. */
function runChild(file: string, body: string): { out: string; timedOut: boolean } {
  const script = `
    const fs = require("node:fs");
    const cp = require("node:child_process");
    const { runContextEditFlow } = require(${JSON.stringify(path.join(FLOWS, "contextEdit.js"))});
    const { runSwitchFlow } = require(${JSON.stringify(path.join(FLOWS, "switch.js"))});
    const file = ${JSON.stringify(file)};
    const swap = () => { fs.renameSync(file, file + ".moved"); cp.execFileSync("mkfifo", [file]); };
    (async () => { ${body} })().then(
      () => console.log("WROTE"),
      (e) => console.log("REFUSED " + e.name + ": " + e.message),
    );`;
  const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000 });
  return { out: `${run.stdout}${run.stderr}`, timedOut: run.error !== undefined || run.signal !== null };
}

function session(name: string): string {
  const file = path.join(tmp, `${name}.jsonl`);
  fs.writeFileSync(
    file,
    new SessionBuilder()
      .user("u1", "question")
      .assistant("a1", { calls: [{ id: "c1" }], usage: 100 })
      .result("r1", "c1", "output")
      .assistant("a2", { text: "done", usage: 120 })
      .user("u2", "next")
      .assistant("a3", { text: "answer", usage: 130 })
      .jsonl(),
  );
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

describe("a FIFO swapped in while a write flow's question is open", { skip: process.platform === "win32" }, () => {
  it("a context edit (trim) refuses at once and names the FIFO; the session's bytes are kept", () => {
    const file = session("trim");
    const before = fs.readFileSync(file);
    const { out, timedOut } = runChild(
      file,
      `await runContextEditFlow(file, [{ action: "omit", targetId: "r1" }], { guardSeconds: 0, procRoot: null },
        { confirm: async () => { swap(); return true; } });`,
    );
    assert.equal(timedOut, false, `the flow blocked on the FIFO:\n${out}`);
    assert.match(out, /^REFUSED .*FIFO \(named pipe\), not a regular file/m);
    assert.equal(fs.statSync(file).isFIFO(), true);
    assert.deepEqual(fs.readFileSync(`${file}.moved`), before);
  });

  it("a switch refuses at once and names the FIFO", () => {
    const file = session("switch");
    const { out, timedOut } = runChild(
      file,
      `await runSwitchFlow(file, "a2", { summarize: false }, undefined,
        { agentDir: ${JSON.stringify(path.join(tmp, "agent"))}, guardSeconds: 0, procRoot: null },
        { decide: async (plan) => { swap(); return { summarize: false }; } });`,
    );
    assert.equal(timedOut, false, `the flow blocked on the FIFO:\n${out}`);
    assert.match(out, /^REFUSED .*FIFO \(named pipe\), not a regular file/m);
  });

  it("the append itself refuses a FIFO at the path without blocking", () => {
    const file = session("append");
    const { out, timedOut } = runChild(
      file,
      `const { SessionFile } = require(${JSON.stringify(path.resolve(FLOWS, "../read/session.js"))});
       const { appendEntries, expectationOf, expectationHolds } = require(${JSON.stringify(path.join(FLOWS, "write.js"))});
       const s = await SessionFile.open(file, { digest: true });
       const e = expectationOf(s);
       swap();
       if (expectationHolds(e)) throw new Error("expectation holds on a FIFO");
       appendEntries(e, [{ type: "label", id: "x1", parentId: "a3", timestamp: "t", targetId: "a3", label: "l" }]);`,
    );
    assert.equal(timedOut, false, `blocked on the FIFO:\n${out}`);
    assert.match(out, /^REFUSED SessionChangedError: /m);
  });
});
