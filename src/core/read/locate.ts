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
import { expandHome } from "../rules/settings";
import { listSessionFiles, SessionCatalog } from "./catalog";
import type { SessionInfo } from "./sessionInfo";

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

/** Options of {@link listSessions}. */
export interface ListSessionsOptions {
  platform?: NodeJS.Platform;
  /** Also sessions whose `cwd` is inside the folder (their own `--<cwd>--` folders under `sessionsRoot`). */
  orInside?: boolean;
  sessionsRoot?: string;
  /** The catalog to read through (its cache); default a fresh one. */
  catalog?: SessionCatalog;
  /** Progress of the listing: the matching sessions known so far, newest first. */
  onProgress?: (sessions: SessionInfo[], done: boolean) => void;
  signal?: AbortSignal;
}

/** The folders {@link listSessions} looks in: the candidates, plus the `--<cwd>…` folders of sub-folders with `orInside`. */
export async function listingDirs(
  candidates: readonly SessionDirCandidate[],
  folder: string,
  options: Pick<ListSessionsOptions, "orInside" | "sessionsRoot">,
): Promise<string[]> {
  const dirs = candidates.map((c) => c.dir);
  if (options.orInside && options.sessionsRoot) {
    // Sessions of sub-folders live in other `--…--` folders whose names start with this folder's prefix.
    const prefix = encodeSessionDirName(path.resolve(folder)).slice(0, -2);
    try {
      for (const name of await fs.promises.readdir(options.sessionsRoot)) {
        const dir = path.join(options.sessionsRoot, name);
        if (name.startsWith(prefix) && !dirs.includes(dir)) dirs.push(dir);
      }
    } catch {
      // no sessions root yet
    }
  }
  return dirs;
}

/**
 * The sessions of a workspace folder: every `*.jsonl` in the candidate folders whose header `cwd`
 * is the folder (or inside it, with `orInside`), newest first by modification time
 * ({@link newestFirst}). Asynchronous and incremental (see `catalog.ts`).
 */
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
