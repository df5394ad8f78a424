/**
 * The doctor's repairs (src/core/health/repair.ts, src/core/flows/repair.ts): for each repairable
 * kind, the planned entries, their proof on the overlay, and the file after the one append read
 * back (earlier bytes untouched, the doctor reports no repairable error). pi 1.6.0 loads the
 * repaired files in test/conformance/doctor.test.ts.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { commitSessionRepair, planSessionRepair, runRepairFlow } from "../../../../src/core/flows/repair";
import { UnsafeSessionWriteError } from "../../../../src/core/flows/write";
import { SessionBuilder } from "../../../support/session-builder";
import { agentDirFor, appended, codes, doctorOf, repairOf } from "../../../support/doctor";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-repair-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function fileOf(jsonl: string | Buffer): string {
  const file = path.join(tmp, `s${++n}.jsonl`);
  fs.writeFileSync(file, jsonl);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}
const flowOptions = () => ({
  agentDir: agentDirFor(),
  projectSettings: "never" as const,
  guardSeconds: 0,
  procRoot: null,
});

const base = () => new SessionBuilder().user("u1", "question").assistant("a1", { text: "answer", usage: 50 });

/** Plan, apply in memory, doctor again: the repairable errors are gone. */
function repaired(b: SessionBuilder) {
  const jsonl = b.jsonl();
  const d = doctorOf(jsonl);
  const plan = repairOf(d);
  const after = doctorOf(appended(jsonl, plan));
  return { before: d.report, plan, after: after.report };
}

describe("repair: planned, proven on the overlay, equal to the file read back", () => {
  it("orphaned results of every kind are omitted by context edits chained off the leaf", () => {
    const b = base()
      .result("t0", "zz", "orphan")
      .assistant("a2", { calls: [{ id: "c1" }], stopReason: "error" })
      .result("t1", "c1", "of the failed answer")
      .assistant("a3", { calls: [{ id: "c2" }] })
      .user("u2", "interject")
      .result("t2", "c2", "separated")
      .assistant("a4", { calls: [{ id: "c3" }] })
      .result("t3", "c3", "one")
      .result("t4", "c3", "two")
      .assistant("a5", { text: "end" });
    const { before, plan, after } = repaired(b);
    assert.deepEqual(
      codes(before).filter((c) => c.startsWith("error")),
      [
        "error:orphan-result@t0",
        "error:dropped-call-result@t1",
        "error:separated-result@t2",
        "error:duplicate-result@t4",
      ],
    );
    assert.deepEqual(
      plan.entries.map((e) => [
        e.type,
        (e as { targetId?: string }).targetId,
        (e as { replacement?: unknown }).replacement,
        e.parentId,
      ]),
      [
        ["context_edit", "t0", null, "a5"],
        ["context_edit", "t1", null, plan.entries[0]!.id],
        ["context_edit", "t2", null, plan.entries[1]!.id],
        ["context_edit", "t4", null, plan.entries[2]!.id],
      ],
    );
    assert.deepEqual(
      plan.fixes.map((f) => [f.finding.entryId, f.entries.length]),
      [
        ["t0", 1],
        ["t1", 1],
        ["t2", 1],
        ["t4", 1],
      ],
    );
    assert.deepEqual(plan.remaining, []);
    assert.equal(after.errors, 0);
    assert.deepEqual(codes(plan.after), codes(after), "the overlay's proof is what the file read back gives");
    // the separated call keeps pi-ai's filler: info
    assert.ok(codes(after).includes("info:missing-result@a3"));
  });

  it("an invalid replacement is superseded by an edit that restores the original content", () => {
    const b = base().user("u2", "more").edit("e1", "u2", { text: "not content" });
    const { plan, after } = repaired(b);
    assert.deepEqual(
      plan.entries.map((e) => [(e as { targetId?: string }).targetId, (e as { replacement?: unknown }).replacement]),
      [["u2", { content: "more" }]],
    );
    assert.equal(after.errors, 0);
  });

  it("a branch that loops gets a leaf marker; the next round repairs the new branch's orphan", () => {
    const b = base().result("t9", "zz", "orphan on the clean branch").user("x", "x", "y").user("y", "y", "x");
    const { before, plan, after } = repaired(b);
    assert.deepEqual(
      codes(before).filter((c) => c.startsWith("error")),
      ["error:path-cycle@y"],
    );
    assert.equal(plan.entries.length, 2);
    const [marker, edit] = plan.entries as unknown as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual(
      { type: marker.type, customType: marker.customType, parentId: marker.parentId, data: marker.data },
      { type: "custom", customType: "pi-context/leaf", parentId: "t9", data: { targetId: "t9", fromId: "y" } },
    );
    assert.deepEqual(
      [edit.type, edit.targetId, edit.replacement, edit.parentId],
      ["context_edit", "t9", null, marker.id],
    );
    assert.equal(after.errors, 0);
    assert.ok(codes(after).includes("warning:parent-cycle@x") || codes(after).includes("warning:parent-cycle@y"));
  });

  it("nothing to append: a healthy session, or findings only pi or a person can fix", () => {
    assert.equal(repaired(base()).plan.entries.length, 0);
    const dup = base().user("X", "a").user("X", "b", "a1");
    const r = repaired(dup);
    assert.equal(r.plan.entries.length, 0);
    assert.ok(codes(r.before).includes("warning:duplicate-id@X"));
  });

  it("overflow: a compaction is offered (not appended)", () => {
    const b = base()
      .user("u2", "q")
      .assistant("f0", { stopReason: "error", errorMessage: "prompt is too long: 213462 tokens > 200000 maximum" });
    const d = doctorOf(b.jsonl(), { settings: { compaction: { keepRecentTokens: 1 } } });
    const plan = repairOf(d);
    assert.equal(plan.entries.length, 0);
    assert.deepEqual(
      plan.compaction.map((f) => f.code),
      ["context-overflow"],
    );
  });
});

describe("repair flow: one append to the file", () => {
  it("writes the planned entries after the old bytes; the doctor on the file read back has no error", async () => {
    const b = base().result("t0", "zz", "orphan").assistant("a2", { text: "x" });
    const file = fileOf(b.jsonl());
    const before = fs.readFileSync(file);
    const plan = await planSessionRepair(file, flowOptions());
    assert.equal(plan.report.errors, 1);
    assert.equal(plan.repair.entries.length, 1);
    const result = await commitSessionRepair(plan);
    const bytes = fs.readFileSync(file);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    assert.equal(result.bytesBefore, before.length);
    assert.equal(result.bytesAfter, bytes.length);
    assert.equal(bytes.subarray(before.length).toString(), `${JSON.stringify(result.entries[0])}\n`);
    assert.equal(result.after.errors, 0);
  });

  it("runRepairFlow: asks, declined writes nothing; nothing to do writes nothing", async () => {
    const file = fileOf(base().result("t0", "zz", "orphan").jsonl());
    const before = fs.readFileSync(file);
    let asked = 0;
    const declined = await runRepairFlow(file, flowOptions(), { confirm: async () => (asked++, false) });
    assert.equal(declined.kind, "declined");
    assert.equal(asked, 1);
    assert.ok(fs.readFileSync(file).equals(before));
    const done = await runRepairFlow(file, flowOptions(), { confirm: async () => true });
    assert.equal(done.kind, "repaired");
    const again = await runRepairFlow(file, flowOptions());
    assert.equal(again.kind, "nothing");
  });

  it("refuses files it never writes (torn final line, old format) and live sessions; nothing written", async () => {
    const torn = fileOf(`${base().result("t0", "zz", "o").jsonl()}{"type":"mess`);
    const tornBytes = fs.readFileSync(torn);
    const plan = await planSessionRepair(torn, flowOptions());
    assert.match(plan.unsafe ?? "", /incomplete line/);
    await assert.rejects(commitSessionRepair(plan), UnsafeSessionWriteError);
    await assert.rejects(runRepairFlow(torn, flowOptions()), UnsafeSessionWriteError);
    assert.ok(fs.readFileSync(torn).equals(tornBytes));

    const live = path.join(tmp, "live.jsonl");
    fs.writeFileSync(live, base().result("t0", "zz", "o").jsonl()); // written just now
    await assert.rejects(
      runRepairFlow(live, { ...flowOptions(), guardSeconds: 30 }),
      /Refusing to repair this session/,
    );
  });
});
