/**
 * The single write path: append complete JSON lines to a session file, only if it is still the
 * file we read, byte for byte. Never rewrites or reformats anything; the only truncation is
 * taking back our own bytes of an append that failed part-way (checked to be ours and last).
 *
 * What the change check can and cannot see is in `docs/security.md`: there is no lock between pi
 * and us, so an append by pi in the microseconds between our last check and our write is possible;
 * the access guard (`access/`) is what keeps a running pi away.
 *
 * pi 1.6.0 appends one `JSON.stringify(entry) + "\n"` per entry (`SessionManager._persist`), keeps
 * the session in memory and never re-reads the file, and loads the last line as the leaf. So an
 * entry we append is only seen by a pi that opens the file afterwards; a running pi would branch
 * off its own leaf. Callers must check that no pi has the session open (see `access/`).
 */

import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { recordOwnWrite } from "../access/ownWrites";
import { digestOfPrefix } from "../read/digest";
import { openRegularSync, readFullySync } from "../read/disk";
import type { SessionFile } from "../read/session";
import { formatCount } from "../../shared/format";
import * as l10n from "@vscode/l10n";

/** Thrown when the file is not as we read it; nothing was written. */
export class SessionChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionChangedError";
  }
}

/** Thrown when the session must not be written to at all (old format, not a session, torn tail, read-only). */
export class UnsafeSessionWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeSessionWriteError";
  }
}

/** Thrown when the append itself failed (disk full, I/O error); says exactly what is in the file now. */
export class SessionWriteError extends Error {
  /** The `fs` error code (`ENOSPC`, `EIO`, …). */
  readonly code: string | undefined;
  /** True when the file is byte-identical to before (nothing of ours remains). */
  readonly restored: boolean;
  /** Bytes of ours left in the file (0 when restored). */
  readonly bytesLeft: number;
  /** Where our bytes start: the file's size before the append. */
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

/**
 * What the file must still be when we append: the same file (device + inode), the same size, and
 * the same bytes (a SHA-256 of everything read, taken while reading).
 */
export interface AppendExpectation {
  path: string;
  /** Device and inode of the file that was read. */
  dev: number;
  ino: number;
  /** File size in bytes at read time; the file ended with `\n` there (but see {@link finalLineExpectation}). */
  size: number;
  /** SHA-256 (hex) of those `size` bytes, computed while they were read. */
  sha256: string;
}

/**
 * Capture what the file looked like when `session` read it: identity, size and content digest
 * from that read (no new disk access, so nothing can change in between).
 * @param session opened with `SessionFile.open(path, { digest: true })`.
 * @throws {UnsafeSessionWriteError} for files we refuse to write: not a pi session (also a file
 *   starting with a UTF-8 BOM, whose header pi cannot parse), session format
 *   older than 3 or a header version that is not a number (pi rewrites those on open, and their
 *   migrated ids are not stable), a final line
 *   without `\n` (we never glue a record onto a fragment), or a session read without a digest.
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

/** The refusals of {@link expectationOf} other than the torn final line. */
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
  // pi 1.6.0 leaves a file alone only when `header.version >= 3` (ToNumber, so "3" counts); a
  // version that reads as NaN fails that test too, and pi rewrites the file when it opens it.
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

/**
 * The bytes of the session's incomplete last line when pi's own fix applies to it (a pi session of
 * format 3 without a BOM whose last line has no `\n`: {@link finalLineExpectation}); undefined otherwise.
 */
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
 * The one append of this path that is not an entry: pi's own fix of a final line without `\n`. pi
 * 1.6.0 (`loadEntriesFromFile`, every time it opens a session) appends a single `\n` when the file's
 * first parsed line is its header and its last line has no newline — the fragment becomes a line
 * of its own (an entry when it parses, else a line pi skips) and new entries start on their own
 * line. What {@link completeFinalLine} checks before it does the same: the file as `session` read
 * it, its incomplete last line included (identity, size, SHA-256 of every byte).
 * @throws {UnsafeSessionWriteError} for a file {@link expectationOf} refuses for another reason, and
 *   for a file whose last line is complete (nothing to end).
 * @throws {SessionChangedError} when the file changed since `session` read it.
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
    // the lines before the fragment are as read: the fragment belongs to the file we read
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
 * End the session's last line as pi does when it opens the file (see {@link finalLineExpectation}):
 * append exactly one `\n`, only if the file is still byte for byte as `expectation` says (checked
 * under the write handle, as {@link appendEntries}); a failed or misplaced write is taken back.
 * Callers check first that nobody has the session open (a writer may be in the middle of that line).
 * @returns the new file size in bytes.
 * @throws as {@link appendEntries}.
 */
export function completeFinalLine(expectation: AppendExpectation): number {
  return appendChecked(expectation, Buffer.from("\n", "utf8"));
}

/**
 * What differs between the open file `fd` and `expectation`, in words, or undefined when it is the
 * same file with the same bytes. Reads the whole expected prefix (one pass) and checks size and
 * identity again after it, so an append made while hashing is seen too.
 */
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
 * True when the file at the expectation's path is still the same file with the same bytes — a
 * read-only check for flows that ask the user or a summarizer before writing (the append checks
 * again under its own file handle). Reads the whole file once. Never blocks: the path is opened
 * non-blocking and only a regular file is read (a FIFO swapped in while a question was open is
 * "changed"; the re-plan's read then names it).
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

/**
 * Why the file cannot take an append (read-only, immutable, a read-only file system, no
 * permission, gone), in words; undefined when it can. Changes nothing (`access(W_OK)`: on Linux it
 * also answers `EPERM` for an immutable file and `EROFS` on a read-only mount; root may write a
 * 0444 file, and does).
 */
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

/**
 * Refuse before any summarizer request when the file cannot take an append (see {@link writeBlocker}).
 * @throws {UnsafeSessionWriteError}
 */
export function assertWritable(file: string): void {
  const blocker = writeBlocker(file);
  if (blocker) throw new UnsafeSessionWriteError(blocker);
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
 * taken: the same file (device + inode), the same size, the same bytes (SHA-256), checked under
 * the handle we write with; then `fsync`.
 *
 * A write that fails part-way (disk full, I/O error) is undone: when the file ends exactly with
 * the bytes we wrote, it is cut back to its previous size and synced; otherwise (another writer
 * appended after them) nothing is cut. Either way {@link SessionWriteError} says what is in the file.
 * After the write, the bytes are checked to be where they were planned (see `misplacedAppend`): a
 * truncation or append by another writer in the moment between the check and the write is seen,
 * and our bytes are cut off again.
 * @returns the new file size in bytes.
 * @throws {SessionChangedError} when the file changed (nothing written, or our bytes cut off again
 *   after they landed behind another writer's change): re-read and prepare again.
 * @throws {SessionWriteError} when writing or syncing failed (see above).
 * @throws the `fs` error when the file cannot be opened (e.g. deleted: `ENOENT`; nothing written).
 */
export function appendEntries(expectation: AppendExpectation, entries: readonly object[]): number {
  if (entries.length === 0) return expectation.size;
  return appendChecked(expectation, Buffer.from(entries.map(serializeEntryLine).join(""), "utf8"));
}

/** `data` appended under the checks of {@link appendEntries} (`data` is complete lines, or pi's one `\n`). */
function appendChecked(expectation: AppendExpectation, data: Buffer): number {
  // O_APPEND without O_CREAT: a deleted file is an error, never re-created; every write lands at the end.
  // O_NONBLOCK: a FIFO or device swapped in for the session never blocks the open (it is refused below).
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
    // the file as our append left it: its age is not someone else having the session open
    recordOwnWrite(expectation.path, fs.fstatSync(fd));
    return expectation.size + data.length;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // after a successful fsync the bytes are on disk; a failed write already says what happened
    }
  }
}

/**
 * After a successful append of `data`: did it land right after the `expectation.size` bytes that
 * were checked, in the file that has the session's name? Nothing locks a session file between pi
 * and us, so another writer can truncate, append or rename-replace in the moment between the
 * change check and our write; `O_APPEND` then puts our bytes after *their* result, a file we never
 * checked (after a truncation, our entry's parent may be gone).
 *
 * - Our bytes are the file's last bytes but not at `expectation.size`: they are cut off again
 *   (the file is then exactly as the other writer left it) and synced → {@link SessionChangedError},
 *   so the flow re-reads and plans again. A failed cut → {@link SessionWriteError} (`restored: false`).
 * - Our bytes are neither at `expectation.size` nor last: the other writer changed the file after
 *   our write (cut it, or appended after a change); its change stands and ours is not touched.
 * - The path no longer names the file we wrote (renamed over, or removed) →
 *   {@link SessionChangedError}: our entry is in the file it replaced, not in the session.
 *
 * Returns undefined when the append is where it was planned. Like {@link undoFailedWrite}, the cut
 * cannot be atomic with its check: a third write in those microseconds would be cut with ours.
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

/**
 * After a failed write of `data` at `expectation.size` (`written` bytes of it went out): cut our
 * bytes off again — only when the file ends with exactly them (read back and compared) — and sync.
 */
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

/**
 * Cut the file back to `size` bytes (only ever our own bytes, read back by the caller), sync, and
 * check the size. @throws the `fs` error, or an Error when the size did not change.
 */
function cutBack(fd: number, size: number): void {
  fs.ftruncateSync(fd, size);
  fs.fsyncSync(fd);
  if (fs.fstatSync(fd).size !== size) throw new Error("the size did not change");
}

/** Whether the bytes of `fd` from `offset` equal `expected`. Never throws. */
function endsWith(fd: number, offset: number, expected: Buffer): boolean {
  try {
    const actual = Buffer.alloc(expected.length);
    return readFullySync(fd, actual, offset) === expected.length && actual.equals(expected);
  } catch {
    return false;
  }
}
