/**
 * `pi-context doctor`: exit codes (0 no errors, 1 errors found, 2 usage), the `--json` shape, the
 * repair (`--repair`, `--dry-run`), and session text shown as text (no terminal control).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionBuilder } from "../../support/session-builder";
import { agentDirFor } from "../../support/doctor";
import { FIXTURES } from "../../support/paths";
import { runCli, writeOldSession } from "../../support/cli";
import { SessionFile } from "../../../src/core/read/session";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-doctor-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const run = runCli;

let n = 0;
function sessionFile(jsonl: string): string {
  return writeOldSession(path.join(tmp, `d${++n}.jsonl`), jsonl);
}

const broken = () =>
  new SessionBuilder()
    .user("u1", "q")
    .assistant("a1", { text: "a", usage: 10 })
    .result("t1", "zz", "orphan")
    .assistant("a2", { text: "after" });

describe("pi-context doctor", () => {
  it("a healthy pi 1.6.0 session: exit 0, 'no problems found'", async () => {
    const pi = path.join(FIXTURES, "pi-1.6.0");
    const { code, out } = await run([
      "doctor",
      path.join(pi, "long.jsonl"),
      "--agent-dir",
      path.join(pi, "long.agent"),
    ]);
    assert.equal(code, 0, out);
    assert.match(out, /^health {3}no problems found/m);
  });

  it("errors found: exit 1; --json has the issue's keys, repair null or {kind, description, appends}", async () => {
    const agent = agentDirFor();
    const file = sessionFile(broken().jsonl());
    const text = await run(["doctor", file, "--agent-dir", agent]);
    assert.equal(text.code, 1);
    assert.match(text.out, /^error {3}orphan-result {2}\(entry t1, line 4\)$/m);
    assert.match(text.out, /pi-context doctor --repair/);
    const { code, out } = await run(["doctor", file, "--agent-dir", agent, "--json"]);
    assert.equal(code, 1);
    const json = JSON.parse(out) as { findings: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(json.findings[0]!), [
      "code",
      "severity",
      "entryId",
      "relatedIds",
      "message",
      "line",
      "repair",
    ]);
    const f = json.findings[0]! as { code: string; repair: { kind: string; appends: Record<string, unknown>[] } };
    assert.equal(f.code, "orphan-result");
    assert.equal(f.repair.kind, "context-edit");
    assert.deepEqual(
      f.repair.appends.map((e) => [e.type, e.targetId, e.replacement, e.parentId]),
      [["context_edit", "t1", null, "a2"]],
    );
  });

  it("--repair --dry-run writes nothing (exit 1: the file still has the error); --repair appends, then exit 0", async () => {
    const agent = agentDirFor();
    const file = sessionFile(broken().jsonl());
    const before = fs.readFileSync(file);
    const dry = await run(["doctor", file, "--agent-dir", agent, "--repair", "--dry-run"]);
    assert.equal(dry.code, 1);
    assert.match(dry.out, /repair: would append 1 entry:/);
    assert.match(dry.out, /after the repair \(checked on the session as if appended\): no error/);
    assert.ok(fs.readFileSync(file).equals(before));
    const real = await run(["doctor", file, "--agent-dir", agent, "--repair", "--json"]);
    assert.equal(real.code, 0, real.err);
    const json = JSON.parse(real.out) as {
      repair: { written: boolean; appends: unknown[]; findingsAfter: { severity: string }[] };
    };
    assert.equal(json.repair.written, true);
    assert.equal(json.repair.appends.length, 1);
    assert.equal(json.repair.findingsAfter.filter((f) => f.severity === "error").length, 0);
    const bytes = fs.readFileSync(file);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    assert.equal(bytes.toString().slice(before.length).split("\n").length, 2, "one line appended");
    assert.equal((await run(["doctor", file, "--agent-dir", agent])).code, 0);
  });

  it("--repair refuses a live session (recent write) with exit 1 and writes nothing", async () => {
    const file = path.join(tmp, "live.jsonl");
    fs.writeFileSync(file, broken().jsonl());
    const before = fs.readFileSync(file);
    const { code, err } = await run(["doctor", file, "--agent-dir", agentDirFor(), "--repair"]);
    assert.equal(code, 1);
    assert.match(err, /Refusing to repair this session while pi may have it open/);
    assert.match(err, /--guard-seconds/);
    assert.ok(fs.readFileSync(file).equals(before));
  });

  describe("--repair while another writer appends (issue 43): re-plans like the other write flows", () => {
    /** Another writer appends a line right after each of the first `times` reads made for a write (opened with a digest). */
    async function withWriter<T>(
      file: string,
      times: number,
      run: () => Promise<T>,
    ): Promise<{ out: T; lines: string[] }> {
      const open = SessionFile.open.bind(SessionFile);
      const lines: string[] = [];
      SessionFile.open = async (p, options) => {
        const session = await open(p, options);
        if (options?.digest && lines.length < times) {
          const line = JSON.stringify({
            type: "label",
            id: `w${lines.length}`,
            parentId: session.leafId,
            timestamp: new Date().toISOString(),
            targetId: "u1",
            label: `writer ${lines.length}`,
          });
          lines.push(line);
          fs.appendFileSync(file, `${line}\n`);
        }
        return session;
      };
      try {
        return { out: await run(), lines };
      } finally {
        SessionFile.open = open;
      }
    }

    it("the file changes after the first two reads: the repair is planned again and appended after the other writer's lines", async () => {
      const file = sessionFile(broken().jsonl());
      const before = fs.readFileSync(file);
      const { out: r, lines } = await withWriter(file, 2, () =>
        run(["doctor", file, "--agent-dir", agentDirFor(), "--repair", "--guard-seconds", "0", "--json"]),
      );
      assert.equal(r.code, 0, `${r.out}\n${r.err}`);
      const json = JSON.parse(r.out) as { repair: { written: boolean; appends: { type: string; parentId: string }[] } };
      assert.equal(json.repair.written, true);
      const text = fs.readFileSync(file, "utf8");
      assert.ok(text.startsWith(before.toString()));
      const tail = text.slice(before.length).trimEnd().split("\n");
      assert.deepEqual(tail.slice(0, 2), lines, "the other writer's lines stay where it wrote them");
      assert.equal(tail.length, 3);
      const ours = JSON.parse(tail[2]!) as { type: string; parentId: string; targetId: string; replacement: unknown };
      assert.deepEqual([ours.type, ours.parentId, ours.targetId, ours.replacement], ["context_edit", "w1", "t1", null]);
    });

    it("the file keeps changing: gives up after three plans, exit 1, nothing of ours written", async () => {
      const file = sessionFile(broken().jsonl());
      const { out: r, lines } = await withWriter(file, 10, () =>
        run(["doctor", file, "--agent-dir", agentDirFor(), "--repair", "--guard-seconds", "0"]),
      );
      assert.equal(r.code, 1);
      assert.match(r.err, /keeps changing/);
      assert.equal(lines.length, 4, "the CLI's first read + three plans");
      const tail = fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-4);
      assert.deepEqual(tail, lines);
    });
  });

  it("usage errors: exit 2", async () => {
    assert.equal((await run(["doctor"])).code, 2);
    assert.equal((await run(["doctor", "a.jsonl", "b.jsonl"])).code, 2);
    assert.equal((await run(["doctor", "a.jsonl", "--dry-run"])).code, 2);
    assert.equal((await run(["doctor", "a.jsonl", "--fix"])).code, 2);
    assert.equal((await run(["doctor", "a.jsonl", "--leaf", "x"])).code, 2);
  });

  it("a missing file or an empty one: exit 1 with a sentence", async () => {
    const missing = await run(["doctor", path.join(tmp, "nope.jsonl")]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no such file/);
    const empty = sessionFile("");
    assert.match((await run(["doctor", empty])).err, /is empty: not a pi session/);
  });

  it("a file without any parseable line (no session header): exit 1, not a pi session, as inspect says", async () => {
    const file = sessionFile("root:x:0:0:root:/root:/bin/bash\nhello\n");
    const r = await run(["doctor", file]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /is not a pi session: its first line is not a session header/);
    assert.equal((await run(["inspect", file])).code, 1);
  });

  it("session text cannot drive the terminal: control characters shown as \\uXXXX, as every other command shows them", async () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("f0", { stopReason: "error", errorMessage: "boom \u001b]0;pwned\u0007 \u001b[2J" });
    const { out } = await run(["doctor", sessionFile(b.jsonl()), "--agent-dir", agentDirFor()]);
    assert.match(out, /last-answer-error/);
    assert.doesNotMatch(out, /\u001b/);
    assert.doesNotMatch(out, /\u0007/);
    assert.match(
      out,
      /boom \\u001b\]0;pwned\\u0007\s+\\u001b\[2J/,
      "the same visible escape as inspect and tree, not �",
    );
    assert.doesNotMatch(out, /\ufffd/);
  });
});
