/**
 * pi's `/fork` and `/clone` rules on entries (src/core/rules/fork.ts): the position rule, the
 * editor text, pi's label map, `createBranchedSession`'s path (labels out, re-chained, a
 * compaction's `firstKeptEntryId` moved off a dropped label, labels re-created at the end), the
 * conversation rule, pi's session id and file name. pi itself judges the whole in
 * test/conformance/fork.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  branchedEntries,
  forkHeader,
  forkMessageText,
  forkTarget,
  ForkTargetError,
  hasConversation,
  labelsOf,
  sessionFileName,
  sessionIdV7,
  type RawEntry,
} from "../../../../src/core/rules/fork";

const user = { id: "u2", type: "message", role: "user", parentId: "a1" };
const assistant = { id: "a1", type: "message", role: "assistant", parentId: "u1" };

describe("forkTarget (pi's AgentSessionRuntime.fork position rule)", () => {
  it("forks a user message before it, any other entry at it", () => {
    assert.deepEqual(forkTarget(user), { entryId: "u2", position: "before", leafId: "a1" });
    assert.deepEqual(forkTarget(assistant), { entryId: "a1", position: "at", leafId: "a1" });
    assert.deepEqual(forkTarget({ id: "c", type: "compaction", parentId: "x" }), {
      entryId: "c",
      position: "at",
      leafId: "c",
    });
    assert.deepEqual(forkTarget(user, "at"), { entryId: "u2", position: "at", leafId: "u2" });
    assert.deepEqual(forkTarget({ ...user, parentId: null }), { entryId: "u2", position: "before", leafId: null });
  });
  it("refuses in pi's words: an unknown entry, `before` on anything but a user message", () => {
    assert.throws(() => forkTarget(undefined), new ForkTargetError("Invalid entry ID for forking"));
    assert.throws(() => forkTarget(assistant, "before"), /^ForkTargetError: Invalid entry ID for forking$/);
    assert.throws(
      () => forkTarget({ id: "cm", type: "custom_message", parentId: "a1" }, "before"),
      /Invalid entry ID for forking/,
    );
  });
});

describe("forkMessageText (pi's extractUserMessageText)", () => {
  it("a string as is, text parts joined without separator, images and other parts left out", () => {
    assert.equal(forkMessageText({ message: { role: "user", content: "fix the  bug\n" } }), "fix the  bug\n");
    assert.equal(
      forkMessageText({
        message: {
          role: "user",
          content: [
            { type: "text", text: "one" },
            { type: "image", data: "AAAA", mimeType: "image/png" },
            { type: "text", text: " two" },
            { type: "text", text: 5 },
            null,
          ],
        },
      }),
      "one two",
    );
    assert.equal(forkMessageText({ message: { role: "user", content: { not: "an array" } } }), "");
    assert.equal(forkMessageText({ type: "message" }), "");
  });
});

describe("labelsOf (pi's _buildIndex labels)", () => {
  it("sets on a truthy label, clears on anything else, in pi's map order", () => {
    const labels = labelsOf([
      { type: "label", targetId: "a", label: "first", timestamp: "t1" },
      { type: "label", targetId: "b", label: "second", timestamp: "t2" },
      { type: "label", targetId: "a", label: "", timestamp: "t3" },
      { type: "label", targetId: "a", label: "again", timestamp: "t4" },
      { type: "label", targetId: "b", label: "renamed", timestamp: "t5" },
      { type: "label", targetId: "c", label: 7, timestamp: "t6" },
      { type: "label", targetId: "d", timestamp: "t7" },
    ]);
    // b was never cleared: it keeps its place; a was cleared and set again: it moved to the end
    assert.deepEqual(
      [...labels],
      [
        ["b", { label: "renamed", timestamp: "t5" }],
        ["a", { label: "again", timestamp: "t4" }],
        ["c", { label: 7, timestamp: "t6" }],
      ],
    );
  });
});

/** `{type, id, parentId, timestamp, ...}` as pi writes an entry. */
function e(type: string, id: string, parentId: string | null, fields: Record<string, unknown> = {}): RawEntry {
  return { type, id, parentId, timestamp: `2026-01-01T00:00:${id.length}0.000Z`, ...fields };
}

describe("branchedEntries (pi's createBranchedSession)", () => {
  let n = 0;
  const newId = (taken: ReadonlySet<string>) => {
    let id: string;
    do id = `new${n++}`;
    while (taken.has(id));
    return id;
  };

  it("drops the path's labels, re-chains what followed them, moves firstKeptEntryId off a dropped label", () => {
    const path = [
      e("message", "u1", null, { message: { role: "user", content: "hi" } }),
      e("label", "L1", "u1", { targetId: "u1", label: "start" }),
      e("message", "a1", "L1", { message: { role: "assistant", content: [] } }),
      e("label", "L2", "a1", { targetId: "a1", label: "x" }),
      e("label", "L3", "L2", { targetId: "a1", label: "" }),
      e("compaction", "c1", "L3", { summary: "s", firstKeptEntryId: "L2", tokensBefore: 5 }),
      e("compaction", "c2", "c1", { summary: "s", firstKeptEntryId: "c2", tokensBefore: 6 }),
      e("compaction", "c3", "c2", { summary: "s", firstKeptEntryId: "elsewhere", tokensBefore: 7 }),
    ];
    const labels = labelsOf(path.filter((x) => x.type === "label"));
    n = 0;
    const built = { entries: [...branchedEntries(path, labels, newId)] };
    assert.deepEqual(
      built.entries.map((x) => [x.type, x.id, x.parentId]),
      [
        ["message", "u1", null],
        ["message", "a1", "u1"],
        ["compaction", "c1", "a1"],
        ["compaction", "c2", "c1"],
        ["compaction", "c3", "c2"],
        ["label", "new0", "c3"],
      ],
    );
    assert.equal(built.entries[2]!.firstKeptEntryId, "c1", "L2 and L3 were followed by c1 itself");
    assert.equal(built.entries[3]!.firstKeptEntryId, "c2");
    assert.equal(built.entries[4]!.firstKeptEntryId, "elsewhere", "an id off the path stays");
    // the label of u1 (the one of a1 was cleared), with its own time, keys in pi's order
    assert.equal(
      JSON.stringify(built.entries[5]),
      JSON.stringify({
        type: "label",
        id: "new0",
        parentId: "c3",
        timestamp: path[1]!.timestamp,
        targetId: "u1",
        label: "start",
      }),
    );
    // the entries keep their own key order (parentId replaced where it was)
    assert.equal(
      JSON.stringify(built.entries[1]),
      JSON.stringify({ ...path[2], parentId: "u1" }),
      "same keys, same order, only the parent changed",
    );
    assert.deepEqual(Object.keys(built.entries[2]!), Object.keys(path[5]!));
    // the input is not changed
    assert.equal(path[2]!.parentId, "L1");
    assert.equal(path[5]!.firstKeptEntryId, "L2");
  });

  it("re-creates only the labels of path entries, in the session's label order, chained after the path", () => {
    const path = [
      e("message", "u1", null, { message: { role: "user", content: "hi" } }),
      e("message", "a1", "u1", { message: { role: "assistant", content: [] } }),
    ];
    const labels = labelsOf([
      { type: "label", targetId: "a1", label: "answer", timestamp: "T1" },
      { type: "label", targetId: "other-branch", label: "no", timestamp: "T2" },
      { type: "label", targetId: "u1", label: "question", timestamp: "T3" },
    ]);
    n = 0;
    const built = { entries: [...branchedEntries(path, labels, newId)] };
    assert.deepEqual(
      built.entries.slice(2).map((x) => [x.id, x.parentId, x.targetId, x.label, x.timestamp]),
      [
        ["new0", "a1", "a1", "answer", "T1"],
        ["new1", "new0", "u1", "question", "T3"],
      ],
    );
  });

  it("reads the path lazily: one entry at a time, as the writer asks", () => {
    let read = 0;
    function* path(): Generator<RawEntry> {
      for (const id of ["u1", "a1", "u2"]) {
        read++;
        yield e("message", id, null, { message: { role: "user", content: id } });
      }
    }
    const it = branchedEntries(path(), new Map(), newId);
    assert.equal(it.next().value?.id, "u1");
    assert.equal(read, 1);
  });

  it("never reuses a path id for a label", () => {
    const path = [e("message", "new0", null, { message: { role: "user", content: "hi" } })];
    n = 0;
    const built = {
      entries: [...branchedEntries(path, labelsOf([{ targetId: "new0", label: "l", timestamp: "T" }]), newId)],
    };
    assert.equal(built.entries[1]!.id, "new1");
  });
});

describe("hasConversation (pi's _hasConversation)", () => {
  it("true once a user or assistant message is there", () => {
    assert.equal(
      hasConversation([
        { type: "model_change" },
        { type: "message", role: "system" },
        { type: "custom_message" },
        { type: "label" },
      ]),
      false,
    );
    assert.equal(hasConversation([{ type: "message", role: "assistant" }]), true);
    assert.equal(hasConversation([{ type: "message", role: "user" }]), true);
    assert.equal(hasConversation([{ type: "custom", role: "user" }]), false);
  });
});

describe("pi's session id and file name", () => {
  it("sessionIdV7: a UUIDv7 whose first 48 bits are the time", () => {
    const now = Date.parse("2026-12-01T10:00:00.123Z");
    const id = sessionIdV7(now, Buffer.alloc(16, 0xff));
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(parseInt(id.replace(/-/g, "").slice(0, 12), 16), now);
    assert.equal(
      id,
      `${now
        .toString(16)
        .padStart(12, "0")
        .replace(/^(.{8})(.{4})$/, "$1-$2")}-7fff-bfff-ffffffffffff`,
    );
    assert.ok(sessionIdV7(now + 1) > sessionIdV7(now), "time-ordered");
    assert.notEqual(sessionIdV7(now), sessionIdV7(now));
  });
  it("sessionFileName: the ISO time with : and . as -, then the id", () => {
    assert.equal(
      sessionFileName("2026-12-01T10:00:00.123Z", "0190f1e2-aaaa-7000-8000-000000000000"),
      "2026-12-01T10-00-00-123Z_0190f1e2-aaaa-7000-8000-000000000000.jsonl",
    );
  });
  it("forkHeader: pi's key order", () => {
    assert.equal(
      JSON.stringify(forkHeader("id", "T", "/cwd", "/s.jsonl")),
      '{"type":"session","version":3,"id":"id","timestamp":"T","cwd":"/cwd","parentSession":"/s.jsonl"}',
    );
  });
});
