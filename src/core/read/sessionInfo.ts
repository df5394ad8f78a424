/**
 * What a session listing needs of one file — pi 1.6.0's `buildSessionInfo` (`core/session-manager.js`):
 * the header (`id`, `cwd`, `timestamp`, `parentSession`), the name (latest `session_info` in file
 * order, trimmed, empty clears), the first user message with text (string content or text blocks
 * joined with " "), the number of `message` entries — read incrementally: a file that only grew
 * (same device + inode, same first bytes) is read from where the last read stopped.
 *
 * Fast: only the lines that matter are parsed. pi writes every entry with `type` first
 * (`{"type":"message",…`), so a line's type is read from its first bytes; header, `session_info`,
 * `model_change` lines and message lines until the first user message are parsed (`parseLine`),
 * other lines are only counted; a line longer than a chunk is skipped
 * with `indexOf`, never copied; a line that does not end in `}` (torn) is parsed to decide. Differences
 * from pi: a line that starts like an entry and ends in `}` but does not parse (a byte corrupted
 * inside) is still counted; a final line without `\n` (pi is writing it) is read next time.
 */

import * as fs from "node:fs";
import { openRegular } from "./disk";
import { ownCopy } from "./entries";
import { parseLine } from "./lines";
import { FIRST_MESSAGE_KEEP_CHARS } from "../rules/sessionLabel";

/** One file's listing facts. Plain JSON (it is what the listing cache stores). */
export interface SessionInfo {
  file: string;
  dev: number;
  ino: number;
  /** Bytes on disk when read. */
  size: number;
  mtimeMs: number;
  /** `session`: a pi session; `not-session`: its first parsed line is not a header; `incomplete`: no header line yet. */
  state: "session" | "not-session" | "incomplete";
  id?: string;
  cwd?: string;
  /** Header `timestamp` (ISO). */
  created?: string;
  /** Header `parentSession`: the file this one was forked or cloned from (pi's `parentSessionPath`). */
  parentSession?: string;
  /** Latest `session_info` name, trimmed (undefined: none, or cleared). */
  name?: string;
  /** pi's `firstMessage` text, raw, its first {@link FIRST_MESSAGE_KEEP_CHARS} characters (undefined: none yet). */
  firstMessage?: string;
  /** `message` entries (pi's `messageCount`). */
  messageCount: number;
  /** Entries after the header (lines that are entries). */
  entryCount: number;
  /** `provider/modelId` of `model_change` entries, first seen first (at most 8). */
  models: string[];
  /** Bytes of complete lines read (the next read starts here). */
  scanned: number;
  /** Hex of the first ≤ 64 bytes: a file rewritten in place reads again from the start. */
  head: string;
  /** True when the whole file was read (counts and name are final for this size). */
  complete: boolean;
}

/** Bytes per read. */
const CHUNK_BYTES = 1024 * 1024;
/** Lines up to this length are kept whole when they span two reads; longer ones only when they must be parsed. */
const PARSE_LIMIT_BYTES = 64 * 1024 * 1024;
const HEAD_BYTES = 64;
const MAX_MODELS = 8;

const TYPE_PREFIX = Buffer.from('{"type":"');

/** Options of {@link readSessionInfo}. */
export interface ReadInfoOptions {
  /** Stop after this many bytes (the first rows of a listing: header and first message only); the result is not `complete`. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** A fresh info for a file about to be read from the start. */
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

/** True when `previous` still describes `stat` exactly (nothing to read). */
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

/**
 * Read (or bring up to date) a file's {@link SessionInfo}. With a `previous` info of the same file
 * identity whose first bytes are unchanged and whose size is not larger than now, only the bytes
 * after `previous.scanned` are read. Never throws for file contents; throws the `fs` error when the
 * file cannot be opened, `NotARegularFileError` for a FIFO, device or folder, and `AbortError` when
 * `signal` aborts.
 */
export async function readSessionInfo(
  file: string,
  previous?: SessionInfo,
  options: ReadInfoOptions = {},
): Promise<SessionInfo> {
  // only regular files: a FIFO would block, a device never end (`openRegular`)
  const { handle, stat } = await openRegular(file);
  try {
    const headBuf = Buffer.alloc(Math.min(HEAD_BYTES, stat.size));
    if (headBuf.length > 0) await handle.read(headBuf, 0, headBuf.length, 0);
    const head = headBuf.toString("hex");
    if (isCurrent(previous, stat)) return previous!;
    let info: SessionInfo;
    if (
      previous &&
      previous.dev === stat.dev &&
      previous.ino === stat.ino &&
      previous.size <= stat.size &&
      previous.scanned <= stat.size &&
      head.startsWith(previous.head) &&
      previous.state !== "not-session"
    ) {
      info = {
        ...previous,
        models: [...previous.models],
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        head,
        complete: false,
      };
    } else {
      info = emptyInfo(file, stat, head);
    }
    if (previous?.state === "not-session" && previous.ino === stat.ino && head.startsWith(previous.head)) {
      // a file whose first line is not a header never becomes a session by growing
      return { ...previous, size: stat.size, mtimeMs: stat.mtimeMs, head, complete: true };
    }
    await readFrom(handle, info, stat.size, options);
    return info;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Bytes of a line's beginning that decide its type. */
const DECIDE_BYTES = 128;

/** Read complete lines from `info.scanned` up to `size` (or `maxBytes`), updating `info`. */
async function readFrom(
  handle: fs.promises.FileHandle,
  info: SessionInfo,
  size: number,
  options: ReadInfoOptions,
): Promise<void> {
  const limit = options.maxBytes !== undefined ? Math.min(size, info.scanned + options.maxBytes) : size;
  // a first row's beginning (`maxBytes`) gets a buffer of its own size: two dozen new megabyte
  // buffers cost a cold listing ≈ 60 ms of page faults. Whole reads keep using the pool, whatever
  // the file's size (a listing reads thousands of files)
  const small = options.maxBytes !== undefined && limit - info.scanned < CHUNK_BYTES;
  const buf = small ? Buffer.allocUnsafe(Math.max(1, limit - info.scanned)) : takeBuffer();
  try {
    await readChunks(handle, info, size, limit, buf, options);
  } finally {
    if (!small) freeBuffers.push(buf);
  }
  info.complete = info.state === "not-session" || options.maxBytes === undefined || info.scanned >= size;
}

/** Read buffers kept for reuse (a listing reads thousands of files: no megabyte of garbage per file). */
const freeBuffers: Buffer[] = [];

function takeBuffer(): Buffer {
  return freeBuffers.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
}

async function readChunks(
  handle: fs.promises.FileHandle,
  info: SessionInfo,
  size: number,
  limit: number,
  buf: Buffer,
  options: ReadInfoOptions,
): Promise<void> {
  let position = info.scanned;
  // a line that started in an earlier chunk: its kept bytes, and (once known) what to do with it
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let carryDecision: LineDecision | undefined;
  while (position < limit && info.state !== "not-session") {
    options.signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, limit - position), position);
    if (bytesRead === 0) break;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl < 0 || nl >= bytesRead ? bytesRead : nl;
      if (carryBytes > 0 || carryDecision !== undefined || end === bytesRead) {
        // (part of) a line that spans reads
        if (carryDecision === undefined && carryBytes === 0 && end - start >= DECIDE_BYTES)
          // its beginning is here: decide now, and keep its bytes only when it is to be parsed
          // (a long tool output or a hole of zeros is counted or skipped without a copy)
          carryDecision = decide(info, buf, start, start + DECIDE_BYTES, false);
        if (carryDecision === undefined || carryDecision === "parse") {
          if (carryBytes + (end - start) <= PARSE_LIMIT_BYTES) {
            carry.push(end === bytesRead ? Buffer.from(buf.subarray(start, end)) : buf.subarray(start, end));
            carryBytes += end - start;
          } else carryDecision = "count"; // too long to parse: counted by its beginning only
        }
        if (carryDecision === undefined && carryBytes >= DECIDE_BYTES) {
          const prefix = Buffer.concat(carry).subarray(0, DECIDE_BYTES);
          carryDecision = decide(info, prefix, 0, prefix.length, false);
          if (carryDecision !== "parse") carry = [];
        }
        if (end === bytesRead) break; // goes on in the next read
        const whole = carry.length === 1 ? carry[0]! : Buffer.concat(carry);
        let decision = carryDecision ?? decide(info, whole, 0, whole.length, true);
        if (decision !== "parse" && decision !== "skip" && endsWithBrace(buf, start, end) === false) decision = "skip";
        consume(info, whole, 0, whole.length, decision);
        carry = [];
        carryBytes = 0;
        carryDecision = undefined;
      } else {
        let decision = decide(info, buf, start, end, true);
        if (typeof decision === "object" && !endsWithBrace(buf, start, end)) decision = "parse"; // torn: the parse tells
        consume(info, buf, start, end, decision);
      }
      info.scanned = position + end + 1;
      start = end + 1;
      if ((info.state as SessionInfo["state"]) === "not-session") break;
    }
    position += bytesRead;
  }
}

/** Whether the last non-blank byte of `buf[start, end)` is `}` (undefined: all blank). */
function endsWithBrace(buf: Buffer, start: number, end: number): boolean | undefined {
  for (let i = end - 1; i >= start; i--) {
    const c = buf[i];
    if (c === 0x20 || c === 0x09 || c === 0x0d) continue;
    return c === 0x7d;
  }
  return undefined;
}

/**
 * What to do with a line: `parse` it (header, names, models, messages until the first user
 * message), `count` it as an entry of the type read from its first bytes, or `skip` it (blank,
 * not an object). `whole`: the bytes are the whole line (else its beginning).
 */
type LineDecision = "parse" | "count" | "skip" | { type: string };

function decide(info: SessionInfo, buf: Buffer, start: number, end: number, whole: boolean): LineDecision {
  let i = start;
  while (i < end && (buf[i] === 0x20 || buf[i] === 0x09 || buf[i] === 0x0d || buf[i] === 0x0a)) i++;
  if (i === start && buf[i] === 0xef && buf[i + 1] === 0xbb && buf[i + 2] === 0xbf) i += 3; // BOM (first line)
  if (i >= end) return whole ? "skip" : "parse"; // blank so far: kept until it ends
  if (info.state === "incomplete") return "parse"; // the first parsed line decides whether this is a session
  if (buf[i] !== 0x7b) return "skip"; // not an object: not an entry for pi
  if (
    end - i > TYPE_PREFIX.length &&
    buf.compare(TYPE_PREFIX, 0, TYPE_PREFIX.length, i, i + TYPE_PREFIX.length) === 0
  ) {
    const q = buf.indexOf(0x22, i + TYPE_PREFIX.length);
    if (q > 0 && q < end && q - i < 64) {
      const type = buf.toString("latin1", i + TYPE_PREFIX.length, q);
      if (type === "session_info" || type === "model_change" || type === "session") return "parse";
      if (type === "message" && info.firstMessage === undefined) return "parse";
      return { type };
    }
  }
  return "parse"; // another key order: the parse tells
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
    const m = v.message as Record<string, unknown> | undefined;
    if (info.firstMessage === undefined && m && typeof m === "object" && m.role === "user" && "content" in m) {
      const text = textOf(m.content);
      if (text) info.firstMessage = text;
    }
  }
}

/** pi's `extractTextContent`: a string, or the text blocks joined with " " (first {@link FIRST_MESSAGE_KEEP_CHARS} characters). */
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

/** The first {@link FIRST_MESSAGE_KEEP_CHARS} characters, a copy: the listing keeps it, not the whole text. */
function head(value: unknown): string {
  if (typeof value === "string") return ownCopy(value.slice(0, FIRST_MESSAGE_KEEP_CHARS));
  return value === undefined || value === null ? "" : String(value);
}
