/**
 * Finding pi session files for a workspace folder without reading whole files.
 *
 * Source: pi 1.6.0 `dist/core/session-manager.js` (`getDefaultSessionDirPath`: `--<cwd>--` under
 * `<agentDir>/sessions/`, `readSessionHeader`, `findMostRecentSession`, `SessionManager.list`),
 * `dist/config.js` and `docs/sessions.md` (session dir overrides: `--session-dir`,
 * `PI_CODING_AGENT_SESSION_DIR`, setting `sessionDir` relative to cwd).
 *
 * The folder name encoding is lossy (`/a/b-c/d` and `/a/b/c-d` share `--a-b-c-d--`), so sessions
 * are always attributed by their header `cwd`; pi itself lists both (case 12).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { openRegularSync } from "./disk";
import { expandHome } from "../rules/settings";

/** pi's session folder name for a cwd: `--` + cwd without one leading separator, `/ \ :` → `-`, + `--`. */
export function encodeSessionDirName(resolvedCwd: string): string {
  return `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** A directory that may hold sessions of a cwd. */
export interface SessionDirCandidate {
  dir: string;
  /** Why we look there. */
  origin: "default" | "env" | "setting" | "extension-setting";
  /** True when sessions of several projects share the folder (explicit session dirs). */
  shared: boolean;
}

/**
 * The folders pi would use for sessions of `cwd`, most specific first: `PI_CODING_AGENT_SESSION_DIR`,
 * the `sessionDir` setting (relative to cwd), then `<agentDir>/sessions/--<cwd>--/`; plus extra folders
 * the user configured in pi-context.
 */
export function sessionDirCandidates(options: {
  agentDir: string;
  cwd: string;
  env?: NodeJS.ProcessEnv;
  sessionDirSetting?: string;
  extraDirs?: string[];
}): SessionDirCandidate[] {
  const env = options.env ?? process.env;
  const out: SessionDirCandidate[] = [];
  const add = (dir: string, origin: SessionDirCandidate["origin"], shared: boolean): void => {
    if (!out.some((c) => c.dir === dir)) out.push({ dir, origin, shared });
  };
  for (const extra of options.extraDirs ?? [])
    add(path.resolve(options.cwd, expandHome(extra)), "extension-setting", true);
  const fromEnv = env.PI_CODING_AGENT_SESSION_DIR;
  if (fromEnv) add(path.resolve(options.cwd, expandHome(fromEnv)), "env", true);
  if (options.sessionDirSetting) add(path.resolve(options.cwd, expandHome(options.sessionDirSetting)), "setting", true);
  add(path.join(options.agentDir, "sessions", encodeSessionDirName(path.resolve(options.cwd))), "default", false);
  return out;
}

/** True when a session's header `cwd` names the workspace folder (or, with `orInside`, a folder inside it). */
export function cwdMatches(
  headerCwd: string | undefined,
  folder: string,
  options: { platform?: NodeJS.Platform; orInside?: boolean } = {},
): boolean {
  if (!headerCwd) return false;
  const platform = options.platform ?? process.platform;
  const a = comparablePath(headerCwd, platform);
  const b = comparablePath(folder, platform);
  if (a === b) return true;
  if (!options.orInside) return false;
  const sep = platform === "win32" ? "\\" : "/";
  return a.startsWith(b.endsWith(sep) ? b : b + sep);
}

function comparablePath(p: string, platform: NodeJS.Platform): string {
  if (platform === "win32") {
    const resolved = path.win32.resolve(p.replace(/\//g, "\\"));
    return resolved.toLowerCase();
  }
  return path.posix.resolve(p);
}

/** What a session listing shows, read from the first and last bytes of the file. */
export interface SessionSummary {
  file: string;
  /** Bytes on disk. */
  size: number;
  /** Last modification time (ms since epoch). */
  mtimeMs: number;
  id: string;
  cwd: string | undefined;
  /** Header timestamp (ISO). */
  created: string | undefined;
  /** Latest `session_info` name seen in the head or tail window. */
  name: string | undefined;
  /** Text of the first user message (first line, ≤ 200 chars) when it is inside the head window. */
  firstMessage: string | undefined;
  /** Timestamp of the last complete entry in the tail window. */
  lastEntryTimestamp: string | undefined;
  /**
   * Number of entries: exact for files up to {@link EXACT_COUNT_BYTES} (their lines are counted),
   * `undefined` for larger files (a count from a sample would be misleading).
   */
  entryCount: number | undefined;
  entryCountExact: boolean;
  parentSession?: string;
}

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 64 * 1024;
/** Files up to this size get an exact entry count (their newlines are counted natively, ~1 ms/MB). */
export const EXACT_COUNT_BYTES = 8 * 1024 * 1024;

/** Count the entries of a file by its non-blank lines (minus the header), reading it in chunks. */
function countEntries(fd: number, size: number): number {
  const buf = Buffer.allocUnsafe(Math.min(size, 1024 * 1024));
  let lines = 0;
  let position = 0;
  let lineHasContent = false;
  while (position < size) {
    const n = fs.readSync(fd, buf, 0, buf.length, position);
    if (n === 0) break;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl < 0 || nl >= n ? n : nl;
      if (end > start && buf[start] !== 0x0d) lineHasContent = true;
      if (nl < 0 || nl >= n) break;
      if (lineHasContent) lines++;
      lineHasContent = false;
      start = nl + 1;
    }
    position += n;
  }
  if (lineHasContent) lines++;
  return Math.max(0, lines - 1);
}

/**
 * Read a session's header and summary from at most `HEAD_BYTES + TAIL_BYTES` bytes.
 * @returns undefined when the file is not a pi session (first parsed line is not a header) or unreadable.
 */
export function readSessionSummary(file: string): SessionSummary | undefined {
  let fd: number;
  let stat: fs.Stats;
  try {
    // Only regular files: a FIFO named *.jsonl would block the listing (issue 16.5).
    ({ fd, stat } = openRegularSync(file));
  } catch {
    return undefined;
  }
  try {
    const size = stat.size;
    const headLength = Math.min(size, HEAD_BYTES);
    const head = Buffer.alloc(headLength);
    fs.readSync(fd, head, 0, headLength, 0);
    const whole = size <= HEAD_BYTES + TAIL_BYTES;
    let tail = Buffer.alloc(0);
    let tailStart = size;
    if (!whole) {
      tailStart = size - TAIL_BYTES;
      tail = Buffer.alloc(TAIL_BYTES);
      fs.readSync(fd, tail, 0, TAIL_BYTES, tailStart);
    } else if (size > headLength) {
      tail = Buffer.alloc(size - headLength);
      fs.readSync(fd, tail, 0, tail.length, headLength);
      tailStart = headLength;
    }
    const text = whole ? Buffer.concat([head, tail]).toString("utf8") : head.toString("utf8");
    let lines = text.split("\n");
    if (!whole && lines.length > 1) lines = lines.slice(0, -1); // last head line may be cut
    let header: Record<string, unknown> | undefined;
    let name: string | undefined;
    let firstMessage: string | undefined;
    let lastTimestamp: string | undefined;
    let entries = 0;
    const visit = (line: string, countIt: boolean): void => {
      if (!line.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(line.charCodeAt(0) === 0xfeff && !header ? line.slice(1) : line);
      } catch {
        return;
      }
      if (!value || typeof value !== "object") return;
      const v = value as Record<string, unknown>;
      if (!header) {
        header = v.type === "session" && typeof v.id === "string" ? v : { invalid: true };
        return;
      }
      if (v.type === "session") return;
      if (countIt) entries++;
      if (typeof v.timestamp === "string") lastTimestamp = v.timestamp;
      if (v.type === "session_info") name = typeof v.name === "string" ? v.name.trim() || undefined : undefined;
      if (firstMessage === undefined && v.type === "message") {
        const m = v.message as { role?: unknown; content?: unknown } | undefined;
        if (m?.role === "user") firstMessage = firstLineOf(textOf(m.content));
      }
    };
    for (const line of lines) {
      visit(line, true);
      if (header && "invalid" in header) return undefined;
    }
    if (!header) return undefined;
    if (!whole) {
      const tailText = tail.toString("utf8");
      const tailLines = tailText.split("\n").slice(1); // the first tail line may be cut
      for (const line of tailLines) visit(line, false);
    }
    const h = header as Record<string, unknown>;
    const exact = whole || size <= EXACT_COUNT_BYTES;
    const summary: SessionSummary = {
      file,
      size,
      mtimeMs: stat.mtimeMs,
      id: h.id as string,
      cwd: typeof h.cwd === "string" ? h.cwd : undefined,
      created: typeof h.timestamp === "string" ? h.timestamp : undefined,
      name,
      firstMessage,
      lastEntryTimestamp: lastTimestamp,
      entryCount: whole ? entries : exact ? countEntries(fd, size) : undefined,
      entryCountExact: exact,
    };
    if (typeof h.parentSession === "string") summary.parentSession = h.parentSession;
    return summary;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text")
    .map((b) => String((b as { text?: unknown }).text ?? ""))
    .join(" ");
}

function firstLineOf(text: string): string | undefined {
  const line = text.trim().split(/\r?\n/)[0] ?? "";
  if (!line) return undefined;
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * The sessions of a workspace folder: every `*.jsonl` in the candidate folders whose header `cwd`
 * is the folder (or inside it, with `orInside`), newest first by modification time.
 * Reads at most 128 kB per file.
 */
export function listSessions(
  candidates: readonly SessionDirCandidate[],
  folder: string,
  options: { platform?: NodeJS.Platform; orInside?: boolean; sessionsRoot?: string } = {},
): SessionSummary[] {
  const seen = new Set<string>();
  const out: SessionSummary[] = [];
  const dirs = candidates.map((c) => c.dir);
  if (options.orInside && options.sessionsRoot) {
    // Sessions of sub-folders live in other `--…--` folders whose names start with this folder's prefix.
    const prefix = encodeSessionDirName(path.resolve(folder)).slice(0, -2);
    try {
      for (const name of fs.readdirSync(options.sessionsRoot)) {
        if (name.startsWith(prefix)) dirs.push(path.join(options.sessionsRoot, name));
      }
    } catch {
      // no sessions root yet
    }
  }
  for (const dir of dirs) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith(".jsonl")) continue;
      const file = path.join(dir, name);
      if (seen.has(file)) continue;
      seen.add(file);
      const summary = readSessionSummary(file);
      if (!summary) continue;
      if (!cwdMatches(summary.cwd, folder, options)) continue;
      out.push(summary);
    }
  }
  out.sort((a, b) => b.mtimeMs - a.mtimeMs);
  return out;
}
