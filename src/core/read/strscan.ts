/**
 * Finding the end of a JSON string and validating it in one pass, at memory speed.
 *
 * The long strings of a session line (tool output, file contents, base64 screenshots) are most of
 * its bytes. For {@link scanJson} to accept exactly what `JSON.parse` accepts, every byte of them
 * must be checked: no raw control character (< 0x20), every backslash a valid escape (`\" \\ \/
 * \b \f \n \r \t` or `\u` + 4 hex digits), and the closing quote is the first unescaped `"`.
 *
 * {@link StringFinder} does that with a small WebAssembly function (built below from its
 * instructions, no build step): 64 bytes at a time with SIMD (`i8x16` compares + bitmasks, the
 * escaped bytes of all four blocks found at once from the backslash mask) while there are only
 * one-character escapes, else 16 bytes at a time until a quote, backslash or control byte, then
 * one scalar step. A JavaScript loop with the same rules
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

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** Escape characters after `\`: 1 = one-character escape, 2 = `u` (4 hex digits follow). */
export const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1;
ESCAPES[0x75] = 2;
export const HEX_DIGITS = new Uint8Array(256);
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
export const HEX_VALUES = new Uint8Array(256);
for (const c of "0123456789abcdef") {
  HEX_VALUES[c.charCodeAt(0)] = parseInt(c, 16);
  HEX_VALUES[c.toUpperCase().charCodeAt(0)] = parseInt(c, 16);
}

// --- The WebAssembly module (assembled by strscanAsm.ts) -------------------------------------------
// Memory layout: [0, 256) escape table, [256, 512) hex validity table, [512, 768) hex values,
// [768, 788) the measurement of the last string found (see STATS_*), line bytes from DATA_BASE.

export const HEX_VALUE_BASE = 512;
export const STATS_BASE = 768;
/** Measurement slots (i32 each, from STATS_BASE): */
export const STATS_DROP = 0; // UTF-8 continuation bytes minus 4-byte leads (bytes that add no UTF-16 unit)
export const STATS_OVER = 1; // raw bytes of escapes beyond the one unit each decodes to
export const STATS_EXTRA = 2; // characters JSON.stringify adds when it re-escapes the decoded value
export const STATS_HIGH = 3; // non-zero when a byte ≥ 0x80 was seen (the UTF-8 must then be valid)
const STATS_COUNT = 4;
const DATA_BASE = 1024;
/** Lines larger than this are scanned in JavaScript (the wasm memory never shrinks). */
const MAX_WASM_LINE_BYTES = 32 * 1024 * 1024;
const PAGE = 65536;

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
    // Not named `exports`: the CommonJS output refers to this module's exported constants
    // (STATS_BASE) through a variable of that name.
    const api = instance.exports as { mem: WasmMemory; str: WasmFinder["str"] };
    wasm = {
      memory: api.mem,
      str: api.str,
      stats: new Int32Array(api.mem.buffer, STATS_BASE, STATS_COUNT),
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
