/** Records built from parsed lines (`src/core/read/entries.ts`): previews and measured lengths. */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import { buildRecord, PREVIEW_LENGTH, type EntryRecord } from "../../../../src/core/read/entries";
import { estimateTokens } from "../../../../src/core/read/estimate";

const at = { index: 0, line: 2, offset: 0, byteLength: 0 };

function record(message: object): EntryRecord {
  const r = buildRecord({ type: "message", id: "a1", parentId: null, timestamp: "t", message }, at);
  if (!("id" in r)) assert.fail(r.message);
  return r;
}

/** The preview rule on the whole text: leading `\s` dropped, cut before `\r?\n`, an ellipsis past the limit. */
function referencePreview(text: string): string {
  const trimmed = text.replace(/^\s+/, "");
  const nl = trimmed.search(/\r?\n/);
  const line = nl >= 0 ? trimmed.slice(0, nl) : trimmed;
  return line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH - 1)}…` : line;
}

const nest = (depth: number): string => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("buildRecord", () => {
  it("previews a text's first line exactly as the rule on the whole text, however long (fast-check)", () => {
    const piece = fc.oneof(
      fc.constantFrom(" ", "\n", "\r\n", "\r", "\t", "\v", "\u00a0", "\u2028", "\ufeff", "\u3000"),
      fc.constantFrom("é", "😀", "日本語", "x".repeat(50), "y".repeat(157)),
      fc.string({ unit: "grapheme", maxLength: 30 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join("");
        const expected = text ? referencePreview(text) : undefined;
        assert.equal(record({ role: "user", content: text }).preview, expected);
        assert.equal(record({ role: "user", content: [{ type: "text", text }] }).preview, expected);
      }),
      { numRuns: 3000 },
    );
  });

  it("cuts a preview right at the limit, also when the line ends in \\r\\n just past it", () => {
    const x = (n: number): string => "x".repeat(n);
    for (const [text, preview] of [
      [`  ${x(160)}\r\nmore`, x(160)],
      [`${x(159)}\r\n`, x(159)],
      [`${x(161)}\r\n`, `${x(159)}…`],
      [`${x(161)}\n`, `${x(159)}…`],
      [`\n\t ${x(100_000)}`, `${x(159)}…`],
    ])
      assert.equal(record({ role: "user", content: text }).preview, preview, JSON.stringify(text.slice(0, 200)));
  });

  it("counts pi's characters for tool-call arguments and tools nested deeper than JSON.stringify can go", () => {
    const depth = 100_000;
    assert.throws(() => JSON.stringify(JSON.parse(nest(depth))), RangeError);
    const args = JSON.parse(`{"a":${nest(depth)}}`) as unknown;
    const assistant = record({
      role: "assistant",
      content: [{ type: "toolCall", id: "c", name: "bash", arguments: args }],
      stopReason: "toolUse",
    });
    // {"a": + the nested array (2 × depth + 1) + }
    assert.equal(assistant.chars.toolCalls, "bash".length + 2 * depth + 7);
    assert.equal(assistant.tokens, Math.ceil((4 + 2 * depth + 7) / 4));
    const system = record({ role: "system", content: "sys", toolsAdded: JSON.parse(nest(depth)) as unknown });
    assert.equal(system.systemTokens, Math.ceil((3 + 2 * depth + 1) / 4));
  });

  it("measures long non-ASCII texts by their UTF-16 length, as pi's estimateTokens", () => {
    const big = 'x"y\\z é 😀\u2028\n'.repeat(20_000);
    const message = { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text: big }] };
    const r = record(JSON.parse(JSON.stringify(message)) as object);
    assert.equal(r.chars.text, big.length);
    assert.equal(r.tokens, estimateTokens(message));
    assert.equal(r.preview, 'x"y\\z é 😀\u2028');
  });
});
