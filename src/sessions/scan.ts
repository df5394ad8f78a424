/**
 * Session discovery without `vscode`. Attribution is by the header's `cwd` (pi 1.6.0
 * `SessionManager.list`), because pi's folder names (`--<cwd>--`) are lossy.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { readHeader, type HeaderInfo } from "../core/read/header";
import { newestFirst, statFiles } from "../core/read/catalog";
import { cwdMatches, encodeSessionDirName, sessionDirCandidates, type SessionDirCandidate } from "../core/read/locate";
import {
  expandHome,
  getAgentDir,
  resolveSettings,
  type ProjectSettingsMode,
  type SettingsProblem,
} from "../core/rules/settings";

export { parseHeaderProbe, readHeader, type HeaderInfo } from "../core/read/header";

/** `piContext.agentDir` when set, else pi's rule (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
export function resolveAgentDir(setting: string, env: NodeJS.ProcessEnv = process.env): string {
  const trimmed = setting.trim();
  if (trimmed) return path.resolve(expandHome(trimmed));
  return getAgentDir(env);
}

/** Where the sessions of one workspace folder may be. */
export interface FolderPlan {
  /** Absolute path of the workspace folder (compared with header `cwd`). */
  folder: string;
  /** Index of the folder in `workspace.workspaceFolders`, or -1 (no workspace: any cwd). */
  index: number;
  /** Folders to list, most specific first (pi's env/setting overrides, the default `--<cwd>--`, extras). */
  dirs: SessionDirCandidate[];
  /** With sub-folder sessions: the `sessions/` root and the `--<cwd>` name prefix to match in it. */
  subfolders?: { root: string; prefix: string };
  /** Problems reading pi's settings for this folder (only used for `sessionDir` here). */
  settingsProblems: SettingsProblem[];
}

/** Options for {@link planFolders}. */
export interface PlanOptions {
  agentDir: string;
  folders: readonly string[];
  /** `piContext.sessionDirs`: absolute, `~`, or relative to each workspace folder. */
  extraDirs: readonly string[];
  includeSubfolders: boolean;
  projectSettings: ProjectSettingsMode;
  env?: NodeJS.ProcessEnv;
}

/**
 * Per workspace folder, as pi resolves them: `PI_CODING_AGENT_SESSION_DIR`, `sessionDir`, the default
 * `<agentDir>/sessions/--<cwd>--/`, plus our extra dirs. No folder open: one plan with `index: -1`.
 */
export function planFolders(options: PlanOptions): FolderPlan[] {
  const env = options.env ?? process.env;
  const sessionsRoot = path.join(options.agentDir, "sessions");
  if (options.folders.length === 0) {
    const dirs: SessionDirCandidate[] = [];
    for (const extra of options.extraDirs) {
      const p = expandHome(extra);
      if (path.isAbsolute(p)) dirs.push({ dir: path.resolve(p), origin: "extension-setting", shared: true });
    }
    const fromEnv = env.PI_CODING_AGENT_SESSION_DIR;
    if (fromEnv && path.isAbsolute(expandHome(fromEnv)))
      dirs.push({ dir: path.resolve(expandHome(fromEnv)), origin: "env", shared: true });
    return [{ folder: "", index: -1, dirs, subfolders: { root: sessionsRoot, prefix: "--" }, settingsProblems: [] }];
  }
  return options.folders.map((folder, index) => {
    const settings = resolveSettings({
      agentDir: options.agentDir,
      cwd: folder,
      projectSettings: options.projectSettings,
    });
    const dirs = sessionDirCandidates({
      agentDir: options.agentDir,
      cwd: folder,
      env,
      ...(settings.sessionDir ? { sessionDirSetting: settings.sessionDir } : {}),
      extraDirs: [...options.extraDirs],
    });
    const plan: FolderPlan = { folder: path.resolve(folder), index, dirs, settingsProblems: settings.problems };
    if (options.includeSubfolders)
      plan.subfolders = { root: sessionsRoot, prefix: encodeSessionDirName(path.resolve(folder)).slice(0, -2) };
    return plan;
  });
}

/** Why a `.jsonl` is not shown, in words ("skipped <file>: it …"). */
export const SKIP_REASONS: Record<ScanResult["skipped"][number]["reason"], string> = {
  empty: "is empty",
  "not-a-session": "is not a pi session (its first line is not pi's session header)",
  "no-header-yet": "has no complete first line yet",
};

/** What the scanner knows about one file. */
export interface KnownFile {
  file: string;
  size: number;
  mtimeMs: number;
  dev: number;
  ino: number;
  header: HeaderInfo;
}

/** A session file attributed to a workspace folder. */
export interface FoundSession {
  file: string;
  size: number;
  mtimeMs: number;
  cwd: string | undefined;
  /** File identity (the listing cache's key with size and mtime). */
  dev: number;
  ino: number;
  /** Header `id`. */
  id?: string;
  /** Header `timestamp` in ms. */
  created?: number;
  /** Index of the {@link FolderPlan} it belongs to (-1 without a workspace). */
  folderIndex: number;
}

/** The result of one {@link SessionScanner.scan}. */
export interface ScanResult {
  /** Sessions of the workspace folders, newest first (by mtime, then by file name descending). */
  sessions: FoundSession[];
  /** Folders that exist now (to (re)create file-system watchers on them). */
  existingDirs: string[];
  /** Folders that were looked in. */
  searchedDirs: string[];
  /** `.jsonl` files that are not (yet) sessions, and why: "why is my session not shown" has an answer. */
  skipped: { file: string; reason: "empty" | "not-a-session" | "no-header-yet" }[];
}

/** Headers (the first 4 KB) are read only for new or changed files. */
export class SessionScanner {
  private readonly known = new Map<string, KnownFile>();
  /** Headers read by the last scans (for tests and logs). */
  headerReads = 0;

  /** Forget everything (after the plan changed). */
  clear(): void {
    this.known.clear();
  }

  /** Drop one file (deleted, unreadable). */
  forget(file: string): void {
    this.known.delete(file);
  }

  /** Never throws. A session matching several folders belongs to the most specific one. */
  async scan(
    plans: readonly FolderPlan[],
    options: { platform?: NodeJS.Platform; orInside?: boolean } = {},
  ): Promise<ScanResult> {
    const existingDirs: string[] = [];
    const searchedDirs: string[] = [];
    const filesOf = new Map<string, number[]>(); // file → indexes of the plans that look at it
    const order: string[] = [];
    for (let p = 0; p < plans.length; p++) {
      const plan = plans[p]!;
      const dirs = plan.dirs.map((d) => d.dir);
      if (plan.subfolders) {
        try {
          for (const name of await fs.promises.readdir(plan.subfolders.root)) {
            if (name.startsWith(plan.subfolders.prefix)) {
              const dir = path.join(plan.subfolders.root, name);
              if (!dirs.includes(dir)) dirs.push(dir);
            }
          }
        } catch {
          // no sessions root yet
        }
      }
      for (const dir of dirs) {
        if (!searchedDirs.includes(dir)) searchedDirs.push(dir);
        let names: string[];
        try {
          names = await fs.promises.readdir(dir);
        } catch {
          continue;
        }
        if (!existingDirs.includes(dir)) existingDirs.push(dir);
        for (const name of names) {
          if (!name.endsWith(".jsonl")) continue;
          const file = path.join(dir, name);
          const list = filesOf.get(file);
          if (list) {
            if (!list.includes(p)) list.push(p);
          } else {
            filesOf.set(file, [p]);
            order.push(file);
          }
        }
      }
    }
    const stats = await statFiles(order);
    const infos: (KnownFile | undefined)[] = new Array(stats.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < stats.length) {
        const i = next++;
        infos[i] = await this.look(stats[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(16, stats.length) }, worker));
    const sessions: FoundSession[] = [];
    const seen = new Set(order);
    const skipped: ScanResult["skipped"] = [];
    for (const info of infos) {
      if (!info) continue;
      if (info.header.state !== "session") {
        const reason =
          info.header.state === "not-session" ? "not-a-session" : info.size === 0 ? "empty" : "no-header-yet";
        skipped.push({ file: info.file, reason });
        continue;
      }
      let best: FolderPlan | undefined;
      for (const p of filesOf.get(info.file) ?? []) {
        const plan = plans[p]!;
        const matches =
          plan.index === -1 ||
          cwdMatches(info.header.cwd, plan.folder, {
            ...options,
            orInside: options.orInside || plan.subfolders !== undefined,
          });
        if (matches && (!best || plan.folder.length > best.folder.length)) best = plan;
      }
      if (!best) continue;
      const found: FoundSession = {
        file: info.file,
        size: info.size,
        mtimeMs: info.mtimeMs,
        cwd: info.header.cwd,
        dev: info.dev,
        ino: info.ino,
        folderIndex: best.index,
      };
      if (info.header.id !== undefined) found.id = info.header.id;
      if (info.header.created !== undefined) found.created = info.header.created;
      sessions.push(found);
    }
    for (const file of [...this.known.keys()]) if (!seen.has(file)) this.known.delete(file);
    sessions.sort(newestFirst);
    return { sessions, existingDirs, searchedDirs, skipped };
  }

  private async look(stat: {
    file: string;
    size: number;
    mtimeMs: number;
    dev: number;
    ino: number;
  }): Promise<KnownFile | undefined> {
    const file = stat.file;
    const prev = this.known.get(file);
    // unchanged since the last look: keep the header (a changed file may have been rewritten in
    // place, e.g. by pi's migration, so its header is read again: a few KB)
    if (
      prev &&
      prev.ino === stat.ino &&
      prev.size === stat.size &&
      prev.mtimeMs === stat.mtimeMs &&
      prev.header.state !== "incomplete"
    )
      return prev;
    this.headerReads++;
    const header = await readHeader(file);
    const info: KnownFile = { file, size: stat.size, mtimeMs: stat.mtimeMs, dev: stat.dev, ino: stat.ino, header };
    this.known.set(file, info);
    return info;
  }
}

export { newestFirst };
