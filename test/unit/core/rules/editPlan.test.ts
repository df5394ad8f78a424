/**
 * The pairing-safe context-edit planner (core/rules/editPlan.ts) on hand-made sessions: every
 * policy rule with its real values (replacements, causes, refusals, tokens before → after, bytes,
 * the earliest edited position). The planner is checked against pi itself on random trees in
 * test/conformance/context-edit.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import {
  prepareContextEdits,
  withOriginalToolCalls,
  type ContextEditAction,
} from "../../../../src/core/rules/editPlan";
import { SessionBuilder } from "../../../support/session-builder";

/**
 * system s, user u1, assistant a1 (read src/a.ts as c1, bash `ls -la` as c2; usage 500),
 * results r1 (4000 chars = 1000 tokens) and r2 (400 chars), assistant a2 (usage 1800), user u2.
 */
function turn(): SessionBuilder {
  return new SessionBuilder()
    .system("s")
    .user("u1", "question")
    .assistant("a1", {
      text: "let me read",
      calls: [
        { id: "c1", name: "read", arguments: { path: "src/a.ts" } },
        { id: "c2", name: "bash", arguments: { command: "ls -la" } },
      ],
      usage: 500,
    })
    .result("r1", "c1", "x".repeat(4000))
    .result("r2", "c2", "y".repeat(400), "bash")
    .assistant("a2", { text: "done", usage: 1800 })
    .user("u2", "next");
}

function plan(b: SessionBuilder, actions: ContextEditAction[]) {
  return prepareContextEdits(SessionFile.fromBytes(b.jsonl()), actions);
}

/** `target effect cause` per planned edit. */
function summary(p: ReturnType<typeof plan>): string[] {
  return p.edits.map((e) => `${e.targetId} ${e.effect} ${e.cause.kind}`);
}

const A1_CALLS = [
  { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts" } },
  { type: "toolCall", id: "c2", name: "bash", arguments: { command: "ls -la" } },
];

describe("context edit planner: tool results", () => {
  it("omitting a result whose call is sent replaces it with a note; estimates before → after; earliest position", () => {
    const p = plan(turn(), [{ action: "omit", targetId: "r1" }]);
    assert.deepEqual(p.edits, [
      {
        targetId: "r1",
        role: "toolResult",
        effect: "note",
        replacement: {
          content: [{ type: "text", text: "[pi-context: output of read src/a.ts removed — 1,000 tokens]" }],
        },
        cause: { kind: "requested" },
        contextIndex: 3,
        messageIndex: 3,
        tokensBefore: 1000,
        tokensAfter: 15,
        bytes: 227,
      },
    ]);
    assert.deepEqual(p.drafts, [{ type: "context_edit", targetId: "r1", replacement: p.edits[0]!.replacement }]);
    // before: a2's usage 1800 + the trailing user message; after an edit pi discards usage: pure chars/4
    assert.deepEqual(p.tokensBefore, {
      tokens: 1801,
      usageTokens: 1800,
      trailingTokens: 1,
      lastUsageIndex: 5,
      lastUsageEntryId: "a2",
    });
    assert.deepEqual(p.tokensAfter, {
      tokens: 152,
      usageTokens: 0,
      trailingTokens: 152,
      lastUsageIndex: null,
      lastUsageEntryId: null,
    });
    // on the same (pure) basis: 18 system + 2 + 15 + 1000 + 100 + 1 + 1 before, the note instead of r1 after
    assert.equal(p.pureTokensBefore, 1137);
    assert.equal(p.pureTokensBefore - 1000 + 15, p.tokensAfter.tokens);
    // the prompt cache holds up to r1: system prompt 18 + u1 2 + a1 15 tokens
    assert.deepEqual(p.earliest, { entryId: "r1", contextIndex: 3, messageIndex: 3, unchangedPrefixTokens: 35 });
    assert.equal(p.bytes, 227);
    assert.deepEqual([p.pairingBefore.errors, p.pairingAfter.errors, p.pairingAfter.fillers], [0, 0, 0]);
    assert.deepEqual(p.newPairingErrors, []);
  });

  it("omitting an assistant that made calls omits its results too", () => {
    const p = plan(turn(), [{ action: "omit", targetId: "a1" }]);
    // written results first, then their assistant: no prefix of the batch orphans a result (issue 43)
    assert.deepEqual(summary(p), [
      "r1 omit results-of-omitted-call",
      "r2 omit results-of-omitted-call",
      "a1 omit requested",
    ]);
    assert.deepEqual(p.edits[0]!.cause, { kind: "results-of-omitted-call", assistantId: "a1" });
    assert.deepEqual(
      p.edits.map((e) => [e.replacement, e.tokensBefore, e.tokensAfter]),
      [
        [null, 1000, 0],
        [null, 100, 0],
        [null, 15, 0],
      ],
    );
    assert.equal(p.tokensAfter.tokens, 22);
    assert.deepEqual(p.pairingAfter.findings, []);
  });

  it("a result omitted together with its assistant is omitted, not noted", () => {
    const p = plan(turn(), [
      { action: "omit", targetId: "r2" },
      { action: "omit", targetId: "a1" },
    ]);
    assert.deepEqual(summary(p), ["r1 omit results-of-omitted-call", "r2 omit requested", "a1 omit requested"]);
  });

  it("a result of a failed assistant, or without a call, is omitted (its call is not sent anyway)", () => {
    const failed = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }], stopReason: "error" })
      .result("r1", "c1", "R")
      .result("r2", "zz", "orphan");
    const p = plan(failed, [
      { action: "omit", targetId: "r1" },
      { action: "omit", targetId: "r2" },
    ]);
    assert.deepEqual(summary(p), ["r1 omit requested", "r2 omit requested"]);
    assert.equal(p.pairingBefore.errors, 2);
    assert.equal(p.pairingAfter.errors, 0);
  });

  it("an orphaned result is omitted, not noted: that repairs it (session health)", () => {
    const separated = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }] })
      .user("u2", "interject")
      .result("r1", "c1", "R")
      .result("r2", "c1", "again");
    const p = plan(separated, [
      { action: "omit", targetId: "r1" },
      { action: "omit", targetId: "r2" },
    ]);
    assert.deepEqual(summary(p), ["r1 omit requested", "r2 omit requested"]);
    assert.deepEqual(
      p.pairingBefore.findings.map((f) => f.kind),
      ["separated-result", "duplicate-result"],
    );
    // after: no error, pi-ai fills the call where u2 interrupts it
    assert.deepEqual(
      p.pairingAfter.findings.map((f) => `${f.kind} ${f.callEntryId} ${f.separatorEntryId}`),
      ["missing-result a1 u2"],
    );
    assert.equal(p.pairingAfter.errors, 0);
  });

  it("replacing a result: a string becomes one text block", () => {
    const p = plan(turn(), [{ action: "replace", targetId: "r2", content: "a b c" }]);
    assert.deepEqual(p.edits[0]!.replacement, { content: [{ type: "text", text: "a b c" }] });
    assert.equal(p.edits[0]!.effect, "replace");
  });
});

describe("context edit planner: assistants", () => {
  it("shrinking an assistant keeps its tool calls (stray calls in the new content are dropped)", () => {
    const p = plan(turn(), [{ action: "replace", targetId: "a1", content: "(shortened)" }]);
    assert.deepEqual(p.edits[0]!.replacement, { content: [{ type: "text", text: "(shortened)" }, ...A1_CALLS] });
    const q = plan(turn(), [
      {
        action: "replace",
        targetId: "a1",
        content: [
          { type: "text", text: "t" },
          { type: "toolCall", id: "zz", name: "edit", arguments: {} },
        ],
      },
    ]);
    assert.deepEqual(q.edits[0]!.replacement, { content: [{ type: "text", text: "t" }, ...A1_CALLS] });
    assert.deepEqual(q.pairingAfter.findings, []);
    // without calls, the content is kept as given (a string normalised like pi)
    const r = plan(turn(), [{ action: "replace", targetId: "a2", content: "ok" }]);
    assert.deepEqual(r.edits[0]!.replacement, { content: [{ type: "text", text: "ok" }] });
    assert.deepEqual(withOriginalToolCalls("x", "not an array"), "x");
  });
});

describe("context edit planner: restore", () => {
  it("restore = an edit with the original content; its size is the line's bytes; an unedited target is unchanged", () => {
    const b = turn().edit("e1", "r1", { content: [{ type: "text", text: "short" }] });
    const p = plan(b, [
      { action: "restore", targetId: "r1" },
      { action: "restore", targetId: "u1" },
    ]);
    assert.deepEqual(summary(p), ["r1 restore requested"]);
    assert.deepEqual(p.edits[0]!.replacement, { content: [{ type: "text", text: "x".repeat(4000) }] });
    // {"type":"context_edit","id":"<8>","parentId":"e1","timestamp":"<24>","targetId":"r1","replacement":{"content":[{"type":"text","text":"…"}]}} + \n
    assert.equal(p.edits[0]!.bytes, 4000 + 164 + 1);
    assert.deepEqual([p.edits[0]!.tokensBefore, p.edits[0]!.tokensAfter], [2, 1000]);
    assert.deepEqual(p.unchanged, [{ action: "restore", targetId: "u1" }]);
    // restoring twice changes nothing
    const again = plan(b.edit("e2", "r1", { content: [{ type: "text", text: "x".repeat(4000) }] }), [
      { action: "restore", targetId: "r1" },
    ]);
    assert.deepEqual(again.edits, []);
    assert.equal(again.unchanged.length, 1);
  });

  it("an unedited target is compared by its measured length first, then by its content", () => {
    // r1 = 4000 × "x": a replacement of the same length but other text is an edit; the same text is not
    const same = plan(turn(), [{ action: "replace", targetId: "r1", content: "x".repeat(4000) }]);
    assert.deepEqual(same.edits, []);
    assert.deepEqual(same.unchanged, [{ action: "replace", targetId: "r1", content: "x".repeat(4000) }]);
    const other = plan(turn(), [{ action: "replace", targetId: "r1", content: `${"x".repeat(3999)}y` }]);
    assert.deepEqual(summary(other), ["r1 replace requested"]);
    // a long line (read by the scanner, its strings measured, not decoded): the same rules
    const long = 'é"\n\u0001😀'.repeat(3000);
    const b = new SessionBuilder().user("u1", "q").assistant("a1", { text: "t" }).user("u2", long);
    assert.deepEqual(plan(b, [{ action: "replace", targetId: "u2", content: long }]).unchanged.length, 1);
    assert.deepEqual(summary(plan(b, [{ action: "replace", targetId: "u2", content: `${long.slice(0, -2)}😁` }])), [
      "u2 replace requested",
    ]);
  });

  it("restoring an omitted assistant restores its omitted results; restoring a result restores its assistant", () => {
    const omitted = () => turn().edit("e1", "a1", null).edit("e2", "r1", null).edit("e3", "r2", null);
    assert.deepEqual(summary(plan(omitted(), [{ action: "restore", targetId: "a1" }])), [
      "a1 restore requested",
      "r1 restore results-of-restored-call",
      "r2 restore results-of-restored-call",
    ]);
    const p = plan(omitted(), [{ action: "restore", targetId: "r2" }]);
    assert.deepEqual(summary(p), [
      "a1 restore call-of-restored-result",
      "r1 restore results-of-restored-call",
      "r2 restore requested",
    ]);
    assert.deepEqual(p.edits[0]!.cause, { kind: "call-of-restored-result", resultId: "r2" });
    assert.deepEqual(p.pairingAfter.findings, []);
    // replacing an omitted assistant makes it visible too: its results come back
    assert.deepEqual(summary(plan(omitted(), [{ action: "replace", targetId: "a1", content: "short" }])), [
      "a1 replace requested",
      "r1 restore results-of-restored-call",
      "r2 restore results-of-restored-call",
    ]);
  });

  it("restoring a result whose call is not sent is refused (would-orphan)", () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }], stopReason: "error" })
      .result("r1", "c1", "R")
      .result("r2", "zz", "no call")
      .edit("e1", "r1", null)
      .edit("e2", "r2", null);
    const p = plan(b, [
      { action: "restore", targetId: "r1" },
      { action: "replace", targetId: "r2", content: "x" },
    ]);
    assert.deepEqual(p.edits, []);
    assert.deepEqual(
      p.refused.map((r) => `${r.action.targetId} ${r.code}: ${r.message}`),
      [
        "r1 would-orphan: Tool result r1 answers a call of failed assistant a1, which pi does not send; shown again, providers would reject the request.",
        "r2 would-orphan: Tool result r2 answers no tool call in the context; shown again, providers would reject the request.",
      ],
    );
  });

  it("the safety net: a restore that takes away a call a replacement had added omits the result it would orphan", () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { text: "plain" })
      .edit("e1", "a1", {
        content: [
          { type: "text", text: "now with a call" },
          { type: "toolCall", id: "x", name: "edit", arguments: {} },
        ],
      })
      .result("rx", "x", "R", "edit");
    const p = plan(b, [{ action: "restore", targetId: "a1" }]);
    assert.deepEqual(summary(p), ["rx omit orphan-of-plan", "a1 restore requested"]);
    assert.deepEqual(p.newPairingErrors, []);
    assert.deepEqual(p.pairingAfter.findings, []);
  });
});

describe("context edit planner: refusals and no-ops", () => {
  it("pi's refusals with pi's messages, summarized targets, duplicates, conflicts; already omitted = unchanged", () => {
    const b = turn().compaction("k1", "a1").user("u3", "after").user("side", "branch", "u2").user("leaf", "last", "u3");
    const p = plan(b, [
      { action: "omit", targetId: "nope" },
      { action: "omit", targetId: "side" },
      { action: "omit", targetId: "s" },
      { action: "omit", targetId: "u1" },
      { action: "omit", targetId: "u3" },
      { action: "replace", targetId: "u3", content: "x" },
      { action: "omit", targetId: "a1" },
      { action: "restore", targetId: "r1" },
      { action: "omit", targetId: "k1" },
    ]);
    assert.deepEqual(
      p.refused.map((r) => `${r.action.targetId} ${r.code}: ${r.message}`),
      [
        "nope not-found: Entry nope not found",
        "side not-on-branch: Entry side is not on the active branch",
        "s not-editable: Entry s does not contribute editable model content",
        "u1 summarized: Entry u1 was summarized by compaction k1: it is no longer in the context, so an edit would have no effect.",
        "u3 duplicate: Entry u3 is named twice in one edit; give one action per entry.",
        "r1 conflict: Tool result r1 answers a call of assistant a1, which this edit omits; omit both or neither.",
        "k1 not-editable: Entry k1 does not contribute editable model content",
      ],
    );
    assert.deepEqual(summary(p), [
      "r1 omit results-of-omitted-call",
      "r2 omit results-of-omitted-call",
      "a1 omit requested",
      "u3 omit requested",
    ]);
    const again = plan(b.edit("e9", "u3", null), [{ action: "omit", targetId: "u3" }]);
    assert.deepEqual(again.edits, []);
    assert.deepEqual(again.unchanged, [{ action: "omit", targetId: "u3" }]);
    assert.equal(again.earliest, undefined);
    assert.equal(again.bytes, 0);
  });

  it("user and custom messages keep string content; the estimate is pi's pure estimate after any edit", () => {
    const b = turn().custom("m1", "a custom note");
    const p = plan(b, [
      { action: "replace", targetId: "u1", content: "q (edited)" },
      { action: "replace", targetId: "m1", content: "note" },
    ]);
    assert.deepEqual(
      p.edits.map((e) => e.replacement),
      [{ content: "q (edited)" }, { content: "note" }],
    );
    assert.equal(p.tokensAfter.lastUsageIndex, null);
    assert.deepEqual(p.earliest, { entryId: "u1", contextIndex: 1, messageIndex: 1, unchangedPrefixTokens: 18 });
  });
});
