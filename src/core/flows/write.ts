/**
 * The single write path: append complete JSON lines to a session file, only if nobody wrote
 * since we read it. Never truncates, rewrites or reformats anything.
 *
 * pi 1.6.0 appends one `JSON.stringify(entry) + "\n"` per entry (`SessionManager._persist`), keeps
 * the session in memory and never re-reads the file, and loads the last line as the leaf. So an
 * entry we append is only seen by a pi that opens the file afterwards; a running pi would branch
 * off its own leaf. Callers must check that pi is not running on the session (see `live.ts`).
 */

import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import type { SessionFile } from "../read/session";

/** Thrown when the file is not as we read it (or cannot safely take an append); nothing was written. */
export class SessionChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionChangedError";
  }
}

/** Thrown when the session must not be written to at all (old format, not a session, torn tail). */
export class UnsafeSessionWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeSessionWriteError";
  }
}

/** What the file must still look like when we append. */
export interface AppendExpectation {
  path: string;
  /** File size in bytes at read time. */
  size: number;
  /** The last bytes of the file at read time (up to 256), ending with `\n`. */
  tail: Buffer;
}

const TAIL_BYTES = 256;

/**
 * Capture what the file looks like now, from the session as it was read.
 * @throws {UnsafeSessionWriteError} for files we refuse to write: not a pi session, session format
 *   older than 3 (pi rewrites those on open, and their migrated ids are not stable), or a final line
 *   without `\n` (we never glue a record onto a fragment).
 */
export function expectationOf(session: SessionFile): AppendExpectation {
  const path = session.filePath;
  if (session.invalid || !session.header)
    throw new UnsafeSessionWriteError(`${path} is not a pi session; refusing to write.`);
  if (session.fileVersion < 3) {
    throw new UnsafeSessionWriteError(
      `${path} uses session format version ${session.fileVersion}. pi 1.6.0 rewrites such files when it opens them and gives their entries new ids; open the session in pi once (it migrates the file), then try again.`,
    );
  }
  if (session.size !== session.committedBytes) {
    throw new UnsafeSessionWriteError(
      `${path} ends with an incomplete line (${session.size - session.committedBytes} bytes without a newline). A writer may be in the middle of an append, or the file was cut off. Refusing to append after it.`,
    );
  }
  const size = session.committedBytes;
  const tailLength = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(tailLength);
  if (tailLength > 0) {
    const fd = fs.openSync(path, "r");
    try {
      fs.readSync(fd, tail, 0, tailLength, size - tailLength);
    } finally {
      fs.closeSync(fd);
    }
  }
  return { path, size, tail };
}

/**
 * True when the file still has the size and final bytes of `expectation` — a read-only check for
 * flows that ask the user before writing (the append re-checks under its own file handle).
 */
export function expectationHolds(expectation: AppendExpectation): boolean {
  try {
    const fd = fs.openSync(expectation.path, "r");
    try {
      if (fs.fstatSync(fd).size !== expectation.size) return false;
      if (expectation.tail.length === 0) return true;
      const tail = Buffer.alloc(expectation.tail.length);
      fs.readSync(fd, tail, 0, tail.length, expectation.size - tail.length);
      return tail.equals(expectation.tail);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * A fresh entry id like pi's `generateId`: the first 8 hex chars of a random UUID, re-drawn on
 * collision with existing ids (100 tries), then a full UUID.
 */
export function newEntryId(existing: { has(id: string): boolean }, reserved: ReadonlySet<string> = new Set()): string {
  for (let i = 0; i < 100; i++) {
    const id = randomUUID().slice(0, 8);
    if (!existing.has(id) && !reserved.has(id)) return id;
  }
  return randomUUID();
}

/** The JSON line for an entry, exactly as pi writes one (`JSON.stringify(entry) + "\n"`). */
export function serializeEntryLine(entry: object): string {
  const json = JSON.stringify(entry);
  if (json.includes("\n")) throw new Error("internal error: serialized entry contains a newline");
  return `${json}\n`;
}

/**
 * Append entries (one line each, in one write) if the file is unchanged since `expectation` was
 * taken: same size, same final bytes, ending with `\n`.
 * @returns the new file size in bytes.
 * @throws {SessionChangedError} when the file changed (nothing written): re-read and prepare again.
 * @throws the `fs` error when the file cannot be opened (e.g. deleted: `ENOENT`) or written.
 */
export function appendEntries(expectation: AppendExpectation, entries: readonly object[]): number {
  if (entries.length === 0) return expectation.size;
  const data = Buffer.from(entries.map(serializeEntryLine).join(""), "utf8");
  // O_APPEND without O_CREAT: a deleted file is an error, never re-created; every write lands at the end.
  const fd = fs.openSync(expectation.path, fs.constants.O_RDWR | fs.constants.O_APPEND);
  try {
    const size = fs.fstatSync(fd).size;
    if (size !== expectation.size) {
      throw new SessionChangedError(
        `The session file changed since it was read (${expectation.size} → ${size} bytes): someone else wrote to it. Re-read the session and try again.`,
      );
    }
    if (expectation.tail.length > 0) {
      const tail = Buffer.alloc(expectation.tail.length);
      fs.readSync(fd, tail, 0, tail.length, size - tail.length);
      if (!tail.equals(expectation.tail)) {
        throw new SessionChangedError(
          "The end of the session file changed since it was read (it was rewritten). Re-read the session and try again.",
        );
      }
      if (tail[tail.length - 1] !== 0x0a) {
        throw new SessionChangedError(
          "The session file does not end with a newline; refusing to append after an incomplete line.",
        );
      }
    }
    let written = 0;
    while (written < data.length) written += fs.writeSync(fd, data, written, data.length - written);
    fs.fsyncSync(fd);
    return size + data.length;
  } finally {
    fs.closeSync(fd);
  }
}
