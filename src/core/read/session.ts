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
 */

import * as fs from "node:fs";
import { buildRecord, type EntryRecord, type LazyChars } from "./entries";
import { messageChars, type CharBreakdown } from "./estimate";
import { JsonScanError, scanJson, type ScannedValue } from "./jsonscan";
import {
  CURRENT_SESSION_VERSION,
  type Diagnostic,
  KNOWN_ENTRY_TYPES,
  type SessionEntry,
  type SessionHeader,
} from "../types";

/** Lines at least this long (bytes) are read with {@link scanJson} instead of `JSON.parse`. */
let SCAN_LINE_BYTES = 8 * 1024;

/** Tests only: read lines of at least `bytes` bytes with the scanner (default 8 kB). */
export function setScanLineBytes(bytes: number): void {
  SCAN_LINE_BYTES = bytes;
}
/** Appends up to this size are read synchronously by `refresh()` (a few small syscalls). */
const SYNC_REFRESH_BYTES = 1024 * 1024;
/** Read size for streaming a file. */
const CHUNK_BYTES = 2 * 1024 * 1024;
/** Lines longer than this are skipped with a diagnostic (V8 cannot hold much larger strings). */
const MAX_LINE_BYTES = 256 * 1024 * 1024;
const NEWLINE = 0x0a;
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
}

interface FileIdentity {
  dev: number;
  ino: number;
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

  private readonly path: string | undefined;
  private bytes: Buffer | undefined;
  private identity: FileIdentity | undefined;
  /** Copy of the first bytes of the file (header line), to notice rewrites. */
  private headProbe = Buffer.alloc(0);
  /** Copy of the last bytes before {@link committedBytes}, to notice rewrites. */
  private tailProbe = Buffer.alloc(0);
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

  /** The file path, or `"<memory>"` for in-memory sessions. */
  get filePath(): string {
    return this.path ?? "<memory>";
  }

  /**
   * Read a session file from disk, streaming it in chunks and yielding to the event loop between
   * chunks. Never modifies the file.
   * @throws the `fs` error when the file cannot be opened or read (e.g. `ENOENT`).
   */
  static async open(path: string): Promise<SessionFile> {
    const session = new SessionFile(path, undefined);
    await session.readFromDisk(0);
    return session;
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
    const fd = fs.openSync(this.path, "r");
    const before = this.records.length;
    let hadProvisional = false;
    let rewritten: boolean;
    try {
      const stat = fs.fstatSync(fd);
      rewritten =
        stat.size < this.committedBytes ||
        (this.identity !== undefined && (stat.dev !== this.identity.dev || stat.ino !== this.identity.ino)) ||
        !this.probesMatch(fd);
      if (!rewritten) {
        if (stat.size === this.size && stat.mtimeMs === this.mtimeMs)
          return { changed: false, reopened: false, added: [] };
        hadProvisional = this.provisional?.record !== undefined;
        this.undoProvisional();
        if (stat.size - this.committedBytes <= SYNC_REFRESH_BYTES) {
          const length = stat.size - this.committedBytes;
          const chunk = Buffer.allocUnsafe(length);
          let done = 0;
          while (done < length) {
            const n = fs.readSync(fd, chunk, done, length - done, this.committedBytes + done);
            if (n === 0) break;
            done += n;
          }
          const start = this.records.length;
          const splitter = new LineSplitter(this.committedBytes);
          this.consume(splitter, chunk.subarray(0, done), false);
          this.consume(splitter, undefined, true);
          this.size = splitter.offset;
          this.mtimeMs = stat.mtimeMs;
          this.captureProbesSync(fd);
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
      value = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
    } catch {
      throw new StaleSessionError(`line ${record.line} of ${this.filePath} changed since it was read`);
    }
    if (this.fileVersion < 2) {
      value.id = record.id;
      value.parentId = record.parentId;
      if (record.type === "compaction") {
        delete value.firstKeptEntryIndex;
        if (record.firstKeptEntryId !== undefined) value.firstKeptEntryId = record.firstKeptEntryId;
      }
    } else if (value.id !== record.id) {
      throw new StaleSessionError(`line ${record.line} of ${this.filePath} no longer holds entry ${record.id}`);
    }
    if (this.fileVersion < 3) migrateMessageRole(value);
    return value as unknown as SessionEntry;
  }

  /** The raw bytes of an entry's line (without the newline). */
  readLineBytes(record: EntryRecord): Buffer {
    if (this.bytes) return this.bytes.subarray(record.offset, record.offset + record.byteLength);
    const buf = Buffer.allocUnsafe(record.byteLength);
    const fd = fs.openSync(this.path!, "r");
    try {
      let done = 0;
      while (done < record.byteLength) {
        const n = fs.readSync(fd, buf, done, record.byteLength - done, record.offset + done);
        if (n === 0) throw new StaleSessionError(`${this.filePath} is shorter than when it was read`);
        done += n;
      }
    } finally {
      fs.closeSync(fd);
    }
    return buf;
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
    this.identity = undefined;
    this.headProbe = Buffer.alloc(0);
    this.tailProbe = Buffer.alloc(0);
    this.parsedCount = 0;
    this.v1IdsByParsedIndex = [];
    this.v1PreviousId = null;
    this.provisional = undefined;
    this.labelCache = undefined;
    this.childrenCache = undefined;
    this.lineNo = 0;
    this.bomSkipped = false;
  }

  private probesMatch(fd: number): boolean {
    if (this.headProbe.length > 0) {
      const head = Buffer.alloc(this.headProbe.length);
      fs.readSync(fd, head, 0, head.length, 0);
      if (!head.equals(this.headProbe)) return false;
    }
    if (this.tailProbe.length > 0) {
      const tail = Buffer.alloc(this.tailProbe.length);
      fs.readSync(fd, tail, 0, tail.length, this.committedBytes - tail.length);
      if (!tail.equals(this.tailProbe)) return false;
    }
    return true;
  }

  private captureProbesSync(fd: number): void {
    if (this.headProbe.length < Math.min(this.committedBytes, 4096)) {
      this.headProbe = Buffer.alloc(Math.min(this.committedBytes, 4096));
      fs.readSync(fd, this.headProbe, 0, this.headProbe.length, 0);
    }
    const tailLength = Math.min(this.committedBytes, 64);
    this.tailProbe = Buffer.alloc(tailLength);
    if (tailLength > 0) fs.readSync(fd, this.tailProbe, 0, tailLength, this.committedBytes - tailLength);
  }

  private async readFromDisk(from: number): Promise<void> {
    const handle = await fs.promises.open(this.path!, "r");
    try {
      const stat = await handle.stat();
      this.identity = { dev: stat.dev, ino: stat.ino };
      this.mtimeMs = stat.mtimeMs;
      const splitter = new LineSplitter(from);
      let position = from;
      // Double buffering: the next chunk is read while this one is parsed. Two buffers take turns
      // (the splitter copies the unterminated tail it carries over, so a buffer is free once parsed).
      const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
      let turn = 0;
      const readAt = (at: number): Promise<{ chunk: Buffer; bytesRead: number }> => {
        const chunk = buffers[turn++ % 2]!;
        return handle.read(chunk, 0, CHUNK_BYTES, at).then(({ bytesRead }) => ({ chunk, bytesRead }));
      };
      let next = readAt(position);
      for (;;) {
        const { chunk, bytesRead } = await next;
        if (bytesRead === 0) break;
        position += bytesRead;
        next = readAt(position);
        this.consume(splitter, bytesRead === CHUNK_BYTES ? chunk : chunk.subarray(0, bytesRead), false);
        // Let other work run between chunks (the extension host must stay responsive).
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      this.consume(splitter, undefined, true);
      this.size = position;
      await this.captureProbes(handle);
    } finally {
      await handle.close();
    }
  }

  private async captureProbes(handle: fs.promises.FileHandle): Promise<void> {
    const headLength = Math.min(this.committedBytes, 4096);
    this.headProbe = Buffer.alloc(headLength);
    if (headLength > 0) await handle.read(this.headProbe, 0, headLength, 0);
    const tailLength = Math.min(this.committedBytes, 64);
    this.tailProbe = Buffer.alloc(tailLength);
    if (tailLength > 0) await handle.read(this.tailProbe, 0, tailLength, this.committedBytes - tailLength);
  }

  /**
   * Parse every complete line of the next chunk (`undefined` = end of input, where an unterminated
   * remainder is parsed provisionally, as pi parses a final line without newline).
   */
  private consume(splitter: LineSplitter, chunk: Buffer | undefined, atEnd: boolean): void {
    if (chunk && splitter.offset === 0 && !this.bomSkipped && chunk.length >= 3 && chunk.subarray(0, 3).equals(BOM)) {
      this.bomSkipped = true;
      splitter.skip(chunk, 3);
      chunk = chunk.subarray(3);
      this.diagnostics.push({
        severity: "warning",
        code: "bom",
        message: "The file starts with a UTF-8 byte order mark; pi 1.6.0 cannot parse its header and will not open it.",
        line: 1,
        offset: 0,
      });
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

  /**
   * Measure a long line's message on first use (its strings were not measured when the file was
   * read): re-read the line, decode lengths exactly, and count like pi's `estimateTokens`.
   * An escape that JSON.parse would reject is reported (pi skips such a line) and counted leniently.
   */
  private readonly lazyChars: LazyChars = Object.assign((record: EntryRecord) => this.measureLine(record), {
    message: (record: EntryRecord) => this.lineMessage(record),
  });

  /** The message of an entry's line (custom messages as `{role: "custom", content}`), re-read from disk. */
  private lineMessage(record: EntryRecord): unknown {
    const bytes = this.readLineBytes(record);
    const value = scanJson(bytes, 0, bytes.length, { measure: false }) as Record<string, unknown>;
    if (value.id !== undefined && this.fileVersion >= 2 && value.id !== record.id) {
      throw new StaleSessionError(`line ${record.line} of ${this.filePath} no longer holds entry ${record.id}`);
    }
    if (this.fileVersion < 3) migrateMessageRole(value);
    return record.type === "custom_message" ? { role: "custom", content: value.content ?? [] } : value.message;
  }

  private measureLine(record: EntryRecord): CharBreakdown {
    const message = this.lineMessage(record);
    try {
      return messageChars(message);
    } catch (error) {
      if (!(error instanceof JsonScanError)) throw error;
      this.diagnostics.push({
        severity: "warning",
        code: "invalid-escape",
        message: `line ${record.line}: ${error.message} inside a long string; pi 1.6.0 skips this line, pi-context estimates it from its size`,
        line: record.line,
        offset: record.offset,
        entryId: record.id,
      });
      const approx = Math.ceil(record.byteLength);
      return { text: approx, thinking: 0, toolCalls: 0, images: 0, tools: 0 };
    }
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
      this.diagnostics.push({
        severity: "error",
        code: "line-too-long",
        message: `line ${line} is ${byteLength} bytes; skipped`,
        line,
        offset,
      });
      return;
    }
    let value: unknown;
    let scanned = false;
    try {
      if (end - start < SCAN_LINE_BYTES) value = JSON.parse(buf.toString("utf8", start, end));
      else {
        value = parseLine(buf, start, end, false);
        scanned = true;
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (!terminated) {
        this.diagnostics.push({
          severity: "warning",
          code: "truncated-final-line",
          message: `truncated final record at line ${line} (${byteLength} bytes): ${reason}`,
          line,
          offset,
        });
      } else {
        this.diagnostics.push({
          severity: "warning",
          code: "malformed-line",
          message: `unparseable line ${line} (${byteLength} bytes): ${reason}`,
          line,
          offset,
        });
      }
      return;
    }
    // pi skips lines whose JSON is falsy (`null`, `0`, `false`, `""`).
    if (!value) {
      this.diagnostics.push({
        severity: "warning",
        code: "not-an-entry",
        message: `line ${line} is not an entry (${JSON.stringify(value)})`,
        line,
        offset,
      });
      return;
    }
    const parsedIndex = this.parsedCount++;
    if (this.header === undefined) {
      if (isHeader(value)) {
        this.header = toHeader(value);
        const version = (value as { version?: unknown }).version;
        this.fileVersion = typeof version === "number" ? version : 1;
        if (this.fileVersion < CURRENT_SESSION_VERSION) {
          this.diagnostics.push({
            severity: "info",
            code: "old-version",
            message: `session format version ${this.fileVersion}: migrated to version ${CURRENT_SESSION_VERSION} in memory only. pi 1.6.0 rewrites this file when it opens it; pi-context will not write to it.`,
            line,
          });
        }
        if (this.fileVersion < 2) this.v1IdsByParsedIndex[parsedIndex] = undefined;
        return;
      }
      this.invalid = true;
      this.diagnostics.push({
        severity: "error",
        code: "not-a-session",
        message: `not a pi session: the first entry (line ${line}) is not a session header`,
        line,
        offset,
      });
      return;
    }
    if (typeof value === "object" && (value as { type?: unknown }).type === "session") {
      if (this.fileVersion < 2) this.v1IdsByParsedIndex[parsedIndex] = undefined;
      this.diagnostics.push({
        severity: "info",
        code: "extra-header",
        message: `line ${line} is a second session header; ignored (as pi does)`,
        line,
        offset,
      });
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
    const record = buildRecord(
      value as ScannedValue,
      { index: this.records.length, line, offset, byteLength },
      scanned ? this.lazyChars : undefined,
    );
    if ("code" in record && !("id" in record)) {
      this.diagnostics.push({
        severity: "warning",
        code: record.code,
        message: `line ${line}: ${record.message}; skipped`,
        line,
        offset,
      });
      return;
    }
    const entry = record as EntryRecord;
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
      this.diagnostics.push({
        severity: "info",
        code: "unknown-type",
        message: `line ${line}: unknown entry type ${JSON.stringify(entry.type)} (kept in the tree, contributes nothing to the context)`,
        line,
        offset,
        entryId: entry.id,
      });
    }
    const previous = this.byId.get(entry.id);
    if (previous) {
      this.duplicateIds++;
      this.shadowedById.set(entry, previous);
      this.diagnostics.push({
        severity: "warning",
        code: "duplicate-id",
        message: `line ${line}: entry id ${entry.id} already used at line ${previous.line}; the later entry wins (as in pi)`,
        line,
        offset,
        entryId: entry.id,
      });
    }
    this.byId.set(entry.id, entry);
    this.records.push(entry);
    if (entry.type === "label") this.labelCache = undefined;
    this.childrenCache = undefined;
  }
}

/**
 * Splits a stream of chunks into lines without copying chunks: complete lines inside a chunk are
 * handed out as ranges of that chunk; only a line that spans chunks is concatenated (once).
 */
class LineSplitter {
  private carry: Buffer[] = [];
  private carryOffset = 0;
  /** File offset of the next byte to be pushed. */
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** Account for `n` bytes at the start of `chunk` that are not part of any line (a BOM). */
  skip(_chunk: Buffer, n: number): void {
    this.offset += n;
  }

  push(chunk: Buffer, onLine: (buf: Buffer, start: number, end: number, offset: number) => void): void {
    const base = this.offset;
    this.offset += chunk.length;
    let pos = 0;
    if (this.carry.length > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        this.carry.push(Buffer.from(chunk));
        return;
      }
      const line = Buffer.concat([...this.carry, chunk.subarray(0, nl)]);
      this.carry = [];
      onLine(line, 0, line.length, this.carryOffset);
      pos = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, pos);
      if (nl < 0) break;
      onLine(chunk, pos, nl, base + pos);
      pos = nl + 1;
    }
    if (pos < chunk.length) {
      // A copy: the caller may reuse `chunk` for the next read.
      this.carry = [Buffer.from(chunk.subarray(pos))];
      this.carryOffset = base + pos;
    }
  }

  /** The unterminated last line, if any. */
  remainder(): { buf: Buffer; offset: number } | undefined {
    if (this.carry.length === 0) return undefined;
    const buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry);
    return { buf, offset: this.carryOffset };
  }
}

/** pi's v2 → v3 migration: message role `hookMessage` became `custom`. */
function migrateMessageRole(value: Record<string, unknown>): void {
  const message = value.message as { role?: unknown } | undefined;
  if (value.type === "message" && message && typeof message === "object" && message.role === "hookMessage")
    message.role = "custom";
}

/** Deterministic ids for migrated v1 entries (pi draws random ones; ours stay stable across reloads). */
function syntheticId(parsedIndex: number): string {
  return parsedIndex.toString(16).padStart(8, "0");
}

function isHeader(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "session" &&
    typeof (value as { id?: unknown }).id === "string"
  );
}

function toHeader(value: unknown): SessionHeader {
  const v = value as Record<string, unknown>;
  const header: SessionHeader = { type: "session", id: v.id as string };
  if (typeof v.version === "number") header.version = v.version;
  if (typeof v.timestamp === "string") header.timestamp = v.timestamp;
  if (typeof v.cwd === "string") header.cwd = v.cwd;
  if (typeof v.parentSession === "string") header.parentSession = v.parentSession;
  return header;
}

const JS_WHITESPACE = /^[\s\uFEFF\u00A0]*$/;

function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c) continue;
    if (b < 0x80) return false;
    // Non-ASCII: let JavaScript decide (trim() also strips Unicode spaces and the BOM).
    return JS_WHITESPACE.test(buf.toString("utf8", i, end));
  }
  return true;
}

/**
 * Parse one line as pi would (`JSON.parse`), using {@link scanJson} for long lines so long strings
 * are not materialised. `JSON.parse` remains the judge: when the scanner refuses a line, the line
 * is accepted if `JSON.parse` accepts it.
 * @throws SyntaxError (from `JSON.parse`) for a line pi would skip.
 */
export function parseLine(buf: Buffer, start: number, end: number, measure = true): unknown {
  if (end - start < SCAN_LINE_BYTES) return JSON.parse(buf.toString("utf8", start, end));
  try {
    return scanJson(buf.subarray(start, end), 0, end - start, { measure });
  } catch (error) {
    if (!(error instanceof JsonScanError)) throw error;
    return JSON.parse(buf.toString("utf8", start, end));
  }
}
