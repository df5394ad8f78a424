/**
 * The single write path: append complete JSON lines only if the file is still what we read, byte for
 * byte; the only truncation takes back our own bytes of a failed append. pi 1.6.0 never re-reads an
 * open session, so callers must first check nobody has it open (`access/`); what the change check
 * cannot see is in `docs/security.md`.
 */

import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { recordOwnWrite } from "../access/ownWrites";
import { digestOfPrefix } from "../read/digest";
import { openRegularSync, readFullySync } from "../read/disk";
import type { SessionFile } from "../read/session";
import { formatCount } from "../../shared/format";
import * as l10n from "@vscode/l10n";

/** Nothing was written. */
export class SessionChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionChangedError";
  }
}

/** Old format, not a session, torn tail, read-only. */
export class UnsafeSessionWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeSessionWriteError";
  }
}

/** Disk full, I/O error; says exactly what is in the file now. */
export class SessionWriteError extends Error {
  readonly code: string | undefined;
  /** The file is byte-identical to before. */
  readonly restored: boolean;
  readonly bytesLeft: number;
  /** The file's size before the append. */
  readonly offset: number;
  constructor(
    message: string,
    fields: { code: string | undefined; restored: boolean; bytesLeft: number; offset: number },
  ) {
    super(message);
    this.name = "SessionWriteError";
    this.code = fields.code;
    this.restored = fields.restored;
    this.bytesLeft = fields.bytesLeft;
    this.offset = fields.offset;
  }
}

/** Same file (device + inode), same size, same bytes (SHA-256 taken while reading). */
export interface AppendExpectation {
  path: string;
  dev: number;
  ino: number;
  /** The file ended with `\n` there (but see {@link finalLineExpectation}). */
  size: number;
  sha256: string;
}

/**
 * The file as `session` (opened with `{ digest: true }`) read it — no new disk access.
 * @throws {UnsafeSessionWriteError} for files we never write: not a pi session (or a BOM header pi
 *   cannot parse), format < 3 or a non-numeric version (pi rewrites those; their migrated ids are not
 *   stable), a final line without `\n` (never glue onto a fragment), or no digest.
 */
export function expectationOf(session: SessionFile): AppendExpectation {
  const path = session.filePath;
  assertSessionFormat(session);
  if (session.size !== session.committedBytes) {
    throw new UnsafeSessionWriteError(
      l10n.t(
        "{0} ends with an incomplete line ({1} bytes without a newline). A writer may be in the middle of an append, or the file was cut off. Refusing to append after it. pi ends such a line with a newline when it next opens the session; the session doctor does the same on request (Pi Context: Check Session Health → End the last line as pi does; pi-context doctor --end-line).",
        path,
        session.size - session.committedBytes,
      ),
    );
  }
  const identity = session.fileIdentity;
  const digest = session.contentDigest;
  if (!identity || !digest || digest.bytes !== session.committedBytes)
    throw new Error(`internal error: ${path} was not read with a content digest; the write path cannot check it`);
  return { path, dev: identity.dev, ino: identity.ino, size: digest.bytes, sha256: digest.sha256 };
}

function assertSessionFormat(session: SessionFile): void {
  const path = session.filePath;
  if (session.invalid || !session.header)
    throw new UnsafeSessionWriteError(l10n.t("{0} is not a pi session; refusing to write.", path));
  if (session.startsWithBom)
    throw new UnsafeSessionWriteError(
      l10n.t(
        "{0} starts with a UTF-8 byte order mark. pi 1.6.0 cannot parse such a header and does not open the file as a session, so an entry appended now would never reach pi; refusing to write. Remove the first 3 bytes (e.g. `sed -i '1s/^\\xEF\\xBB\\xBF//' <file>`) while pi is not running, then try again.",
        path,
      ),
    );
  // pi leaves a file alone only when `header.version >= 3`; NaN fails that too and pi rewrites the file
  if (Number.isNaN(session.fileVersion)) {
    throw new UnsafeSessionWriteError(
      l10n.t(
        "{0}: the header's session format version is not a number. pi 1.6.0 rewrites such a file when it opens it (it treats it as needing migration), so an entry appended now could be lost or re-parented; refusing to write. Open the session in pi once, then try again.",
        path,
      ),
    );
  }
  if (!(session.fileVersion >= 3)) {
    throw new UnsafeSessionWriteError(
      l10n.t(
        "{0} uses session format version {1}. pi 1.6.0 rewrites such files when it opens them and gives their entries new ids; open the session in pi once (it migrates the file), then try again.",
        path,
        session.fileVersion,
      ),
    );
  }
}

/** The incomplete last line's bytes when pi's own fix applies ({@link finalLineExpectation}). */
export function tornLineBytes(session: SessionFile): number | undefined {
  if (session.size === session.committedBytes) return undefined;
  try {
    assertSessionFormat(session);
  } catch {
    return undefined;
  }
  return session.size - session.committedBytes;
}

/**
 * pi 1.6.0's one fix on open (`loadEntriesFromFile`): a single `\n` after a last line without one.
 * The expectation covers every byte, the fragment included.
 * @throws {UnsafeSessionWriteError} when refused for another reason or the last line is complete;
 *   {@link SessionChangedError} when the file changed.
 */
export function finalLineExpectation(session: SessionFile): AppendExpectation {
  const path = session.filePath;
  assertSessionFormat(session);
  if (session.size === session.committedBytes)
    throw new UnsafeSessionWriteError(l10n.t("{0} ends with a complete line: there is no line to end.", path));
  const identity = session.fileIdentity;
  const digest = session.contentDigest;
  if (!identity || !digest || digest.bytes !== session.committedBytes)
    throw new Error(`internal error: ${path} was not read with a content digest; the write path cannot check it`);
  const fd = fs.openSync(path, "r");
  try {
    const stat = fs.fstatSync(fd);
    if (stat.size !== session.size || stat.dev !== identity.dev || stat.ino !== identity.ino)
      throw new SessionChangedError(
        l10n.t("{0} changed since it was read. Re-read the session and try again. Nothing was written.", path),
      );
    const whole = digestOfPrefix(fd, stat.size);
    if (digestOfPrefix(fd, digest.bytes) !== digest.sha256 || whole === undefined)
      throw new SessionChangedError(
        l10n.t("{0} was rewritten since it was read. Re-read the session and try again. Nothing was written.", path),
      );
    return { path, dev: identity.dev, ino: identity.ino, size: stat.size, sha256: whole };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Append exactly one `\n` as pi does, under {@link appendEntries}' checks. Callers first check nobody
 * has the session open (a writer may be mid-line). @returns the new size. @throws as {@link appendEntries}.
 */
export function completeFinalLine(expectation: AppendExpectation): number {
  return appendChecked(expectation, Buffer.from("\n", "utf8"));
}

/** What differs from `expectation`, in words; size and identity are checked again after hashing. */
function changeOf(fd: number, expectation: AppendExpectation): string | undefined {
  const before = fs.fstatSync(fd);
  if (before.dev !== expectation.dev || before.ino !== expectation.ino)
    return l10n.t("The session file was replaced since it was read (another file now has its name)");
  if (before.size !== expectation.size)
    return l10n.t(
      "The session file changed since it was read ({0} → {1} bytes): someone else wrote to it",
      formatCount(expectation.size),
      formatCount(before.size),
    );
  if (digestOfPrefix(fd, expectation.size) !== expectation.sha256)
    return l10n.t("The session file was rewritten since it was read (same size, different bytes)");
  const after = fs.fstatSync(fd);
  if (after.size !== expectation.size)
    return l10n.t(
      "The session file changed while it was checked ({0} → {1} bytes): someone else is writing to it",
      formatCount(expectation.size),
      formatCount(after.size),
    );
  return undefined;
}

/**
 * Read-only check for flows that ask before writing (the append checks again). Opens non-blocking,
 * regular files only (a FIFO swapped in is "changed").
 */
export function expectationHolds(expectation: AppendExpectation): boolean {
  try {
    const { fd } = openRegularSync(expectation.path);
    try {
      return changeOf(fd, expectation) === undefined;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Why the file cannot take an append (read-only, immutable, EROFS, gone), in words; changes nothing. */
export function writeBlocker(file: string): string | undefined {
  try {
    fs.accessSync(file, fs.constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "EROFS"
        ? l10n.t("it is on a read-only file system")
        : code === "EPERM"
          ? l10n.t("the system does not allow writing it (immutable or otherwise protected)")
          : code === "EACCES"
            ? l10n.t("you have no write permission for it (read-only)")
            : code === "ENOENT"
              ? l10n.t("it no longer exists")
              : l10n.t("it cannot be written ({0})", code ?? (error as Error).message);
    return l10n.t("{0} cannot be changed: {1}. Nothing was sent or written.", file, why);
  }
}

/** @throws {UnsafeSessionWriteError} when {@link writeBlocker} says so, before any summarizer request. */
export function assertWritable(file: string): void {
  const blocker = writeBlocker(file);
  if (blocker) throw new UnsafeSessionWriteError(blocker);
}

/** pi's `generateId`: 8 hex chars of a random UUID, re-drawn on collision (100 tries), then a full UUID. */
export function newEntryId(existing: { has(id: string): boolean }, reserved: ReadonlySet<string> = new Set()): string {
  for (let i = 0; i < 100; i++) {
    const id = randomUUID().slice(0, 8);
    if (!existing.has(id) && !reserved.has(id)) return id;
  }
  return randomUUID();
}

/** Exactly as pi writes one: `JSON.stringify(entry) + "\n"`. */
export function serializeEntryLine(entry: object): string {
  const json = JSON.stringify(entry);
  if (json.includes("\n")) throw new Error("internal error: serialized entry contains a newline");
  return `${json}\n`;
}

/**
 * Append entries in one write if the file is unchanged (checked under the write handle), then `fsync`.
 * A failed write is cut back only when the file ends with exactly our bytes; a misplaced one is cut too.
 * @returns the new size. @throws {SessionChangedError} (re-read and prepare again), {@link SessionWriteError},
 *   the `fs` error when it cannot be opened (nothing written).
 */
export function appendEntries(expectation: AppendExpectation, entries: readonly object[]): number {
  if (entries.length === 0) return expectation.size;
  return appendChecked(expectation, Buffer.from(entries.map(serializeEntryLine).join(""), "utf8"));
}

function appendChecked(expectation: AppendExpectation, data: Buffer): number {
  // O_APPEND without O_CREAT: a deleted file is an error, never re-created; every write lands at the end.
  // O_NONBLOCK: a FIFO or device swapped in never blocks the open (it is refused below).
  const fd = fs.openSync(
    expectation.path,
    fs.constants.O_RDWR | fs.constants.O_APPEND | (fs.constants.O_NONBLOCK ?? 0),
  );
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile())
      throw new SessionChangedError(
        l10n.t(
          "The session file was replaced by something that is not a regular file (a FIFO, a device, a directory). Nothing was written.",
        ),
      );
    const change = changeOf(fd, expectation);
    if (change)
      throw new SessionChangedError(l10n.t("{0}. Re-read the session and try again. Nothing was written.", change));
    let written = 0;
    try {
      while (written < data.length) written += fs.writeSync(fd, data, written, data.length - written);
      fs.fsyncSync(fd);
    } catch (error) {
      throw undoFailedWrite(fd, expectation, data, written, error as NodeJS.ErrnoException);
    }
    const misplaced = misplacedAppend(fd, expectation, data);
    if (misplaced) throw misplaced;
    // our own append: its age is not someone else having the session open
    recordOwnWrite(expectation.path, fs.fstatSync(fd));
    return expectation.size + data.length;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {}
  }
}

/**
 * Did the append land right after the checked bytes, in the file with the session's name? Nothing locks
 * the file, so another writer may act between check and write and `O_APPEND` follows them. Our bytes
 * last but misplaced: cut off → {@link SessionChangedError} (failed cut: {@link SessionWriteError}).
 * Not last: their change stands, ours untouched. Path renamed over: {@link SessionChangedError}.
 * The cut cannot be atomic with its check. Undefined when the append is where planned.
 */
function misplacedAppend(fd: number, expectation: AppendExpectation, data: Buffer): Error | undefined {
  const size = fs.fstatSync(fd).size;
  if (size !== expectation.size + data.length && !endsWith(fd, expectation.size, data)) {
    const at = size - data.length;
    if (at >= 0 && endsWith(fd, at, data)) {
      const what = l10n.t(
        "The session file changed at the moment we wrote ({0} → {1} bytes before our entry): someone else wrote to it",
        formatCount(expectation.size),
        formatCount(at),
      );
      try {
        cutBack(fd, at);
      } catch (cutError) {
        return new SessionWriteError(
          l10n.t(
            "{0}, and removing our entry again failed ({1}). Our {2} bytes are at the end of {3}, after bytes we never checked: remove them (e.g. `truncate -s {4} <file>`) before pi writes to it again.",
            what,
            (cutError as Error).message,
            formatCount(data.length),
            expectation.path,
            at,
          ),
          { code: (cutError as NodeJS.ErrnoException).code, restored: false, bytesLeft: data.length, offset: at },
        );
      }
      return new SessionChangedError(
        l10n.t(
          "{0}. Our entry was removed again; the file is as the other program left it. Re-read the session and try again. Nothing was written.",
          what,
        ),
      );
    }
  }
  let current: fs.Stats | undefined;
  try {
    current = fs.statSync(expectation.path);
  } catch {
    current = undefined;
  }
  if (!current || current.dev !== expectation.dev || current.ino !== expectation.ino)
    return new SessionChangedError(
      l10n.t(
        "The session file was replaced or removed at the moment we wrote: our entry went to the file that had its name before, not to the session. Re-read the session and try again.",
      ),
    );
  return undefined;
}

/** Cut our bytes off again only when the file ends with exactly them, and sync. */
function undoFailedWrite(
  fd: number,
  expectation: AppendExpectation,
  data: Buffer,
  written: number,
  error: NodeJS.ErrnoException,
): SessionWriteError {
  const offset = expectation.size;
  const code = error.code;
  const cause = `${code ?? "error"}: ${error.message}`;
  const what =
    written < data.length
      ? l10n.t(
          "Writing the session file failed after {0} of {1} bytes ({2})",
          formatCount(written),
          formatCount(data.length),
          cause,
        )
      : l10n.t(
          "Syncing the session file to disk failed after all {0} bytes were written ({1})",
          formatCount(data.length),
          cause,
        );
  let size: number;
  try {
    size = fs.fstatSync(fd).size;
  } catch (statError) {
    return new SessionWriteError(
      l10n.t(
        "{0}, and the file could not be checked afterwards ({1}). Up to {2} bytes of an incomplete entry may have been left in the file at offset {3}: check the end of {4} before pi writes to it again.",
        what,
        (statError as Error).message,
        formatCount(written),
        formatCount(offset),
        expectation.path,
      ),
      { code, restored: false, bytesLeft: written, offset },
    );
  }
  if (size === offset)
    return new SessionWriteError(
      l10n.t("{0}. The file is unchanged ({1} bytes). Nothing was written.", what, formatCount(offset)),
      {
        code,
        restored: true,
        bytesLeft: 0,
        offset,
      },
    );
  const ours = size === offset + written && endsWith(fd, offset, data.subarray(0, written));
  if (!ours)
    return new SessionWriteError(
      l10n.t(
        "{0}. The file has {1} bytes now, not the {2} our write would leave: another program wrote to it at the same time, so nothing was cut off (that could destroy its bytes). {3} bytes of an incomplete entry were left in the file at offset {4}; check the end of {5} before pi writes to it again.",
        what,
        formatCount(size),
        formatCount(offset + written),
        formatCount(written),
        formatCount(offset),
        expectation.path,
      ),
      { code, restored: false, bytesLeft: written, offset },
    );
  try {
    cutBack(fd, offset);
  } catch (cutError) {
    return new SessionWriteError(
      l10n.t(
        "{0}, and cutting the file back to its previous {1} bytes failed too ({2}). {3} bytes of an incomplete entry were left in the file at offset {1}; remove them (e.g. `truncate -s {4} <file>`) before pi writes to it again.",
        what,
        formatCount(offset),
        (cutError as Error).message,
        formatCount(written),
        offset,
      ),
      { code, restored: false, bytesLeft: written, offset },
    );
  }
  return new SessionWriteError(
    l10n.t(
      "{0}. The file was cut back to its previous {1} bytes and synced: it is as before. Nothing was written.",
      what,
      formatCount(offset),
    ),
    { code, restored: true, bytesLeft: 0, offset },
  );
}

/** Cut back to `size` (only our own bytes), sync, check. @throws the `fs` error, or Error when unchanged. */
function cutBack(fd: number, size: number): void {
  fs.ftruncateSync(fd, size);
  fs.fsyncSync(fd);
  if (fs.fstatSync(fd).size !== size) throw new Error("the size did not change");
}

function endsWith(fd: number, offset: number, expected: Buffer): boolean {
  try {
    const actual = Buffer.alloc(expected.length);
    return readFullySync(fd, actual, offset) === expected.length && actual.equals(expected);
  } catch {
    return false;
  }
}
