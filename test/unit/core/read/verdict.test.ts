/**
 * Issue 16.1: a line is an entry for us exactly when `JSON.parse` (pi) accepts it.
 *
 * Realistic session lines (tool output with code, escapes, non-ASCII text, base64) of lengths on
 * both sides of the scanner threshold (8 kB), each corrupted at the byte level — an invalid
 * escape (`\x41`, `\u12G4`), one byte replaced by any value (control bytes, quotes, backslashes,
 * invalid UTF-8), a byte deleted or inserted — are judged by `parseLine` (the lazy scanner for
 * long lines, with both string finders: WebAssembly and JavaScript) and by `JSON.parse` of the
 * UTF-8 decoded bytes, as pi reads them. The verdicts must be equal on every line.
 *
 * `PI_CONTEXT_SCANNER_LINES` sets the number of lines (default 10 000; `npm run test:long`: 100 000).
 */

import { strict as assert } from "node:assert";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { isLongLine, parseLine } from "../../../../src/core/read/lines";
import { findStringEndJs, StringFinder, useWasmStringFinder } from "../../../../src/core/read/strscan";

const LINES = Number(process.env.PI_CONTEXT_SCANNER_LINES ?? 10_000);

const FRAGMENTS = [
  'const s = "path\\\\to\\\\file"; // Windows path\n',
  'console.log("café 日本語 😀");\n',
  '{"level":"info","msg":"request done","ms":12}\n',
  "\tat Object.<anonymous> (/home/dev/src/cart.ts:42:13)\n",
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
  "plain words of prose, nothing special here. ",
  "\u2028\u2029\ufeff\u007f",
  '\\u0041 literally, and a backslash \\ then quote "',
];

/** The recipe of a message entry whose text is built from fragments up to about `length` bytes. */
const lineArb = fc.record({
  length: fc.oneof(
    fc.integer({ min: 200, max: 8_500 }),
    fc.integer({ min: 7_900, max: 8_400 }),
    fc.integer({ min: 8_000, max: 40_000 }),
  ),
  picks: fc.array(fc.nat(FRAGMENTS.length - 1), { minLength: 1, maxLength: 6 }),
  withToolCall: fc.boolean(),
});

function buildLine({
  length,
  picks,
  withToolCall,
}: {
  length: number;
  picks: number[];
  withToolCall: boolean;
}): Buffer {
  const unit = picks.map((p) => FRAGMENTS[p]).join("");
  const text = unit.repeat(Math.max(1, Math.ceil(length / Math.max(1, Buffer.byteLength(unit)))));
  const content: unknown[] = [{ type: "text", text }];
  if (withToolCall)
    content.push({ type: "toolCall", id: "c1", name: "bash", arguments: { command: text.slice(0, 500) } });
  const entry = {
    type: "message",
    id: "a1b2c3d4",
    parentId: "00000000",
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content, isError: false, timestamp: 1 },
  };
  return Buffer.from(JSON.stringify(entry), "utf8");
}

type Mutation =
  | { kind: "replace"; at: number; byte: number }
  | { kind: "insert"; at: number; bytes: string }
  | { kind: "delete"; at: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant("replace" as const),
    at: fc.nat(),
    byte: fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x22, 0x5c, 0x00, 0x1f, 0x0a, 0x7b, 0x5d, 0xff, 0xc3),
    ),
  }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.constantFrom(
      "\\x41",
      "\\u12G4",
      "\\u12",
      "\\",
      '\\"',
      "\\\\",
      "\\'",
      "\\0",
      "\t",
      '"',
      ",",
      "\\U0041",
      "\\/",
    ),
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
);

function mutate(line: Buffer, m: Mutation): Buffer {
  const at = m.at % (line.length + 1);
  switch (m.kind) {
    case "replace": {
      const out = Buffer.from(line);
      if (at < out.length) out[at] = m.byte;
      return out;
    }
    case "insert":
      return Buffer.concat([line.subarray(0, at), Buffer.from(m.bytes, "latin1"), line.subarray(at)]);
    case "delete":
      return Buffer.concat([line.subarray(0, at), line.subarray(at + 1)]);
  }
}

function verdict(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

describe("the lazy scanner's verdict equals JSON.parse's (issue 16.1)", () => {
  after(() => useWasmStringFinder(true));

  for (const wasm of [true, false]) {
    it(`on ${LINES} corrupted session lines, both sides of the 8 kB threshold (${wasm ? "WebAssembly" : "JavaScript"} string finder)`, (t) => {
      if (wasm && !useWasmStringFinder(true)) return t.skip("no WebAssembly SIMD on this Node");
      if (!wasm) useWasmStringFinder(false);
      let long = 0;
      let short = 0;
      let rejected = 0;
      fc.assert(
        fc.property(lineArb, mutationArb, (recipe, m) => {
          const bytes = mutate(buildLine(recipe), m);
          const pi = verdict(() => JSON.parse(bytes.toString("utf8")));
          if (isLongLine(bytes.length)) long++;
          else short++;
          if (!pi) rejected++;
          assert.equal(
            verdict(() => parseLine(bytes, 0, bytes.length, false)),
            pi,
            "open (lazy measurement)",
          );
          assert.equal(
            verdict(() => parseLine(bytes, 0, bytes.length, true)),
            pi,
            "measured",
          );
        }),
        { numRuns: LINES },
      );
      // The sample really covers both sides and both verdicts.
      assert.ok(long > LINES / 10 && short > LINES / 10, `long lines: ${long}, short lines: ${short}`);
      assert.ok(rejected > LINES / 20, `rejected lines: ${rejected}`);
    });
  }

  it("the WebAssembly and JavaScript string finders agree on every string body", (t) => {
    if (!useWasmStringFinder(true)) return t.skip("no WebAssembly SIMD on this Node");
    const body = fc.array(
      fc.oneof(
        fc.constantFrom('"', "\\", "\\u", "u", "0", "F", "g", "\u0001", "\u001f", " ", "é", "n"),
        fc.string({ maxLength: 20 }),
      ),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(body, fc.nat(40), (parts, pad) => {
        const buf = Buffer.from(`${" ".repeat(pad)}"${parts.join("")}`, "utf8");
        const finder = new StringFinder(buf, 0, buf.length);
        assert.equal(finder.find(pad + 1), findStringEndJs(buf, pad + 1, buf.length));
      }),
      { numRuns: 5000 },
    );
  });
});
