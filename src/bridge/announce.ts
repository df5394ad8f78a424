/**
 * Where live bridges announce themselves and listen, shared by the bridge (inside pi) and the
 * VS Code side. No `vscode` import.
 *
 * - Announcements: `<agentDir>/pi-context/live/<pid>-<id>.json`, mode 0600, the directory 0700
 *   (created so; an existing one we own is tightened to 0700; one we do not own, or a symlink, is
 *   refused).
 * - Sockets (POSIX): `<agentDir>/pi-context/live/<pid>-<id>.sock`. Unix socket paths are limited
 *   to about 104 bytes; a longer one goes to `$XDG_RUNTIME_DIR/pi-context/` (user-only by
 *   definition) or else `<tmpdir>/pi-context-<uid>/`, both checked like the live dir.
 * - Windows: a named pipe `\\.\pipe\pi-context-bridge-<pid>-<id>` (pipes have no directory; the
 *   token is what keeps other local users out).
 */

import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseAnnouncement, type Announcement } from "./protocol";

/** Longest Unix socket path we use (sun_path is 104 bytes on macOS, 108 on Linux, incl. NUL). */
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
 * Create `dir` (and parents) and make sure it is a real directory owned by this user with no
 * group/other access (POSIX; on Windows it is only created). An existing directory we own with
 * looser permissions is tightened to 0700.
 * @throws {UnsafeDirectoryError} for a symlink, a non-directory, or a directory owned by someone else.
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

/**
 * Where a bridge with this `name` (`<pid>-<id>`) listens: a Windows pipe name, or a socket path in
 * a private directory (created and checked here).
 * @throws {UnsafeDirectoryError}
 */
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

/**
 * Write an announcement atomically (temp file 0600, then rename) into the private live dir.
 * @returns the file written.
 */
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
 * Every `*.json` in the live dir, parsed and shape-checked. A missing dir is an empty list.
 * Files that are not ours to trust (group/other-writable on POSIX) are reported as errors.
 */
export function readAnnouncements(agentDir: string): AnnouncementRead[] {
  const dir = liveDir(agentDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".json") && !n.startsWith("."));
  } catch {
    return [];
  }
  const out: AnnouncementRead[] = [];
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    try {
      const st = fs.lstatSync(file);
      if (!st.isFile()) continue;
      if (process.platform !== "win32") {
        const uid = process.getuid?.();
        if ((uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
          out.push({ file, error: "not private to this user (owner or permissions); ignored" });
          continue;
        }
      }
      if (st.size > 64 * 1024) {
        out.push({ file, error: "too large" });
        continue;
      }
      const parsed = parseAnnouncement(JSON.parse(fs.readFileSync(file, "utf8")));
      if ("error" in parsed) out.push({ file, error: parsed.error });
      else out.push({ file, announcement: parsed });
    } catch (error) {
      out.push({ file, error: (error as Error).message });
    }
  }
  return out;
}

/** Is a process with this id running? (`kill(pid, 0)`: EPERM means it exists but is not ours.) */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Remove an announcement file and, when it is a socket file in a private dir of ours, its socket. Never throws. */
export function removeAnnouncement(file: string, socket?: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
  if (socket && process.platform !== "win32" && socket.endsWith(".sock")) {
    try {
      const st = fs.lstatSync(socket);
      if (st.isSocket()) fs.unlinkSync(socket);
    } catch {
      // already gone
    }
  }
}

/**
 * Remove announcements (and their sockets) whose process is gone: what a killed pi leaves behind.
 * Unreadable/malformed files older than a minute go too (a crash mid-write leaves only temp files,
 * which are removed after a minute as well).
 * @returns the files removed.
 */
export function removeStaleAnnouncements(agentDir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const read of readAnnouncements(agentDir)) {
    if ("announcement" in read) {
      if (!isProcessAlive(read.announcement.pid)) {
        removeAnnouncement(read.file, read.announcement.socket);
        removed.push(read.file);
      }
    } else if (!read.error.startsWith("not private")) {
      try {
        if (now - fs.statSync(read.file).mtimeMs > 60_000) {
          fs.unlinkSync(read.file);
          removed.push(read.file);
        }
      } catch {
        // gone
      }
    }
  }
  const dir = liveDir(agentDir);
  try {
    for (const name of fs.readdirSync(dir)) {
      if (!name.startsWith(".") || !name.endsWith(".tmp")) continue;
      const file = path.join(dir, name);
      if (now - fs.statSync(file).mtimeMs > 60_000) {
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
