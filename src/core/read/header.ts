/**
 * A session file's header as pi reads it (pi 1.6.0 `SessionManager` / `loadEntriesFromFile`): the
 * first line that parses as JSON must be `{type:"session", id:string}`. Read from the file's first
 * bytes only — discovery (`sessions/scan.ts`) and the access model (`access/gather.ts`) need the
 * header of many files, never their bodies.
 */

import type * as fs from "node:fs";
import { openRegular } from "./disk";

/** The header fields discovery needs. `state` says whether the file is (already) a pi session. */
export interface HeaderInfo {
  state: "session" | "not-session" | "incomplete";
  id?: string;
  cwd?: string;
  /** Header `timestamp` in ms (when pi created the session). */
  created?: number;
}

const HEADER_FIRST_READ_BYTES = 4 * 1024;
const HEADER_PROBE_BYTES = 64 * 1024;

/**
 * Read a session header like pi: the first line that parses as JSON must be `{type:"session", id:string}`.
 * Blank and unparsable complete lines before it are skipped (pi skips them too); a UTF-8 BOM is accepted.
 * `incomplete` = no complete parsed line yet (empty file, or pi is still writing the first line):
 * look again when the file changes.
 */
export async function readHeader(file: string): Promise<HeaderInfo> {
  let handle: fs.promises.FileHandle;
  try {
    // Only regular files: a FIFO would block the scan (issue 16.5).
    handle = (await openRegular(file)).handle;
  } catch {
    return { state: "incomplete" };
  }
  try {
    // a header line is ~150 bytes: try a small read first
    for (const size of [HEADER_FIRST_READ_BYTES, HEADER_PROBE_BYTES]) {
      const buf = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const info = parseHeaderProbe(buf.subarray(0, bytesRead), bytesRead < buf.length);
      if (info.state !== "incomplete" || bytesRead < buf.length) return info;
    }
    return { state: "incomplete" };
  } catch {
    return { state: "incomplete" };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** {@link readHeader} on bytes already read; `atEof` = the bytes are the whole file. */
export function parseHeaderProbe(bytes: Buffer, atEof: boolean): HeaderInfo {
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const complete = i < lines.length - 1;
    const line = lines[i]!;
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (complete) continue; // pi skips lines that do not parse
      return { state: "incomplete" };
    }
    // A final line without `\n` that parses is what pi reads too, but pi may still be writing it
    // only if it does not parse; a parsed one is final.
    if (!complete && !atEof) return { state: "incomplete" };
    if (!value || typeof value !== "object") return { state: "not-session" };
    const v = value as Record<string, unknown>;
    if (v.type !== "session" || typeof v.id !== "string") return { state: "not-session" };
    const created = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : NaN;
    return {
      state: "session",
      id: v.id,
      ...(typeof v.cwd === "string" ? { cwd: v.cwd } : {}),
      ...(Number.isFinite(created) ? { created } : {}),
    };
  }
  return { state: "incomplete" };
}
