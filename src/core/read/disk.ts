/** Reading a session file without ever writing it: streaming, full range reads, and rewrite probes. */

import * as fs from "node:fs";

const CHUNK_BYTES = 2 * 1024 * 1024;
const HEAD_PROBE_BYTES = 4096;
const TAIL_PROBE_BYTES = 64;

/** A FIFO, device, directory or socket. */
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
 * Open `path` only if it is a regular file (a FIFO blocks a read forever, `/dev/zero` never ends).
 * @throws {NotARegularFileError}; the `fs` error when it cannot be opened.
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

/** Fill `buf` from `position` until full or at the end; @returns bytes read. @throws the `fs` error. */
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
 * Stream `handle` from `from` up to `until` (its size when opened) in 2 MB chunks, reading the next
 * while `onChunk` parses this one (so `onChunk` must copy what it keeps). @returns the end position.
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
  let next = readAt(position);
  for (;;) {
    const { chunk, bytesRead } = await next;
    if (bytesRead === 0) break;
    position += bytesRead;
    next = readAt(position);
    onChunk(bytesRead === CHUNK_BYTES ? chunk : chunk.subarray(0, bytesRead));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return position;
}

/** The file's first bytes and the last bytes before `committedBytes`: when either differs, it was rewritten. */
export class FileProbes {
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);

  clear(): void {
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
  }

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

  captureSync(fd: number, committedBytes: number): void {
    if (this.head.length < Math.min(committedBytes, HEAD_PROBE_BYTES)) {
      this.head = Buffer.alloc(Math.min(committedBytes, HEAD_PROBE_BYTES));
      fs.readSync(fd, this.head, 0, this.head.length, 0);
    }
    const tailLength = Math.min(committedBytes, TAIL_PROBE_BYTES);
    this.tail = Buffer.alloc(tailLength);
    if (tailLength > 0) fs.readSync(fd, this.tail, 0, tailLength, committedBytes - tailLength);
  }

  async capture(handle: fs.promises.FileHandle, committedBytes: number): Promise<void> {
    const headLength = Math.min(committedBytes, HEAD_PROBE_BYTES);
    this.head = Buffer.alloc(headLength);
    if (headLength > 0) await handle.read(this.head, 0, headLength, 0);
    const tailLength = Math.min(committedBytes, TAIL_PROBE_BYTES);
    this.tail = Buffer.alloc(tailLength);
    if (tailLength > 0) await handle.read(this.tail, 0, tailLength, committedBytes - tailLength);
  }
}
