/**
 * Reading and tailing one pi session file (`*.jsonl`) into {@link EntryRecord}s.
 *
 * Rules (pi 1.6.0 `loadEntriesFromFile`, `SessionManager._buildIndex`, migrations in
 * `session-manager.js`): lines are split on `\n`; blank lines and lines that fail `JSON.parse`
 * are skipped; the first parsed line must be a `session` header with a string id, otherwise the
 * file is not a pi session; later `session` lines are ignored; a final line without `\n` is still
 * parsed when it is complete JSON; the leaf is the last entry in file order; labels apply in file
 * order; v1/v2 files are migrated (here in memory only — we never write to the file).
 *
 * Beyond pi: every skipped line yields a {@link Diagnostic} (line number, byte size, reason); a
 * UTF-8 BOM is accepted (pi rejects such a header); the file is read incrementally (only the
 * bytes appended since the last read), and a file that shrank or was rewritten is re-read from
 * scratch. Bodies are not kept: {@link SessionFile.readEntry} re-reads a line when needed.
 *
 * Pieces: splitting and parsing lines in `lines.ts`, the header and the v1/v2 migrations in
 * `migrate.ts`, the diagnostics' texts in `diagnostics.ts`, streaming and rewrite probes in
 * `disk.ts`; this file keeps the index and its incremental state (torn final line, duplicate ids).
 */

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as diagnostic from "./diagnostics";
import { ContentDigest, type PrefixDigest } from "./digest";
import { FileProbes, openRegular, openRegularSync, readFullySync, streamChunks } from "./disk";
import { buildRecord, type EntryRecord } from "./entries";
import { isBlank, LineSplitter, parseLine } from "./lines";
import { oddTailOf, type OddTail } from "./oddTail";
import { isHeader, migrateMessageRole, migrateV1Entry, piVersion, syntheticId, toHeader } from "./migrate";
import {
  CURRENT_SESSION_VERSION,
  type Diagnostic,
  KNOWN_ENTRY_TYPES,
  type SessionEntry,
  type SessionHeader,
} from "../types";

/** Appends up to this size are read synchronously by `refresh()` (a few small syscalls). */
const SYNC_REFRESH_BYTES = 1024 * 1024;
/** Lines longer than this are skipped with a diagnostic (V8 cannot hold much larger strings). */
const MAX_LINE_BYTES = 256 * 1024 * 1024;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Thrown by {@link SessionFile.readEntry} when the bytes on disk no longer match what was indexed. */
export class StaleSessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StaleSessionError";
  }
}

/** What a {@link SessionFile.refresh} found. */
export interface RefreshResult {
  /** True when anything visible changed (new entries, a completed torn line, a re-read). */
  changed: boolean;
  /** True when the file shrank or was rewritten and was therefore read again from the start. */
  reopened: boolean;
  /** Entries added by this refresh (all entries after a re-read). */
  added: EntryRecord[];
}

interface ProvisionalState {
  diagnostics: number;
  records: number;
  record?: EntryRecord;
  header: SessionHeader | undefined;
  fileVersion: number;
  invalid: boolean;
  parsedCount: number;
  v1PreviousId: string | null;
  oddTail: OddTail | undefined;
}

/** Which file was read: device and inode of the handle the bytes came from. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** Options of {@link SessionFile.open}. */
export interface OpenOptions {
  /**
   * Also compute a SHA-256 of the committed bytes while reading ({@link SessionFile.contentDigest}):
   * what the write path's change check compares before it appends. Off for the UI's reads.
   */
  digest?: boolean;
}

/**
 * The in-memory index of one session file. Create with {@link SessionFile.open} (a file on disk)
 * or {@link SessionFile.fromBytes} (in memory, e.g. for tests); call {@link SessionFile.refresh}
 * when the file grows.
 */
export class SessionFile {
  /** The parsed header, or `undefined` when the file is not (yet) a pi session. */
  header: SessionHeader | undefined;
  /** Header `version` as written (pi treats a missing version as 1). */
  fileVersion = CURRENT_SESSION_VERSION;
  /** Entries in file order. */
  readonly records: EntryRecord[] = [];
  /** Entry by id; with duplicate ids the last one in file order wins (as in pi's `byId` map). */
  readonly byId = new Map<string, EntryRecord>();
  /** Problems found while reading, in file order. */
  diagnostics: Diagnostic[] = [];
  /** Bytes consumed up to and including the last `\n`. */
  committedBytes = 0;
  /** Total file size at the last read (committed bytes plus the unterminated tail). */
  size = 0;
  /** Modification time (ms) at the last read. */
  mtimeMs = 0;
  /** True when the file is not a pi session (first parsed line is not a header); nothing else is read. */
  invalid = false;
  /** How many entries reused an earlier entry's id so far (changes invalidate cached projections). */
  duplicateIds = 0;
  /** The last line pi keeps, when it is not an entry with a string id: pi's leaf is not ours (`oddTail.ts`). */
  oddTail: OddTail | undefined;

  private readonly path: string | undefined;
  private bytes: Buffer | undefined;
  private identity: FileIdentity | undefined;
  /** The write flows' change check (see `digest.ts`); only with `open(path, { digest: true })`. */
  private digest: ContentDigest | undefined;
  /** Copies of the first bytes of the file and of the last bytes before {@link committedBytes}, to notice rewrites. */
  private readonly probes = new FileProbes();
  /** Parsed JSON object lines so far, header included (pi's `entries` array index, for v1 migration). */
  private parsedCount = 0;
  /** v1 migration: id of the entry at each parsed index (the header and `session` lines: undefined). */
  private v1IdsByParsedIndex: (string | undefined)[] = [];
  private v1PreviousId: string | null = null;
  /** State before the unterminated final line was parsed (pi parses it); restored on refresh. */
  private provisional: ProvisionalState | undefined;
  /** Labels and name are derived on demand; invalidated on change. */
  private labelCache: Map<string, { label: string; timestamp: string }> | undefined;
  private childrenCache: Map<string | null, EntryRecord[]> | undefined;
  private lineNo = 0;
  private bomSkipped = false;

  private constructor(path: string | undefined, bytes: Buffer | undefined) {
    this.path = path;
    this.bytes = bytes;
  }

  /**
   * True when the file starts with a UTF-8 byte order mark: read here, but pi 1.6.0's `JSON.parse`
   * rejects such a header line, so pi does not open the file as a session (the write path refuses it).
   */
  get startsWithBom(): boolean {
    return this.bomSkipped;
  }

  /** The file path, or `"<memory>"` for in-memory sessions. */
  get filePath(): string {
    return this.path ?? "<memory>";
  }

  /**
   * Read a session file from disk, streaming it in chunks and yielding to the event loop between
   * chunks. Never modifies the file.
   * @throws {NotARegularFileError} for a FIFO, a device, a directory; the `fs` error when the file
   *   cannot be opened or read (e.g. `ENOENT`).
   */
  static async open(path: string, options: OpenOptions = {}): Promise<SessionFile> {
    const session = new SessionFile(path, undefined);
    if (options.digest) session.digest = new ContentDigest();
    await session.readFromDisk(0);
    return session;
  }

  /** Device and inode of the file as last read (undefined for in-memory sessions). */
  get fileIdentity(): FileIdentity | undefined {
    return this.identity;
  }

  /**
   * SHA-256 of the bytes up to {@link committedBytes} as they were read (the digest's `bytes` equals
   * `committedBytes`); undefined unless opened with `{ digest: true }`.
   */
  get contentDigest(): PrefixDigest | undefined {
    return this.digest?.result();
  }

  /** Index a session held in memory (tests, generated trees). */
  static fromBytes(bytes: Buffer | string): SessionFile {
    const buf = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
    const session = new SessionFile(undefined, buf);
    const splitter = new LineSplitter(0);
    session.consume(splitter, buf, false);
    session.consume(splitter, undefined, true);
    session.size = buf.length;
    return session;
  }

  /** Id of the leaf pi would use when opening this file: the last entry in file order, or null. */
  get leafId(): string | null {
    const last = this.records[this.records.length - 1];
    return last ? last.id : null;
  }

  /** Session id from the header. */
  get sessionId(): string | undefined {
    return this.header?.id;
  }

  /** Header `cwd`. */
  get cwd(): string | undefined {
    return typeof this.header?.cwd === "string" ? this.header.cwd : undefined;
  }

  /** The session name: the latest `session_info` entry's trimmed name (empty clears), as pi's `getSessionName`. */
  get name(): string | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const r = this.records[i]!;
      if (r.type === "session_info") return r.name?.trim() || undefined;
    }
    return undefined;
  }

  /** Labels by target id, applied in file order (an empty or missing label clears). */
  get labels(): ReadonlyMap<string, { label: string; timestamp: string }> {
    if (!this.labelCache) {
      const labels = new Map<string, { label: string; timestamp: string }>();
      for (const r of this.records) {
        if (r.type !== "label" || r.targetId === undefined) continue;
        if (r.label) labels.set(r.targetId, { label: r.label, timestamp: r.timestamp });
        else labels.delete(r.targetId);
      }
      this.labelCache = labels;
    }
    return this.labelCache;
  }

  /** Children by parent id (`null` = roots), each list in file order; only the entry that owns an id counts. */
  get children(): ReadonlyMap<string | null, readonly EntryRecord[]> {
    if (!this.childrenCache) {
      const children = new Map<string | null, EntryRecord[]>();
      for (const r of this.records) {
        if (this.byId.get(r.id) !== r) continue;
        const key = r.parentId;
        let list = children.get(key);
        if (!list) children.set(key, (list = []));
        list.push(r);
      }
      this.childrenCache = children;
    }
    return this.childrenCache;
  }

  /**
   * Read what was appended since the last read. A file that shrank, was replaced (other inode) or
   * whose already-read bytes changed (pi's migration rewrite) is read again from scratch.
   * @throws the `fs` error when the file cannot be read; `ENOENT` when it was deleted.
   */
  async refresh(): Promise<RefreshResult> {
    if (!this.path) return { changed: false, reopened: false, added: [] };
    // The common case — a few appended lines — is handled with a handful of small synchronous
    // reads (tens of microseconds); re-reads and large appends stream asynchronously.
    const { fd, stat } = openRegularSync(this.path);
    const before = this.records.length;
    let hadProvisional = false;
    let rewritten: boolean;
    try {
      rewritten =
        stat.size < this.committedBytes ||
        (this.identity !== undefined && (stat.dev !== this.identity.dev || stat.ino !== this.identity.ino)) ||
        !this.probes.matches(fd, this.committedBytes);
      if (!rewritten) {
        if (stat.size === this.size && stat.mtimeMs === this.mtimeMs)
          return { changed: false, reopened: false, added: [] };
        hadProvisional = this.provisional?.record !== undefined;
        this.undoProvisional();
        if (stat.size - this.committedBytes <= SYNC_REFRESH_BYTES) {
          const chunk = Buffer.allocUnsafe(stat.size - this.committedBytes);
          const done = readFullySync(fd, chunk, this.committedBytes);
          this.digest?.continueAt(this.committedBytes);
          this.digest?.feed(chunk.subarray(0, done));
          const start = this.records.length;
          const splitter = new LineSplitter(this.committedBytes);
          this.consume(splitter, chunk.subarray(0, done), false);
          this.consume(splitter, undefined, true);
          this.size = splitter.offset;
          this.mtimeMs = stat.mtimeMs;
          this.probes.captureSync(fd, this.committedBytes);
          const added = this.records.slice(start);
          return {
            changed: added.length > 0 || hadProvisional || this.records.length !== before,
            reopened: false,
            added,
          };
        }
      } else {
        this.reset();
      }
    } finally {
      fs.closeSync(fd);
    }
    if (rewritten) {
      await this.readFromDisk(0);
      return { changed: true, reopened: true, added: [...this.records] };
    }
    const start = this.records.length;
    await this.readFromDisk(this.committedBytes);
    const added = this.records.slice(start);
    return { changed: added.length > 0 || hadProvisional || this.records.length !== before, reopened: false, added };
  }

  /**
   * The complete entry as written in the file (migrated to version 3 in memory), re-read from disk.
   * @throws {StaleSessionError} when the line at the recorded offset is no longer that entry.
   */
  readEntry(record: EntryRecord): SessionEntry {
    const bytes = this.readLineBytes(record);
    let value: Record<string, unknown>;
    try {
      value = parseLine(bytes, 0, bytes.length) as Record<string, unknown>;
    } catch {
      throw new StaleSessionError(`line ${record.line} of ${this.filePath} changed since it was read`);
    }
    if (this.fileVersion < 2) migrateV1Entry(value, record);
    else if (value.id !== record.id) {
      throw new StaleSessionError(`line ${record.line} of ${this.filePath} no longer holds entry ${record.id}`);
    }
    if (this.fileVersion < 3) migrateMessageRole(value);
    return value as unknown as SessionEntry;
  }

  /** The raw bytes of an entry's line (without the newline). */
  readLineBytes(record: EntryRecord): Buffer {
    const buf = this.readBytes(record.offset, record.byteLength);
    if (buf.length < record.byteLength)
      throw new StaleSessionError(`${this.filePath} is shorter than when it was read`);
    return buf;
  }

  /** Up to `length` bytes of the file from `offset` (fewer at its end), read now (synchronously). */
  private readBytes(offset: number, length: number): Buffer {
    if (this.bytes) return this.bytes.subarray(offset, Math.min(this.bytes.length, offset + length));
    const buf = Buffer.allocUnsafe(length);
    return buf.subarray(0, readFullySync(this.readFd ?? this.openForReads(), buf, offset));
  }

  /** The descriptor of the current run of {@link readBytes} calls (see {@link openForReads}). */
  private readFd: number | undefined;

  /**
   * Open the file for a synchronous run of reads: the panel's details, the trim list and the planner
   * read thousands of bodies in one go, and an open + fstat + close per body cost more than the
   * reads (≈ 0.1 ms each). Closed when the current task or microtask ends (nothing asynchronous
   * holds it), so each later run opens the file — whatever is at its path then — again.
   */
  private openForReads(): number {
    const { fd } = openRegularSync(this.path!);
    this.readFd = fd;
    queueMicrotask(() => {
      this.readFd = undefined;
      fs.closeSync(fd);
    });
    return fd;
  }

  // ---------------------------------------------------------------------------------------------

  private reset(): void {
    this.header = undefined;
    this.fileVersion = CURRENT_SESSION_VERSION;
    this.records.length = 0;
    this.byId.clear();
    this.diagnostics = [];
    this.committedBytes = 0;
    this.size = 0;
    this.invalid = false;
    this.duplicateIds = 0;
    this.oddTail = undefined;
    this.identity = undefined;
    this.probes.clear();
    this.parsedCount = 0;
    this.v1IdsByParsedIndex = [];
    this.v1PreviousId = null;
    this.provisional = undefined;
    this.labelCache = undefined;
    this.childrenCache = undefined;
    this.lineNo = 0;
    this.bomSkipped = false;
  }

  private async readFromDisk(from: number): Promise<void> {
    const { handle, stat } = await openRegular(this.path!);
    try {
      this.identity = { dev: stat.dev, ino: stat.ino };
      this.mtimeMs = stat.mtimeMs;
      const splitter = new LineSplitter(from);
      this.digest?.continueAt(from);
      const size = await streamChunks(
        handle,
        from,
        (chunk) => {
          this.digest?.feed(chunk);
          this.consume(splitter, chunk, false);
        },
        stat.size,
      );
      this.consume(splitter, undefined, true);
      this.size = size;
      await this.probes.capture(handle, this.committedBytes);
    } finally {
      await handle.close();
    }
  }

  /**
   * Parse every complete line of the next chunk (`undefined` = end of input, where an unterminated
   * remainder is parsed provisionally, as pi parses a final line without newline).
   */
  private consume(splitter: LineSplitter, chunk: Buffer | undefined, atEnd: boolean): void {
    if (chunk && splitter.offset === 0 && !this.bomSkipped && chunk.length >= 3 && chunk.subarray(0, 3).equals(BOM)) {
      this.bomSkipped = true;
      splitter.skip(chunk, 3);
      // The BOM is consumed: a refresh continues after it (also when the header is not complete yet).
      this.committedBytes = 3;
      chunk = chunk.subarray(3);
      this.diagnostics.push(diagnostic.bomDiagnostic());
    }
    if (chunk) {
      splitter.push(chunk, (buf, start, end, offset) => {
        this.lineNo++;
        this.handleLine(buf, start, end, offset, true);
        this.committedBytes = offset + (end - start) + 1;
      });
    }
    if (!atEnd) return;
    const rest = splitter.remainder();
    if (!rest) return;
    this.lineNo++;
    const state: ProvisionalState = {
      diagnostics: this.diagnostics.length,
      records: this.records.length,
      header: this.header,
      fileVersion: this.fileVersion,
      invalid: this.invalid,
      parsedCount: this.parsedCount,
      v1PreviousId: this.v1PreviousId,
      oddTail: this.oddTail,
    };
    this.handleLine(rest.buf, 0, rest.buf.length, rest.offset, false);
    if (this.records.length > state.records) state.record = this.records[this.records.length - 1];
    this.provisional = state;
    // The unterminated line is read again (with its new bytes) on the next refresh.
    this.lineNo--;
  }

  private undoProvisional(): void {
    const p = this.provisional;
    if (!p) return;
    this.provisional = undefined;
    this.diagnostics.length = p.diagnostics;
    this.header = p.header;
    this.fileVersion = p.fileVersion;
    this.invalid = p.invalid;
    this.parsedCount = p.parsedCount;
    this.v1PreviousId = p.v1PreviousId;
    this.oddTail = p.oddTail;
    const record = p.record;
    if (!record) return;
    this.records.pop();
    const shadowed = this.shadowedById.get(record);
    if (shadowed) this.byId.set(record.id, shadowed);
    else this.byId.delete(record.id);
    this.shadowedById.delete(record);
    this.labelCache = undefined;
    this.childrenCache = undefined;
  }

  /** For duplicate ids: the record a later record replaced in {@link byId}. */
  private readonly shadowedById = new Map<EntryRecord, EntryRecord>();

  private handleLine(buf: Buffer, start: number, end: number, offset: number, terminated: boolean): void {
    const line = this.lineNo;
    const byteLength = end - start;
    // Blank lines (JS `trim()` whitespace, which includes a BOM) are skipped silently, as in pi.
    if (isBlank(buf, start, end)) return;
    if (this.invalid) return;
    if (byteLength > MAX_LINE_BYTES) {
      this.diagnostics.push(diagnostic.lineTooLong(line, byteLength, offset));
      return;
    }
    let value: unknown;
    try {
      value = parseLine(buf, start, end);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const d = diagnostic.unparseableLine(line, byteLength, offset, reason, terminated);
      this.diagnostics.push(terminated ? withLineHash(d, buf, start, end) : d);
      return;
    }
    // pi skips lines whose JSON is falsy (`null`, `0`, `false`, `""`).
    if (!value) {
      this.diagnostics.push(withLineHash(diagnostic.notAnEntry(line, value, offset), buf, start, end));
      return;
    }
    const parsedIndex = this.parsedCount++;
    if (this.header === undefined) {
      if (isHeader(value)) {
        this.header = toHeader(value);
        const version = (value as { version?: unknown }).version;
        this.fileVersion = piVersion(version);
        if (typeof version !== "number" && version !== undefined && version !== null)
          this.diagnostics.push(diagnostic.versionNotANumber(line, version, this.fileVersion));
        if (this.fileVersion < CURRENT_SESSION_VERSION)
          this.diagnostics.push(diagnostic.oldVersion(line, this.fileVersion));
        if (this.fileVersion < 2) this.v1IdsByParsedIndex[parsedIndex] = undefined;
        return;
      }
      this.invalid = true;
      this.diagnostics.push(diagnostic.notASession(line, offset));
      return;
    }
    if (typeof value === "object" && (value as { type?: unknown }).type === "session") {
      if (this.fileVersion < 2) this.v1IdsByParsedIndex[parsedIndex] = undefined;
      this.diagnostics.push(diagnostic.extraHeader(line, offset));
      return;
    }
    if (typeof value === "object" && !Array.isArray(value)) {
      const obj = value as Record<string, unknown>;
      if (this.fileVersion < 2) {
        // v1 → v2: every entry gets an id and is chained to the previous one.
        obj.id = syntheticId(parsedIndex);
        obj.parentId = this.v1PreviousId;
        this.v1PreviousId = obj.id as string;
        this.v1IdsByParsedIndex[parsedIndex] = obj.id as string;
      }
      if (this.fileVersion < 3) migrateMessageRole(obj);
    }
    const at = { index: this.records.length, line, offset, byteLength };
    const record = buildRecord(value, at);
    if ("code" in record && !("id" in record)) {
      this.diagnostics.push(diagnostic.skippedEntry(line, offset, record.code, record.message));
      this.oddTail = oddTailOf(value, at, undefined);
      return;
    }
    const entry = record as EntryRecord;
    this.oddTail = oddTailOf(value, at, entry);
    if (entry.type === "message" && entry.role === undefined)
      this.diagnostics.push(
        entry.messageMissing
          ? diagnostic.messageMissing(line, offset, entry.id, (value as { message?: unknown }).message)
          : diagnostic.messageNotAnObject(line, offset, entry.id, (value as { message?: unknown }).message),
      );
    if (this.fileVersion < 2 && entry.type === "compaction") {
      // pi: firstKeptEntryIndex indexes the parsed entries (header included); only entries already
      // migrated (earlier in the file) have ids at that point.
      const index = (value as { firstKeptEntryIndex?: unknown }).firstKeptEntryIndex;
      if (typeof index === "number") {
        const id = Number.isInteger(index) && index >= 0 ? this.v1IdsByParsedIndex[index] : undefined;
        if (id !== undefined) entry.firstKeptEntryId = id;
      }
    }
    if (!KNOWN_ENTRY_TYPES.has(entry.type)) {
      this.diagnostics.push(diagnostic.unknownType(line, offset, entry.type, entry.id));
    }
    const previous = this.byId.get(entry.id);
    if (previous) {
      this.duplicateIds++;
      this.shadowedById.set(entry, previous);
      this.diagnostics.push(diagnostic.duplicateId(line, offset, entry.id, previous.line));
    }
    this.byId.set(entry.id, entry);
    this.records.push(entry);
    if (entry.type === "label") this.labelCache = undefined;
    this.childrenCache = undefined;
  }
}

/** A diagnostic of a skipped line with the line's length and SHA-256 (rare: only lines pi skips). */
function withLineHash(d: Diagnostic, buf: Buffer, start: number, end: number): Diagnostic {
  return {
    ...d,
    lineBytes: end - start,
    lineSha256: createHash("sha256").update(buf.subarray(start, end)).digest("hex"),
  };
}
