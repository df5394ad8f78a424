/** A session header as pi 1.6.0 reads it, from the file's first bytes only (discovery reads many headers). */

import type * as fs from "node:fs";
import { openRegular } from "./disk";

export interface HeaderInfo {
  state: "session" | "not-session" | "incomplete";
  id?: string;
  cwd?: string;
  /** ms, when pi created the session. */
  created?: number;
}

const HEADER_FIRST_READ_BYTES = 4 * 1024;
const HEADER_PROBE_BYTES = 64 * 1024;

/**
 * Read a header like pi: the first line that parses must be `{type:"session", id:string}`; blank and
 * unparsable lines before it are skipped, a BOM accepted. `incomplete`: look again when the file changes.
 */
export async function readHeader(file: string): Promise<HeaderInfo> {
  let handle: fs.promises.FileHandle;
  try {
    // only regular files: a FIFO would block the scan
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
    // a parsed final line without `\n` is final; pi may still be writing one that does not parse
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
