/**
 * The bridge's context-edit queue (`src/bridge/contextEdits.ts`) on a stand-in of pi's session
 * manager: pi's target checks (same messages), appending at once, queueing for the boundary and
 * finding what pi appended, hand-overs pi dropped, cancel, the state's batches. The real pi is the
 * judge in test/conformance/bridge-edits.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  ContextEditQueue,
  draftProblem,
  MAX_HAND_OVERS,
  pairingSafeDrafts,
  UnavailableError,
  withPairedResults,
} from "../../../src/bridge/contextEdits";
import type { PiContext, PiEntry } from "../../../src/bridge/piApi";
import { MAX_EDIT_BATCHES, type ContextEditDraft } from "../../../src/bridge/protocol";

/** pi's session manager, as far as the queue uses it: entries on one branch, `appendContextEdit` like pi's. */
function fakePi(options: { append?: boolean } = {}) {
  const entries: PiEntry[] = [
    { type: "message", id: "u1", parentId: null, message: { role: "user" } },
    { type: "message", id: "a1", parentId: "u1", message: { role: "assistant" } },
    { type: "message", id: "r1", parentId: "a1", message: { role: "toolResult" } },
    { type: "model_change", id: "m1", parentId: "r1" },
  ];
  const off: PiEntry = { type: "message", id: "x1", parentId: "u1", message: { role: "user" } };
  let n = 0;
  const sm = {
    getSessionFile: () => "/s.jsonl",
    getSessionId: () => "s",
    getCwd: () => "/",
    getLeafId: () => entries[entries.length - 1]!.id,
    getEntries: () => [off, ...entries],
    getEntry: (id: string) => [...entries, off].find((e) => e.id === id),
    getBranch: () => [...entries],
    ...(options.append === false
      ? {}
      : {
          appendContextEdit(targetId: string, replacement: ContextEditDraft["replacement"]) {
            const id = `e${n++}`;
            entries.push({ type: "context_edit", id, parentId: sm.getLeafId(), targetId, replacement });
            return id;
          },
        }),
  };
  const ctx = { sessionManager: sm } as unknown as PiContext;
  return { ctx, entries, sm };
}

const omit = (targetId: string): ContextEditDraft => ({ type: "context_edit", targetId, replacement: null });

describe("bridge context edits", () => {
  it("checks targets like pi's appendContextEdit (same messages)", () => {
    const { ctx } = fakePi();
    assert.equal(draftProblem(ctx.sessionManager, omit("r1")), undefined);
    assert.equal(draftProblem(ctx.sessionManager, omit("zz")), "Entry zz not found");
    assert.equal(draftProblem(ctx.sessionManager, omit("x1")), "Entry x1 is not on the active branch");
    assert.equal(draftProblem(ctx.sessionManager, omit("m1")), "Entry m1 does not contribute editable model content");
  });

  it("idle: appends every draft at once, or none when one is refused", () => {
    const { ctx, entries } = fakePi();
    let pushes = 0;
    const q = new ContextEditQueue(ctx, () => pushes++);
    assert.throws(() => q.applyNow([omit("a1"), omit("zz")]), /Entry zz not found/);
    assert.equal(entries.length, 4, "nothing appended");
    // the result first: after each append, no tool result is sent without its call (issue 43)
    const { batch, entries: appended } = q.applyNow([omit("a1"), omit("r1")]);
    assert.deepEqual(appended, [
      { id: "e0", targetId: "r1" },
      { id: "e1", targetId: "a1" },
    ]);
    assert.deepEqual(
      entries.slice(4).map((e) => [e.id, e.parentId, e.targetId]),
      [
        ["e0", "m1", "r1"],
        ["e1", "e0", "a1"],
      ],
    );
    assert.equal(batch.status, "applied");
    assert.deepEqual(q.snapshot()[0]!.entryIds, ["e0", "e1"]);
    assert.ok(pushes > 0);
    assert.throws(
      () => new ContextEditQueue(fakePi({ append: false }).ctx, () => undefined).applyNow([omit("r1")]),
      UnavailableError,
    );
  });

  it("streaming: queued, handed at the boundary after the drafts proposed so far, applied once pi appended them", () => {
    const { ctx, sm } = fakePi();
    const q = new ContextEditQueue(ctx, () => undefined);
    assert.throws(() => q.enqueue([omit("x1")]), /not on the active branch/);
    const batch = q.enqueue([omit("r1")]);
    assert.equal(batch.status, "queued");
    assert.equal(q.pending, true);
    const other = { type: "custom", customType: "x", data: 1 };
    const result = q.boundary({ entries: [other] });
    assert.deepEqual(result, { entries: [other, omit("r1")] });
    assert.equal(q.snapshot()[0]!.status, "handed");
    assert.equal(q.boundary({ entries: [] }), undefined, "handed once");
    (sm as unknown as { appendContextEdit: (t: string, r: null) => string }).appendContextEdit("r1", null); // pi commits
    q.check(true);
    assert.deepEqual(
      q.snapshot().map((b) => [b.status, b.entryIds]),
      [["applied", ["e0"]]],
    );
    assert.equal(q.pending, false);
  });

  it("a hand-over pi dropped is queued again, then dropped after the last one; a target gone is dropped at once; cancel", () => {
    const { ctx, entries } = fakePi();
    const q = new ContextEditQueue(ctx, () => undefined);
    const b = q.enqueue([omit("r1")]);
    for (let i = 1; i <= MAX_HAND_OVERS; i++) {
      assert.ok(q.boundary({ entries: [] }), `hand-over ${i}`);
      q.check(true); // pi moved on without appending
    }
    const dropped = q.snapshot().find((x) => x.batchId === b.batchId)!;
    assert.equal(dropped.status, "dropped");
    assert.match(dropped.message!, /did not append the edits at 3 turn boundaries/);
    const gone = q.enqueue([omit("a1")]);
    entries.splice(1, 1); // a1 is no longer on pi's branch
    assert.equal(q.boundary({ entries: [] }), undefined);
    assert.match(
      q.snapshot().find((x) => x.batchId === gone.batchId)!.message!,
      /no longer accepts these edits: Entry a1 not found/,
    );
    const c = q.enqueue([omit("r1")]);
    assert.equal(q.cancel(c.batchId), true);
    assert.equal(q.cancel(c.batchId), false);
    assert.equal(q.boundary({ entries: [] }), undefined, "nothing queued");
    for (let i = 0; i < MAX_EDIT_BATCHES + 4; i++) q.applyNow([omit("r1")]);
    assert.equal(q.snapshot().length, MAX_EDIT_BATCHES);
  });

  it("a draft that takes calls out of an assistant also omits their results on the branch (those that arrived since the plan)", () => {
    const call = (id: string) => ({ type: "toolCall", id, name: "bash", arguments: {} });
    const entries: PiEntry[] = [
      { type: "message", id: "u1", parentId: null, message: { role: "user" } },
      { type: "message", id: "a1", parentId: "u1", message: { role: "assistant", content: [call("c1"), call("c2")] } },
      { type: "message", id: "r1", parentId: "a1", message: { role: "toolResult", toolCallId: "c1" } },
      { type: "label", id: "l1", parentId: "r1" },
      { type: "message", id: "r2", parentId: "l1", message: { role: "toolResult", toolCallId: "c2" } },
      { type: "message", id: "a2", parentId: "r2", message: { role: "assistant", content: [call("c1")] } },
      { type: "message", id: "r3", parentId: "a2", message: { role: "toolResult", toolCallId: "c1" } },
    ];
    const sm = { getBranch: () => entries } as unknown as PiContext["sessionManager"];
    const ids = (drafts: ContextEditDraft[]) =>
      drafts.map((d) => `${d.targetId}:${d.replacement === null ? "omit" : "edit"}`);
    // omitting a1 takes r1 and r2, not r3 (a later answer reusing the call id c1)
    assert.deepEqual(ids(withPairedResults(sm, [omit("a1")])), ["a1:omit", "r1:omit", "r2:omit"]);
    // a draft already omitting a result is not repeated; one that keeps c2 keeps r2
    assert.deepEqual(ids(withPairedResults(sm, [omit("a1"), omit("r1")])), ["a1:omit", "r1:omit", "r2:omit"]);
    const keepC2 = { type: "context_edit" as const, targetId: "a1", replacement: { content: [call("c2")] } };
    assert.deepEqual(ids(withPairedResults(sm, [keepC2])), ["a1:edit", "r1:omit"]);
    // a result omitted by an earlier edit on the branch stays as it is; a tool result or user draft adds nothing
    entries.push({ type: "context_edit", id: "e1", parentId: "r3", targetId: "r2", replacement: null });
    assert.deepEqual(ids(withPairedResults(sm, [omit("a1")])), ["a1:omit", "r1:omit"]);
    assert.deepEqual(ids(withPairedResults(sm, [omit("r3"), omit("u1")])), ["r3:omit", "u1:omit"]);
  });

  it("every prefix of a batch is pairing-safe: results hidden before their assistant, shown after it (issue 43)", () => {
    const call = (id: string) => ({ type: "toolCall", id, name: "bash", arguments: {} });
    const entries: PiEntry[] = [
      { type: "message", id: "u1", parentId: null, message: { role: "user" } },
      { type: "message", id: "a1", parentId: "u1", message: { role: "assistant", content: [call("c1"), call("c2")] } },
      { type: "message", id: "r1", parentId: "a1", message: { role: "toolResult", toolCallId: "c1" } },
      { type: "message", id: "r2", parentId: "r1", message: { role: "toolResult", toolCallId: "c2" } },
      { type: "message", id: "u2", parentId: "r2", message: { role: "user" } },
      { type: "message", id: "a2", parentId: "u2", message: { role: "assistant", content: [call("c3")] } },
      { type: "message", id: "r3", parentId: "a2", message: { role: "toolResult", toolCallId: "c3" } },
    ];
    const sm = {
      getBranch: () => entries,
      getEntry: (id: string) => entries.find((e) => e.id === id),
    } as unknown as PiContext["sessionManager"];
    const ids = (drafts: ContextEditDraft[]) =>
      drafts.map((d) => `${d.targetId}:${d.replacement === null ? "omit" : "show"}`);
    const show = (targetId: string): ContextEditDraft => ({
      type: "context_edit",
      targetId,
      replacement: { content: "x" },
    });
    // omitting a1 (as the planner asked, before pi appended r2): its results go first
    assert.deepEqual(ids(pairingSafeDrafts(sm, withPairedResults(sm, [omit("a1"), omit("r1")]))), [
      "r1:omit",
      "r2:omit",
      "a1:omit",
    ]);
    // restoring: the assistant before its result, a user message last; hides before shows
    assert.deepEqual(ids(pairingSafeDrafts(sm, [show("u2"), show("r3"), show("a2"), omit("r1")])), [
      "r1:omit",
      "a2:show",
      "r3:show",
      "u2:show",
    ]);
  });
});
