/**
 * Skipped lines acknowledged as harmless (`core/health/acknowledged.ts`): a line pi skips is a
 * warning until acknowledged, then a note in the doctor's report (the gauge, the panel, Check
 * Session Health and `pi-context doctor` all read `checkHealth`); the acknowledgement is kept in
 * the state folder (`PI_CONTEXT_STATE_DIR`, set per test run), never in the session, and holds only
 * for that file and exactly that line.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { acknowledgeLine, isAcknowledged } from "../../../../src/core/health/acknowledged";
import { checkHealth } from "../../../../src/core/health/doctor";
import { SessionFile } from "../../../../src/core/read/session";
import { analyzeLoaded } from "../../../../src/core/rules/analyze";
import { SessionBuilder } from "../../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-ack-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const FRAGMENT = '{"type":"message","id":"x1","parentId":"a1","timestamp":"2026';

/** A session with the fragment of an interrupted write as a line of its own (pi ended it). */
function sessionWithFragment(name: string): string {
  const lines = new SessionBuilder().user("u1", "question").assistant("a1", { text: "answer", usage: 50 }).jsonl();
  const file = path.join(tmp, name);
  fs.writeFileSync(file, `${lines}${FRAGMENT}\n`);
  return file;
}

async function reportOf(file: string) {
  const session = await SessionFile.open(file);
  return { session, report: checkHealth(analyzeLoaded(session, { agentDir: path.join(tmp, "no-agent") })) };
}

describe("skipped lines acknowledged as harmless", () => {
  it("a warning until acknowledged, then a note; the report's counts follow; the session is not written", async () => {
    const file = sessionWithFragment("a.jsonl");
    const bytes = fs.readFileSync(file);
    const { session, report } = await reportOf(file);
    const [f] = report.findings.filter((x) => x.code === "malformed-line");
    assert.ok(f, JSON.stringify(report.findings));
    assert.equal(f.severity, "warning");
    assert.equal(f.line, bytes.toString().split("\n").length - 1);
    assert.deepEqual(
      { offset: f.skippedLine!.offset, bytes: f.skippedLine!.bytes },
      { offset: bytes.length - FRAGMENT.length - 1, bytes: FRAGMENT.length },
    );
    acknowledgeLine(file, session.fileIdentity!, f.skippedLine!);
    // the same analysis asked again: the acknowledgement shows at once
    const again = await reportOf(file);
    const [g] = again.report.findings.filter((x) => x.code === "malformed-line");
    assert.equal(g!.severity, "info");
    assert.equal(g!.acknowledged, true);
    assert.match(g!.message, /^Acknowledged as harmless/);
    assert.deepEqual([again.report.warnings, again.report.infos], [report.warnings - 1, report.infos + 1]);
    assert.ok(fs.readFileSync(file).equals(bytes), "nothing written into the session");
    assert.ok(fs.existsSync(path.join(process.env.PI_CONTEXT_STATE_DIR!, "acknowledged-lines.json")));
  });

  it("only for that file and exactly that line: a copy, or a changed line, is a warning again", async () => {
    const file = sessionWithFragment("b.jsonl");
    const { session, report } = await reportOf(file);
    const [f] = report.findings.filter((x) => x.code === "malformed-line");
    acknowledgeLine(file, session.fileIdentity!, f!.skippedLine!);
    const copy = path.join(tmp, "b-copy.jsonl");
    fs.copyFileSync(file, copy);
    assert.equal((await reportOf(copy)).report.findings.find((x) => x.code === "malformed-line")!.severity, "warning");
    const changed = fs.readFileSync(file, "utf8").replace(FRAGMENT, FRAGMENT.replace("2026", "2027"));
    fs.writeFileSync(file, changed); // same inode, same offset and length, other bytes
    const after = (await reportOf(file)).report.findings.find((x) => x.code === "malformed-line")!;
    assert.equal(after.severity, "warning");
    assert.equal(isAcknowledged(session.fileIdentity!, after.skippedLine!), false);
  });
});
