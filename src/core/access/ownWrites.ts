/**
 * pi-context's own last write to each session file, so that its age is not taken for someone else
 * having the session open: two trims in a row must not refuse each other ("written 3 s ago"). Kept
 * in memory (this process) and in one small file shared with every other pi-context process on the
 * machine (`pi-context` CLI runs, other VS Code windows): `$PI_CONTEXT_STATE_DIR`, else
 * `$XDG_STATE_HOME/pi-context`, else `~/.local/state/pi-context` (Windows: `%LOCALAPPDATA%\pi-context`),
 * file `own-writes.json`. A record is the file's identity, size and mtime right after our append:
 * any later change by anyone (pi's next message) makes it stale. Best effort: a state file that
 * cannot be read or written only means a recent write of ours counts as someone else's.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** A file's state right after our append. */
export interface FileState {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The records kept (the newest files). */
const MAX_RECORDS = 200;

const memory = new Map<string, FileState>();

/** The folder of pi-context's state files (see the file comment). */
export function stateDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.PI_CONTEXT_STATE_DIR) return env.PI_CONTEXT_STATE_DIR;
  if (platform === "win32" && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, "pi-context");
  if (env.XDG_STATE_HOME) return path.join(env.XDG_STATE_HOME, "pi-context");
  return path.join(os.homedir(), ".local", "state", "pi-context");
}

function stateFile(): string {
  return path.join(stateDir(), "own-writes.json");
}

function key(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

function same(a: FileState, b: FileState): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
}

function readRecords(): Record<string, FileState & { at: number }> {
  try {
    const value = JSON.parse(fs.readFileSync(stateFile(), "utf8")) as unknown;
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, FileState & { at: number }>)
      : {};
  } catch {
    return {};
  }
}

/**
 * Remember that the file's current state is our own append (called by the write path right after
 * an append landed, and after a headless pi that pi-context ran for the user wrote its entry).
 * Never throws.
 */
export function recordOwnWrite(file: string, state: FileState): void {
  const k = key(file);
  const value: FileState = { size: state.size, mtimeMs: state.mtimeMs, ino: state.ino };
  memory.set(k, value);
  try {
    const records = readRecords();
    records[k] = { ...value, at: Date.now() };
    const kept = Object.entries(records)
      .sort((a, b) => (b[1].at ?? 0) - (a[1].at ?? 0))
      .slice(0, MAX_RECORDS);
    const dir = stateDir();
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // a whole new file, renamed over the old one: a reader never sees half of it
    const tmp = path.join(dir, `own-writes.${process.pid}.${Date.now()}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(Object.fromEntries(kept)), { mode: 0o600 });
    fs.renameSync(tmp, stateFile());
  } catch {
    // best effort (see the file comment)
  }
}

/** Record the file's state as it is now as our own write (see {@link recordOwnWrite}). */
export function recordOwnWriteOf(file: string): void {
  try {
    const s = fs.statSync(file);
    recordOwnWrite(file, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
  } catch {
    // nothing to record
  }
}

/** True when the file's state `now` is the one our last append left (nobody wrote since). */
export function isOwnLastWrite(file: string, now: FileState): boolean {
  const k = key(file);
  const mine = memory.get(k);
  if (mine && same(mine, now)) return true;
  const stored = readRecords()[k];
  return stored !== undefined && same(stored, now);
}
