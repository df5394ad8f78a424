/**
 * A strict JSON reader for one session line that does not materialise long strings.
 *
 * pi stores screenshots (base64), file contents and command output inside JSON lines; a
 * 128 MB session can hold single lines of 600 kB. To open such files faster than
 * `JSON.parse` of every line while holding far less memory, long strings are returned as
 * {@link LongString} handles that know their byte range and compute, on demand, exactly the
 * numbers pi's rules need: the UTF-16 length of the decoded value (`estimateTokens` counts
 * `string.length`) and the length of `JSON.stringify(value)` (tool-call arguments).
 *
 * The reader accepts exactly what `JSON.parse` accepts (RFC 8259: no control characters in
 * strings, valid escapes, strict numbers, no trailing data), so a line we accept is a line pi
 * accepts and vice versa. Callers that get a {@link JsonScanError} may confirm with
 * `JSON.parse` (the ground truth) — see `parseLine` in `lines.ts`.
 */

import { isAscii } from "node:buffer";
import { StringFinder, STRING_INVALID, type StringMeasure } from "./strscan";

/** Thrown for input that `JSON.parse` would reject. */
export class JsonScanError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = "JsonScanError";
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER_SYNTAX = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const HEX = /^[0-9a-fA-F]{4}$/;

/** What the one-character escapes other than `\n` and `\r` decode to, by the byte after the backslash. */
const ONE_CHAR_ESCAPES: Record<number, string> = {
  0x22: '"',
  0x5c: "\\",
  0x2f: "/",
  0x62: "\b",
  0x66: "\f",
  0x74: "\t",
};

/**
 * A JSON string value kept as a byte range of the line it was read from.
 * `length` and `jsonLength` are computed once, on first use, without keeping a decoded copy.
 */
export class LongString {
  private units: number;
  private jsonUnits: number;

  constructor(
    private readonly buf: Buffer,
    /** Byte offset of the first byte after the opening quote. */
    readonly start: number,
    /** Byte offset of the closing quote. */
    readonly end: number,
    /** True when the raw bytes contain at least one backslash escape. */
    readonly hasEscape: boolean,
    /** Measured lengths, when known at construction (else measured on first use). */
    measured?: { units: number; jsonUnits: number },
  ) {
    this.units = measured ? measured.units : -1;
    this.jsonUnits = measured ? measured.jsonUnits : -1;
  }

  /** UTF-16 code units of the decoded value, i.e. `value.length` in JavaScript. @throws {JsonScanError} for an invalid escape. */
  get length(): number {
    if (this.units < 0) this.measure();
    return this.units;
  }

  /** `JSON.stringify(value).length` (quotes included), as V8 escapes it. @throws {JsonScanError} for an invalid escape. */
  get jsonLength(): number {
    if (this.jsonUnits < 0) this.measure();
    return this.jsonUnits;
  }

  private measure(): void {
    const m = measureJsonString(this.buf, this.start, this.end, this.hasEscape);
    this.units = m.units;
    this.jsonUnits = m.jsonUnits;
  }

  /** Raw byte length of the encoded string body (between the quotes). */
  get byteLength(): number {
    return this.end - this.start;
  }

  /** The decoded value (allocates the whole string: use only when it is really needed). */
  toString(): string {
    if (!this.hasEscape) return this.buf.toString("utf8", this.start, this.end);
    return JSON.parse(this.buf.toString("utf8", this.start - 1, this.end + 1)) as string;
  }

  /**
   * The first `maxUnits` UTF-16 code units of the value, decoding only a prefix of the bytes: first
   * as many bytes as ASCII text needs, more only when they decode to fewer units (escapes, non-ASCII).
   */
  head(maxUnits: number): string {
    const small = this.prefix(maxUnits, maxUnits + 8);
    if (small.text.length >= maxUnits || small.whole) return small.text.slice(0, maxUnits);
    return this.prefix(maxUnits, maxUnits * 6 + 8).text.slice(0, maxUnits);
  }

  /**
   * The value's first line as `firstLine` in `entries.ts` sees it — leading whitespace dropped,
   * cut before the first `\n` or `\r\n` — decoded from the raw bytes of that line alone, and only
   * its first `maxUnits + 1` UTF-16 units or more when longer (enough to tell that it is). For
   * the common case; one-character escapes in the line (`\" \\ \/ \b \f \t`, a lone `\r`) are
   * decoded here. Undefined when the raw bytes need the full decoder: a `\u` escape before the
   * line's end, or a non-ASCII byte where leading whitespace ends (JavaScript's `\s` also strips
   * Unicode spaces).
   */
  firstLine(maxUnits: number): string | undefined {
    const buf = this.buf;
    const end = this.end;
    let i = this.start;
    while (i < end) {
      const b = buf[i]!;
      if (b === 0x20) i++;
      else if (b === BACKSLASH) {
        const e = buf[i + 1];
        if (e === 0x6e || e === 0x74 || e === 0x72 || e === 0x66)
          i += 2; // \n \t \r \f
        else break; // the line starts with an escape: decoded below
      } else if (b >= 0x80) return undefined;
      else break;
    }
    // every unit is at most 3 bytes (a 4-byte sequence is 2 units, an escape decoded here 2 bytes
    // for 1 unit): this many bytes, less a cut sequence, hold more than maxUnits units
    const budget = i + 3 * (maxUnits + 2);
    let j = i;
    /** Start of the raw bytes not yet decoded into `text`. */
    let from = i;
    let text = "";
    while (j < end && j < budget) {
      if (buf[j] !== BACKSLASH) {
        j++;
        continue;
      }
      const e = buf[j + 1]!;
      if (e === 0x6e) break; // \n
      let decoded: string | undefined;
      if (e === 0x72) {
        if (buf[j + 2] === BACKSLASH && buf[j + 3] === 0x6e) break; // \r\n
        decoded = "\r"; // a lone \r stays in the line, as in firstLine's /\r?\n/
      } else decoded = ONE_CHAR_ESCAPES[e];
      if (decoded === undefined) return undefined; // \u: the decoder decides
      text += buf.toString("utf8", from, j) + decoded;
      j += 2;
      from = j;
    }
    // never cut inside a UTF-8 sequence (a cut line is longer than maxUnits anyway); bytes after
    // an escape start a character
    if (j >= budget && j < end) while (j > from && (buf[j]! & 0xc0) === 0x80) j--;
    return text + buf.toString("utf8", from, j);
  }

  /** The value decoded from at most `maxBytes` raw bytes (never cut inside an escape or a UTF-8 sequence). */
  private prefix(maxUnits: number, maxBytes: number): { text: string; whole: boolean } {
    let cut = Math.min(this.end, this.start + maxBytes);
    const whole = cut === this.end;
    if (!whole) {
      while (cut > this.start && (this.buf[cut]! & 0xc0) === 0x80) cut--;
      if (this.hasEscape) cut = this.escapeSafeCut(cut);
    }
    const raw = this.buf.toString("utf8", this.start, cut);
    const text = this.hasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    return { text: text.length > maxUnits ? text.slice(0, maxUnits) : text, whole };
  }

  /**
   * `cut`, or the start of the escape it would cut through. Only the last backslash within the 6
   * bytes before `cut` can start such an escape (escapes do not overlap and hold no backslash after
   * their first byte); it starts one when its run of backslashes is odd (validated string).
   */
  private escapeSafeCut(cut: number): number {
    const buf = this.buf;
    let j = cut - 1;
    const stop = Math.max(this.start, cut - 6);
    while (j >= stop && buf[j] !== BACKSLASH) j--;
    if (j < stop) return cut;
    let run = 1;
    while (j - run >= this.start && buf[j - run] === BACKSLASH) run++;
    if (run % 2 === 0) return cut; // an escaped backslash: its escape ends at j + 1 ≤ cut
    const length = j + 1 < cut && buf[j + 1] === 0x75 ? 6 : 2;
    return j + length > cut ? j : cut;
  }
}

/**
 * Validate and measure the body `buf[s, q)` of a JSON string (no raw control characters — checked
 * by the caller): decoded UTF-16 length = characters of the raw text minus escape overhead;
 * `JSON.stringify` length adds V8's re-escaping of `"`, `\\`, control characters (2 or 6 chars)
 * and lone surrogates (6 chars).
 * @throws {JsonScanError} for an invalid escape (`position` relative to `s`).
 */
export function measureJsonString(
  buf: Buffer,
  s: number,
  q: number,
  hasEscape: boolean,
): { units: number; jsonUnits: number } {
  const rawChars = isAscii(buf.subarray(s, q)) ? q - s : buf.toString("utf8", s, q).length;
  if (!hasEscape) return { units: rawChars, jsonUnits: rawChars + 2 };
  let overhead = 0; // raw chars that escapes add beyond the one unit they decode to
  let extra = 0; // chars JSON.stringify adds when re-escaping
  let pendingHigh = false; // previous escape was a high surrogate ending exactly here
  let previousEscapeEnd = -1;
  let at = buf.indexOf(BACKSLASH, s);
  while (at >= 0 && at < q) {
    const c = buf[at + 1];
    let escLength = 2;
    let code: number;
    switch (c) {
      case 0x22:
        code = 0x22;
        break;
      case 0x5c:
        code = 0x5c;
        break;
      case 0x2f:
        code = 0x2f;
        break;
      case 0x62:
        code = 0x08;
        break;
      case 0x66:
        code = 0x0c;
        break;
      case 0x6e:
        code = 0x0a;
        break;
      case 0x72:
        code = 0x0d;
        break;
      case 0x74:
        code = 0x09;
        break;
      case 0x75: {
        escLength = 6;
        const hex = at + 6 <= q ? buf.toString("latin1", at + 2, at + 6) : "";
        if (!HEX.test(hex)) throw new JsonScanError(`invalid \\u escape at byte ${at - s}`, at - s);
        code = parseInt(hex, 16);
        break;
      }
      default:
        throw new JsonScanError(`invalid escape at byte ${at - s}`, at - s);
    }
    overhead += escLength - 1;
    if (pendingHigh && previousEscapeEnd === at && code >= 0xdc00 && code <= 0xdfff) {
      extra -= 5; // the high surrogate counted as lone is paired with this one
      pendingHigh = false;
    } else {
      pendingHigh = false;
      if (
        code === 0x22 ||
        code === 0x5c ||
        code === 0x08 ||
        code === 0x0c ||
        code === 0x0a ||
        code === 0x0d ||
        code === 0x09
      ) {
        extra += 1;
      } else if (code < 0x20) {
        extra += 5;
      } else if (code >= 0xd800 && code <= 0xdbff) {
        extra += 5; // lone unless the next escape is a low surrogate
        pendingHigh = true;
      } else if (code >= 0xdc00 && code <= 0xdfff) {
        extra += 5;
      }
    }
    previousEscapeEnd = at + escLength;
    at = buf.indexOf(BACKSLASH, at + escLength);
  }
  const units = rawChars - overhead;
  return { units, jsonUnits: units + extra + 2 };
}

/** A value read by {@link scanJson}: like `JSON.parse` output, but long strings may be {@link LongString}. */
export type ScannedValue =
  null | boolean | number | string | LongString | ScannedValue[] | { [key: string]: ScannedValue };

/** Options for {@link scanJson}. */
export interface ScanOptions {
  /** Strings whose encoded body is at least this many bytes become {@link LongString}s. Default 256. */
  longStringBytes?: number;
  /**
   * Measure long strings while scanning (default true). The WebAssembly string finder measures
   * them anyway while validating (free); with `false`, strings it could not measure (JavaScript
   * fallback, a line that is not valid UTF-8) are measured on first use of `length`/`jsonLength`.
   * Either way every string is fully validated while scanning (control bytes, escapes), so a line
   * is accepted exactly when `JSON.parse` accepts it.
   */
  measure?: boolean;
}

/**
 * Read one JSON value that spans exactly `buf[start, end)` (surrounding JSON whitespace allowed).
 *
 * @returns the value; strings of `longStringBytes` bytes or more are {@link LongString}s that keep a
 *   reference to `buf`.
 * @throws {JsonScanError} when `JSON.parse` would reject the text. Nesting depth is not limited
 *   (iterative, like V8's `JSON.parse`).
 */
export function scanJson(buf: Buffer, start: number, end: number, options: ScanOptions = {}): ScannedValue {
  const longStringBytes = options.longStringBytes ?? 256;
  const measure = options.measure ?? true;
  let pos = start;

  const fail = (what: string): never => {
    throw new JsonScanError(`${what} at byte ${pos - start}`, pos - start);
  };

  const skipWhitespace = (): void => {
    while (pos < end) {
      const b = buf[pos];
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) pos++;
      else break;
    }
  };

  // Strings longer than the short loop below are found and validated natively (strscan.ts).
  const finder = new StringFinder(buf, start, end);

  const readString = (): string | LongString => {
    // pos is at the opening quote; keys and short values are read by this loop.
    const s = pos + 1;
    let i = s;
    let hasEscape = false;
    const shortLimit = Math.min(end, s + 64);
    while (i < shortLimit) {
      const b = buf[i]!;
      if (b === QUOTE) break;
      if (b === BACKSLASH) {
        hasEscape = true;
        i += 2;
        continue;
      }
      if (b < 0x20) {
        pos = i;
        fail("control character in string");
      }
      i++;
    }
    let q: number;
    if (i < shortLimit && buf[i] === QUOTE) {
      q = i;
    } else {
      // A longer string: closing quote, control bytes and every escape in one native pass.
      const found = finder.find(s);
      if (found === STRING_INVALID) {
        pos = s;
        fail("invalid or unterminated string");
      }
      q = found >>> 1;
      hasEscape = (found & 1) === 1;
      pos = q + 1;
      if (q - s >= longStringBytes) return longString(s, q, hasEscape, finder.measure(s, q));
      return hasEscape ? (JSON.parse(buf.toString("utf8", s - 1, q + 1)) as string) : buf.toString("utf8", s, q);
    }
    pos = q + 1;
    if (!hasEscape) return buf.toString("utf8", s, q);
    // Short string with escapes: JSON.parse is the reference decoder (and validator).
    try {
      return JSON.parse(buf.toString("utf8", s - 1, q + 1)) as string;
    } catch {
      pos = s;
      return fail("invalid string");
    }
  };

  /** A validated long string: measured by the string finder, else now or on first use of its lengths. */
  const longString = (s: number, q: number, hasEscape: boolean, measured: StringMeasure | undefined): LongString =>
    measured
      ? new LongString(buf, s, q, hasEscape, measured)
      : measure
        ? new LongString(buf, s, q, hasEscape, measureJsonString(buf, s, q, hasEscape))
        : new LongString(buf, s, q, hasEscape);

  const readLiteral = (text: string, value: ScannedValue): ScannedValue => {
    for (let k = 0; k < text.length; k++) {
      if (buf[pos + k] !== text.charCodeAt(k)) fail("invalid literal");
    }
    pos += text.length;
    return value;
  };

  const readNumber = (): number => {
    const s = pos;
    while (pos < end) {
      const b = buf[pos]!;
      if ((b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45) pos++;
      else break;
    }
    const text = buf.toString("latin1", s, pos);
    if (!NUMBER_SYNTAX.test(text)) {
      pos = s;
      fail("invalid number");
    }
    return Number(text);
  };

  /** Read `"key":` of an object member (pos at the key's opening quote, after whitespace). */
  const readKey = (): string => {
    skipWhitespace();
    if (buf[pos] !== QUOTE) fail("expected property name");
    const keyValue = readString();
    skipWhitespace();
    if (buf[pos] !== 0x3a) fail("expected ':'");
    pos++;
    return typeof keyValue === "string" ? keyValue : keyValue.toString();
  };

  /** A scalar value (pos at its first byte). */
  const readScalar = (b: number | undefined): ScannedValue => {
    switch (b) {
      case QUOTE:
        return readString();
      case 0x74:
        return readLiteral("true", true);
      case 0x66:
        return readLiteral("false", false);
      case 0x6e:
        return readLiteral("null", null);
      default:
        if (b === 0x2d || (b !== undefined && b >= 0x30 && b <= 0x39)) return readNumber();
        return fail("unexpected character");
    }
  };

  // Iterative, like V8's JSON.parse: no nesting limit but memory. Open containers are kept in
  // `stack` (objects with the key their next value goes to, in `keys`).
  const stack: (ScannedValue[] | { [key: string]: ScannedValue })[] = [];
  const keys: (string | undefined)[] = [];
  let value: ScannedValue;
  parse: for (;;) {
    skipWhitespace();
    if (pos >= end) fail("unexpected end of input");
    const b = buf[pos];
    if (b === 0x7b || b === 0x5b) {
      pos++;
      skipWhitespace();
      if (buf[pos] === (b === 0x7b ? 0x7d : 0x5d)) {
        pos++;
        value = b === 0x7b ? {} : [];
      } else if (b === 0x7b) {
        const key = readKey();
        stack.push({});
        keys.push(key);
        continue;
      } else {
        stack.push([]);
        keys.push(undefined);
        continue;
      }
    } else {
      value = readScalar(b);
    }
    // A value is complete: add it to its container; close the containers that end here.
    for (;;) {
      const top = stack.length - 1;
      if (top < 0) break parse;
      const container = stack[top]!;
      const isArray = Array.isArray(container);
      if (isArray) container.push(value);
      else {
        const key = keys[top]!;
        if (key === "__proto__") {
          Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
        } else {
          container[key] = value;
        }
      }
      skipWhitespace();
      const sep = buf[pos];
      if (sep === 0x2c) {
        pos++;
        if (!isArray) keys[top] = readKey();
        continue parse;
      }
      if (sep !== (isArray ? 0x5d : 0x7d)) fail(isArray ? "expected ',' or ']'" : "expected ',' or '}'");
      pos++;
      stack.pop();
      keys.pop();
      value = container;
    }
  }
  skipWhitespace();
  if (pos !== end) fail("unexpected data after JSON value");
  return value;
}

/** UTF-16 length of a scanned string (`string` or {@link LongString}); 0 for anything else. */
export function strLength(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (value instanceof LongString) return value.length;
  return 0;
}

/** True for a non-empty scanned string (pi's truthiness test on a string field). */
export function isNonEmptyString(value: unknown): boolean {
  if (typeof value === "string") return value.length > 0;
  if (value instanceof LongString) return value.byteLength > 0;
  return false;
}

/** True for a scanned string of any length (`typeof x === "string"` in pi's code). */
export function isString(value: unknown): value is string | LongString {
  return typeof value === "string" || value instanceof LongString;
}

/** Decode a scanned string fully (`undefined` when it is not a string). */
export function strValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value instanceof LongString) return value.toString();
  return undefined;
}

/**
 * `JSON.stringify(value).length` for a scanned value, without building the string when it holds
 * {@link LongString}s. Mirrors V8: `undefined`/functions cannot occur in scanned values; non-finite
 * numbers (from `1e400`) stringify as `null`.
 */
export function jsonLength(value: ScannedValue | undefined): number {
  // JSON.stringify(undefined) is undefined and pi's `.length` on it would throw; count nothing.
  if (value === undefined) return 0;
  // Iterative (a line may nest thousands of levels deep): sum over every value in `pending`.
  let n = 0;
  const pending: ScannedValue[] = [value];
  while (pending.length > 0) {
    const v = pending.pop()!;
    if (v === null) {
      n += 4;
      continue;
    }
    switch (typeof v) {
      case "string":
        n += JSON.stringify(v).length;
        continue;
      case "number":
        n += Number.isFinite(v) ? String(v).length : 4;
        continue;
      case "boolean":
        n += v ? 4 : 5;
        continue;
      default:
        break;
    }
    if (v instanceof LongString) {
      n += v.jsonLength;
    } else if (Array.isArray(v)) {
      n += 2 + Math.max(0, v.length - 1);
      for (const item of v) pending.push(item);
    } else {
      const keys = Object.keys(v);
      n += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        n += JSON.stringify(key).length + 1;
        pending.push((v as Record<string, ScannedValue>)[key]!);
      }
    }
  }
  return n;
}
