/**
 * Undo of the last context edits (core/rules/undoEdit.ts, core/flows/undoEdit.ts) on the trim
 * session: which batch, which way (leaf marker while the batch ends the branch, else re-targeting
 * edits), what each target shows again, the bytes against a Restore's, nothing to undo (no edit,
 * a compaction after it, an edit off the branch), and the flow's one append right after our own
 * trim (no "recent write" refusal) — pi's loading of both ways is `test/conformance/undo-edit.test.ts`.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { commitContextEdits, planContextEdits } from "../../../../src/core/flows/contextEdit";
import { runUndoFlow } from "../../../../src/core/flows/undoEdit";
import { withAppended } from "../../../../src/core/read/overlay";
import { SessionFile } from "../../../../src/core/read/session";
import { buildProjection } from "../../../../src/core/rules/context";
import { chainContextEdits } from "../../../../src/core/rules/contextEdit";
import { prepareContextEdits, type ContextEditAction } from "../../../../src/core/rules/editPlan";
import { estimateProjectedContextTokens } from "../../../../src/core/rules/tokens";
import { isNothingToUndo, prepareUndo, type UndoPreparation } from "../../../../src/core/rules/undoEdit";
import { trimSession } from "../../../support/trim-session";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-undo-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const session = () => SessionFile.fromBytes(trimSession().jsonl());
let time = 0;
/** `session` with the planned edits of `actions` appended as one batch (one timestamp). */
function edited(s: ReturnType<typeof session> | ReturnType<typeof withAppended>, actions: ContextEditAction[]) {
  const prep = prepareContextEdits(s, actions);
  let n = 0;
  return withAppended(
    s,
    chainContextEdits(prep.drafts, {
      leafId: s.leafId,
      newId: () => `e${time}-${n++}`,
      timestamp: new Date(Date.UTC(2026, 11, 1, 0, 0, time++)).toISOString(),
    }),
  );
}
function plan(p: ReturnType<typeof prepareUndo>): UndoPreparation {
  assert.ok(!isNothingToUndo(p), JSON.stringify(p));
  return p as UndoPreparation;
}

describe("undo of the last context edits: the plan", () => {
  it("the batch at the leaf: a leaf marker before it, the targets back to their originals, fewer bytes than Restore", () => {
    const s0 = session();
    const s = edited(s0, [
      { action: "omit", targetId: "r6" },
      { action: "replace", targetId: "u2", content: "shorter" },
    ]);
    const p = plan(prepareUndo(s));
    assert.equal(p.way, "leaf");
    assert.equal(p.beforeId, "a10");
    assert.deepEqual(p.editIds.length, 2);
    assert.deepEqual(p.targets, [
      { targetId: "u2", now: "replace", back: "original" },
      { targetId: "r6", now: "replace", back: "original" },
    ]);
    assert.deepEqual(p.drafts, [], "the marker is the whole undo");
    assert.ok(p.bytes < 250, `${p.bytes} bytes`);
    assert.equal(p.otherBytes, p.restoreBytes, "re-targeting unedited items is a Restore");
    assert.ok(p.restoreBytes > 24_000, `${p.restoreBytes}: the test log is written again`);
    // pi's numbers after are those before the batch: usage-based again
    const before = estimateProjectedContextTokens(buildProjection(s0), s0);
    assert.deepEqual(p.tokensAfter, before);
    assert.equal(p.tokensBefore.lastUsageIndex, null);
  });

  it("re-targeting: the edits that bring each target back, chained at the leaf", () => {
    const s = edited(session(), [{ action: "omit", targetId: "a7" }]);
    const p = plan(prepareUndo(s, { retargetOnly: true }));
    assert.equal(p.way, "retarget");
    assert.deepEqual(
      p.drafts.map((d) => [d.targetId, d.replacement === null ? null : "content"]),
      [
        ["a7", "content"],
        ["r6", "content"],
      ],
    );
    assert.equal(p.otherBytes, null);
    assert.equal(p.bytes, p.restoreBytes);
    assert.deepEqual(
      buildProjection(session()).entries.map((e) => [e.record.id, e.roles]),
      p.projectionAfter.entries.filter((e) => e.record.type !== "context_edit").map((e) => [e.record.id, e.roles]),
    );
  });

  it("an edited item edited again: undo goes back to the earlier edit (a note), cheaper than Restore", () => {
    const once = edited(session(), [{ action: "omit", targetId: "r6" }]);
    const twice = edited(once, [{ action: "restore", targetId: "r6" }]);
    const p = plan(prepareUndo(twice, { retargetOnly: true }));
    assert.deepEqual(p.targets, [{ targetId: "r6", now: "replace", back: "replace" }]);
    const note = (once.readEntry(once.byId.get(once.leafId!)!) as { replacement: unknown }).replacement;
    assert.deepEqual(p.drafts[0]!.replacement, note);
    assert.ok(p.bytes < 400 && p.restoreBytes > 24_000, `${p.bytes} / ${p.restoreBytes}`);
  });

  it("the last batch only (one timestamp); given ids pick a batch; ids off the branch or no edit: nothing to undo", () => {
    const first = edited(session(), [{ action: "omit", targetId: "r1" }]);
    const second = edited(first, [{ action: "omit", targetId: "r2" }]);
    assert.deepEqual(
      plan(prepareUndo(second)).targets.map((t) => t.targetId),
      ["r2"],
    );
    const firstIds = plan(prepareUndo(first)).editIds;
    const p = plan(prepareUndo(second, { editIds: firstIds }));
    assert.equal(p.way, "retarget", "something came after it");
    assert.deepEqual(
      p.targets.map((t) => t.targetId),
      ["r1"],
    );
    assert.match((prepareUndo(second, { editIds: ["nope"] }) as { reason: string }).reason, /no longer on/);
    assert.match((prepareUndo(session()) as { reason: string }).reason, /no context edit/);
  });
});

describe("undo of the last context edits: the flow", () => {
  it("right after our own trim (a recent write of ours): one append of the marker, pi's numbers back", async () => {
    const file = path.join(tmp, "flow.jsonl");
    fs.writeFileSync(file, trimSession().jsonl());
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const before = fs.readFileSync(file);
    const tokens = estimateProjectedContextTokens(
      buildProjection(SessionFile.fromBytes(before)),
      SessionFile.fromBytes(before),
    ).tokens;
    const options = { guardSeconds: 30, procRoot: null };
    await commitContextEdits(await planContextEdits(file, [{ action: "omit", targetId: "r6" }], options));
    const trimmed = fs.readFileSync(file);
    const outcome = await runUndoFlow(file, options, async () => true);
    assert.equal(outcome.kind, "undone");
    if (outcome.kind !== "undone") return;
    assert.equal(outcome.result.way, "leaf");
    assert.equal(outcome.result.tokensAfter, tokens);
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, trimmed.length).equals(trimmed), "only appended");
    const line = JSON.parse(after.subarray(trimmed.length).toString("utf8"));
    assert.deepEqual(
      { type: line.type, customType: line.customType, parentId: line.parentId, data: line.data },
      {
        type: "custom",
        customType: "pi-context/leaf",
        parentId: "a10",
        data: { targetId: "a10", fromId: outcome.plan.session.leafId },
      },
    );
    // nothing more to undo at the marker
    const again = await runUndoFlow(file, options, async () => true);
    assert.equal(again.kind, "nothing");
  });
});
