/**
 * pi's `appendContextEdit` rules (core/rules/contextEdit.ts): which targets pi accepts (checks in
 * pi's order, pi's messages), write-time normalisation, the entry's key order, chained batches,
 * and the note that replaces a removed tool output. Checked against pi itself in
 * test/conformance/context-edit.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { withAppended } from "../../../../src/core/read/overlay";
import { buildProjection } from "../../../../src/core/rules/context";
import {
  buildContextEditEntry,
  chainContextEdits,
  checkContextEditTarget,
  editableRole,
  isValidReplacement,
  normalizeReplacement,
  projectedContent,
  resultNote,
  toolCallSubject,
} from "../../../../src/core/rules/contextEdit";
import { SessionBuilder } from "../../../support/session-builder";

function session() {
  const b = new SessionBuilder()
    .system("s1")
    .user("u1", "question")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", arguments: { path: "src/a.ts" } }] })
    .result("r1", "c1", "file text")
    .bash("x1", "ls", "a b")
    .custom("m1", "note")
    .edit("e1", "u1", { content: "question (short)" })
    .model("mc", "p", "m")
    .user("side", "other branch", "u1")
    .user("u2", "follow-up", "mc");
  return SessionFile.fromBytes(b.jsonl());
}

describe("context edit targets (pi's appendContextEdit checks)", () => {
  it("editable: user/assistant/toolResult messages and custom_message entries; nothing else", () => {
    const s = session();
    const roles = Object.fromEntries(s.records.map((r) => [r.id, editableRole(r) ?? null]));
    assert.deepEqual(roles, {
      s1: null,
      u1: "user",
      a1: "assistant",
      r1: "toolResult",
      x1: null,
      m1: "custom",
      e1: null,
      mc: null,
      side: "user",
      u2: "user",
    });
  });

  it("checks in pi's order with pi's messages", () => {
    const s = session();
    const path = new Set(buildProjection(s).path.map((r) => r.id));
    const check = (id: string, replacement: unknown) => {
      const c = checkContextEditTarget(s, path, id, replacement);
      return c.ok ? `ok ${c.role}` : `${c.code}: ${c.message}`;
    };
    // the replacement is checked first, even for an unknown id
    assert.equal(
      check("zz", { text: "x" }),
      "invalid-replacement: Context edit replacement must be null or contain string/array content",
    );
    assert.equal(
      check("zz", undefined),
      "invalid-replacement: Context edit replacement must be null or contain string/array content",
    );
    assert.equal(
      check("zz", { content: 5 }),
      "invalid-replacement: Context edit replacement must be null or contain string/array content",
    );
    assert.equal(check("zz", null), "not-found: Entry zz not found");
    assert.equal(check("side", null), "not-on-branch: Entry side is not on the active branch");
    assert.equal(check("s1", null), "not-editable: Entry s1 does not contribute editable model content");
    assert.equal(check("x1", { content: "x" }), "not-editable: Entry x1 does not contribute editable model content");
    assert.equal(check("e1", null), "not-editable: Entry e1 does not contribute editable model content");
    assert.equal(check("mc", null), "not-editable: Entry mc does not contribute editable model content");
    assert.equal(check("a1", { content: [] }), "ok assistant");
    assert.equal(check("m1", { content: "x" }), "ok custom");
    assert.equal(isValidReplacement(null), true);
    assert.equal(isValidReplacement([]), false);
  });
});

describe("context edit entries as pi writes them", () => {
  it("normalises a string for assistant/toolResult to one text block, keeps strings for user/custom", () => {
    assert.deepEqual(normalizeReplacement("assistant", { content: "short" }), {
      content: [{ type: "text", text: "short" }],
    });
    assert.deepEqual(normalizeReplacement("toolResult", { content: "" }), { content: [{ type: "text", text: "" }] });
    assert.deepEqual(normalizeReplacement("user", { content: "READ a.txt (edited)" }), {
      content: "READ a.txt (edited)",
    });
    assert.deepEqual(normalizeReplacement("custom", { content: "x" }), { content: "x" });
    const blocks = [{ type: "text" as const, text: "t" }];
    assert.deepEqual(normalizeReplacement("toolResult", { content: blocks }), { content: blocks });
    assert.equal(normalizeReplacement("user", null), null);
    assert.deepEqual(projectedContent("assistant", "s"), [{ type: "text", text: "s" }]);
    assert.equal(projectedContent("custom", "s"), "s");
  });

  it("the line pi writes: type, id, parentId, timestamp, targetId, replacement", () => {
    const entry = buildContextEditEntry({
      id: "b6d69e71",
      parentId: "bfc86687",
      timestamp: "2026-12-01T08:33:57.159Z",
      targetId: "f47e481f",
      replacement: { content: [{ type: "text", text: "[omitted by pi-context]" }] },
    });
    assert.equal(
      JSON.stringify(entry),
      '{"type":"context_edit","id":"b6d69e71","parentId":"bfc86687","timestamp":"2026-12-01T08:33:57.159Z","targetId":"f47e481f","replacement":{"content":[{"type":"text","text":"[omitted by pi-context]"}]}}',
    );
  });

  it("a batch is chained like repeated appendContextEdit calls: first off the leaf, then each off the previous", () => {
    let n = 0;
    const entries = chainContextEdits(
      [
        { type: "context_edit", targetId: "r1", replacement: null },
        { type: "context_edit", targetId: "a1", replacement: { content: [] } },
        { type: "context_edit", targetId: "u1", replacement: { content: "q" } },
      ],
      {
        leafId: "u2",
        newId: (reserved) => {
          const id = `0000000${n++}`;
          assert.ok(!reserved.has(id));
          return id;
        },
        timestamp: "2026-12-01T00:00:00.000Z",
      },
    );
    assert.deepEqual(
      entries.map((e) => [e.id, e.parentId, e.targetId]),
      [
        ["00000000", "u2", "r1"],
        ["00000001", "00000000", "a1"],
        ["00000002", "00000001", "u1"],
      ],
    );
    // read back (overlay), the last edit is the leaf and every target shows its edit
    const s = session();
    const view = withAppended(s, entries);
    assert.equal(view.leafId, "00000002");
    assert.deepEqual(view.readEntry(view.byId.get("00000001")!), entries[1]);
  });
});

describe("the note that replaces a removed tool output", () => {
  it("tool, what it worked on, pi's size estimate", () => {
    assert.equal(
      resultNote({ toolName: "read", subject: "src/a.ts", tokens: 12345 }),
      "[pi-context: output of read src/a.ts removed — 12,345 tokens]",
    );
    assert.equal(resultNote({ toolName: "bash", tokens: 7 }), "[pi-context: output of bash removed — 7 tokens]");
    assert.equal(resultNote({ tokens: 1000 }), "[pi-context: output of tool removed — 1,000 tokens]");
  });

  it("subject: path, file_path, command, pattern…, whitespace collapsed, 80 characters at most", () => {
    assert.equal(toolCallSubject({ path: "src/a.ts", command: "x" }), "src/a.ts");
    assert.equal(toolCallSubject({ file_path: "/abs/b.ts" }), "/abs/b.ts");
    assert.equal(toolCallSubject({ command: "ls -la\n  && echo   done" }), "ls -la && echo done");
    assert.equal(toolCallSubject({ path: 42, pattern: "TODO" }), "TODO");
    assert.equal(toolCallSubject({ command: "x".repeat(100) }), `${"x".repeat(79)}…`);
    assert.equal(toolCallSubject({ other: "y" }), undefined);
    assert.equal(toolCallSubject(undefined), undefined);
    assert.equal(toolCallSubject({ path: "   " }), undefined);
  });
});
