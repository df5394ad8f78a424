import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import { findStringEndJs, STRING_INVALID, StringFinder, useWasmStringFinder } from "../../../../src/core/read/strscan";
import { stringFinderModule } from "../../../../src/core/read/strscanAsm";
import { STRING_FINDER_WASM_BASE64 } from "../../../../src/core/read/strscanWasm";

describe("the string finder's WebAssembly module", () => {
  it("the shipped bytes (strscanWasm.ts) are exactly what the assembler in strscan.ts produces", () => {
    const assembled = Buffer.from(stringFinderModule());
    assert.equal(
      Buffer.from(STRING_FINDER_WASM_BASE64, "base64").toString("hex"),
      assembled.toString("hex"),
      "out of date: npm run compile && node scripts/generate-string-finder.mjs",
    );
  });

  it("loads from the shipped bytes (WebAssembly SIMD is there in this Node)", () => {
    assert.equal(useWasmStringFinder(true), true);
  });
});

describe("the string finder's 64-byte step (escapes found for four blocks at once)", () => {
  /**
   * Bodies dense in what the 64-byte step must get exactly right: runs of backslashes of every
   * length (odd runs escape the next byte, even runs do not), the byte after them valid or not,
   * raw quotes and control bytes, `\u` escapes, multi-byte UTF-8 — at every offset modulo 64, so
   * escapes straddle lane 63. The WebAssembly result (closing quote, escape flag, measurement)
   * must equal the JavaScript reference and JSON.parse + JSON.stringify.
   */
  it("finds, validates and measures exactly like the reference and JSON.parse (fast-check)", () => {
    const utf8 = (s: string): Buffer => Buffer.from(s, "utf8");
    const piece: fc.Arbitrary<Buffer> = fc.oneof(
      { weight: 6, arbitrary: fc.stringMatching(/^[ -!#-[\]-~]{1,40}$/).map(utf8) },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.integer({ min: 1, max: 6 }),
            fc.constantFrom("n", '"', "/", "t", "u0041", "ud83d", "x", "\n", "\u001f", "é", "a"),
          )
          .map(([n, after]) => utf8("\\".repeat(n) + after)),
      },
      { weight: 1, arbitrary: fc.constantFrom('"', "\u0000", "\t", "\u007f").map(utf8) },
      { weight: 2, arbitrary: fc.constantFrom("é", "€", "😀", "日本語").map(utf8) },
      { weight: 1, arbitrary: fc.constantFrom("ff", "80", "eda080").map((h) => Buffer.from(h, "hex")) },
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), fc.nat(63), (parts, pad) => {
        const line = Buffer.concat([utf8(`${"p".repeat(pad)}"`), ...parts, utf8('"}')]);
        const s = pad + 1;
        const reference = findStringEndJs(line, s, line.length);
        useWasmStringFinder(true);
        const finder = new StringFinder(line, 0, line.length);
        const found = finder.find(s);
        assert.equal(found, reference, `find: ${JSON.stringify(line.toString("latin1"))}`);
        if (found === STRING_INVALID) return;
        const q = found >>> 1;
        const measured = finder.measure(s, q);
        const text = line.toString("utf8", s - 1, q + 1);
        let value: string;
        try {
          value = JSON.parse(text) as string;
        } catch {
          assert.fail(`the finder accepted what JSON.parse rejects: ${JSON.stringify(text)}`);
        }
        if (measured === undefined) return; // not valid UTF-8: measured later from the decoded value
        assert.deepEqual(measured, { units: value.length, jsonUnits: JSON.stringify(value).length });
      }),
      { numRuns: 5000 },
    );
  });
});
