/**
 * Finding pi session files for a workspace folder (pi 1.6.0 `getDefaultSessionDirPath`,
 * `--session-dir`, `PI_CODING_AGENT_SESSION_DIR`, `sessionDir`). The folder name encoding is lossy
 * (`/a/b-c/d` and `/a/b/c-d` share one), so sessions are attributed by their header `cwd`.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { expandHome } from "../rules/settings";
import { listSessionFiles, SessionCatalog } from "./catalog";
import type { SessionInfo } from "./sessionInfo";

/** pi's folder name: `--` + cwd without one leading separator, `/ \ :` → `-`, + `--`. */
export function encodeSessionDirName(resolvedCwd: string): string {
  return `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

export interface SessionDirCandidate {
  dir: string;
  origin: "default" | "env" | "setting" | "extension-setting";
  /** Explicit session dirs shared by several projects. */
  shared: boolean;
}

/** pi's session folders for `cwd`, most specific first, plus folders configured in pi-context. */
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

export interface ListSessionsOptions {
  platform?: NodeJS.Platform;
  /** Also sessions whose `cwd` is inside the folder. */
  orInside?: boolean;
  sessionsRoot?: string;
  catalog?: SessionCatalog;
  onProgress?: (sessions: SessionInfo[], done: boolean) => void;
  signal?: AbortSignal;
}

async function listingDirs(
  candidates: readonly SessionDirCandidate[],
  folder: string,
  options: Pick<ListSessionsOptions, "orInside" | "sessionsRoot">,
): Promise<string[]> {
  const dirs = candidates.map((c) => c.dir);
  if (options.orInside && options.sessionsRoot) {
    // sub-folders' sessions live in `--…--` folders starting with this folder's prefix
    const prefix = encodeSessionDirName(path.resolve(folder)).slice(0, -2);
    try {
      for (const name of await fs.promises.readdir(options.sessionsRoot)) {
        const dir = path.join(options.sessionsRoot, name);
        if (name.startsWith(prefix) && !dirs.includes(dir)) dirs.push(dir);
      }
    } catch {}
  }
  return dirs;
}

/** The sessions whose header `cwd` is the folder (or inside it), newest first ({@link newestFirst}). */
export async function listSessions(
  candidates: readonly SessionDirCandidate[],
  folder: string,
  options: ListSessionsOptions = {},
): Promise<SessionInfo[]> {
  const catalog = options.catalog ?? new SessionCatalog();
  const files = await listSessionFiles(await listingDirs(candidates, folder, options));
  const matches = (i: SessionInfo): boolean => i.state === "session" && cwdMatches(i.cwd, folder, options);
  const all = await catalog.list(files, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: (infos, done) => options.onProgress!(infos.filter(matches), done) } : {}),
  });
  return all.filter(matches);
}
