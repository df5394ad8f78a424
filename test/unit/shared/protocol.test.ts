/** The panel protocol's validator: what the host accepts from the webview. */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { MAX_FIELD_LENGTH, parseWebviewMessage } from "../../../src/shared/protocol";

describe("parseWebviewMessage", () => {
  it("accepts every command with exactly its fields", () => {
    const valid: unknown[] = [
      { type: "ready" },
      { type: "openFile", path: "/w/a.ts", preview: true },
      { type: "openFile", path: "/w/a.ts", preview: false, toSide: true },
      { type: "openGitDiff", path: "/w/a.ts" },
      { type: "openDiff", fromId: "a1", toId: "b2" },
      { type: "copyPath", path: "/w/a.ts" },
      { type: "revealEntry", entryId: "abcd1234" },
      { type: "requestCategory", category: "toolResults" },
      { type: "compact" },
      { type: "focusTree" },
      { type: "selectSession" },
      { type: "refresh" },
      { type: "previewTrim", requestId: 0, items: [{ entryId: "r1", choice: "default" }] },
      {
        type: "applyTrim",
        requestId: 7,
        items: [
          { entryId: "r1", choice: "note", note: "a note" },
          { entryId: "u2", choice: "strip-images" },
          { entryId: "a1", choice: "restore" },
          { entryId: "a2", choice: "remove" },
        ],
      },
      { type: "openTrim" },
    ];
    for (const m of valid) {
      const r = parseWebviewMessage(m);
      assert.ok(r.ok, `${JSON.stringify(m)}: ${r.ok ? "" : r.error}`);
      assert.equal(r.message, m);
    }
  });

  it("rejects anything else, with a reason", () => {
    const cases: [unknown, RegExp][] = [
      [null, /not an object/],
      ["ready", /not an object/],
      [[{ type: "ready" }], /not an object/],
      [{}, /unknown type/],
      [{ type: "eval", code: "x" }, /unknown type/],
      [{ type: "__proto__" }, /unknown type/],
      [{ type: "toString" }, /unknown type/],
      [{ type: "ready", extra: 1 }, /unexpected field "extra"/],
      [{ type: "openFile", path: "/a" }, /preview must be a boolean/],
      [{ type: "openFile", path: "", preview: true }, /path must be a non-empty string/],
      [{ type: "openFile", path: 42, preview: true }, /path must be a non-empty string/],
      [{ type: "openFile", path: "x".repeat(MAX_FIELD_LENGTH + 1), preview: true }, /path must be a non-empty string/],
      [{ type: "openFile", path: "/a", preview: true, toSide: "yes" }, /toSide must be a boolean/],
      [{ type: "openDiff", fromId: "a" }, /toId must be a non-empty string/],
      [{ type: "requestCategory", category: "constructor" }, /category id/],
      [{ type: "requestCategory", category: "free " }, /category id/],
      [{ type: "previewTrim", requestId: 1, items: [] }, /items must be a list of 1 to 1000 items/],
      [{ type: "previewTrim", requestId: 1, items: "r1" }, /items must be a list/],
      [
        { type: "previewTrim", requestId: -1, items: [{ entryId: "r1", choice: "default" }] },
        /requestId must be a whole number/,
      ],
      [
        { type: "previewTrim", requestId: 1.5, items: [{ entryId: "r1", choice: "default" }] },
        /requestId must be a whole number/,
      ],
      [
        { type: "previewTrim", requestId: 1, items: [{ entryId: "r1", choice: "delete" }] },
        /items\[0\]\.choice must be one of/,
      ],
      [
        { type: "previewTrim", requestId: 1, items: [{ entryId: "", choice: "default" }] },
        /items\[0\]\.entryId must be a non-empty string/,
      ],
      [
        { type: "previewTrim", requestId: 1, items: [{ entryId: "r1", choice: "note", note: 5 }] },
        /items\[0\]\.note must be a string/,
      ],
      [
        { type: "previewTrim", requestId: 1, items: [{ entryId: "r1", choice: "note", note: "x".repeat(100_001) }] },
        /note must be a string of at most 100000/,
      ],
      [
        { type: "previewTrim", requestId: 1, items: [{ entryId: "r1", choice: "default", content: [] }] },
        /items\[0\]: unexpected field "content"/,
      ],
      [{ type: "previewTrim", requestId: 1, items: [null] }, /items\[0\] is not an object/],
      [
        {
          type: "applyTrim",
          requestId: 1,
          items: Array.from({ length: 1001 }, () => ({ entryId: "r1", choice: "default" })),
        },
        /1 to 1000 items/,
      ],
      [{ type: "openTrim", items: [] }, /unexpected field "items"/],
    ];
    for (const [m, re] of cases) {
      const r = parseWebviewMessage(m);
      assert.equal(r.ok, false, JSON.stringify(m));
      if (!r.ok) assert.match(r.error, re, JSON.stringify(m));
    }
  });
});
