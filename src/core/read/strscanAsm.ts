/**
 * The assembler of the string finder's WebAssembly module (see `strscan.ts` for what it does and
 * `strscanWasm.ts` for the bytes shipped): the module written as its instructions, in readable
 * pieces, with no build step beyond `node scripts/generate-string-finder.mjs`. Not loaded at run
 * time — only the generator and the unit test that checks the shipped bytes use it.
 */

import {
  BACKSLASH,
  ESCAPES,
  HEX_DIGITS,
  HEX_VALUE_BASE,
  HEX_VALUES,
  QUOTE,
  STATS_BASE,
  STATS_DROP,
  STATS_EXTRA,
  STATS_HIGH,
  STATS_OVER,
  STRING_INVALID,
} from "./strscan";

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

/** Signed LEB128 of a 64-bit value (`i64.const`). */
function sleb64(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asIntN(64, n);
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) {
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
const ANY_TRUE = simd(0x53);
const [I64_EQZ, I64_POPCNT, I64_ADD, I64_AND, I64_OR, I64_XOR, I64_SHL, I64_SHR_U, I32_WRAP, I64_EXTEND_U] = [
  0x50, 0x7b, 0x7c, 0x83, 0x84, 0x85, 0x86, 0x88, 0xa7, 0xad,
];
const i64 = (n: bigint): number[] => [0x42, ...sleb64(n)];

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
 * `str(i, end)`: 64 bytes at a time while they hold only one-character escapes (`$wide` below),
 * else 16 bytes at a time: the quotes, backslashes and control bytes of a block are
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
  /** The 64-byte step's four blocks, their special bytes, and its lane masks (bit k = byte I + k). */
  const [V0, V1, V2, V3, S0, S1, S2, S3] = [26, 27, 28, 29, 30, 31, 32, 33];
  const [M64, K64, E64, L64] = [34, 35, 36, 37];
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
  /** The i64 of the four blocks' 16-lane bitmasks of the vector `lanes(v)` leaves (block k → bits 16k…16k+15). */
  const combine = (lanes: (v: number) => number[]): number[] =>
    [V0, V1, V2, V3].flatMap((v, k) => [
      ...lanes(v), ...BITMASK, I64_EXTEND_U, ...(k === 0 ? [] : [...i64(BigInt(16 * k)), I64_SHL, I64_OR]),
    ]); // prettier-ignore
  const specials = (v: number): number[] => [
    ...get(v), ...get(Q), ...V_EQ, ...get(v), ...get(B), ...V_EQ, ...V_OR, ...get(v), ...get(CTRL), ...V_LT_U, ...V_OR,
  ]; // prettier-ignore
  /** Lanes holding a character that may not follow a backslash in a one-character escape. */
  const notEscapable = (v: number): number[] => [
    ...get(LOW), ...get(v), ...get(NIBBLE), ...V_AND, ...SWIZZLE,
    ...get(HIGH_T), ...get(v), ...i32(4), ...V_SHR_U, ...get(NIBBLE), ...V_AND, ...SWIZZLE,
    ...V_AND, ...get(ZERO), ...V_EQ,
  ]; // prettier-ignore
  const popcnt64 = (mask: number[]): number[] => [...mask, I64_POPCNT, I32_WRAP];
  /**
   * `$wide`: 64 bytes at a time while they hold no quote or control byte that is not escaped and
   * every escape is a one-character escape — most of a long string, escapes and all. Which bytes
   * are escaped is found for the four blocks at once from the backslash mask, odd-length runs of
   * backslashes escaping the byte after them (simdjson's method; no carry in: the step starts
   * outside an escape). A backslash in lane 63 that starts an escape ends the step before it (63
   * lanes; it is ASCII, so the UTF-8 counts of all 64 lanes stay exact). Anything else — the
   * closing quote, `\u`, an error, the last < 64 bytes — leaves to the 16-byte step below, which
   * handles one block and comes back.
   */
  const wide = [
    ...BLOCK, // $wide
    ...get(I), ...i32(64), ADD, ...get(END_), GT_U, BR_IF, 0,
    ...get(I), ...V_LOAD, ...set(V0),
    ...get(I), ...simd(0x00), 0x00, 16, ...set(V1),
    ...get(I), ...simd(0x00), 0x00, 32, ...set(V2),
    ...get(I), ...simd(0x00), 0x00, 48, ...set(V3),
    ...specials(V0), ...tee(S0), ...specials(V1), ...tee(S1), ...V_OR,
    ...specials(V2), ...tee(S2), ...V_OR, ...specials(V3), ...tee(S3), ...V_OR, ...ANY_TRUE,
    ...IF,
      ...combine((v) => get(v === V0 ? S0 : v === V1 ? S1 : v === V2 ? S2 : S3)), ...set(M64),
      ...combine((v) => [...get(v), ...get(B), ...V_EQ]), ...set(K64),
      // escaped bytes: ((EVEN ^ ((oddRunStarts + K) << 1)) & (K << 1)), oddRunStarts = K & ODD & ~(K << 1)
      ...i64(0x5555555555555555n),
      ...get(K64), ...i64(0xaaaaaaaaaaaaaaaan), I64_AND, ...get(K64), ...i64(1n), I64_SHL, ...i64(-1n), I64_XOR, I64_AND,
      ...get(K64), I64_ADD, ...i64(1n), I64_SHL, I64_XOR,
      ...get(K64), ...i64(1n), I64_SHL, I64_AND, ...set(E64),
      // L = 1 when the backslash in lane 63 starts an escape (then 63 lanes are taken; lane 63 is in
      // K, never in E, so the masks below need no trimming)
      ...get(K64), ...get(E64), ...i64(-1n), I64_XOR, I64_AND, ...i64(63n), I64_SHR_U, ...set(L64),
      // a quote or control byte not escaped: to the 16-byte step
      ...get(M64), ...get(K64), ...get(E64), I64_OR, ...i64(-1n), I64_XOR, I64_AND,
      I64_EQZ, EQZ, BR_IF, 1,
      // an escaped byte that is not " \ / b f n r t (\u or an invalid escape): to the 16-byte step
      ...combine(notEscapable), ...get(E64), I64_AND, I64_EQZ, EQZ, BR_IF, 1,
      // measured as the 16-byte step measures one-character escapes: one unit each, re-escaped unless \/
      ...i32(1), ...set(ESC),
      ...popcnt64(get(E64)), ...set(R),
      ...get(OVER), ...get(R), ADD, ...set(OVER),
      ...get(EXTRA), ...get(R), ADD,
      ...popcnt64([...combine((v) => [...get(v), ...get(SLASH), ...V_EQ]), ...get(E64), I64_AND]),
      SUB, ...set(EXTRA),
      ...i32(64), ...get(L64), I32_WRAP, SUB, ...set(P),
    ...ELSE,
      ...i32(64), ...set(P),
    ...END,
    // UTF-8: continuation bytes and 4-byte leads of the 64 lanes
    ...get(V0), ...get(V1), ...V_OR, ...get(V2), ...V_OR, ...get(V3), ...V_OR, ...BITMASK,
    ...IF,
      ...i32(1), ...get(HIGH), OR, ...set(HIGH),
      ...get(DROP),
      ...popcnt64(combine((v) => [...get(v), ...get(C0), ...V_LT_S])), ADD,
      ...popcnt64(combine((v) => [...get(v), ...get(EF), ...V_GT_U])), SUB,
      ...set(DROP),
    ...END,
    ...get(I), ...get(P), ADD, ...set(I),
    BR, 1, // $main
    ...END, // $wide
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
    ...wide,
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
  return [0x04, 0x0d, 0x7f, 0x0b, 0x7b, 0x08, 0x7b, 0x04, 0x7e, ...code];
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
