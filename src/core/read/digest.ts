/**
 * SHA-256 of a session file's committed bytes (up to the last `\n`), computed while it is read, so
 * the write path can prove right before it appends that the file still holds the planned bytes.
 */

import * as crypto from "node:crypto";
import { readFullySync } from "./disk";

const NEWLINE = 0x0a;
const VERIFY_BLOCK_BYTES = 2 * 1024 * 1024;

/** The first `bytes` bytes of the file, and their SHA-256 (hex). */
export interface PrefixDigest {
  bytes: number;
  sha256: string;
}

/** A running SHA-256 up to the last `\n` fed; bytes after it are held back (a refresh reads them again). */
export class ContentDigest {
  private hash = crypto.createHash("sha256");
  private hashed = 0;
  /** Copies: the reader reuses its buffers. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  private broken = false;

  reset(): void {
    this.hash = crypto.createHash("sha256");
    this.hashed = 0;
    this.held = [];
    this.heldBytes = 0;
    this.broken = false;
  }

  /** Continue at 0, or at the end of the last complete line fed; any other offset breaks the digest. */
  continueAt(offset: number): void {
    if (offset === 0) return this.reset();
    this.held = [];
    this.heldBytes = 0;
    if (offset !== this.hashed) this.broken = true;
  }

  feed(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const nl = chunk.lastIndexOf(NEWLINE);
    if (nl < 0) {
      this.held.push(Buffer.from(chunk));
      this.heldBytes += chunk.length;
      return;
    }
    for (const b of this.held) this.hash.update(b);
    this.hash.update(chunk.subarray(0, nl + 1));
    this.hashed += this.heldBytes + nl + 1;
    this.held = nl + 1 < chunk.length ? [Buffer.from(chunk.subarray(nl + 1))] : [];
    this.heldBytes = chunk.length - nl - 1;
  }

  /** Undefined after a gap. */
  result(): PrefixDigest | undefined {
    if (this.broken) return undefined;
    return { bytes: this.hashed, sha256: this.hash.copy().digest("hex") };
  }
}

/** SHA-256 (hex) of the first `bytes` bytes of `fd`; undefined when shorter. @throws the `fs` error of a read. */
export function digestOfPrefix(fd: number, bytes: number): string | undefined {
  const hash = crypto.createHash("sha256");
  const block = Buffer.allocUnsafe(Math.min(VERIFY_BLOCK_BYTES, Math.max(bytes, 1)));
  let done = 0;
  while (done < bytes) {
    const want = Math.min(block.length, bytes - done);
    const view = want === block.length ? block : block.subarray(0, want);
    const n = readFullySync(fd, view, done);
    if (n < want) return undefined;
    hash.update(view);
    done += n;
  }
  return hash.digest("hex");
}
