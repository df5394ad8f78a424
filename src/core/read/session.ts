/**
 * Reading and tailing one pi session file into {@link EntryRecord}s, by pi 1.6.0's rules
 * (`loadEntriesFromFile`, `_buildIndex`): the leaf is the last entry in file order, labels apply in
 * file order, a complete final line without `\n` is parsed, migrations happen in memory only. Beyond
 * pi: a {@link Diagnostic} per skipped line, a BOM accepted, incremental reads, rewrites re-read.
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

/** Appends up to this size are read synchronously by `refresh()`. */
const SYNC_REFRESH_BYTES = 1024 * 1024;
/** V8 cannot hold much larger strings. */
const MAX_LINE_BYTES = 256 * 1024 * 1024;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export class StaleSessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StaleSessionError";
  }
}

export interface RefreshResult {
  /** New entries, a completed torn line, or a re-read. */
  changed: boolean;
  /** The file shrank or was rewritten and was read again from the start. */
  reopened: boolean;
  /** All entries after a re-read. */
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

export interface FileIdentity {
  dev: number;
  ino: number;
}

export interface OpenOptions {
  /** SHA-256 of the committed bytes ({@link SessionFile.contentDigest}) for the write path; off for the UI. */
  digest?: boolean;
}

/** The in-memory index of one session file; {@link SessionFile.refresh} when it grows. */
export class SessionFile {
  /** Undefined when the file is not (yet) a pi session. */
  header: SessionHeader | undefined;
  /** As written (pi treats a missing version as 1). */
  fileVersion = CURRENT_SESSION_VERSION;
  readonly records: EntryRecord[] = [];
  /** With duplicate ids the last one in file order wins (pi's `byId` map). */
  readonly byId = new Map<string, EntryRecord>();
  diagnostics: Diagnostic[] = [];
  /** Bytes up to and including the last `\n`. */
  committedBytes = 0;
  size = 0;
  mtimeMs = 0;
  /** The first parsed line is not a header; nothing else is read. */
  invalid = false;
  /** Changes invalidate cached projections. */
  duplicateIds = 0;
  /** pi's leaf is not ours when the last kept line has no string id (`oddTail.ts`). */
  oddTail: OddTail | undefined;

  private readonly path: string | undefined;
  private bytes: Buffer | undefined;
  private identity: FileIdentity | undefined;
  private digest: ContentDigest | undefined;
  private readonly probes = new FileProbes();
  /** pi's `entries` index, header included (v1 migration). */
  private parsedCount = 0;
  private v1IdsByParsedIndex: (string | undefined)[] = [];
  private v1PreviousId: string | null = null;
  /** State before the unterminated final line was parsed (pi parses it); restored on refresh. */
  private provisional: ProvisionalState | undefined;
  private labelCache: Map<string, { label: string; timestamp: string }> | undefined;
  private childrenCache: Map<string | null, EntryRecord[]> | undefined;
  private lineNo = 0;
  private bomSkipped = false;

  private constructor(path: string | undefined, bytes: Buffer | undefined) {
    this.path = path;
    this.bytes = bytes;
  }

  /** pi 1.6.0's `JSON.parse` rejects a BOM header, so pi cannot open the file (the write path refuses it). */
  get startsWithBom(): boolean {
    return this.bomSkipped;
  }

  get filePath(): string {
    return this.path ?? "<memory>";
  }

  /**
   * Stream a session file, yielding between chunks; never modifies it.
   * @throws {NotARegularFileError}; the `fs` error when it cannot be opened or read (e.g. `ENOENT`).
   */
  static async open(path: string, options: OpenOptions = {}): Promise<SessionFile> {
    const session = new SessionFile(path, undefined);
    if (options.digest) session.digest = new ContentDigest();
    await session.readFromDisk(0);
    return session;
  }

  get fileIdentity(): FileIdentity | undefined {
    return this.identity;
  }

  /** SHA-256 of the bytes up to {@link committedBytes} as read; only with `{ digest: true }`. */
  get contentDigest(): PrefixDigest | undefined {
    return this.digest?.result();
  }

  static fromBytes(bytes: Buffer | string): SessionFile {
    const buf = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
    const session = new SessionFile(undefined, buf);
    const splitter = new LineSplitter(0);
    session.consume(splitter, buf, false);
    session.consume(splitter, undefined, true);
    session.size = buf.length;
    return session;
  }

  /** The leaf pi opens this file at: the last entry in file order, or null. */
  get leafId(): string | null {
    const last = this.records[this.records.length - 1];
    return last ? last.id : null;
  }

  get sessionId(): string | undefined {
    return this.header?.id;
  }

  get cwd(): string | undefined {
    return typeof this.header?.cwd === "string" ? this.header.cwd : undefined;
  }

  /** pi's `getSessionName`: the latest `session_info` name, trimmed (empty clears). */
  get name(): string | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const r = this.records[i]!;
      if (r.type === "session_info") return r.name?.trim() || undefined;
    }
    return undefined;
  }

  /** In file order; an empty or missing label clears. */
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

  /** `null` = roots; file order; only the entry that owns an id counts. */
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
   * Read what was appended; a file that shrank, was replaced or whose read bytes changed (pi's
   * migration rewrite) is read again. @throws the `fs` error (`ENOENT` when deleted).
   */
  async refresh(): Promise<RefreshResult> {
    if (!this.path) return { changed: false, reopened: false, added: [] };
    // a few appended lines: small synchronous reads; re-reads and large appends stream asynchronously
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

  /** The entry re-read from disk (migrated to v3). @throws {StaleSessionError} when the line changed. */
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

  readLineBytes(record: EntryRecord): Buffer {
    const buf = this.readBytes(record.offset, record.byteLength);
    if (buf.length < record.byteLength)
      throw new StaleSessionError(`${this.filePath} is shorter than when it was read`);
    return buf;
  }

  private readBytes(offset: number, length: number): Buffer {
    if (this.bytes) return this.bytes.subarray(offset, Math.min(this.bytes.length, offset + length));
    const buf = Buffer.allocUnsafe(length);
    return buf.subarray(0, readFullySync(this.readFd ?? this.openForReads(), buf, offset));
  }

  private readFd: number | undefined;

  /**
   * One descriptor for a synchronous run of reads (an open per body costs more than the read), closed
   * when the current task ends, so a later run opens whatever is at the path then.
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

  /** Parse the complete lines of a chunk; at the end an unterminated remainder is parsed provisionally, as pi does. */
  private consume(splitter: LineSplitter, chunk: Buffer | undefined, atEnd: boolean): void {
    if (chunk && splitter.offset === 0 && !this.bomSkipped && chunk.length >= 3 && chunk.subarray(0, 3).equals(BOM)) {
      this.bomSkipped = true;
      splitter.skip(chunk, 3);
      // the BOM is consumed: a refresh continues after it
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
    // the unterminated line is read again (with its new bytes) on the next refresh
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

  private readonly shadowedById = new Map<EntryRecord, EntryRecord>();

  private handleLine(buf: Buffer, start: number, end: number, offset: number, terminated: boolean): void {
    const line = this.lineNo;
    const byteLength = end - start;
    // JS `trim()` whitespace (BOM included) is blank, as in pi
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
    // pi skips lines whose JSON is falsy
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
        // v1 → v2: every entry gets an id and is chained to the previous one
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
      // pi: firstKeptEntryIndex indexes the parsed entries (header included); only earlier entries have ids yet
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

function withLineHash(d: Diagnostic, buf: Buffer, start: number, end: number): Diagnostic {
  return {
    ...d,
    lineBytes: end - start,
    lineSha256: createHash("sha256").update(buf.subarray(start, end)).digest("hex"),
  };
}
