/**
 * `SessionSource`: finds the pi sessions of the workspace folders (by header `cwd`), follows the most
 * recently written one (or the one the user pinned), and re-reads it incrementally as pi appends.
 *
 * Change detection: VS Code file-system watchers on the session folders (they are outside the
 * workspace, so `RelativePattern(Uri.file(dir), "*.jsonl")`), on pi's settings/models files, and a
 * fallback poll every `piContext.pollIntervalMs` (stat only) for hosts where events do not arrive.
 * Events are coalesced ({@link COALESCE_MS}) and processed one batch at a time.
 *
 * `activate()` only constructs this; {@link PiSessionSource.start} schedules the first (async) scan.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import * as notify from "../ui/notify";
import { analyzeLoaded } from "../core/rules/analyze";
import { readSessionSummary, type SessionSummary } from "../core/read/locate";
import { SessionFile } from "../core/read/session";
import type { PiContextConfig } from "../config";
import type { CurrentSession, SessionDiscoveryInfo, SessionSource, UserPiService } from "../services";
import { newestFirst, planFolders, resolveAgentDir, SessionScanner, type FolderPlan } from "./scan";

/** Bursts of file events closer than this are handled as one update (ms). */
export const COALESCE_MS = 15;

/** Files in the agent dir whose changes affect the numbers (settings, models, trust). */
const AGENT_CONFIG_GLOB = "{settings.json,models.json,models-store.json,trust.json}";

interface Work {
  replan: boolean;
  scan: boolean;
  refresh: boolean;
  reanalyze: boolean;
}

const NO_WORK: Work = { replan: false, scan: false, refresh: false, reanalyze: false };

/** Options for {@link PiSessionSource}. */
export interface PiSessionSourceOptions {
  log: vscode.LogOutputChannel;
  config: () => PiContextConfig;
  /** The user's pi: its rules and catalog are what the analysis follows (re-analysed when it changes). */
  pi?: Pick<UserPiService, "current" | "onDidChange">;
  env?: NodeJS.ProcessEnv;
}

/** The extension's {@link SessionSource}. */
export class PiSessionSource implements SessionSource {
  private currentValue: CurrentSession | undefined;
  private readonly emitter = new vscode.EventEmitter<CurrentSession | undefined>();
  readonly onDidChange = this.emitter.event;

  private readonly log: vscode.LogOutputChannel;
  private readonly config: () => PiContextConfig;
  private readonly pi: PiSessionSourceOptions["pi"];
  private readonly env: NodeJS.ProcessEnv;
  private readonly scanner = new SessionScanner();
  private readonly disposables: vscode.Disposable[] = [];
  private watchers: vscode.Disposable[] = [];
  private watchedDirs = "";
  private watchersEnabled = true;
  private plans: FolderPlan[] = [];
  private agentDirValue: string;
  private pinnedFile: string | undefined;
  private latestFile: string | undefined;
  private pending: Work = { ...NO_WORK };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private waiters: (() => void)[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private pollInterval = 0;
  private disposed = false;
  private discoveryValue: SessionDiscoveryInfo = {
    phase: "starting",
    workspace: false,
    searchedDirs: [],
    sessionCount: 0,
  };
  private loggedProblems = "";
  private loggedDiagnostics = new Map<string, number>();
  /** Messages shown to the user (information/warning notifications), oldest first. For tests. */
  readonly notices: string[] = [];
  /** Counts for tests and the log: watcher events, polls, polls that scheduled work, update batches run. */
  readonly stats = {
    events: 0,
    ticks: 0,
    polls: 0,
    pollDetected: 0,
    updates: 0,
    lastTick: 0,
    lastPollEnd: 0,
    lastUpdateEnd: 0,
  };
  /** Snapshots the poll compares with (see {@link poll}). */
  private configSig = "";
  private dirSig = "";
  /** The step `process()` is in (diagnostics). */
  private step = "idle";

  constructor(options: PiSessionSourceOptions) {
    this.log = options.log;
    this.config = options.config;
    this.pi = options.pi;
    this.env = options.env ?? process.env;
    this.agentDirValue = resolveAgentDir(this.config().agentDir, this.env);
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.schedule({ replan: true })),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration("piContext")) return;
        if (
          e.affectsConfiguration("piContext.agentDir") ||
          e.affectsConfiguration("piContext.sessionDirs") ||
          e.affectsConfiguration("piContext.includeSubfolderSessions") ||
          e.affectsConfiguration("piContext.projectSettings")
        ) {
          this.schedule({ replan: true, reanalyze: true });
        }
        if (e.affectsConfiguration("piContext.pollIntervalMs")) this.restartPoll();
      }),
    );
    // another pi (or version) found: its rules and catalog change the numbers
    if (this.pi) this.disposables.push(this.pi.onDidChange(() => this.schedule({ reanalyze: true })));
  }

  /** Start discovery (asynchronous; returns immediately). */
  start(): void {
    this.schedule({ replan: true });
    this.restartPoll();
  }

  get current(): CurrentSession | undefined {
    return this.currentValue;
  }

  /** What discovery found (for "no session" states and tooltips). */
  get discovery(): SessionDiscoveryInfo {
    return this.discoveryValue;
  }

  agentDir(): string {
    return this.agentDirValue;
  }

  /** Re-read the current session now (and look for newer sessions when following). Resolves when done. */
  refresh(): Promise<void> {
    return this.schedule({ scan: true, refresh: true, reanalyze: true }, 0);
  }

  async pin(file: string): Promise<void> {
    this.pinnedFile = path.resolve(file);
    this.log.info(`pinned session ${this.pinnedFile}`);
    await this.schedule({ refresh: true }, 0);
  }

  async followLatest(): Promise<void> {
    if (this.pinnedFile) this.log.info("following the latest session again");
    this.pinnedFile = undefined;
    await this.schedule({ scan: true, refresh: true }, 0);
  }

  async listSessions(): Promise<SessionSummary[]> {
    await this.idle();
    // a scanner of its own (the live one's state belongs to the update loop); summaries read
    // ≤ 128 KB per file, yielding to the event loop between files
    const found = await new SessionScanner().scan(this.plans);
    const out: SessionSummary[] = [];
    let n = 0;
    for (const s of found.sessions) {
      const summary = readSessionSummary(s.file);
      if (summary) out.push(summary);
      if (++n % 16 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    out.sort(newestFirst);
    return out;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    for (const d of this.disposables) d.dispose();
    for (const w of this.waiters.splice(0)) w();
  }

  // ---------------------------------------------------------------------------------------------
  // scheduling

  /**
   * Queue work and run it after `delay` ms (bursts coalesce). Resolves when the queued work has been done.
   */
  private schedule(work: Partial<Work>, delay = COALESCE_MS): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.pending = {
      replan: this.pending.replan || !!work.replan,
      scan: this.pending.scan || !!work.scan,
      refresh: this.pending.refresh || !!work.refresh,
      reanalyze: this.pending.reanalyze || !!work.reanalyze,
    };
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (!this.running) {
      if (this.timer && delay === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      if (!this.timer) this.timer = setTimeout(() => this.drain(), delay);
    }
    return done;
  }

  /** Resolves when no work is queued or running. */
  private idle(): Promise<void> {
    if (!this.running && !this.timer) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private drain(): void {
    this.timer = undefined;
    if (this.running || this.disposed) return;
    this.running = (async () => {
      while (!this.disposed && hasWork(this.pending)) {
        const work = this.pending;
        this.pending = { ...NO_WORK };
        const waiters = this.waiters.splice(0);
        try {
          await this.process(work);
        } catch (error) {
          this.log.error(`session update failed: ${(error as Error).stack ?? String(error)}`);
        }
        this.step = "idle";
        this.stats.lastUpdateEnd = Date.now();
        for (const w of waiters) w();
      }
    })().finally(() => {
      this.running = undefined;
      // work queued between the loop's last check and this callback must not be lost
      if (hasWork(this.pending) && !this.disposed) {
        if (!this.timer) this.timer = setTimeout(() => this.drain(), 0);
      } else {
        for (const w of this.waiters.splice(0)) w();
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // the update

  private async process(work: Work): Promise<void> {
    this.stats.updates++;
    const config = this.config();
    if (work.replan) {
      this.step = "plan";
      this.agentDirValue = resolveAgentDir(config.agentDir, this.env);
      const folders = (vscode.workspace.workspaceFolders ?? [])
        .filter((f) => f.uri.scheme === "file")
        .map((f) => f.uri.fsPath);
      this.plans = planFolders({
        agentDir: this.agentDirValue,
        folders,
        extraDirs: config.sessionDirs,
        includeSubfolders: config.includeSubfolderSessions,
        projectSettings: config.projectSettings,
        env: this.env,
      });
      this.scanner.clear();
      this.log.info(
        `looking for pi sessions: agent dir ${this.agentDirValue}; ` +
          (folders.length === 0
            ? "no workspace folder"
            : this.plans
                .map((p) => `${p.folder} → ${p.dirs.map((d) => `${d.dir} (${d.origin})`).join(", ")}`)
                .join("; ")),
      );
      work.scan = true;
      work.reanalyze = true;
    }

    // snapshots for the fallback poll, taken before reading (a change after this point is seen again)
    if (work.replan || work.reanalyze) this.configSig = await this.configSignature();
    if (work.scan) {
      this.step = "scan";
      this.dirSig = await this.dirSignature();
      const result = await this.scanner.scan(this.plans);
      this.latestFile = result.sessions[0]?.file;
      this.discoveryValue = {
        phase: "ready",
        workspace: this.plans.some((p) => p.index >= 0),
        searchedDirs: result.searchedDirs,
        sessionCount: result.sessions.length,
        agentDir: this.agentDirValue,
      };
      this.ensureWatchers(result.existingDirs);
    }

    const target = this.pinnedFile ?? (this.plans.some((p) => p.index >= 0) ? this.latestFile : undefined);
    const current = this.currentValue;
    if (!target) {
      if (current) {
        this.currentValue = undefined;
        this.log.info("no pi session to show");
        this.emitter.fire(undefined);
      } else if (work.replan || work.scan) {
        this.emitter.fire(undefined); // discovery state changed
      }
      return;
    }

    if (!current || current.file !== target) {
      let session: SessionFile;
      this.step = "open";
      try {
        session = await SessionFile.open(target);
      } catch (error) {
        this.handleUnreadable(target, error);
        return;
      }
      const next = this.analyze(session, this.pinnedFile === target);
      this.currentValue = next;
      this.log.info(
        `${next.pinned ? "showing pinned" : "following"} session ${target} (${session.records.length} entries)`,
      );
      this.report(next);
      this.emitter.fire(next);
      return;
    }

    let changed = false;
    if (work.refresh || work.scan || work.reanalyze) {
      this.step = "refresh";
      try {
        const r = await current.session.refresh();
        if (r.reopened) this.log.info(`session ${target} was rewritten; read it again`);
        changed = r.changed;
      } catch (error) {
        this.handleUnreadable(target, error);
        return;
      }
    }
    const pinned = this.pinnedFile === target;
    if (changed || work.reanalyze || pinned !== current.pinned) {
      const next = this.analyze(current.session, pinned);
      this.currentValue = next;
      this.report(next);
      this.emitter.fire(next);
    }
  }

  private analyze(session: SessionFile, pinned: boolean): CurrentSession {
    const config = this.config();
    const analysis = analyzeLoaded(session, {
      agentDir: this.agentDirValue,
      projectSettings: config.projectSettings,
      ...(this.pi ? { pi: this.pi.current } : {}),
    });
    const headerCwd = session.cwd;
    const folder = (vscode.workspace.workspaceFolders ?? []).find(
      (f) =>
        headerCwd !== undefined && this.plans.some((p) => p.index === f.index && sameOrInside(headerCwd, p.folder)),
    );
    return {
      file: session.filePath,
      session,
      analysis,
      pinned,
      workspaceFolder: folder,
      agentDir: this.agentDirValue,
      updatedAt: Date.now(),
    };
  }

  private handleUnreadable(file: string, error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code;
    this.scanner.forget(file);
    if (code === "ENOENT") this.log.info(`session ${file} is gone`);
    else this.log.warn(`cannot read session ${file}: ${(error as Error).message}`);
    if (this.pinnedFile === file) {
      this.pinnedFile = undefined;
      const name = this.currentValue?.file === file ? this.currentValue.analysis.inspect.sessionName : undefined;
      const label = name ? `“${name}” (${path.basename(file)})` : path.basename(file);
      // once: the pin is gone, so the next update follows the latest session and never gets here again for it
      const message =
        code === "ENOENT"
          ? `The pinned session ${label} was deleted; following the latest session again.`
          : `The pinned session ${label} cannot be read (${(error as Error).message}); following the latest session again.`;
      this.log.warn(message);
      this.notices.push(message);
      if (code === "ENOENT") void notify.info(message).then(undefined, () => undefined);
      else void notify.warn(message).then(undefined, () => undefined);
    }
    if (this.latestFile === file) this.latestFile = undefined;
    if (this.currentValue) {
      this.currentValue = undefined;
      this.emitter.fire(undefined);
    }
    void this.schedule({ scan: true });
  }

  /** Log settings problems and new diagnostics once (never as notifications). */
  private report(current: CurrentSession): void {
    const problems = current.analysis.inspect.settingsProblems;
    const key = JSON.stringify(problems) + (current.analysis.modelsError ?? "");
    if (key !== this.loggedProblems) {
      this.loggedProblems = key;
      for (const p of problems) this.log.warn(`pi settings: ${p.file}${p.key ? ` (${p.key})` : ""}: ${p.message}`);
      if (current.analysis.modelsError) this.log.warn(`pi models: ${current.analysis.modelsError}`);
    }
    const diagnostics = current.session.diagnostics;
    const logged = this.loggedDiagnostics.get(current.file) ?? 0;
    if (diagnostics.length < logged) this.loggedDiagnostics.set(current.file, 0);
    for (const d of diagnostics.slice(Math.min(logged, diagnostics.length))) {
      if (d.code === "truncated-final-line") continue; // pi is mid-write; not worth a log line
      this.log.warn(
        `${path.basename(current.file)}${d.line !== undefined ? `:${d.line}` : ""}: ${d.message} [${d.code}]`,
      );
    }
    this.loggedDiagnostics.set(current.file, diagnostics.length);
  }

  // ---------------------------------------------------------------------------------------------
  // watching

  /** Internal state for diagnostics (tests print it when a wait times out). */
  debugState(): Record<string, unknown> {
    return {
      running: this.running !== undefined,
      timer: this.timer !== undefined,
      pending: { ...this.pending },
      waiters: this.waiters.length,
      watchers: this.watchers.length,
      watchersEnabled: this.watchersEnabled,
      pinned: this.pinnedFile,
      latest: this.latestFile,
      current: this.currentValue?.file,
      stats: { ...this.stats },
      step: this.step,
      pollInterval: this.pollInterval,
    };
  }

  /**
   * Turn the file-system watchers off/on (the fallback poll keeps running). For tests of the
   * poll path and for diagnosing hosts whose events do not arrive.
   */
  setWatchersEnabled(enabled: boolean): void {
    this.watchersEnabled = enabled;
    this.watchedDirs = "";
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    if (enabled) void this.schedule({ scan: true });
  }

  private ensureWatchers(existingDirs: string[]): void {
    if (!this.watchersEnabled) return;
    const agentDir = this.agentDirValue;
    const folders = this.plans.filter((p) => p.index >= 0).map((p) => p.folder);
    const roots = [...new Set(this.plans.flatMap((p) => (p.subfolders ? [p.subfolders.root] : [])))];
    const signature = JSON.stringify({ existingDirs, agentDir, folders, roots });
    if (signature === this.watchedDirs) return;
    this.watchedDirs = signature;
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    const onSession = (uri: vscode.Uri): void => {
      this.stats.events++;
      const isCurrent = this.currentValue?.file === uri.fsPath;
      this.schedule(isCurrent ? { refresh: true } : { scan: true });
    };
    const watch = (pattern: vscode.RelativePattern, handler: (uri: vscode.Uri) => void): void => {
      const w = vscode.workspace.createFileSystemWatcher(pattern);
      this.watchers.push(w, w.onDidCreate(handler), w.onDidChange(handler), w.onDidDelete(handler));
    };
    for (const dir of existingDirs) watch(new vscode.RelativePattern(vscode.Uri.file(dir), "*.jsonl"), onSession);
    // a new watcher takes a moment to start on the server: writes in that gap are caught by an early poll
    setTimeout(() => void this.poll(), 250);
    // a session folder that does not exist yet appears under `<agentDir>/sessions/` (pi creates it on the first message)
    const sessionsRoot = path.join(agentDir, "sessions");
    watch(new vscode.RelativePattern(vscode.Uri.file(sessionsRoot), "*"), () => {
      this.stats.events++;
      this.schedule({ scan: true });
    });
    const onConfig = (): void => {
      this.stats.events++;
      this.schedule({ replan: true, reanalyze: true });
    };
    watch(new vscode.RelativePattern(vscode.Uri.file(agentDir), AGENT_CONFIG_GLOB), onConfig);
    for (const folder of folders)
      watch(new vscode.RelativePattern(vscode.Uri.file(folder), ".pi/settings.json"), onConfig);
  }

  private restartPoll(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollInterval = this.config().pollIntervalMs;
    this.pollTimer = setInterval(() => void this.poll(), this.pollInterval);
  }

  /** `size:mtime:ino` of a file, or `-`. */
  private async statSig(file: string): Promise<string> {
    try {
      const s = await fs.promises.stat(file);
      return `${s.size}:${s.mtimeMs}:${s.ino}`;
    } catch {
      return "-";
    }
  }

  /** State of pi's settings/models/trust files and the projects' `.pi/settings.json`. */
  private async configSignature(): Promise<string> {
    const parts: string[] = [];
    for (const name of ["settings.json", "models.json", "models-store.json", "trust.json"])
      parts.push(await this.statSig(path.join(this.agentDirValue, name)));
    for (const p of this.plans)
      if (p.index >= 0) parts.push(await this.statSig(path.join(p.folder, ".pi", "settings.json")));
    return parts.join("|");
  }

  /**
   * State of the session folders: names and `stat`s of their `*.jsonl` (the current file by name
   * only: its changes are a refresh, not a scan) and the `--<cwd>--` folders of sub-folder roots.
   */
  private async dirSignature(): Promise<string> {
    const current = this.currentValue?.file;
    const out: string[] = [];
    const dirs = new Set(this.plans.flatMap((p) => p.dirs.map((d) => d.dir)));
    const roots = new Set(this.plans.flatMap((p) => (p.subfolders ? [p.subfolders.root] : [])));
    for (const root of roots) {
      try {
        out.push(`${root}:${(await fs.promises.readdir(root)).sort().join(",")}`);
      } catch {
        out.push(`${root}:-`);
      }
    }
    for (const dir of dirs) {
      try {
        const names = (await fs.promises.readdir(dir)).filter((n) => n.endsWith(".jsonl")).sort();
        const sigs: string[] = [];
        for (const n of names) {
          const file = path.join(dir, n);
          sigs.push(file === current ? n : `${n}=${await this.statSig(file)}`);
        }
        out.push(`${dir}:${sigs.join(",")}`);
      } catch {
        out.push(`${dir}:-`);
      }
    }
    return out.join("\n");
  }

  /**
   * The fallback poll (every `piContext.pollIntervalMs`): compares the disk with what the last
   * update processed — the current file's size/mtime with its index, the session folders and
   * config files with the snapshots taken before the last scan/replan — and schedules work for
   * any difference. Cheap: `stat`s and `readdir`s only.
   */
  private async poll(): Promise<void> {
    this.stats.ticks++;
    this.stats.lastTick = Date.now();
    if (this.disposed || this.running || this.timer) return;
    this.stats.polls++;
    const current = this.currentValue;
    const work: Partial<Work> = {};
    if (current) {
      try {
        const st = await fs.promises.stat(current.file);
        if (st.size !== current.session.size || st.mtimeMs !== current.session.mtimeMs) work.refresh = true;
      } catch {
        work.refresh = true; // deleted: the update notices and moves on
      }
    }
    if ((await this.configSignature()) !== this.configSig) {
      work.replan = true;
      work.reanalyze = true;
    }
    if ((await this.dirSignature()) !== this.dirSig) work.scan = true;
    this.stats.lastPollEnd = Date.now();
    if (this.disposed || current !== this.currentValue) return; // changed meanwhile: look again next time
    if (work.refresh || work.replan || work.scan) {
      this.stats.pollDetected++;
      void this.schedule(work, 0);
    }
  }
}

function hasWork(w: Work): boolean {
  return w.replan || w.scan || w.refresh || w.reanalyze;
}

function sameOrInside(cwd: string, folder: string): boolean {
  const a = path.resolve(cwd);
  const b = path.resolve(folder);
  return a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep);
}
