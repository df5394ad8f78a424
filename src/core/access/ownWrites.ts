/**
 * pi-context's own last write to each session file, so two trims in a row do not refuse each other.
 * Shared by every pi-context process through `own-writes.json` in {@link stateDir}; a record (identity,
 * size, mtime) goes stale on any later change. Best effort: a lost record only makes our write look foreign.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export interface FileState {
  size: number;
  mtimeMs: number;
  ino: number;
}

const MAX_RECORDS = 200;

/** `created`: the write created the file (a fork or clone), so everything in it is ours. */
type OwnRecord = FileState & { created?: true };

const memory = new Map<string, OwnRecord>();

/**
 * `$PI_CONTEXT_STATE_DIR`, else `$XDG_STATE_HOME/pi-context`, else `~/.local/state/pi-context`
 * (Windows: `%LOCALAPPDATA%\pi-context`).
 */
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

/** `b`'s size and inode are compared when given (a listing may know only the mtime). */
function same(a: FileState, b: { mtimeMs: number; size?: number; ino?: number }): boolean {
  return (
    a.mtimeMs === b.mtimeMs && (b.size === undefined || a.size === b.size) && (b.ino === undefined || a.ino === b.ino)
  );
}

function readRecords(): Record<string, OwnRecord & { at: number }> {
  try {
    const value = JSON.parse(fs.readFileSync(stateFile(), "utf8")) as unknown;
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, OwnRecord & { at: number }>)
      : {};
  } catch {
    return {};
  }
}

/**
 * Remember the file's current state as our own write (after our append, or a headless pi's;
 * `created` when the write created the file). Never throws.
 */
export function recordOwnWrite(file: string, state: FileState, options: { created?: boolean } = {}): void {
  const k = key(file);
  const value: OwnRecord = {
    size: state.size,
    mtimeMs: state.mtimeMs,
    ino: state.ino,
    ...(options.created ? { created: true as const } : {}),
  };
  memory.set(k, value);
  try {
    const records = readRecords();
    records[k] = { ...value, at: Date.now() };
    const kept = Object.entries(records)
      .sort((a, b) => (b[1].at ?? 0) - (a[1].at ?? 0))
      .slice(0, MAX_RECORDS);
    const dir = stateDir();
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // written whole and renamed: a reader never sees half of it
    const tmp = path.join(dir, `own-writes.${process.pid}.${Date.now()}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(Object.fromEntries(kept)), { mode: 0o600 });
    fs.renameSync(tmp, stateFile());
  } catch {}
}

export function recordOwnWriteOf(file: string): void {
  try {
    const s = fs.statSync(file);
    recordOwnWrite(file, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
  } catch {}
}

export function isOwnLastWrite(file: string, now: FileState): boolean {
  const k = key(file);
  const mine = memory.get(k);
  if (mine && same(mine, now)) return true;
  const stored = readRecords()[k];
  return stored !== undefined && same(stored, now);
}

/**
 * A check of our own writes over many files (the records read once): `created` — pi-context created
 * the file (a fork or clone) and nobody wrote since, so no pi started or wrote it; `appended` — its
 * last write was ours; undefined — someone else's, or unknown.
 */
export function ownWriteChecker(): (
  file: string,
  now: { mtimeMs: number; size?: number; ino?: number },
) => "created" | "appended" | undefined {
  const records = readRecords();
  return (file, now) => {
    const k = key(file);
    const r = [memory.get(k), records[k]].find((x) => x !== undefined && same(x, now));
    return r === undefined ? undefined : r.created ? "created" : "appended";
  };
}
