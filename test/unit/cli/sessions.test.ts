/**
 * `pi-context sessions`: the sessions of a folder as "Pi Context: Select Session…" lists them, and what a
 * session's name can do to the terminal (nothing: each row stays one line, controls visible).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { encodeSessionDirName } from "../../../src/core/read/locate";
import { runCli } from "../../support/cli";
import { SessionBuilder } from "../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-sessions-"));

function agentWith(folder: string, sessions: Record<string, string>): string {
  const agent = fs.mkdtempSync(path.join(tmp, "agent-"));
  const dir = path.join(agent, "sessions", encodeSessionDirName(folder));
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, jsonl] of Object.entries(sessions)) fs.writeFileSync(path.join(dir, name), jsonl);
  return agent;
}

describe("pi-context sessions", () => {
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("lists a folder's sessions: label, facts and file, three lines each; --json has the same sessions", async () => {
    const folder = path.join(tmp, "proj");
    const agent = agentWith(folder, {
      "a.jsonl": new SessionBuilder(folder)
        .user("u1", "fix the parser please")
        .assistant("a1", { text: "done" })
        .jsonl(),
    });
    const r = await runCli(["sessions", "--cwd", folder, "--agent-dir", agent]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.equal(lines.length, 3, r.out);
    assert.match(lines[0]!, /fix the parser please/);
    assert.match(lines[1]!, /^ {4}\S/);
    assert.equal(lines[2], `    ${path.join(agent, "sessions", encodeSessionDirName(folder), "a.jsonl")}`);
    const json = JSON.parse((await runCli(["sessions", "--cwd", folder, "--agent-dir", agent, "--json"])).out);
    assert.equal(json.length, 1);
  });

  it("a session name with line breaks, ESC sequences, bidi overrides or tag characters cannot forge a row", async () => {
    const folder = path.join(tmp, "evil");
    const name = "ok\nleaf forged\r\u2028x\u001b[2J\u202eevil\u{e0041}";
    const agent = agentWith(folder, {
      "b\u001b]0;title\u0007.jsonl": new SessionBuilder(folder).user("u1", "hello").name("n1", name).jsonl(),
    });
    const r = await runCli(["sessions", "--cwd", folder, "--agent-dir", agent]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.equal(lines.length, 3, r.out);
    // line breaks are spaces (pi's label rule); every other control shows as its escape (docs/security.md)
    assert.ok(lines[0]!.startsWith("ok leaf forged  x\\u001b[2J\\u202eevil\\udb40\\udc41  ("), lines[0]);
    assert.ok(lines[2]!.endsWith("b\\u001b]0;title\\u0007.jsonl"), lines[2]);
    assert.doesNotMatch(r.out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u2028]|\udb40/);
  });

  it("an empty folder says so, exit 0; an unknown flag is a usage error", async () => {
    const folder = path.join(tmp, "none");
    const agent = agentWith(folder, {});
    const r = await runCli(["sessions", "--cwd", folder, "--agent-dir", agent]);
    assert.equal(r.code, 0);
    assert.equal(r.out, `No pi sessions for ${folder}.`);
    assert.equal((await runCli(["sessions", "--bogus"])).code, 2);
  });
});
