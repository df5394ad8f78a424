/**
 * Finding the end of a JSON string and validating it in one pass, at memory speed.
 *
 * The long strings of a session line (tool output, file contents, base64 screenshots) are most of
 * its bytes. For {@link scanJson} to accept exactly what `JSON.parse` accepts, every byte of them
 * must be checked: no raw control character (< 0x20), every backslash a valid escape (`\" \\ \/
 * \b \f \n \r \t` or `\u` + 4 hex digits), and the closing quote is the first unescaped `"`.
 *
 * {@link StringFinder} does that with a small WebAssembly function (built below from its
 * instructions, no build step): 16 bytes at a time with SIMD (`i8x16` compares + bitmask) until a
 * quote, backslash or control byte, then one scalar step. A JavaScript loop with the same rules
 * ({@link findStringEndJs}) is used where WebAssembly SIMD is unavailable, for lines too large to
 * copy, and as the reference the tests compare against.
 *
 * The same pass also **measures** the string (what pi's `estimateTokens` counts): UTF-8
 * continuation bytes and 4-byte leads are counted per block (popcount of two more compares), each
 * escape's overhead and what `JSON.stringify` would add when re-escaping the decoded value are
 * summed as the escapes are validated ({@link StringFinder.measure}). So a long string's UTF-16
 * length and `JSON.stringify` length are known when the line is read, without a decoded copy and
 * without reading the line again.
 */

import { isUtf8 } from "node:buffer";
import { STRING_FINDER_WASM_BASE64 } from "./strscanWasm";

/** Result of a failed search: the string is invalid or unterminated (`JSON.parse` would reject it). */
export const STRING_INVALID = -1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Escape characters after `\`: 1 = one-character escape, 2 = `u` (4 hex digits follow). */
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1;
ESCAPES[0x75] = 2;
const HEX_DIGITS = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEX_DIGITS[c.charCodeAt(0)] = 1;

/**
 * Reference implementation: scan the body of a JSON string starting at `s` (the byte after the
 * opening quote) up to `end` (exclusive).
 * @returns `(q << 1) | hasEscape` where `q` is the offset of the closing quote, or
 *   {@link STRING_INVALID} for a control byte, an invalid escape or a missing closing quote.
 */
export function findStringEndJs(buf: Uint8Array, s: number, end: number): number {
  let escaped = 0;
  let i = s;
  while (i < end) {
    const c = buf[i]!;
    if (c === QUOTE) return i * 2 + escaped;
    if (c < 0x20) return STRING_INVALID;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    escaped = 1;
    if (i + 1 >= end) return STRING_INVALID;
    const kind = ESCAPES[buf[i + 1]!]!;
    if (kind === 1) {
      i += 2;
      continue;
    }
    if (kind === 0 || i + 6 > end) return STRING_INVALID;
    if (!(HEX_DIGITS[buf[i + 2]!]! & HEX_DIGITS[buf[i + 3]!]! & HEX_DIGITS[buf[i + 4]!]! & HEX_DIGITS[buf[i + 5]!]!))
      return STRING_INVALID;
    i += 6;
  }
  return STRING_INVALID;
}

/** Hex digit values (the validity table above decides what is a digit). */
const HEX_VALUES = new Uint8Array(256);
for (const c of "0123456789abcdef") {
  HEX_VALUES[c.charCodeAt(0)] = parseInt(c, 16);
  HEX_VALUES[c.toUpperCase().charCodeAt(0)] = parseInt(c, 16);
}

// --- The WebAssembly module ---------------------------------------------------------------------
// Memory layout: [0, 256) escape table, [256, 512) hex validity table, [512, 768) hex values,
// [768, 788) the measurement of the last string found (see STATS_*), line bytes from DATA_BASE.

const HEX_VALUE_BASE = 512;
const STATS_BASE = 768;
/** Measurement slots (i32 each, from STATS_BASE): */
const STATS_DROP = 0; // UTF-8 continuation bytes minus 4-byte leads (bytes that add no UTF-16 unit)
const STATS_OVER = 1; // raw bytes of escapes beyond the one unit each decodes to
const STATS_EXTRA = 2; // characters JSON.stringify adds when it re-escapes the decoded value
const STATS_HIGH = 3; // non-zero when a byte ≥ 0x80 was seen (the UTF-8 must then be valid)
const STATS_COUNT = 4;
const DATA_BASE = 1024;
/** Lines larger than this are scanned in JavaScript (the wasm memory never shrinks). */
const MAX_WASM_LINE_BYTES = 32 * 1024 * 1024;
const PAGE = 65536;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function name(text: string): number[] {
  return [...uleb(text.length), ...Buffer.from(text, "latin1")];
}

// Instructions used below (WebAssembly binary opcodes).
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const IF = [0x04, 0x40];
const ELSE = [0x05];
const END = [0x0b];
const RETURN = [0x0f];
const [BR, BR_IF, CALL, SELECT] = [0x0c, 0x0d, 0x10, 0x1b];
const [EQZ, EQ, NE, LT_U, GT_U, GE_U, CTZ, POPCNT, ADD, SUB, AND, OR, XOR, SHL, SHR_U] = [
  0x45, 0x46, 0x47, 0x49, 0x4b, 0x4f, 0x68, 0x69, 0x6a, 0x6b, 0x71, 0x72, 0x73, 0x74, 0x76,
];
const get = (local: number): number[] => [0x20, local];
const set = (local: number): number[] => [0x21, local];
const tee = (local: number): number[] => [0x22, local];
const i32 = (n: number): number[] => [0x41, ...sleb(n)];
const load8 = (offset: number): number[] => [0x2d, 0x00, ...uleb(offset)];
/** `mem[STATS_BASE + 4 * slot] = local` (i32.store, 4-byte aligned). */
const storeStat = (slot: number, local: number): number[] => [
  ...i32(0),
  ...get(local),
  0x36,
  0x02,
  ...uleb(STATS_BASE + 4 * slot),
];
const simd = (op: number): number[] => [0xfd, ...uleb(op)];
const SPLAT = simd(0x0f);
const V_EQ = simd(0x23);
const V_LT_S = simd(0x25);
const V_LT_U = simd(0x26);
const V_GT_U = simd(0x28);
const V_OR = simd(0x50);
const V_AND = simd(0x4e);
const SWIZZLE = simd(0x0e);
const V_SHR_U = simd(0x6d);
const vconst = (bytes: Uint8Array): number[] => [...simd(0x0c), ...bytes];

/**
 * Nibble tables of the characters allowed after a backslash in a one-character escape
 * (`" / \ b f n r t`): one bit per character, so `LOW[c & 15] & HIGH[c >> 4]` is non-zero exactly
 * for those characters (two `i8x16.swizzle` lookups classify 16 bytes at once).
 */
const ESCAPE_LOW = new Uint8Array(16);
const ESCAPE_HIGH = new Uint8Array(16);
[...'"/\\bfnrt'].forEach((c, bit) => {
  ESCAPE_LOW[c.charCodeAt(0) & 15]! |= 1 << bit;
  ESCAPE_HIGH[c.charCodeAt(0) >> 4]! |= 1 << bit;
});
const BITMASK = simd(0x64);
const V_LOAD = [...simd(0x00), 0x00, 0x00];

/**
 * `special(p, end)`: the byte at `p` is a quote, a control byte or a backslash.
 * @returns 1 for the closing quote, 0 for an error, else the offset after the escape at `p`.
 */
function specialBody(): number[] {
  const [P, END_, C, K] = [0, 1, 2, 3];
  // prettier-ignore
  const code = [
    ...get(P), ...load8(0), ...tee(C), ...i32(QUOTE), EQ, ...IF, ...i32(1), ...RETURN, ...END,
    ...get(C), ...i32(0x20), LT_U, ...IF, ...i32(0), ...RETURN, ...END,
    ...get(P), ...i32(1), ADD, ...get(END_), GE_U, ...IF, ...i32(0), ...RETURN, ...END,
    ...get(P), ...load8(1), ...load8(0), ...tee(K), EQZ, ...IF, ...i32(0), ...RETURN, ...END,
    ...get(K), ...i32(1), EQ, ...IF, ...get(P), ...i32(2), ADD, ...RETURN, ...END,
    ...get(P), ...i32(6), ADD, ...get(END_), GT_U, ...IF, ...i32(0), ...RETURN, ...END,
    ...get(P), ...load8(2), ...load8(256),
    ...get(P), ...load8(3), ...load8(256), AND,
    ...get(P), ...load8(4), ...load8(256), AND,
    ...get(P), ...load8(5), ...load8(256), AND,
    EQZ, ...IF, ...i32(0), ...RETURN, ...END,
    ...get(P), ...i32(6), ADD,
    ...END,
  ];
  return [0x01, 0x02, 0x7f, ...code];
}

/**
 * `str(i, end)`: 16 bytes at a time, the quotes, backslashes and control bytes of a block are
 * found with one SIMD compare + bitmask and handled in order (bits inside an escape just handled
 * are skipped); the last < 16 bytes byte by byte. Blocks never overlap (a block starts where the
 * previous one, or the escape crossing its end, ended), so counting continuation bytes and 4-byte
 * leads per block counts every byte of the string once; in the block of the closing quote only the
 * lanes before it count. The measurement is stored at STATS_BASE when the closing quote is found.
 */
function strBody(): number[] {
  const [I, END_, ESC, M, BASE, P, R, DROP, OVER, EXTRA, HIGH, CM, FM, K, PEND] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
  ];
  const [V, Q, B, CTRL, C0, EF, LOW, HIGH_T, NIBBLE, ZERO, SLASH] = [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25];
  const SPECIAL = [CALL, 1];
  /** DROP += popcnt(CM & mask) - popcnt(FM & mask), the mask on the stack below nothing: uses K. */
  const addCounts = (masked: boolean): number[] =>
    masked
      ? [
          ...i32(1), ...get(P), ...get(BASE), SUB, SHL, ...i32(1), SUB, ...set(K),
          ...get(DROP), ...get(CM), ...get(K), AND, POPCNT, ADD, ...get(FM), ...get(K), AND, POPCNT, SUB, ...set(DROP),
        ]
      : [...get(DROP), ...get(CM), POPCNT, ADD, ...get(FM), POPCNT, SUB, ...set(DROP)]; // prettier-ignore
  const storeAll = [
    ...storeStat(STATS_DROP, DROP), ...storeStat(STATS_OVER, OVER),
    ...storeStat(STATS_EXTRA, EXTRA), ...storeStat(STATS_HIGH, HIGH),
  ]; // prettier-ignore
  /** The code point of the `\uXXXX` escape at P, into K. */
  const hexCode = [
    ...get(P), ...load8(2), ...load8(HEX_VALUE_BASE), ...i32(12), SHL,
    ...get(P), ...load8(3), ...load8(HEX_VALUE_BASE), ...i32(8), SHL, OR,
    ...get(P), ...load8(4), ...load8(HEX_VALUE_BASE), ...i32(4), SHL, OR,
    ...get(P), ...load8(5), ...load8(HEX_VALUE_BASE), OR,
    ...set(K),
  ]; // prettier-ignore
  /** What JSON.stringify adds for the escape at P that ends at R (V8: `\b \t \n \f \r " \\` → 2 chars, other controls and lone surrogates → 6). */
  const measureEscape = [
    ...get(OVER), ...get(R), ...get(P), SUB, ...i32(1), SUB, ADD, ...set(OVER),
    ...get(P), ...load8(1), ...i32(0x75), EQ,
    ...IF,
      ...hexCode,
      ...get(K), ...i32(0x20), LT_U,
      ...IF,
        ...get(EXTRA), ...i32(1), ...i32(5),
        ...get(K), ...i32(8), EQ, ...get(K), ...i32(9), EQ, OR, ...get(K), ...i32(10), EQ, OR,
        ...get(K), ...i32(12), EQ, OR, ...get(K), ...i32(13), EQ, OR,
        SELECT, ADD, ...set(EXTRA),
      ...ELSE,
        ...get(K), ...i32(0x22), EQ, ...get(K), ...i32(0x5c), EQ, OR,
        ...IF,
          ...get(EXTRA), ...i32(1), ADD, ...set(EXTRA),
        ...ELSE,
          ...get(K), ...i32(0xfc00), AND, ...i32(0xd800), EQ,
          ...IF, // a high surrogate: lone unless a low surrogate escape follows right after it
            ...get(EXTRA), ...i32(5), ADD, ...set(EXTRA), ...get(R), ...set(PEND),
          ...ELSE,
            ...get(K), ...i32(0xfc00), AND, ...i32(0xdc00), EQ,
            ...IF,
              ...get(PEND), ...get(P), EQ,
              ...IF, // pairs with the high surrogate just before: neither is re-escaped
                ...get(EXTRA), ...i32(5), SUB, ...set(EXTRA), ...i32(-1), ...set(PEND),
              ...ELSE,
                ...get(EXTRA), ...i32(5), ADD, ...set(EXTRA),
              ...END,
            ...END,
          ...END,
        ...END,
      ...END,
    ...ELSE, // a one-character escape: every one but \/ is re-escaped by JSON.stringify
      ...get(EXTRA), ...get(P), ...load8(1), ...i32(0x2f), NE, ADD, ...set(EXTRA),
    ...END,
  ]; // prettier-ignore
  /** After `special` returned R for position P: return, fail, or measure the escape and continue after it. */
  const onSpecial = (inBlock: boolean): number[] => [
    ...get(R), EQZ, ...IF, ...i32(STRING_INVALID), ...RETURN, ...END,
    ...get(R), ...i32(1), EQ,
    ...IF, ...(inBlock ? addCounts(true) : []), ...storeAll, ...get(P), ...i32(1), SHL, ...get(ESC), OR, ...RETURN, ...END,
    ...i32(1), ...set(ESC), ...measureEscape, ...get(R), ...set(I),
  ]; // prettier-ignore
  // prettier-ignore
  const code = [
    ...i32(QUOTE), ...SPLAT, ...set(Q),
    ...i32(BACKSLASH), ...SPLAT, ...set(B),
    ...i32(0x20), ...SPLAT, ...set(CTRL),
    ...i32(0xc0), ...SPLAT, ...set(C0),
    ...i32(0xef), ...SPLAT, ...set(EF),
    ...i32(-1), ...set(PEND),
    ...vconst(ESCAPE_LOW), ...set(LOW),
    ...vconst(ESCAPE_HIGH), ...set(HIGH_T),
    ...i32(15), ...SPLAT, ...set(NIBBLE),
    ...i32(0), ...SPLAT, ...set(ZERO),
    ...i32(0x2f), ...SPLAT, ...set(SLASH),
    ...LOOP, // $main
    ...BLOCK, // $tail
    ...get(I), ...i32(16), ADD, ...get(END_), GT_U, BR_IF, 0,
    ...get(I), ...V_LOAD, ...tee(V), ...get(Q), ...V_EQ,
    ...get(V), ...get(B), ...V_EQ, ...V_OR,
    ...get(V), ...get(CTRL), ...V_LT_U, ...V_OR,
    ...BITMASK, ...set(M),
    // bytes ≥ 0x80: continuation bytes (0x80–0xBF, signed < 0xC0) and 4-byte leads (> 0xEF)
    ...get(V), ...BITMASK, ...tee(CM),
    ...IF,
      ...get(HIGH), ...get(CM), OR, ...set(HIGH),
      ...get(V), ...get(C0), ...V_LT_S, ...BITMASK, ...set(CM),
      ...get(V), ...get(EF), ...V_GT_U, ...BITMASK, ...set(FM),
    ...ELSE, ...i32(0), ...set(FM), ...END,
    ...get(M), EQZ,
    ...IF, ...addCounts(false), ...get(I), ...i32(16), ADD, ...set(I), BR, 2, ...END,
    // Only isolated one-character escapes (no \\ pair, no \u): every special byte of the block is
    // a backslash or the character right after one (an escaped quote is not the closing one);
    // validated and measured for the whole block at once. A backslash in the last lane starts an
    // escape that ends in the next block: then only the first 15 lanes (P) are taken, and the
    // next block starts at that backslash (it is ASCII, so the counts of lane 15 are zero).
    ...get(V), ...get(B), ...V_EQ, ...BITMASK, ...tee(K), ...get(K), ...i32(1), SHL, AND, EQZ,
    ...IF,
      ...i32(16), ...get(K), ...i32(15), SHR_U, SUB, ...set(P),
      ...get(K), ...i32(0x7fff), AND, ...set(K),
      ...get(M), ...i32(1), ...get(P), SHL, ...i32(1), SUB, AND,
      ...get(K), ...i32(1), SHL, ...i32(-1), XOR, AND,
      ...get(K), EQ,
      ...IF,
        ...get(LOW), ...get(V), ...get(NIBBLE), ...V_AND, ...SWIZZLE,
        ...get(HIGH_T), ...get(V), ...i32(4), ...V_SHR_U, ...get(NIBBLE), ...V_AND, ...SWIZZLE,
        ...V_AND, ...get(ZERO), ...V_EQ, ...BITMASK,
        ...get(K), ...i32(1), SHL, AND, EQZ,
        ...IF,
          ...i32(1), ...set(ESC),
          ...get(K), POPCNT, ...set(R),
          ...get(OVER), ...get(R), ADD, ...set(OVER),
          ...get(EXTRA), ...get(R), ADD,
          ...get(V), ...get(SLASH), ...V_EQ, ...BITMASK, ...get(K), ...i32(1), SHL, AND, POPCNT, SUB, ...set(EXTRA),
          ...addCounts(false),
          ...get(I), ...get(P), ADD, ...set(I),
          BR, 4, // $main
        ...END,
      ...END,
    ...END,
    ...get(I), ...set(BASE),
    ...BLOCK, // $done
    ...LOOP, // $bits
    ...get(M), EQZ, BR_IF, 1,
    ...get(BASE), ...get(M), CTZ, ADD, ...set(P),
    ...get(M), ...get(M), ...i32(1), SUB, AND, ...set(M),
    ...get(P), ...get(I), LT_U, BR_IF, 0,
    // the common case inline: a one-character escape (\n, \", \\, \t …) inside the line
    ...get(P), ...load8(0), ...i32(BACKSLASH), EQ,
    ...get(P), ...i32(1), ADD, ...get(END_), LT_U, AND,
    ...IF,
      ...get(P), ...load8(1), ...tee(K), ...load8(0), ...i32(1), EQ,
      ...IF,
        ...i32(1), ...set(ESC),
        ...get(OVER), ...i32(1), ADD, ...set(OVER),
        ...get(EXTRA), ...get(K), ...i32(0x2f), NE, ADD, ...set(EXTRA),
        ...get(P), ...i32(2), ADD, ...set(I),
        BR, 2, // $bits
      ...END,
    ...END,
    ...get(P), ...get(END_), ...SPECIAL, ...set(R),
    ...onSpecial(true),
    BR, 0,
    ...END, // $bits
    ...END, // $done
    ...addCounts(false),
    ...get(I), ...get(BASE), ...i32(16), ADD, ...tee(R), ...get(I), ...get(R), GT_U, SELECT, ...set(I),
    BR, 1,
    ...END, // $tail
    ...get(I), ...get(END_), GE_U, ...IF, ...i32(STRING_INVALID), ...RETURN, ...END,
    ...get(I), ...load8(0), ...tee(R), ...i32(QUOTE), EQ,
    ...get(R), ...i32(BACKSLASH), EQ, OR,
    ...get(R), ...i32(0x20), LT_U, OR,
    ...IF, ...get(I), ...set(P), ...get(P), ...get(END_), ...SPECIAL, ...set(R), ...onSpecial(false),
    ...ELSE,
      ...get(HIGH), ...get(R), ...i32(0x80), AND, OR, ...set(HIGH),
      ...get(DROP), ...get(R), ...i32(0xc0), AND, ...i32(0x80), EQ, ADD, ...get(R), ...i32(0xef), GT_U, SUB, ...set(DROP),
      ...get(I), ...i32(1), ADD, ...set(I),
    ...END,
    BR, 0,
    ...END, // $main
    ...i32(STRING_INVALID),
    ...END,
  ];
  return [0x02, 0x0d, 0x7f, 0x0b, 0x7b, ...code];
}

/** The bytes of the module: exports `mem` (memory) and `str(i, end) → (q << 1) | esc, or -1`. */
export function stringFinderModule(): Uint8Array {
  const str = strBody();
  const special = specialBody();
  const tables = [...ESCAPES, ...HEX_DIGITS, ...HEX_VALUES];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]),
    ...section(3, [0x02, 0x00, 0x00]),
    ...section(5, [0x01, 0x00, 0x01]),
    ...section(7, [0x02, ...name("mem"), 0x02, 0x00, ...name("str"), 0x00, 0x00]),
    ...section(10, [0x02, ...uleb(str.length), ...str, ...uleb(special.length), ...special]),
    ...section(11, [0x01, 0x00, 0x41, 0x00, 0x0b, ...uleb(tables.length), ...tables]),
  ]);
}

// The WebAssembly API of Node (not in this project's TypeScript libs): only what is used here.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmFinder {
  memory: WasmMemory;
  str: (i: number, end: number) => number;
  /** The measurement slots over `memory` (a new view after the memory grew). */
  stats: Int32Array;
}

let wasm: WasmFinder | null | undefined;

function loadWasm(): WasmFinder | null {
  if (wasm !== undefined) return wasm;
  try {
    const instance = new WebAssembly.Instance(
      new WebAssembly.Module(Buffer.from(STRING_FINDER_WASM_BASE64, "base64")),
      {},
    );
    const exports = instance.exports as { mem: WasmMemory; str: WasmFinder["str"] };
    wasm = {
      memory: exports.mem,
      str: exports.str,
      stats: new Int32Array(exports.mem.buffer, STATS_BASE, STATS_COUNT),
    };
  } catch {
    wasm = null; // no WebAssembly SIMD here: the JavaScript loop does the same work
  }
  return wasm;
}

/** Tests only: `false` forces the JavaScript implementation, `true` the WebAssembly one (when available). */
export function useWasmStringFinder(enabled: boolean): boolean {
  if (!enabled) {
    wasm = null;
    return false;
  }
  wasm = undefined;
  return loadWasm() !== null;
}

/** A string's lengths as pi's rules use them: `value.length` and `JSON.stringify(value).length`. */
export interface StringMeasure {
  /** UTF-16 code units of the decoded value. */
  units: number;
  /** `JSON.stringify(value).length`, quotes included, as V8 re-escapes the value. */
  jsonUnits: number;
}

/**
 * The string search for one line `buf[start, end)`: the line is copied into WebAssembly memory on
 * the first search (one memcpy), then every string of the line is found (and measured) there.
 */
export class StringFinder {
  private loaded = false;
  private readonly finder: WasmFinder | null;
  /** 1: the line is valid UTF-8, 0: it is not, -1: not checked yet. */
  private utf8 = -1;

  constructor(
    private readonly buf: Uint8Array,
    private readonly start: number,
    private readonly end: number,
  ) {
    this.finder = end - start <= MAX_WASM_LINE_BYTES ? loadWasm() : null;
  }

  /**
   * Scan the string body that starts at `s` (absolute offset in `buf`, after the opening quote).
   * @returns `(q << 1) | hasEscape` with `q` the absolute offset of the closing quote, or
   *   {@link STRING_INVALID}.
   */
  find(s: number): number {
    const finder = this.finder;
    if (!finder) return findStringEndJs(this.buf, s, this.end);
    if (!this.loaded) {
      const need = DATA_BASE + (this.end - this.start) + 16;
      const have = finder.memory.buffer.byteLength;
      if (need > have) {
        finder.memory.grow(Math.ceil((need - have) / PAGE));
        finder.stats = new Int32Array(finder.memory.buffer, STATS_BASE, STATS_COUNT);
      }
      new Uint8Array(finder.memory.buffer).set(this.buf.subarray(this.start, this.end), DATA_BASE);
      this.loaded = true;
    }
    const shift = DATA_BASE - this.start;
    const r = finder.str(s + shift, this.end + shift);
    if (r < 0) return STRING_INVALID;
    return r - 2 * shift;
  }

  /**
   * The lengths of the string {@link find} just found (`s` its start, `q` its closing quote, both
   * absolute), from the counts the WebAssembly pass took while validating it; undefined when they
   * are not exact — found by the JavaScript loop, or non-ASCII bytes on a line that is not valid
   * UTF-8 (decoding turns invalid sequences into U+FFFD, which the byte counts do not model).
   * Call it right after a successful {@link find}, before the next one.
   */
  measure(s: number, q: number): StringMeasure | undefined {
    const finder = this.finder;
    if (!finder) return undefined;
    const stats = finder.stats;
    if (stats[STATS_HIGH] !== 0) {
      if (this.utf8 < 0) this.utf8 = isUtf8(this.buf.subarray(this.start, this.end)) ? 1 : 0;
      if (this.utf8 === 0) return undefined;
    }
    const units = q - s - stats[STATS_DROP]! - stats[STATS_OVER]!;
    return { units, jsonUnits: units + stats[STATS_EXTRA]! + 2 };
  }
}
