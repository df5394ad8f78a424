/** Lines as pi 1.6.0 `loadEntriesFromFile` sees them: split on `\n` only, `trim()`-blank skipped, `JSON.parse`d. */

import { isAscii, transcode } from "node:buffer";

const NEWLINE = 0x0a;

/** Splits chunks into lines without copying: only a line that spans chunks is concatenated. */
export class LineSplitter {
  private carry: Buffer[] = [];
  private carryOffset = 0;
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** Skip `n` bytes that belong to no line (a BOM). */
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
      // a copy: the caller may reuse `chunk` for the next read
      this.carry = [Buffer.from(chunk.subarray(pos))];
      this.carryOffset = base + pos;
    }
  }

  remainder(): { buf: Buffer; offset: number } | undefined {
    if (this.carry.length === 0) return undefined;
    const buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry);
    return { buf, offset: this.carryOffset };
  }
}

const JS_WHITESPACE = /^[\s\uFEFF\u00A0]*$/;

/** Blank as JavaScript's `trim()` sees it (ASCII fast path). */
export function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c) continue;
    if (b < 0x80) return false;
    // non-ASCII: trim() also strips Unicode spaces and the BOM
    return JS_WHITESPACE.test(buf.toString("utf8", i, end));
  }
  return true;
}

/**
 * Exactly `buf.toString("utf8", start, end)` (pi's decoding), via `transcode` for non-ASCII (much
 * faster); invalid UTF-8 falls back to `toString`, which yields U+FFFD as pi does.
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

/** `JSON.parse` of the decoded line. @throws SyntaxError for a line pi would skip. */
export function parseLine(buf: Buffer, start: number, end: number): unknown {
  return JSON.parse(decodeLine(buf, start, end));
}
