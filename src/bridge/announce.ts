/**
 * Where live bridges announce themselves (`<agentDir>/pi-context/live/<pid>-<id>.json`, 0600 in a
 * 0700 dir) and listen. A cloned repository or another user must not steer us: only private dirs
 * and files of this user are trusted, and we unlink only our own sockets, announcements, temp files.
 */

import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseAnnouncement, type Announcement } from "./protocol";

/** sun_path is 104 bytes on macOS, 108 on Linux, incl. NUL. */
export const MAX_SOCKET_PATH_BYTES = 100;

/** `<agentDir>/pi-context/live`. */
export function liveDir(agentDir: string): string {
  return path.join(agentDir, "pi-context", "live");
}

/** Thrown when a directory we would put secrets or sockets in is not private to this user. */
export class UnsafeDirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeDirectoryError";
  }
}

/**
 * Create `dir` as a real directory of this user with no group/other access (POSIX).
 * @throws {UnsafeDirectoryError} for a symlink, a non-directory, or another owner's directory.
 */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === "win32") return;
  const st = fs.lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory())
    throw new UnsafeDirectoryError(
      `${dir} is not a directory (or is a symlink); refusing to use it for the live bridge.`,
    );
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new UnsafeDirectoryError(
      `${dir} belongs to another user (uid ${st.uid}); refusing to use it for the live bridge.`,
    );
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** A random id: `bytes` random bytes as hex. */
export function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString("hex");
}

/** A Windows pipe name, or a socket path in a private directory. @throws {UnsafeDirectoryError} */
export function socketPathFor(
  agentDir: string,
  name: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (platform === "win32") return `\\\\.\\pipe\\pi-context-bridge-${name}`;
  const preferred = path.join(liveDir(agentDir), `${name}.sock`);
  if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH_BYTES) {
    ensurePrivateDir(liveDir(agentDir));
    return preferred;
  }
  const uid = process.getuid?.() ?? 0;
  const candidates = [
    env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, "pi-context") : undefined,
    path.join(os.tmpdir(), `pi-context-${uid}`),
    path.join("/tmp", `pi-context-${uid}`),
  ];
  for (const dir of candidates) {
    if (!dir) continue;
    const candidate = path.join(dir, `${name}.sock`);
    if (Buffer.byteLength(candidate) > MAX_SOCKET_PATH_BYTES) continue;
    ensurePrivateDir(dir);
    return candidate;
  }
  throw new UnsafeDirectoryError(
    `no directory for the live bridge socket has a path short enough (${MAX_SOCKET_PATH_BYTES} bytes)`,
  );
}

const BRIDGE_NAME = /^[0-9]+-[0-9a-f]+$/;
const TEMP_NAME = /^\.[0-9]+-[0-9a-f]+\.[0-9a-f]{8}\.tmp$/;
const PIPE_PREFIX = "\\\\.\\pipe\\pi-context-bridge-";

export function socketDirs(agentDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const uid = process.getuid?.() ?? 0;
  return [
    liveDir(agentDir),
    ...(env.XDG_RUNTIME_DIR ? [path.join(env.XDG_RUNTIME_DIR, "pi-context")] : []),
    path.join(os.tmpdir(), `pi-context-${uid}`),
    path.join("/tmp", `pi-context-${uid}`),
  ].map((d) => path.resolve(d));
}

/** Only our own socket names in {@link socketDirs}: never an SSH agent's, docker's or workspace socket. */
export function isBridgeSocketPath(
  agentDir: string,
  socket: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (platform === "win32") return socket.startsWith(PIPE_PREFIX) && BRIDGE_NAME.test(socket.slice(PIPE_PREFIX.length));
  if (!path.isAbsolute(socket)) return false;
  const resolved = path.resolve(socket);
  const base = path.basename(resolved);
  if (!base.endsWith(".sock") || !BRIDGE_NAME.test(base.slice(0, -".sock".length))) return false;
  return socketDirs(agentDir, env).includes(path.dirname(resolved));
}

/** Why `dir` is not private to this user (POSIX: a symlink, not a directory, another owner, group/other access), or undefined. */
export function privateDirProblem(dir: string): string | undefined {
  if (process.platform === "win32") return undefined;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : (error as Error).message;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) return "not a directory (or a symlink)";
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `owned by another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `readable or writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

function isPrivateFile(st: fs.Stats): boolean {
  if (!st.isFile()) return false;
  if (process.platform === "win32") return true;
  const uid = process.getuid?.();
  return (uid === undefined || st.uid === uid) && (st.mode & 0o077) === 0;
}

/** Written atomically (temp file 0600, then rename). @returns the file written. */
export function writeAnnouncement(agentDir: string, name: string, announcement: Announcement): string {
  const dir = liveDir(agentDir);
  ensurePrivateDir(dir);
  const file = path.join(dir, `${name}.json`);
  const tmp = path.join(dir, `.${name}.${randomHex(4)}.tmp`);
  const fd = fs.openSync(tmp, "wx", 0o600);
  try {
    fs.writeFileSync(fd, JSON.stringify(announcement, null, 2) + "\n");
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  return file;
}

/** One announcement file as read. */
export type AnnouncementRead = { file: string; announcement: Announcement } | { file: string; error: string };

/**
 * Every `*.json` in the live dir, parsed. Files not private to this user (a 0644 checkout too) and
 * announcements whose socket is not ours ({@link isBridgeSocketPath}) are errors, never used.
 */
export function readAnnouncements(agentDir: string, env: NodeJS.ProcessEnv = process.env): AnnouncementRead[] {
  const dir = liveDir(agentDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".json") && !n.startsWith("."));
  } catch {
    return [];
  }
  const dirProblem = privateDirProblem(dir);
  if (dirProblem) return [{ file: dir, error: `not private to this user: the live dir is ${dirProblem}; ignored` }];
  const out: AnnouncementRead[] = [];
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    try {
      const st = fs.lstatSync(file);
      if (!st.isFile()) continue;
      if (!isPrivateFile(st)) {
        out.push({ file, error: "not private to this user (owner, or permissions other than 0600); ignored" });
        continue;
      }
      if (st.size > 64 * 1024) {
        out.push({ file, error: "too large" });
        continue;
      }
      const parsed = parseAnnouncement(JSON.parse(fs.readFileSync(file, "utf8")));
      if ("error" in parsed) out.push({ file, error: parsed.error });
      else if (!isBridgeSocketPath(agentDir, parsed.socket, process.platform, env))
        out.push({
          file,
          error: `not a live bridge socket (${parsed.socket}): outside the bridge's directories; ignored`,
        });
      else out.push({ file, announcement: parsed });
    } catch (error) {
      out.push({ file, error: (error as Error).message });
    }
  }
  return out;
}

/** `kill(pid, 0)`: EPERM means it exists but is not ours. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Unlinks only a private `*.json` in the live dir and a socket of ours. Never throws. `file` `""`: socket only. */
export function removeAnnouncement(agentDir: string, file: string, socket?: string): void {
  if (file && path.dirname(path.resolve(file)) === path.resolve(liveDir(agentDir)) && file.endsWith(".json")) {
    try {
      if (isPrivateFile(fs.lstatSync(file))) fs.unlinkSync(file);
    } catch {
      // already gone
    }
  }
  if (socket && process.platform !== "win32" && isBridgeSocketPath(agentDir, socket)) {
    try {
      const st = fs.lstatSync(socket);
      const uid = process.getuid?.();
      if (st.isSocket() && (uid === undefined || st.uid === uid)) fs.unlinkSync(socket);
    } catch {
      // already gone
    }
  }
}

/** What a killed pi left behind, and our temp files older than a minute. Foreign files stay. @returns removed files. */
export function removeStaleAnnouncements(agentDir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const read of readAnnouncements(agentDir)) {
    if ("announcement" in read && !isProcessAlive(read.announcement.pid)) {
      removeAnnouncement(agentDir, read.file, read.announcement.socket);
      if (!fs.existsSync(read.file)) removed.push(read.file);
    }
  }
  const dir = liveDir(agentDir);
  if (privateDirProblem(dir)) return removed;
  try {
    for (const name of fs.readdirSync(dir)) {
      if (!TEMP_NAME.test(name)) continue;
      const file = path.join(dir, name);
      const st = fs.lstatSync(file);
      if (isPrivateFile(st) && now - st.mtimeMs > 60_000) {
        fs.unlinkSync(file);
        removed.push(file);
      }
    }
  } catch {
    // no dir
  }
  return removed;
}

/** Canonical form of a path for comparing session files (realpath when it exists). */
export function canonicalPath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}

/** Do two paths name the same session file? */
export function sameFile(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  return canonicalPath(a) === canonicalPath(b);
}
