/**
 * A SHA-256 of the committed bytes of a session file (everything up to and including the last
 * `\n`), computed while the file is read — no second pass — so the write path can prove, right
 * before it appends, that the file still holds exactly the bytes a plan was made from.
 *
 * Only the write flows ask for it (`SessionFile.open(path, { digest: true })`); the UI's reads do
 * not pay for it. The digest covers raw file bytes (a BOM included), never the decoded text.
 */

import * as crypto from "node:crypto";
import { readFullySync } from "./disk";

const NEWLINE = 0x0a;
/** Block size of {@link digestOfPrefix}'s reads. */
const VERIFY_BLOCK_BYTES = 2 * 1024 * 1024;

/** What a digest covers: the first `bytes` bytes of the file, and their SHA-256 (hex). */
export interface PrefixDigest {
  bytes: number;
  sha256: string;
}

/**
 * A running SHA-256 over the bytes of a file fed in order, up to the last `\n` seen: bytes after
 * it (an unterminated final line) are held back until their line ends, because a refresh reads
 * them again.
 */
export class ContentDigest {
  private hash = crypto.createHash("sha256");
  /** Bytes hashed so far (= offset after the last `\n` fed). */
  private hashed = 0;
  /** Bytes fed after {@link hashed}: copies (the reader reuses its buffers). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Fed out of order: no result until {@link reset}. */
  private broken = false;

  /** Start again at byte 0 (a file read from scratch). */
  reset(): void {
    this.hash = crypto.createHash("sha256");
    this.hashed = 0;
    this.held = [];
    this.heldBytes = 0;
    this.broken = false;
  }

  /**
   * The next bytes will be fed from `offset` on: 0 starts again; otherwise it must be the end of
   * the last complete line fed (a refresh re-reads an unterminated final line), and what was held
   * after it is dropped. Any other offset leaves the digest without a result until {@link reset}.
   */
  continueAt(offset: number): void {
    if (offset === 0) return this.reset();
    this.held = [];
    this.heldBytes = 0;
    if (offset !== this.hashed) this.broken = true;
  }

  /** Feed the next bytes of the file (in file order, no gaps). */
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

  /** The digest of the bytes up to the last `\n` fed (the running hash goes on); undefined after a gap. */
  result(): PrefixDigest | undefined {
    if (this.broken) return undefined;
    return { bytes: this.hashed, sha256: this.hash.copy().digest("hex") };
  }
}

/**
 * SHA-256 (hex) of the first `bytes` bytes of an open file, read in 2 MB blocks.
 * @returns undefined when the file is shorter than `bytes`.
 * @throws the `fs` error of a read.
 */
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
