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

/** Thrown when a path names something other than a regular file (a FIFO, a device, a directory, a socket). */
export class NotARegularFileError extends Error {
  readonly code = "ENOTREGULAR";
  constructor(
    readonly path: string,
    kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file: pi-context reads only session files`);
    this.name = "NotARegularFileError";
  }
}

/** What a non-regular file is, in words. */
function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isDirectory()) return "a directory";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

// O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after the open).
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/**
 * Open `path` for reading, only if it is a regular file (a FIFO would block a read forever, a
 * device like `/dev/zero` never ends). Without `O_NONBLOCK` (Windows) the path is stat-ed first.
 * @returns the fd and its stat.
 * @throws {NotARegularFileError}; the `fs` error when it cannot be opened (`ENOENT`, `EACCES`).
 */
export function openRegularSync(path: string): { fd: number; stat: fs.Stats } {
  if (fs.constants.O_NONBLOCK === undefined) {
    const before = fs.statSync(path);
    if (!before.isFile()) throw new NotARegularFileError(path, kindOf(before));
  }
  const fd = fs.openSync(path, OPEN_FLAGS);
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    throw new NotARegularFileError(path, kindOf(stat));
  }
  return { fd, stat };
}

/** {@link openRegularSync}, asynchronously (a `FileHandle`). @throws the same errors. */
export async function openRegular(path: string): Promise<{ handle: fs.promises.FileHandle; stat: fs.Stats }> {
  if (fs.constants.O_NONBLOCK === undefined) {
    const before = await fs.promises.stat(path);
    if (!before.isFile()) throw new NotARegularFileError(path, kindOf(before));
  }
  const handle = await fs.promises.open(path, OPEN_FLAGS);
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new NotARegularFileError(path, kindOf(stat));
  }
  return { handle, stat };
}

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
 * Stream `handle` from byte `from` up to `until` (the size it had when opened: a file that keeps
 * growing is read up to there, the rest on the next refresh) or its end, in chunks of 2 MB: the
 * next chunk is read while `onChunk` parses this one (two buffers take turns, so `onChunk` must
 * copy what it keeps of a chunk), and other work runs between chunks (the extension host must stay
 * responsive).
 * @returns the position after the last byte read.
 * @throws the `fs` error of a read.
 */
export async function streamChunks(
  handle: fs.promises.FileHandle,
  from: number,
  onChunk: (chunk: Buffer) => void,
  until = Number.POSITIVE_INFINITY,
): Promise<number> {
  let position = from;
  const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
  let turn = 0;
  const readAt = (at: number): Promise<{ chunk: Buffer; bytesRead: number }> => {
    const chunk = buffers[turn++ % 2]!;
    const length = Math.min(CHUNK_BYTES, Math.max(0, until - at));
    if (length === 0) return Promise.resolve({ chunk, bytesRead: 0 });
    return handle.read(chunk, 0, length, at).then(({ bytesRead }) => ({ chunk, bytesRead }));
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
