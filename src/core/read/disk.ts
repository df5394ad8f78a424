/**
 * Reading a session file from disk without ever writing it: streaming it in large chunks (double
 * buffered, yielding to the event loop between chunks), reading a byte range in full, and probes
 * that notice a file rewritten in place (pi's migration rewrite) since it was read.
 */

import * as fs from "node:fs";

/** Read size for streaming a file. */
const CHUNK_BYTES = 2 * 1024 * 1024;
/** Bytes of the file's start kept as a probe (the header line). */
const HEAD_PROBE_BYTES = 4096;
/** Bytes before the end of what was read kept as a probe. */
const TAIL_PROBE_BYTES = 64;

/**
 * Fill `buf` with the bytes of `fd` from `position` (synchronously), until `buf` is full or the
 * file ends.
 * @returns how many bytes were read (less than `buf.length` at the end of the file).
 * @throws the `fs` error of `readSync`.
 */
export function readFullySync(fd: number, buf: Buffer, position: number): number {
  const length = buf.length;
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * Stream `handle` from byte `from` to its end in chunks of 2 MB: the next chunk is read while
 * `onChunk` parses this one (two buffers take turns, so `onChunk` must copy what it keeps of a
 * chunk), and other work runs between chunks (the extension host must stay responsive).
 * @returns the position after the last byte read.
 * @throws the `fs` error of a read.
 */
export async function streamChunks(
  handle: fs.promises.FileHandle,
  from: number,
  onChunk: (chunk: Buffer) => void,
): Promise<number> {
  let position = from;
  const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
  let turn = 0;
  const readAt = (at: number): Promise<{ chunk: Buffer; bytesRead: number }> => {
    const chunk = buffers[turn++ % 2]!;
    return handle.read(chunk, 0, CHUNK_BYTES, at).then(({ bytesRead }) => ({ chunk, bytesRead }));
  };
  // Double buffering: the next chunk is read while this one is parsed.
  let next = readAt(position);
  for (;;) {
    const { chunk, bytesRead } = await next;
    if (bytesRead === 0) break;
    position += bytesRead;
    next = readAt(position);
    onChunk(bytesRead === CHUNK_BYTES ? chunk : chunk.subarray(0, bytesRead));
    // Let other work run between chunks.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return position;
}

/**
 * Copies of the first bytes of a file (its header line) and of the last bytes before the end of
 * what was read (`committedBytes`): when either differs on disk, the file was rewritten.
 */
export class FileProbes {
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);

  /** Forget both probes (a file read again from scratch). */
  clear(): void {
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
  }

  /** Whether the bytes on disk still equal both probes (`committedBytes`: as when they were captured). */
  matches(fd: number, committedBytes: number): boolean {
    if (this.head.length > 0) {
      const head = Buffer.alloc(this.head.length);
      fs.readSync(fd, head, 0, head.length, 0);
      if (!head.equals(this.head)) return false;
    }
    if (this.tail.length > 0) {
      const tail = Buffer.alloc(this.tail.length);
      fs.readSync(fd, tail, 0, tail.length, committedBytes - tail.length);
      if (!tail.equals(this.tail)) return false;
    }
    return true;
  }

  /** After an append was read (synchronously): complete a short head probe, take the tail probe again. */
  captureSync(fd: number, committedBytes: number): void {
    if (this.head.length < Math.min(committedBytes, HEAD_PROBE_BYTES)) {
      this.head = Buffer.alloc(Math.min(committedBytes, HEAD_PROBE_BYTES));
      fs.readSync(fd, this.head, 0, this.head.length, 0);
    }
    const tailLength = Math.min(committedBytes, TAIL_PROBE_BYTES);
    this.tail = Buffer.alloc(tailLength);
    if (tailLength > 0) fs.readSync(fd, this.tail, 0, tailLength, committedBytes - tailLength);
  }

  /** After the file was streamed: take both probes. */
  async capture(handle: fs.promises.FileHandle, committedBytes: number): Promise<void> {
    const headLength = Math.min(committedBytes, HEAD_PROBE_BYTES);
    this.head = Buffer.alloc(headLength);
    if (headLength > 0) await handle.read(this.head, 0, headLength, 0);
    const tailLength = Math.min(committedBytes, TAIL_PROBE_BYTES);
    this.tail = Buffer.alloc(tailLength);
    if (tailLength > 0) await handle.read(this.tail, 0, tailLength, committedBytes - tailLength);
  }
}
