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
 */

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

// --- The WebAssembly module ---------------------------------------------------------------------
// Memory layout: [0, 256) escape table, [256, 512) hex table, line bytes from DATA_BASE.

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
const [EQZ, EQ, LT_U, GT_U, GE_U, CTZ, ADD, SUB, AND, OR, SHL] = [
  0x45, 0x46, 0x49, 0x4b, 0x4f, 0x68, 0x6a, 0x6b, 0x71, 0x72, 0x74,
];
const get = (local: number): number[] => [0x20, local];
const set = (local: number): number[] => [0x21, local];
const tee = (local: number): number[] => [0x22, local];
const i32 = (n: number): number[] => [0x41, ...sleb(n)];
const load8 = (offset: number): number[] => [0x2d, 0x00, ...uleb(offset)];
const simd = (op: number): number[] => [0xfd, ...uleb(op)];
const SPLAT = simd(0x0f);
const V_EQ = simd(0x23);
const V_LT_U = simd(0x26);
const V_OR = simd(0x50);
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
 * are skipped); the last < 16 bytes byte by byte.
 */
function strBody(): number[] {
  const [I, END_, ESC, M, BASE, P, R, V, Q, B, CTRL] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const SPECIAL = [CALL, 1];
  /** After `special` returned R for position P: return, fail, or continue after the escape. */
  const onSpecial = [
    ...get(R), EQZ, ...IF, ...i32(STRING_INVALID), ...RETURN, ...END,
    ...get(R), ...i32(1), EQ, ...IF, ...get(P), ...i32(1), SHL, ...get(ESC), OR, ...RETURN, ...END,
    ...i32(1), ...set(ESC), ...get(R), ...set(I),
  ]; // prettier-ignore
  // prettier-ignore
  const code = [
    ...i32(QUOTE), ...SPLAT, ...set(Q),
    ...i32(BACKSLASH), ...SPLAT, ...set(B),
    ...i32(0x20), ...SPLAT, ...set(CTRL),
    ...LOOP, // $main
    ...BLOCK, // $tail
    ...get(I), ...i32(16), ADD, ...get(END_), GT_U, BR_IF, 0,
    ...get(I), ...V_LOAD, ...tee(V), ...get(Q), ...V_EQ,
    ...get(V), ...get(B), ...V_EQ, ...V_OR,
    ...get(V), ...get(CTRL), ...V_LT_U, ...V_OR,
    ...BITMASK, ...tee(M), EQZ,
    ...IF, ...get(I), ...i32(16), ADD, ...set(I), BR, 2, ...END,
    ...get(I), ...set(BASE),
    ...BLOCK, // $done
    ...LOOP, // $bits
    ...get(M), EQZ, BR_IF, 1,
    ...get(BASE), ...get(M), CTZ, ADD, ...set(P),
    ...get(M), ...get(M), ...i32(1), SUB, AND, ...set(M),
    ...get(P), ...get(I), LT_U, BR_IF, 0,
    ...get(P), ...get(END_), ...SPECIAL, ...set(R),
    ...onSpecial,
    BR, 0,
    ...END, // $bits
    ...END, // $done
    ...get(I), ...get(BASE), ...i32(16), ADD, ...tee(R), ...get(I), ...get(R), GT_U, SELECT, ...set(I),
    BR, 1,
    ...END, // $tail
    ...get(I), ...get(END_), GE_U, ...IF, ...i32(STRING_INVALID), ...RETURN, ...END,
    ...get(I), ...load8(0), ...tee(R), ...i32(QUOTE), EQ,
    ...get(R), ...i32(BACKSLASH), EQ, OR,
    ...get(R), ...i32(0x20), LT_U, OR,
    ...IF, ...get(I), ...set(P), ...get(P), ...get(END_), ...SPECIAL, ...set(R), ...onSpecial,
    ...ELSE, ...get(I), ...i32(1), ADD, ...set(I),
    ...END,
    BR, 0,
    ...END, // $main
    ...i32(STRING_INVALID),
    ...END,
  ];
  return [0x02, 0x05, 0x7f, 0x04, 0x7b, ...code];
}

/** The bytes of the module: exports `mem` (memory) and `str(i, end) → (q << 1) | esc, or -1`. */
export function stringFinderModule(): Uint8Array {
  const str = strBody();
  const special = specialBody();
  const tables = [...ESCAPES, ...HEX_DIGITS];
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
}

let wasm: WasmFinder | null | undefined;

function loadWasm(): WasmFinder | null {
  if (wasm !== undefined) return wasm;
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(stringFinderModule()), {});
    const exports = instance.exports as { mem: WasmMemory; str: WasmFinder["str"] };
    wasm = { memory: exports.mem, str: exports.str };
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

/**
 * The string search for one line `buf[start, end)`: the line is copied into WebAssembly memory on
 * the first search (one memcpy), then every string of the line is found there.
 */
export class StringFinder {
  private loaded = false;
  private readonly finder: WasmFinder | null;

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
      if (need > have) finder.memory.grow(Math.ceil((need - have) / PAGE));
      new Uint8Array(finder.memory.buffer).set(this.buf.subarray(this.start, this.end), DATA_BASE);
      this.loaded = true;
    }
    const shift = DATA_BASE - this.start;
    const r = finder.str(s + shift, this.end + shift);
    if (r < 0) return STRING_INVALID;
    return r - 2 * shift;
  }
}
