import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  jsonLength,
  JsonScanError,
  LongString,
  scanJson,
  strLength,
  type ScannedValue,
} from "../../../../src/core/read/jsonscan";
import { toPlain } from "../../../../src/core/read/entries";
import { useWasmStringFinder } from "../../../../src/core/read/strscan";

/** Accept/reject and values exactly like JSON.parse; long strings measured exactly. */
function check(input: string | Buffer, longStringBytes: number): void {
  const buf = typeof input === "string" ? Buffer.from(input, "utf8") : input;
  // pi reads bytes and decodes them as UTF-8 before JSON.parse (lone surrogates become U+FFFD).
  const text = buf.toString("utf8");
  let expected: unknown;
  let parseError: unknown;
  try {
    expected = JSON.parse(text);
  } catch (error) {
    parseError = error;
  }
  let scanned: ScannedValue | undefined;
  let scanError: unknown;
  try {
    scanned = scanJson(buf, 0, buf.length, { longStringBytes });
  } catch (error) {
    scanError = error;
  }
  if (parseError) {
    assert.ok(
      scanError instanceof JsonScanError,
      `scanner accepted what JSON.parse rejects: ${JSON.stringify(text).slice(0, 200)}`,
    );
    return;
  }
  assert.equal(
    scanError,
    undefined,
    `scanner rejected valid JSON: ${JSON.stringify(text).slice(0, 200)} (${String(scanError)})`,
  );
  assert.deepEqual(toPlain(scanned), expected);
  assert.equal(jsonLength(scanned), JSON.stringify(expected).length, "jsonLength");
  walk(scanned, expected);
}

function walk(scanned: unknown, expected: unknown): void {
  if (scanned instanceof LongString) {
    assert.equal(typeof expected, "string");
    assert.equal(scanned.length, (expected as string).length, "UTF-16 length");
    assert.equal(scanned.jsonLength, JSON.stringify(expected).length, "stringify length");
    assert.equal(strLength(scanned), (expected as string).length);
    const head = scanned.head(7);
    assert.equal(head, (expected as string).slice(0, head.length));
    assert.ok(head.length >= Math.min(7, (expected as string).length) - 1);
    return;
  }
  if (Array.isArray(scanned)) scanned.forEach((v, i) => walk(v, (expected as unknown[])[i]));
  else if (scanned && typeof scanned === "object")
    for (const k of Object.keys(scanned))
      walk((scanned as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]);
}

const nastyChar = fc.constantFrom(
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "\u007f",
  "é",
  "€",
  "😀",
  "\ud800",
  "\udc00",
  "\u2028",
  "\ufeff",
  "a",
  " ",
);
const nastyString = fc
  .array(fc.oneof(nastyChar, fc.string({ unit: "binary", maxLength: 6 })), { maxLength: 40 })
  .map((parts) => parts.join(""));
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    nastyString,
    fc.string({ unit: "grapheme", maxLength: 300 }),
    fc.double({ noNaN: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(nastyString, tie("value"), { maxKeys: 5 }),
  ),
})).value;

describe("scanJson", () => {
  it("reads every JSON.stringify output exactly like JSON.parse (fast-check)", () => {
    fc.assert(
      fc.property(jsonValue, fc.constantFrom(0, 1, 8, 256), (value, threshold) => {
        check(JSON.stringify(value), threshold);
      }),
      { numRuns: 3000 },
    );
  });

  it("rejects exactly what JSON.parse rejects, for mutated JSON (fast-check)", () => {
    const mutation = fc.tuple(
      jsonValue,
      fc.nat(),
      fc.constantFrom(
        "\\",
        '"',
        "\t",
        "\u0001",
        ",",
        "}",
        "]",
        "x",
        "\\u12",
        "\\uZZZZ",
        "-",
        "0",
        ".",
        "e",
        " ",
        "\\q",
        "\n",
      ),
    );
    fc.assert(
      fc.property(mutation, fc.constantFrom(0, 4, 256), ([value, at, insert], threshold) => {
        const text = JSON.stringify(value);
        const i = text.length === 0 ? 0 : at % text.length;
        check(text.slice(0, i) + insert + text.slice(i), threshold);
        check(text.slice(0, i) + text.slice(i + 1), threshold);
      }),
      { numRuns: 3000 },
    );
  });

  it("firstLine: a long string's first line from its raw bytes equals entries.ts's firstLine of the decoded value (fast-check)", () => {
    // the preview rule (entries.ts firstLine): leading \s dropped, cut before \r?\n, ellipsis past max
    const reference = (text: string, max: number): string => {
      const trimmed = text.replace(/^\s+/, "");
      const nl = trimmed.search(/\r?\n/);
      const line = nl >= 0 ? trimmed.slice(0, nl) : trimmed;
      return line.length > max ? `${line.slice(0, max - 1)}…` : line;
    };
    const ellipsis = (line: string, max: number): string => (line.length > max ? `${line.slice(0, max - 1)}…` : line);
    const piece = fc.oneof(
      fc.constantFrom(" ", "\n", "\r\n", "\r", "\t", "\f", "\v", "\u00a0", "\u2028", "\ufeff", "\u0001"),
      fc.constantFrom('"', "\\", "/", "é", "€", "😀", "日本語", "x".repeat(50)),
      fc.string({ unit: "grapheme", maxLength: 30 }),
      fc.stringMatching(/^[ -~]{1,40}$/),
    );
    let fast = 0;
    let runs = 0;
    // JSON.stringify's encoding, or (other writers) some characters as \uXXXX and "/" as \/
    const encode = (text: string, mask: number): string => {
      if (mask === 0) return JSON.stringify(text);
      let out = '"';
      for (let k = 0; k < text.length; k++) {
        const c = text[k]!;
        const other = (mask >>> (k % 31)) & 1;
        if (other && c === "/") out += "\\/";
        else if (other) out += `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
        else out += JSON.stringify(c).slice(1, -1);
      }
      return `${out}"`;
    };
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }),
        fc.constantFrom(3, 10, 160),
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0x7fffffff })),
        (parts, max, mask) => {
          const text = parts.join("");
          const json = encode(text, mask);
          assert.equal(JSON.parse(json), text);
          const buf = Buffer.from(json, "utf8");
          const value = new LongString(buf, 1, buf.length - 1, buf.includes(0x5c));
          const line = value.firstLine(max);
          runs++;
          if (line === undefined) return;
          fast++;
          assert.equal(ellipsis(line, max), reference(text, max), json);
        },
      ),
      { numRuns: 8000 },
    );
    assert.ok(fast > runs / 4, `the raw-byte path took only ${fast} of ${runs} strings`);
    const value = (text: string): LongString => {
      const buf = Buffer.from(JSON.stringify(text), "utf8");
      return new LongString(buf, 1, buf.length - 1, buf.includes(0x5c));
    };
    assert.equal(value("  \n\tHello, wörld 😀\r\nsecond line").firstLine(160), "Hello, wörld 😀");
    assert.equal(value("a\rb\r\nc").firstLine(160), "a\rb"); // a lone \r stays in the line
    assert.equal(value("\u00a0lead").firstLine(160), undefined); // Unicode whitespace first
    assert.equal(value('say "hi"\\/\tthere\nthen').firstLine(160), 'say "hi"\\/\tthere'); // escapes decoded
    assert.equal(value('\t"quoted"').firstLine(160), '"quoted"'); // an escape right after leading whitespace
    assert.equal(value("x\u0001y").firstLine(160), undefined); // a \u escape: the decoder decides
    assert.ok(value(`x${"é".repeat(500)}`).firstLine(160)!.length > 160); // cut: enough units to tell
  });

  it("handles escapes that JSON.stringify does not produce (\\/, \\u escapes of ASCII, surrogate pairs as escapes)", () => {
    const samples = [
      '"a\\/b"',
      '"\\u0041\\u00e9\\u20ac"',
      '"x\\ud83d\\ude00y"',
      '"lone \\ud83d then raw"',
      '"\\udc00\\ud800"',
      '"\\ud800\\u0041"',
      '{"__proto__":{"a":1},"b":[1e400,-0,0.5e-3]}',
      '  {"k" :  [ true , false , null ] }  \r',
      '"' + "\\n".repeat(300) + '"',
      '"' + "é".repeat(300) + "\\\\" + "😀".repeat(100) + '"',
    ];
    for (const s of samples) for (const t of [0, 4, 256]) check(s, t);
  });

  it("measures a 1 MB string with escapes without decoding it for the length", () => {
    const big = 'line "quoted" \\ tab\t é 😀\n'.repeat(40000);
    const text = JSON.stringify({ content: [{ type: "text", text: big }] });
    const buf = Buffer.from(text);
    const v = scanJson(buf, 0, buf.length) as { content: { text: LongString }[] };
    assert.ok(v.content[0]!.text instanceof LongString);
    assert.equal(v.content[0]!.text.length, big.length);
    assert.equal(v.content[0]!.text.jsonLength, JSON.stringify(big).length);
  });

  /**
   * The WebAssembly string finder measures long strings while it validates them (UTF-8 byte
   * counts, escape overheads, what JSON.stringify re-escapes): byte-level bodies — escapes of every
   * kind, surrogate escapes paired and lone, raw multi-byte UTF-8, invalid UTF-8 bytes, escapes
   * across 16-byte block edges — must measure exactly like JSON.parse + JSON.stringify, with both
   * string finders.
   */
  it("measures byte-level string bodies exactly like JSON.parse, both string finders (fast-check)", () => {
    const ESCAPES = ["\\n", "\\/", '\\"', "\\\\", "\\t", "\\b", "\\f", "\\r"];
    const hex = (n: number): string => n.toString(16).padStart(4, "0");
    const utf8 = (s: string): Buffer => Buffer.from(s, "utf8");
    const piece: fc.Arbitrary<Buffer> = fc.oneof(
      fc.constantFrom(...ESCAPES).map(utf8),
      fc.integer({ min: 0, max: 0x1f }).map((n) => utf8(`\\u${hex(n)}`)),
      fc.constantFrom("\\u0022", "\\u005C", "\\u002f", "\\u0041", "\\u2028", "\\u00e9", "\\uFFFF").map(utf8),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((n) => utf8(`\\u${hex(n)}`)),
      fc.constantFrom("\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\ud800\\u0041", "\\udc00\\ud800").map(utf8),
      fc.constantFrom("é", "€", "😀", "\u2028", "\u007f", "日本語").map(utf8),
      fc.stringMatching(/^[ -!#-[\]-~]{1,20}$/).map(utf8),
      // invalid UTF-8: a lone lead or continuation byte, an encoded surrogate, a cut 4-byte sequence, a 5-byte lead
      fc.constantFrom("ff", "80", "c3", "eda080", "f09f98", "f888808080").map((h) => Buffer.from(h, "hex")),
    );
    const body = fc.array(piece, { minLength: 1, maxLength: 80 });
    try {
      for (const wasm of [true, false]) {
        useWasmStringFinder(wasm);
        fc.assert(
          fc.property(body, fc.nat(31), fc.boolean(), (parts, pad, bare) => {
            // a bare string ends the line at its closing quote: its last bytes take the byte-by-byte tail
            const line = bare
              ? Buffer.concat([utf8(`${" ".repeat(pad)}"`), ...parts, utf8('"')])
              : Buffer.concat([utf8(`{"${"p".repeat(pad)}":"`), ...parts, utf8('","n":1}')]);
            for (const t of [0, 16, 256]) check(line, t);
          }),
          { numRuns: 3000 },
        );
      }
    } finally {
      useWasmStringFinder(true);
    }
  });
});
