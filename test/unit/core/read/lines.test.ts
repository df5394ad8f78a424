/** Splitting and parsing session lines as pi does (`src/core/read/lines.ts`). */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import { decodeLine, isBlank, LineSplitter, parseLine } from "../../../../src/core/read/lines";

/** Push `chunks` through a splitter; the lines it hands out with their file offsets, then the remainder. */
function split(chunks: string[], from = 0): { lines: [string, number][]; rest?: [string, number] } {
  const splitter = new LineSplitter(from);
  const lines: [string, number][] = [];
  for (const c of chunks)
    splitter.push(Buffer.from(c), (buf, start, end, offset) => lines.push([buf.toString("utf8", start, end), offset]));
  const r = splitter.remainder();
  return r ? { lines, rest: [r.buf.toString("utf8"), r.offset] } : { lines };
}

describe("lines", () => {
  it("splits on \\n only, with file offsets, across chunk borders, keeping the unterminated remainder", () => {
    assert.deepEqual(split(["a\r\nbb\n", "c"]), {
      lines: [
        ["a\r", 0],
        ["bb", 3],
      ],
      rest: ["c", 6],
    });
    assert.deepEqual(split(["ab", "c", "d\ne"], 10), { lines: [["abcd", 10]], rest: ["e", 15] });
    assert.deepEqual(split(["x\n"]), { lines: [["x", 0]] });
  });

  it("treats JavaScript trim() whitespace (BOM, NBSP included) as blank", () => {
    const blank = (s: string) => {
      const b = Buffer.from(s);
      return isBlank(b, 0, b.length);
    };
    assert.equal(blank(" \t\r"), true);
    assert.equal(blank("\uFEFF\u00A0 "), true);
    assert.equal(blank(" x"), false);
    assert.equal(blank("\u00A0é"), false);
  });

  it("decodes a line exactly as Buffer.toString('utf8'), invalid UTF-8 included (fast-check)", () => {
    const text = fc.array(
      fc.oneof(
        fc.string({ unit: "grapheme", maxLength: 20 }),
        fc.string({ unit: "binary", maxLength: 8 }),
        fc.constantFrom("é", "日本語", "😀", '"', "\\", "\n", "\ufeff"),
      ),
      { maxLength: 12 },
    );
    const junk = fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(text, fc.option(fc.tuple(fc.nat(), junk)), fc.nat(3), (parts, corrupt, pad) => {
        let bytes = Buffer.from(JSON.stringify({ text: parts.join("") }));
        if (corrupt) {
          const [at, raw] = corrupt;
          const i = at % (bytes.length + 1);
          bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from(raw), bytes.subarray(i)]);
        }
        const buf = Buffer.concat([Buffer.alloc(pad, 0x78), bytes, Buffer.alloc(pad, 0x78)]);
        const expected = bytes.toString("utf8");
        assert.equal(decodeLine(buf, pad, pad + bytes.length), expected);
        let value: unknown;
        try {
          value = JSON.parse(expected);
        } catch {
          assert.throws(() => parseLine(buf, pad, pad + bytes.length), SyntaxError);
          return;
        }
        assert.deepEqual(parseLine(buf, pad, pad + bytes.length), value);
      }),
      { numRuns: 3000 },
    );
  });

  it("parses a line as JSON.parse of its UTF-8 bytes, and rejects what JSON.parse rejects", () => {
    const b = Buffer.from('xx{"a":"é\\u00e9"}yy');
    assert.deepEqual(parseLine(b, 2, b.length - 2), { a: "éé" });
    assert.throws(() => parseLine(b, 0, b.length), SyntaxError);
    assert.throws(() => parseLine(Buffer.from('{"a":"\\x41"}'), 0, 12), SyntaxError);
  });
});
