/**
 * Lines of a session file as pi splits and parses them (pi 1.6.0 `loadEntriesFromFile`): split
 * on `\n` only, blank lines (JavaScript `trim()` whitespace) skipped, each line judged by
 * `JSON.parse`.
 */

import { isAscii, transcode } from "node:buffer";

const NEWLINE = 0x0a;

/**
 * Splits a stream of chunks into lines without copying chunks: complete lines inside a chunk are
 * handed out as ranges of that chunk; only a line that spans chunks is concatenated (once).
 */
export class LineSplitter {
  private carry: Buffer[] = [];
  private carryOffset = 0;
  /** File offset of the next byte to be pushed. */
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** Account for `n` bytes at the start of `chunk` that are not part of any line (a BOM). */
  skip(_chunk: Buffer, n: number): void {
    this.offset += n;
  }

  push(chunk: Buffer, onLine: (buf: Buffer, start: number, end: number, offset: number) => void): void {
    const base = this.offset;
    this.offset += chunk.length;
    let pos = 0;
    if (this.carry.length > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        this.carry.push(Buffer.from(chunk));
        return;
      }
      const line = Buffer.concat([...this.carry, chunk.subarray(0, nl)]);
      this.carry = [];
      onLine(line, 0, line.length, this.carryOffset);
      pos = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, pos);
      if (nl < 0) break;
      onLine(chunk, pos, nl, base + pos);
      pos = nl + 1;
    }
    if (pos < chunk.length) {
      // A copy: the caller may reuse `chunk` for the next read.
      this.carry = [Buffer.from(chunk.subarray(pos))];
      this.carryOffset = base + pos;
    }
  }

  /** The unterminated last line, if any. */
  remainder(): { buf: Buffer; offset: number } | undefined {
    if (this.carry.length === 0) return undefined;
    const buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry);
    return { buf, offset: this.carryOffset };
  }
}

const JS_WHITESPACE = /^[\s\uFEFF\u00A0]*$/;

/** Whether bytes `start..end` of `buf` are blank as JavaScript's `trim()` sees them (ASCII fast path). */
export function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c) continue;
    if (b < 0x80) return false;
    // Non-ASCII: let JavaScript decide (trim() also strips Unicode spaces and the BOM).
    return JS_WHITESPACE.test(buf.toString("utf8", i, end));
  }
  return true;
}

/**
 * The text of bytes `start..end` of `buf`, exactly as `buf.toString("utf8", start, end)` decodes it
 * (pi: `readFileSync(file, "utf8")`). A line with non-ASCII text is converted by `transcode`
 * (simdutf: about 3× faster than V8's decoder, half the cost of opening a text-heavy session);
 * it refuses invalid UTF-8, which `toString` then decodes with U+FFFD as pi does.
 */
export function decodeLine(buf: Buffer, start: number, end: number): string {
  const bytes = buf.subarray(start, end);
  if (typeof transcode !== "function" || isAscii(bytes)) return buf.toString("utf8", start, end);
  try {
    return transcode(bytes, "utf8", "utf16le").toString("utf16le");
  } catch {
    return buf.toString("utf8", start, end);
  }
}

/**
 * Parse bytes `start..end` of `buf` as pi parses a line: `JSON.parse` of the UTF-8 decoded text.
 * @throws SyntaxError for a line pi would skip.
 */
export function parseLine(buf: Buffer, start: number, end: number): unknown {
  return JSON.parse(decodeLine(buf, start, end));
}
