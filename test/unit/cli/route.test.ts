/**
 * The CLI's refusal names the way that works: "/reload in pi" only when the live bridge is installed
 * in pi's agent folder, else how to install it (`src/cli/route.ts`).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { ACTIONS } from "../../../src/core/access/route";
import { cliRoute } from "../../../src/cli/route";
import { BRIDGE_FILE_NAME } from "../../../src/bridge/protocol";
import { SessionBuilder } from "../../support/session-builder";

describe("the CLI's refusal and the live bridge's install", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-cli-route-"));
  const saved = process.env.PI_CONTEXT_GUARD_PROCESSES;
  after(() => {
    if (saved === undefined) delete process.env.PI_CONTEXT_GUARD_PROCESSES;
    else process.env.PI_CONTEXT_GUARD_PROCESSES = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a pi without the bridge has the session: install it when it is not installed, /reload when it is", async () => {
    const agentDir = path.join(dir, "agent");
    const file = path.join(dir, "s.jsonl");
    fs.writeFileSync(file, new SessionBuilder(dir).user("u1", "hello").jsonl());
    // pi started on this session (its --session argument), no bridge announcement
    process.env.PI_CONTEXT_GUARD_PROCESSES = JSON.stringify([
      { pid: 4242, ppid: 1, argv: ["pi"], command: "pi", cwd: dir, sessionArg: file },
    ]);
    const options = { agentDir, guardSeconds: 0, force: false };
    const without = await cliRoute(file, ACTIONS.contextEdit, options);
    assert.equal(without.route.kind, "refuse");
    assert.match(
      without.refusal!,
      /With pi-context's live bridge installed in pi \(the VS Code extension installs it\)/,
    );
    assert.doesNotMatch(without.refusal!, /\/reload/);

    fs.mkdirSync(path.join(agentDir, "extensions"), { recursive: true });
    fs.writeFileSync(path.join(agentDir, "extensions", BRIDGE_FILE_NAME), "// the bridge\n");
    const installed = await cliRoute(file, ACTIONS.contextEdit, options);
    assert.match(installed.refusal!, /That pi has not loaded the live bridge: \/reload in pi/);
  });
});
