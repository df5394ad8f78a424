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

/** Thrown for input that `JSON.parse` would reject (or that is too deeply nested to scan). */
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
/**
 * True when `buf[start, end)` holds a byte below 0x20 (a raw control character, which JSON forbids
 * inside strings). Tests four bytes at a time with the "has a byte less than n" word trick:
 * `(x − 0x20202020) & ~x & 0x80808080` is non-zero iff some byte of x is < 0x20.
 */
export function hasControlByte(buf: Buffer, start: number, end: number): boolean {
  let i = start;
  const absolute = buf.byteOffset + i;
  const misalign = (4 - (absolute & 3)) & 3;
  const headEnd = Math.min(end, i + misalign);
  for (; i < headEnd; i++) if (buf[i]! < 0x20) return true;
  const words = (end - i) >>> 2;
  if (words > 0) {
    const view = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    for (let w = 0; w < words; w++) {
      const x = view[w]!;
      if (((x - 0x20202020) & ~x & 0x80808080) !== 0) return true;
    }
    i += words << 2;
  }
  for (; i < end; i++) if (buf[i]! < 0x20) return true;
  return false;
}
const NUMBER_SYNTAX = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const HEX = /^[0-9a-fA-F]{4}$/;

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

  /** The first `maxUnits` UTF-16 code units of the value, decoding only a prefix of the bytes. */
  head(maxUnits: number): string {
    let cut = Math.min(this.end, this.start + maxUnits * 4 + 8);
    if (cut < this.end) {
      // Never cut inside an escape sequence or a UTF-8 sequence.
      if (this.hasEscape) {
        let at = this.buf.indexOf(BACKSLASH, this.start);
        while (at >= 0 && at < cut) {
          const escLength = this.buf[at + 1] === 0x75 ? 6 : 2;
          if (at + escLength > cut) {
            cut = at;
            break;
          }
          at = this.buf.indexOf(BACKSLASH, at + escLength);
        }
      }
      while (cut > this.start && (this.buf[cut]! & 0xc0) === 0x80) cut--;
    }
    const raw = this.buf.toString("utf8", this.start, cut);
    const text = this.hasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    return text.length > maxUnits ? text.slice(0, maxUnits) : text;
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
   * Validate escapes and measure long strings while scanning (default true). With `false`, long
   * strings are only checked for raw control characters; escapes are validated and lengths
   * measured on first use of `length`/`jsonLength` (which may then throw {@link JsonScanError}).
   */
  measure?: boolean;
}

/**
 * Read one JSON value that spans exactly `buf[start, end)` (surrounding JSON whitespace allowed).
 *
 * @returns the value; strings of `longStringBytes` bytes or more are {@link LongString}s that keep a
 *   reference to `buf`.
 * @throws {JsonScanError} when `JSON.parse` would reject the text, or nesting is deeper than 512.
 */
export function scanJson(buf: Buffer, start: number, end: number, options: ScanOptions = {}): ScannedValue {
  const longStringBytes = options.longStringBytes ?? 256;
  const measure = options.measure ?? true;
  let pos = start;
  let depth = 0;

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

  // Position of the next backslash at or after the last query (-1: none left in the buffer).
  // Scanning only moves forward, so all backslash searches of a line cost one pass in total.
  let nextBackslash = -2;
  const findBackslash = (from: number): number => {
    if (nextBackslash !== -1 && nextBackslash < from) nextBackslash = buf.indexOf(BACKSLASH, from);
    return nextBackslash;
  };

  const readString = (): string | LongString => {
    // pos is at the opening quote
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
      // Long string: find the closing quote natively, skipping escaped quotes.
      let from = i;
      for (;;) {
        q = buf.indexOf(QUOTE, from);
        if (q < 0 || q >= end) {
          pos = end;
          fail("unterminated string");
        }
        let k = q - 1;
        while (k >= s && buf[k] === BACKSLASH) k--;
        if ((q - 1 - k) % 2 === 0) break;
        from = q + 1;
      }
      if (!hasEscape) {
        const b = findBackslash(s);
        hasEscape = b >= 0 && b < q;
      }
    }
    pos = q + 1;
    const byteLength = q - s;
    if (byteLength >= longStringBytes) return measureLongString(s, q, hasEscape);
    if (!hasEscape) {
      if (byteLength > 64 && hasControlByte(buf, s, q)) {
        pos = s;
        fail("control character in string");
      }
      return buf.toString("utf8", s, q);
    }
    // Short string with escapes: JSON.parse is the reference decoder (and validator).
    try {
      return JSON.parse(buf.toString("utf8", s - 1, q + 1)) as string;
    } catch {
      pos = s;
      return fail("invalid string");
    }
  };

  const measureLongString = (s: number, q: number, hasEscape: boolean): LongString => {
    if (hasControlByte(buf, s, q)) {
      pos = s;
      fail("control character in string");
    }
    if (!measure) return new LongString(buf, s, q, hasEscape);
    try {
      return new LongString(buf, s, q, hasEscape, measureJsonString(buf, s, q, hasEscape));
    } catch (error) {
      if (error instanceof JsonScanError) pos = s + error.position;
      throw error;
    }
  };

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

  const readValue = (): ScannedValue => {
    skipWhitespace();
    if (pos >= end) fail("unexpected end of input");
    const b = buf[pos];
    switch (b) {
      case 0x7b: {
        // {
        if (++depth > 512) fail("nesting too deep");
        pos++;
        const obj: { [key: string]: ScannedValue } = {};
        skipWhitespace();
        if (buf[pos] === 0x7d) {
          pos++;
          depth--;
          return obj;
        }
        for (;;) {
          skipWhitespace();
          if (buf[pos] !== QUOTE) fail("expected property name");
          const keyValue = readString();
          const key = typeof keyValue === "string" ? keyValue : keyValue.toString();
          skipWhitespace();
          if (buf[pos] !== 0x3a) fail("expected ':'");
          pos++;
          const value = readValue();
          if (key === "__proto__") {
            Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
          } else {
            obj[key] = value;
          }
          skipWhitespace();
          const sep = buf[pos];
          if (sep === 0x2c) {
            pos++;
            continue;
          }
          if (sep === 0x7d) {
            pos++;
            depth--;
            return obj;
          }
          fail("expected ',' or '}'");
        }
      }
      // falls through (unreachable)
      case 0x5b: {
        // [
        if (++depth > 512) fail("nesting too deep");
        pos++;
        const arr: ScannedValue[] = [];
        skipWhitespace();
        if (buf[pos] === 0x5d) {
          pos++;
          depth--;
          return arr;
        }
        for (;;) {
          arr.push(readValue());
          skipWhitespace();
          const sep = buf[pos];
          if (sep === 0x2c) {
            pos++;
            continue;
          }
          if (sep === 0x5d) {
            pos++;
            depth--;
            return arr;
          }
          fail("expected ',' or ']'");
        }
      }
      // falls through (unreachable)
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

  const value = readValue();
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
  if (value === null) return 4;
  switch (typeof value) {
    case "string":
      return JSON.stringify(value).length;
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    default:
      break;
  }
  if (value instanceof LongString) return value.jsonLength;
  if (Array.isArray(value)) {
    let n = 2 + Math.max(0, value.length - 1);
    for (const item of value) n += jsonLength(item);
    return n;
  }
  const keys = Object.keys(value);
  let n = 2 + Math.max(0, keys.length - 1);
  for (const key of keys)
    n += JSON.stringify(key).length + 1 + jsonLength((value as Record<string, ScannedValue>)[key]);
  return n;
}
