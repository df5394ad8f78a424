/**
 * pi 1.6.0's `buildSessionInfo` for a listing, read incrementally (a file that only grew is read from
 * where the last read stopped). Only lines that matter are parsed: pi writes `type` first, so a line's
 * type comes from its first bytes, and a message's time from its end when the line has pi's layout.
 * Unlike pi, a line corrupted inside but ending in `}` still counts; a torn final line is read next time.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { openRegular, openRegularSync, readFullySync } from "./disk";
import { ownCopy } from "./entries";
import { parseLine } from "./lines";
import { FIRST_MESSAGE_KEEP_CHARS } from "../rules/sessionLabel";

/**
 * pi's `SessionInfo.modified` (ms), what `/resume` sorts by: the latest activity after 1970, else the
 * header time, else the mtime. NaN where pi's date is invalid (an activity past year 275760).
 */
export function sessionModifiedMs(info: Pick<SessionInfo, "lastActivity" | "created" | "mtimeMs">): number {
  if (info.lastActivity !== undefined && info.lastActivity > 0) return new Date(info.lastActivity).getTime();
  const header = info.created !== undefined ? new Date(info.created).getTime() : NaN;
  return Number.isNaN(header) ? Math.round(info.mtimeMs) : header;
}

export type ListingScope = "folder" | "all";

/**
 * pi's `/resume` order, a new array: a stable sort by {@link sessionModifiedMs} over pi's read order
 * (`list`: names descending; `listAll`: mtime, then name). NaN times get pi's exact result.
 */
export function resumeOrder<T extends Pick<SessionInfo, "file" | "lastActivity" | "created" | "mtimeMs">>(
  infos: readonly T[],
  scope: ListingScope = "folder",
): T[] {
  const keyed = infos.map((info) => ({ info, modified: sessionModifiedMs(info), name: path.basename(info.file) }));
  type Keyed = (typeof keyed)[number];
  const readOrder =
    scope === "all"
      ? (a: Keyed, b: Keyed) => b.info.mtimeMs - a.info.mtimeMs || b.name.localeCompare(a.name)
      : (a: Keyed, b: Keyed) => b.name.localeCompare(a.name);
  if (keyed.some((k) => Number.isNaN(k.modified))) {
    // pi's comparison is no order with NaN in it: reproduce its steps, not its intent
    keyed.sort(readOrder);
    keyed.sort((a, b) => b.modified - a.modified);
  } else keyed.sort((a, b) => b.modified - a.modified || readOrder(a, b));
  return keyed.map((k) => k.info);
}

/** Plain JSON: the listing cache stores it. */
export interface SessionInfo {
  file: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** `not-session`: the first parsed line is not a header; `incomplete`: no header line yet. */
  state: "session" | "not-session" | "incomplete";
  id?: string;
  cwd?: string;
  created?: string;
  /** pi's `parentSessionPath`: the file this one was forked or cloned from. */
  parentSession?: string;
  /** Undefined: none, or cleared. */
  name?: string;
  /** pi's `firstMessage`, raw, first {@link FIRST_MESSAGE_KEEP_CHARS} characters. */
  firstMessage?: string;
  messageCount: number;
  /** pi's `lastActivityTime` (ms); a time beyond any number is kept as `Number.MAX_VALUE`. */
  lastActivity?: number;
  entryCount: number;
  /** At most 8, first seen first. */
  models: string[];
  /** Bytes of complete lines read (the next read starts here). */
  scanned: number;
  /** Hex of the first ≤ 64 bytes: a file rewritten in place reads again from the start. */
  head: string;
  complete: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
/** Spanning lines up to this length are kept whole; longer ones only when they must be parsed. */
const PARSE_LIMIT_BYTES = 64 * 1024 * 1024;
const HEAD_BYTES = 64;
const MAX_MODELS = 8;
const DECIDE_BYTES = 256;
const TAIL_KEEP_BYTES = 4096;

const TYPE_PREFIX = Buffer.from('{"type":"');

export interface ReadInfoOptions {
  /** Stop after this many bytes (a listing's first rows); the result is not `complete`. */
  maxBytes?: number;
  signal?: AbortSignal;
}

function emptyInfo(file: string, stat: fs.Stats, head: string): SessionInfo {
  return {
    file,
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    state: "incomplete",
    messageCount: 0,
    entryCount: 0,
    models: [],
    scanned: 0,
    head,
    complete: false,
  };
}

export function isCurrent(
  previous: SessionInfo | undefined,
  stat: { dev: number; ino: number; size: number; mtimeMs: number },
): boolean {
  return (
    previous !== undefined &&
    previous.complete &&
    previous.dev === stat.dev &&
    previous.ino === stat.ino &&
    previous.size === stat.size &&
    previous.mtimeMs === stat.mtimeMs
  );
}

function startInfo(
  file: string,
  stat: fs.Stats,
  head: string,
  previous: SessionInfo | undefined,
): { done: SessionInfo } | { info: SessionInfo } {
  if (isCurrent(previous, stat)) return { done: previous! };
  if (previous?.state === "not-session" && previous.ino === stat.ino && head.startsWith(previous.head))
    // a file whose first line is not a header never becomes a session by growing
    return { done: { ...previous, size: stat.size, mtimeMs: stat.mtimeMs, head, complete: true } };
  if (
    previous &&
    previous.dev === stat.dev &&
    previous.ino === stat.ino &&
    previous.size <= stat.size &&
    previous.scanned <= stat.size &&
    head.startsWith(previous.head) &&
    previous.state !== "not-session"
  )
    return {
      info: {
        ...previous,
        models: [...previous.models],
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        head,
        complete: false,
      },
    };
  return { info: emptyInfo(file, stat, head) };
}

/**
 * Read or bring up to date a file's {@link SessionInfo} (only the bytes after `previous.scanned` when it
 * only grew). @throws the `fs` error, `NotARegularFileError`, `AbortError`; never for file contents.
 */
export async function readSessionInfo(
  file: string,
  previous?: SessionInfo,
  options: ReadInfoOptions = {},
): Promise<SessionInfo> {
  const { handle, stat } = await openRegular(file);
  try {
    const headBuf = Buffer.alloc(Math.min(HEAD_BYTES, stat.size));
    if (headBuf.length > 0) await handle.read(headBuf, 0, headBuf.length, 0);
    const start = startInfo(file, stat, headBuf.toString("hex"), previous);
    if ("done" in start) return start.done;
    const { info } = start;
    const limit = limitOf(info, stat.size, options);
    await withBuffer(info, limit, options, async (buf) => {
      const scanner = new LineScanner(info);
      for (let position = info.scanned; position < limit && info.state !== "not-session";) {
        options.signal?.throwIfAborted();
        const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, limit - position), position);
        if (bytesRead === 0) break;
        scanner.chunk(buf, bytesRead, position);
        position += bytesRead;
      }
      for (const [from, to] of scanner.rereads) {
        if (to - from > PARSE_LIMIT_BYTES) continue;
        const line = Buffer.allocUnsafe(to - from);
        const { bytesRead } = await handle.read(line, 0, line.length, from).catch(() => ({ bytesRead: -1 }));
        if (bytesRead === line.length) noteLineActivity(info, line);
      }
    });
    info.complete = info.state === "not-session" || options.maxBytes === undefined || info.scanned >= stat.size;
    return info;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** {@link readSessionInfo} synchronously, for small files where async steps cost more than the work. */
export function readSessionInfoSync(
  file: string,
  previous?: SessionInfo,
  options: Pick<ReadInfoOptions, "maxBytes"> = {},
): SessionInfo {
  const { fd, stat } = openRegularSync(file);
  try {
    const fresh = !previous || previous.ino !== stat.ino || previous.dev !== stat.dev;
    let head = "";
    if (!fresh) {
      const headBuf = Buffer.alloc(Math.min(HEAD_BYTES, stat.size));
      if (headBuf.length > 0) readFullySync(fd, headBuf, 0);
      head = headBuf.toString("hex");
    }
    const start = fresh ? { info: emptyInfo(file, stat, "") } : startInfo(file, stat, head, previous);
    if ("done" in start) return start.done;
    const { info } = start;
    const limit = limitOf(info, stat.size, options);
    withBuffer(info, limit, options, (buf) => {
      const scanner = new LineScanner(info);
      for (let position = info.scanned; position < limit && info.state !== "not-session";) {
        const bytesRead = fs.readSync(fd, buf, 0, Math.min(buf.length, limit - position), position);
        if (bytesRead === 0) break;
        // a read may stop before HEAD_BYTES only at the file's end
        if (position === 0) info.head = buf.toString("hex", 0, Math.min(HEAD_BYTES, bytesRead));
        scanner.chunk(buf, bytesRead, position);
        position += bytesRead;
      }
      for (const [from, to] of scanner.rereads) {
        if (to - from > PARSE_LIMIT_BYTES) continue;
        const line = Buffer.allocUnsafe(to - from);
        if (readFullySync(fd, line, from) === line.length) noteLineActivity(info, line);
      }
    });
    info.complete = info.state === "not-session" || options.maxBytes === undefined || info.scanned >= stat.size;
    return info;
  } finally {
    fs.closeSync(fd);
  }
}

function limitOf(info: SessionInfo, size: number, options: Pick<ReadInfoOptions, "maxBytes">): number {
  return options.maxBytes !== undefined ? Math.min(size, info.scanned + options.maxBytes) : size;
}

/** A first row gets a buffer of its own size (fresh megabyte buffers fault pages); whole reads use the pool. */
function withBuffer<T>(
  info: SessionInfo,
  limit: number,
  options: Pick<ReadInfoOptions, "maxBytes">,
  read: (buf: Buffer) => T,
): T {
  const small = options.maxBytes !== undefined && limit - info.scanned < CHUNK_BYTES;
  const buf = small ? Buffer.allocUnsafe(Math.max(1, limit - info.scanned)) : takeBuffer();
  const free = (): void => {
    if (!small) freeBuffers.push(buf);
  };
  let result: T;
  try {
    result = read(buf);
  } catch (error) {
    free();
    throw error;
  }
  if (result instanceof Promise) return result.finally(free) as T;
  free();
  return result;
}

const freeBuffers: Buffer[] = [];

function takeBuffer(): Buffer {
  return freeBuffers.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
}

function keepTail(kept: Buffer | undefined, piece: Buffer): Buffer {
  if (piece.length >= TAIL_KEEP_BYTES) return Buffer.from(piece.subarray(piece.length - TAIL_KEEP_BYTES));
  const joined = kept ? Buffer.concat([kept, piece]) : Buffer.from(piece);
  return joined.length > TAIL_KEEP_BYTES ? joined.subarray(joined.length - TAIL_KEEP_BYTES) : joined;
}

/**
 * Scans chunks into an info, deciding each line; a spanning line is kept only as far as its decision
 * needs. `rereads`: message lines whose end is not pi's layout, read whole again by the caller.
 */
class LineScanner {
  readonly rereads: [number, number][] = [];
  private carry: Buffer[] = [];
  private carryBytes = 0;
  private carryDecision: LineDecision | undefined;
  private carryStart = 0;
  private carryTail: Buffer | undefined;

  constructor(private readonly info: SessionInfo) {}

  chunk(buf: Buffer, bytesRead: number, position: number): void {
    const info = this.info;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl < 0 || nl >= bytesRead ? bytesRead : nl;
      if (this.carryBytes > 0 || this.carryDecision !== undefined || end === bytesRead) {
        if (!this.spanning(buf, start, end, bytesRead, position)) break; // goes on in the next read
      } else {
        let decision = decide(info, buf, start, end, true);
        if (typeof decision === "object" && !endsWithBrace(buf, start, end)) decision = "parse"; // torn: the parse tells
        consume(info, buf, start, end, decision);
      }
      info.scanned = position + end + 1;
      start = end + 1;
      if ((info.state as SessionInfo["state"]) === "not-session") break;
    }
  }

  private spanning(buf: Buffer, start: number, end: number, bytesRead: number, position: number): boolean {
    const info = this.info;
    if (this.carryBytes === 0 && this.carryDecision === undefined) {
      this.carryStart = position + start;
      this.carryTail = undefined;
    }
    if (this.carryDecision === undefined && this.carryBytes === 0 && end - start >= DECIDE_BYTES)
      // decide now, and keep the bytes only when the line is to be parsed (no copy of long tool output)
      this.carryDecision = decide(info, buf, start, start + DECIDE_BYTES, false);
    if (this.carryDecision === undefined || this.carryDecision === "parse") {
      if (this.carryBytes + (end - start) <= PARSE_LIMIT_BYTES) {
        this.carry.push(end === bytesRead ? Buffer.from(buf.subarray(start, end)) : buf.subarray(start, end));
        this.carryBytes += end - start;
      } else this.carryDecision = "count"; // too long to parse: counted by its beginning only
    } else if (readsTail(this.carryDecision)) this.carryTail = keepTail(this.carryTail, buf.subarray(start, end));
    if (this.carryDecision === undefined && this.carryBytes >= DECIDE_BYTES) {
      const all = Buffer.concat(this.carry);
      this.carryDecision = decide(info, all, 0, DECIDE_BYTES, false);
      if (this.carryDecision !== "parse") {
        if (readsTail(this.carryDecision)) this.carryTail = keepTail(undefined, all);
        this.carry = [];
      }
    }
    if (end === bytesRead) return false;
    const whole = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry);
    let decision = this.carryDecision ?? decide(info, whole, 0, whole.length, true);
    if (decision !== "parse" && decision !== "skip" && endsWithBrace(buf, start, end) === false) decision = "skip";
    if (readsTail(decision) && this.carryTail) {
      // the whole line is read again only when its end is not pi's layout
      consume(info, whole, 0, 0, { type: "message" });
      const time = tailActivity(this.carryTail, 0, this.carryTail.length);
      if (time !== undefined) noteActivity(info, time);
      else this.rereads.push([this.carryStart, position + end]);
    } else consume(info, whole, 0, whole.length, decision);
    this.carry = [];
    this.carryBytes = 0;
    this.carryDecision = undefined;
    this.carryTail = undefined;
    return true;
  }
}

function endsWithBrace(buf: Buffer, start: number, end: number): boolean | undefined {
  for (let i = end - 1; i >= start; i--) {
    const c = buf[i];
    if (c === 0x20 || c === 0x09 || c === 0x0d) continue;
    return c === 0x7d;
  }
  return undefined;
}

/**
 * `parse` (header, names, models, messages until the first user message, odd layouts), `count` by
 * type (`time: "tail"`: time read from the end), or `skip`. `whole`: the bytes are the whole line.
 */
type LineDecision = "parse" | "count" | "skip" | { type: string; time?: "tail" };

function readsTail(decision: LineDecision | undefined): boolean {
  return typeof decision === "object" && decision.time === "tail";
}

function decide(info: SessionInfo, buf: Buffer, start: number, end: number, whole: boolean): LineDecision {
  let i = start;
  while (i < end && (buf[i] === 0x20 || buf[i] === 0x09 || buf[i] === 0x0d || buf[i] === 0x0a)) i++;
  if (i === start && buf[i] === 0xef && buf[i + 1] === 0xbb && buf[i + 2] === 0xbf) i += 3; // BOM (first line)
  if (i >= end) return whole ? "skip" : "parse"; // blank so far: kept until it ends
  if (info.state === "incomplete") return "parse"; // the first parsed line decides whether this is a session
  if (buf[i] !== 0x7b) return "skip"; // not an object: not an entry for pi
  const t = literal(buf, i, end, TYPE_PREFIX);
  if (t >= 0) {
    if (literal(buf, t, end, MESSAGE_TYPE) >= 0)
      return info.firstMessage === undefined ? "parse" : messageDecision(buf, t + MESSAGE_TYPE.length, end);
    const q = buf.indexOf(0x22, t);
    if (q > 0 && q < end && q - i < 64) {
      const type = buf.toString("latin1", t, q);
      if (type === "session_info" || type === "model_change" || type === "session") return "parse";
      if (type === "message") return info.firstMessage === undefined ? "parse" : messageDecision(buf, q + 1, end);
      return { type };
    }
  }
  return "parse"; // another key order: the parse tells
}

const MESSAGE_TYPE = Buffer.from('message"');
const ID_KEY = Buffer.from(',"id":"');
const PARENT_KEY = Buffer.from(',"parentId":');
const NULL = Buffer.from("null");
const QUOTE = Buffer.from('"');
const ENTRY_TIME_KEY = Buffer.from(',"timestamp":"');
const ROLE_KEY = Buffer.from(',"message":{"role":"');
const CONTENT_KEY = Buffer.from(',"content":');

function literal(buf: Buffer, j: number, end: number, lit: Buffer): number {
  const n = lit.length;
  if (j < 0 || end - j < n) return -1;
  // a byte loop: cheaper than a `Buffer.compare` call for short literals
  for (let k = 0; k < n; k++) if (buf[j + k] !== lit[k]) return -1;
  return j + n;
}

function plainString(buf: Buffer, j: number, end: number): number {
  if (j < 0) return -1;
  for (let k = j; k < end && k < j + 128; k++) {
    const c = buf[k];
    if (c === 0x22) return k + 1;
    if (c === 0x5c) return -1;
  }
  return -1;
}

/** A message line in pi's layout: other roles only counted; user/assistant with `content` timed from the end. */
function messageDecision(buf: Buffer, j: number, end: number): LineDecision {
  j = plainString(buf, literal(buf, j, end, ID_KEY), end);
  j = literal(buf, j, end, PARENT_KEY);
  const nul = literal(buf, j, end, NULL);
  j = nul >= 0 ? nul : plainString(buf, literal(buf, j, end, QUOTE), end);
  j = literal(buf, j, end, ENTRY_TIME_KEY);
  j = literal(buf, plainString(buf, j, end), end, ROLE_KEY);
  const roleEnd = plainString(buf, j, end);
  if (roleEnd < 0) return "parse";
  if (literal(buf, j, end, USER_ROLE) !== roleEnd && literal(buf, j, end, ASSISTANT_ROLE) !== roleEnd) return MESSAGE;
  return literal(buf, roleEnd, end, CONTENT_KEY) >= 0 ? MESSAGE_TIMED : "parse";
}

const USER_ROLE = Buffer.from('user"');
const ASSISTANT_ROLE = Buffer.from('assistant"');
/** Shared: one object per line would be garbage. */
const MESSAGE: LineDecision = { type: "message" };
const MESSAGE_TIMED: LineDecision = { type: "message", time: "tail" };

const MESSAGE_TIME_KEY = Buffer.from(',"timestamp":');

/**
 * `message.timestamp` from the line's end (`,"timestamp":N`, then only plain pairs and `}}`); undefined
 * otherwise. A quote right after `,` is never inside a JSON string, so the match is a key.
 */
function tailActivity(buf: Buffer, start: number, end: number): number | undefined {
  let e = end;
  while (e > start && (buf[e - 1] === 0x20 || buf[e - 1] === 0x09 || buf[e - 1] === 0x0d)) e--;
  const close = e - 2;
  if (close - start < MESSAGE_TIME_KEY.length + 1 || buf[close] !== 0x7d || buf[close + 1] !== 0x7d) return undefined;
  const k = buf.lastIndexOf(MESSAGE_TIME_KEY, close - MESSAGE_TIME_KEY.length - 1);
  if (k < start) return undefined;
  const from = k + MESSAGE_TIME_KEY.length;
  let j = numberEnd(buf, from, close);
  if (j < 0) return undefined;
  const time = numberAt(buf, from, j);
  while (j < close) {
    if (buf[j] !== 0x2c || buf[j + 1] !== 0x22) return undefined;
    j = stringEnd(buf, j + 2, close);
    if (j < 0 || buf[j] !== 0x3a) return undefined;
    j = scalarEnd(buf, j + 1, close);
    if (j < 0) return undefined;
  }
  return j === close ? time : undefined;
}

function numberAt(buf: Buffer, from: number, to: number): number {
  if (to - from > 15) return Number(buf.toString("latin1", from, to));
  let n = 0;
  for (let k = from; k < to; k++) {
    const c = buf[k]!;
    if (c < 0x30 || c > 0x39) return Number(buf.toString("latin1", from, to));
    n = n * 10 + (c - 0x30);
  }
  return n;
}

function numberEnd(buf: Buffer, j: number, end: number): number {
  const digits = (k: number): number => {
    const from = k;
    while (k < end && buf[k]! >= 0x30 && buf[k]! <= 0x39) k++;
    return k > from ? k : -1;
  };
  if (buf[j] === 0x2d) j++;
  if (buf[j] === 0x30) j++;
  else if ((j = digits(j)) < 0) return -1;
  if (buf[j] === 0x2e && (j = digits(j + 1)) < 0) return -1;
  if (buf[j] === 0x65 || buf[j] === 0x45) {
    j++;
    if (buf[j] === 0x2b || buf[j] === 0x2d) j++;
    if ((j = digits(j)) < 0) return -1;
  }
  return j;
}

function stringEnd(buf: Buffer, j: number, end: number): number {
  for (; j < end; j++) {
    const c = buf[j];
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");

function scalarEnd(buf: Buffer, j: number, end: number): number {
  const c = buf[j];
  if (c === 0x22) return stringEnd(buf, j + 1, end);
  if (c === 0x74) return literal(buf, j, end, TRUE);
  if (c === 0x66) return literal(buf, j, end, FALSE);
  if (c === 0x6e) return literal(buf, j, end, NULL);
  return numberEnd(buf, j, end);
}

function noteLineActivity(info: SessionInfo, line: Buffer): void {
  const time = lineActivityNow(line, 0, line.length);
  if (time !== undefined) noteActivity(info, time);
}

/** pi's `getMessageActivityTime` (pi's listing drops a file whose message is `null`; we skip the entry). */
function messageActivity(entry: Record<string, unknown>): number | undefined {
  const m = entry.message as Record<string, unknown> | null | undefined;
  if (!m || typeof m !== "object" || typeof m.role !== "string" || !("content" in m)) return undefined;
  if (m.role !== "user" && m.role !== "assistant") return undefined;
  if (typeof m.timestamp === "number") return m.timestamp;
  const t = new Date(entry.timestamp as string).getTime();
  return Number.isNaN(t) ? undefined : t;
}

function lineActivityNow(buf: Buffer, start: number, end: number): number | undefined {
  try {
    const value = parseLine(buf, start, end);
    return value && typeof value === "object" ? messageActivity(value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** pi's `lastActivityTime = Math.max(lastActivityTime ?? 0, time)` (∞ kept as the largest number). */
function noteActivity(info: SessionInfo, time: number): void {
  const next = Math.max(info.lastActivity ?? 0, time);
  info.lastActivity = next === Infinity ? Number.MAX_VALUE : next;
}

function consume(info: SessionInfo, buf: Buffer, start: number, end: number, decision: LineDecision): void {
  if (decision === "skip") return;
  if (decision === "count") {
    if (info.state === "session") info.entryCount++;
    return;
  }
  if (typeof decision === "object") {
    info.entryCount++;
    if (decision.type === "message") info.messageCount++;
    if (decision.time === "tail" && end > start) {
      const time = tailActivity(buf, start, end) ?? lineActivityNow(buf, start, end);
      if (time !== undefined) noteActivity(info, time);
    }
    return;
  }
  let value: unknown;
  try {
    let s = start;
    if (buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
    value = parseLine(buf, s, end);
  } catch {
    return; // pi skips lines JSON.parse rejects
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    if (info.state === "incomplete") info.state = "not-session";
    return;
  }
  const v = value as Record<string, unknown>;
  if (info.state === "incomplete") {
    if (v.type !== "session" || typeof v.id !== "string") {
      info.state = "not-session";
      return;
    }
    info.state = "session";
    info.id = v.id;
    if (typeof v.cwd === "string") info.cwd = v.cwd;
    if (typeof v.timestamp === "string") info.created = v.timestamp;
    if (typeof v.parentSession === "string") info.parentSession = v.parentSession;
    return;
  }
  info.entryCount++;
  if (v.type === "session_info") {
    const name = typeof v.name === "string" ? v.name.trim() : "";
    if (name) info.name = name;
    else delete info.name;
  } else if (v.type === "model_change") {
    const id = `${typeof v.provider === "string" ? v.provider : "?"}/${typeof v.modelId === "string" ? v.modelId : "?"}`;
    if (!info.models.includes(id) && info.models.length < MAX_MODELS) info.models.push(id);
  } else if (v.type === "message") {
    info.messageCount++;
    const time = messageActivity(v);
    if (time !== undefined) noteActivity(info, time);
    const m = v.message as Record<string, unknown> | undefined;
    if (info.firstMessage === undefined && m && typeof m === "object" && m.role === "user" && "content" in m) {
      const text = textOf(m.content);
      if (text) info.firstMessage = text;
    }
  }
}

/** pi's `extractTextContent`: a string, or text blocks joined with " ". */
function textOf(content: unknown): string {
  if (typeof content === "string") return head(content);
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  let length = 0;
  for (const block of content) {
    if (!block || typeof block !== "object" || (block as { type?: unknown }).type !== "text") continue;
    const t = head((block as { text?: unknown }).text);
    parts.push(t);
    length += t.length + 1;
    if (length > FIRST_MESSAGE_KEEP_CHARS) break;
  }
  return parts.join(" ").slice(0, FIRST_MESSAGE_KEEP_CHARS);
}

/** A copy: the listing keeps it, not the whole text. */
function head(value: unknown): string {
  if (typeof value === "string") return ownCopy(value.slice(0, FIRST_MESSAGE_KEEP_CHARS));
  return value === undefined || value === null ? "" : String(value);
}
