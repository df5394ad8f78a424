/**
 * "Summarize these messages" (`rules/spanSummary.ts`) on hand-made sessions: the span and its
 * widening to whole tool call / result groups, the refusals, the note, the drafts in their
 * prefix-safe order (every prefix checked here with the pairing analysis, independently of the
 * planner's own check), tokens before → after. pi itself loads the written edits in
 * test/conformance/summarize-span.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { withAppended } from "../../../../src/core/read/overlay";
import { buildProjection } from "../../../../src/core/rules/context";
import { buildContextEditEntry } from "../../../../src/core/rules/contextEdit";
import { analyzePairing } from "../../../../src/core/rules/pairing";
import {
  isSpanRefusal,
  parseSpanNote,
  planSpan,
  spanDrafts,
  spanEditPreparation,
  spanNote,
  spanNoteHeader,
  type SpanPlan,
} from "../../../../src/core/rules/spanSummary";
import { estimatePureContextTokens } from "../../../../src/core/rules/tokens";
import { SessionBuilder } from "../../../support/session-builder";

/**
 * s (system), u1, a1 (calls c1 read, c2 bash), r1, r2, a2 (text), u2, a3 (call c3), r3, a4, u3.
 */
function builder(): SessionBuilder {
  return new SessionBuilder()
    .system("s")
    .user("u1", "first question")
    .assistant("a1", {
      text: "let me look",
      calls: [
        { id: "c1", name: "read", arguments: { path: "src/a.ts" } },
        { id: "c2", name: "bash", arguments: { command: "ls" } },
      ],
      usage: 500,
    })
    .result("r1", "c1", "x".repeat(4000))
    .result("r2", "c2", "listing", "bash")
    .assistant("a2", { text: "a.ts is fine", usage: 1800 })
    .user("u2", "second question")
    .assistant("a3", { text: "reading b", calls: [{ id: "c3", name: "read", arguments: { path: "b.ts" } }] })
    .result("r3", "c3", "contents of b")
    .assistant("a4", { text: "b.ts is fine" })
    .user("u3", "third question");
}

function span(b: SessionBuilder, from: string, to: string): { session: SessionFile; plan: SpanPlan } {
  const session = SessionFile.fromBytes(b.jsonl());
  const plan = planSpan(session, from, to);
  assert.ok(!isSpanRefusal(plan), JSON.stringify(plan));
  return { session, plan };
}

/** Every prefix of the drafts: no pairing error that was not there before. */
function assertPrefixSafe(session: SessionFile, plan: SpanPlan, note: string): void {
  const drafts = spanDrafts(plan, note, session);
  const before = analyzePairing(buildProjection(session), session).findings.filter((f) => f.severity === "error");
  assert.deepEqual(before, []);
  for (let n = 1; n <= drafts.length; n++) {
    const entries = drafts.slice(0, n).map((d, i) =>
      buildContextEditEntry({
        id: `p${i}`,
        parentId: i === 0 ? session.leafId : `p${i - 1}`,
        timestamp: "2026-01-01T00:00:00.000Z",
        targetId: d.targetId,
        replacement: d.replacement,
      }),
    );
    const view = withAppended(session, entries);
    const errors = analyzePairing(buildProjection(view), view).findings.filter((f) => f.severity === "error");
    assert.deepEqual(errors, [], `prefix of ${n} edits: ${JSON.stringify(errors)}`);
  }
}

describe("planSpan", () => {
  it("a span from a user message over a tool group: the summary in the user message, the others omitted", () => {
    const { session, plan } = span(builder(), "u1", "a2");
    assert.deepEqual(
      plan.messages.map((e) => e.record.id),
      ["u1", "a1", "r1", "r2", "a2"],
    );
    assert.equal(plan.targetId, "u1");
    assert.equal(plan.targetRole, "user");
    assert.deepEqual(plan.widenedBy, []);
    assert.equal([plan.fromId, plan.toId].join(" "), "u1 a2");
    const note = spanNote(plan, "## Goal\nlooked at a.ts");
    assert.equal(
      note.split("\n")[0],
      `[pi-context: summary of 5 messages, ${plan.spanTokens.toLocaleString("en-US")} tokens, entries u1…a2]`,
    );
    // results before the call that made them; the summary first
    assert.deepEqual(
      spanDrafts(plan, note, session).map((d) => `${d.targetId} ${d.replacement === null ? "omit" : "replace"}`),
      ["u1 replace", "r1 omit", "r2 omit", "a1 omit", "a2 omit"],
    );
    assert.deepEqual(spanDrafts(plan, note, session)[0]!.replacement, { content: note });
    assertPrefixSafe(session, plan, note);
  });

  it("widened to whole groups: a result's call before the span, an assistant's results after it", () => {
    const fromResult = span(builder(), "r2", "u2").plan;
    assert.deepEqual(
      fromResult.messages.map((e) => e.record.id),
      ["a1", "r1", "r2", "a2", "u2"],
    );
    assert.deepEqual(fromResult.widenedBy, ["a1", "r1"]);
    assert.equal(fromResult.targetId, "a1");
    const toCall = span(builder(), "u2", "a3").plan;
    assert.deepEqual(
      toCall.messages.map((e) => e.record.id),
      ["u2", "a3", "r3"],
    );
    assert.deepEqual(toCall.widenedBy, ["r3"]);
  });

  it("an assistant with calls carries the summary: its results go first, its content becomes the note alone", () => {
    const { session, plan } = span(builder(), "a1", "a2");
    assert.equal(plan.targetId, "a1");
    const note = spanNote(plan, "summary");
    const drafts = spanDrafts(plan, note, session);
    assert.deepEqual(
      drafts.map((d) => `${d.targetId} ${d.replacement === null ? "omit" : "replace"}`),
      ["r1 omit", "r2 omit", "a1 replace", "a2 omit"],
    );
    assert.deepEqual(drafts[2]!.replacement, { content: [{ type: "text", text: note }] });
    assertPrefixSafe(session, plan, note);
  });

  it("the ends in either order; already omitted messages and system messages are left alone", () => {
    const b = builder().edit("e1", "a2", null);
    const { session, plan } = span(b, "u2", "u1");
    assert.deepEqual(
      plan.messages.map((e) => e.record.id),
      ["u1", "a1", "r1", "r2", "u2"],
    );
    assertPrefixSafe(session, plan, spanNote(plan, "x"));
    const sys = span(builder(), "s", "a1").plan;
    assert.deepEqual(
      sys.messages.map((e) => e.record.id),
      ["u1", "a1", "r1", "r2"],
    );
  });

  it("tokens after = pi's pure estimate with the note; the cache breaks at the span's first message", () => {
    const { session, plan } = span(builder(), "u1", "a2");
    const note = spanNote(plan, "## Goal\nlooked at a.ts");
    const prep = spanEditPreparation(plan, note, session);
    assert.deepEqual(prep.newPairingErrors, []);
    assert.equal(prep.earliest?.entryId, "u1");
    assert.equal(prep.pureTokensBefore, estimatePureContextTokens(buildProjection(session), session));
    const removed = plan.messages
      .slice(1)
      .reduce((sum, e) => sum + (prep.edits.find((x) => x.targetId === e.record.id)?.tokensBefore ?? 0), 0);
    const u1 = prep.edits.find((e) => e.targetId === "u1")!;
    assert.equal(u1.tokensAfter, Math.ceil(note.length / 4));
    assert.equal(prep.tokensAfter.tokens, prep.pureTokensBefore - removed - u1.tokensBefore + u1.tokensAfter);
  });

  it("refusals: a bash execution in the span, an end outside the context, an unknown entry, nothing left", () => {
    const b = builder().bash("x1", "ls", "out").user("u4", "q4");
    const session = SessionFile.fromBytes(b.jsonl());
    assert.deepEqual(planSpan(session, "u3", "u4"), { reason: "span", code: "not-editable", entryIds: ["x1"] });
    assert.deepEqual(planSpan(session, "nope", "u4"), { reason: "span", code: "unknown", entryIds: ["nope"] });
    const c = builder().compaction("c1", "u2");
    const compacted = SessionFile.fromBytes(c.jsonl());
    assert.deepEqual(planSpan(compacted, "u1", "u2"), { reason: "span", code: "not-in-context", entryIds: ["u1"] });
    const omitted = SessionFile.fromBytes(builder().edit("e1", "u3", null).jsonl());
    assert.deepEqual(planSpan(omitted, "u3", "u3"), { reason: "span", code: "empty", entryIds: ["u3", "u3"] });
  });
});

describe("the note", () => {
  it("reads back what it says it replaces", () => {
    const header = spanNoteHeader({
      messages: new Array(14).fill(undefined) as SpanPlan["messages"],
      spanTokens: 38412,
      fromId: "a1b2c3d4",
      toId: "c3d4e5f6",
    });
    assert.equal(header, "[pi-context: summary of 14 messages, 38,412 tokens, entries a1b2c3d4…c3d4e5f6]");
    assert.deepEqual(parseSpanNote(`${header}\n\n## Goal\nx`), {
      count: 14,
      tokens: 38412,
      fromId: "a1b2c3d4",
      toId: "c3d4e5f6",
      summary: "## Goal\nx",
    });
    assert.equal(parseSpanNote("[tool output removed]"), null);
  });
});
