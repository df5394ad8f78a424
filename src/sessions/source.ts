/**
 * `SessionSource`: finds, follows and incrementally re-reads the workspace's pi sessions. Watchers
 * plus a stat-only fallback poll, for hosts where file events do not arrive.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { processSnapshot } from "../core/proc/table";
import * as notify from "../ui/notify";
import { analyzeLoaded } from "../core/rules/analyze";
import type { SessionFile } from "../core/read/session";
import { openSession } from "../core/read/store";
import type { SessionInfo } from "../core/read/sessionInfo";
import type { UserPi } from "../core/pi/userPi";
import type { PiContextConfig } from "../config";
import type {
  CurrentSession,
  FollowReason,
  SessionDiscoveryInfo,
  SessionListOptions,
  SessionSource,
  UserPiService,
} from "../services";
import { describeReason, Following, sameOrInside } from "./following";
import { SessionListing } from "./listing";
import { configSignature, dirSignature, sessionProjectSignature } from "./signatures";
import { planFolders, resolveAgentDir, SessionScanner, type FolderPlan } from "./scan";
import { TerminalFollower } from "./terminals";
import { DiscoveryLog } from "./discoveryLog";
import { pinLostMessage } from "../viewModel/sessionPicker";

/** Bursts of file events closer than this are handled as one update (ms). */
export const COALESCE_MS = 15;

/** Files in the agent dir whose changes affect the numbers (settings, models, trust). */
const AGENT_CONFIG_GLOB = "{settings.json,models.json,models-store.json,trust.json}";

type Work = Record<"replan" | "scan" | "refresh" | "reanalyze", boolean>;

const NO_WORK: Work = { replan: false, scan: false, refresh: false, reanalyze: false };

/** Options for {@link PiSessionSource}. */
export interface PiSessionSourceOptions {
  log: vscode.LogOutputChannel;
  config: () => PiContextConfig;
  /** The user's pi: its rules and catalog are what the analysis follows (re-analysed when it changes). */
  pi?: Pick<UserPiService, "current" | "onDidChange" | "forProcess">;
  env?: NodeJS.ProcessEnv;
  /** Where the listing cache lives (the extension's global storage); none = in memory only. */
  cacheFile?: string;
}

/** The extension's {@link SessionSource}. */
export class PiSessionSource implements SessionSource {
  private currentValue: CurrentSession | undefined;
  /** The session's own `.pi/settings.json` when its analysis was made, taken before reading (the poll compares). */
  private projectSig = "";
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
  /** Which session to show in each folder, the focus, the terminal's pi (`following.ts`). */
  private readonly following = new Following();
  private readonly listing: SessionListing;
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
  /** What was logged already (problems, diagnostics, skipped files: each once). */
  private readonly once: DiscoveryLog;
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
    this.once = new DiscoveryLog(options.log);
    this.config = options.config;
    this.pi = options.pi;
    this.env = options.env ?? process.env;
    this.agentDirValue = resolveAgentDir(this.config().agentDir, this.env);
    this.listing = new SessionListing(options.cacheFile);
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.schedule({ replan: true })),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        const folder = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri) : undefined;
        if (!folder) return;
        const before = this.following.focus;
        this.following.focus = { kind: "editor", folderIndex: folder.index };
        if (before?.kind !== "editor" || before.folderIndex !== folder.index) void this.schedule({ refresh: true });
      }),
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

  /** Returns immediately. `announced`: pid → session file of live bridges (exact terminal following). */
  start(announced?: () => readonly { pid: number; sessionFile: string }[]): void {
    const following = this.following;
    if (announced) following.announced = announced;
    const terminals = new TerminalFollower({
      log: this.log,
      sessions: () => following.found,
      announced: () => following.announced(),
      onDidChange: (target) => {
        following.terminal = target;
        if (target?.file) {
          following.focus = { kind: "terminal" };
          this.log.info(
            `terminal "${target.terminal}": pi (pid ${target.pi.pid}) has ${target.file} open (${target.how ?? "?"})`,
          );
        } else if (following.focus?.kind === "terminal") following.focus = undefined;
        // the terminal's pi may be another version than the installed one: analyse again
        void this.schedule({ refresh: true, reanalyze: true });
      },
    });
    this.disposables.push(terminals);
    void this.listing.catalog.load();
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
    this.following.followLatest();
    await this.schedule({ scan: true, refresh: true }, 0);
  }

  async show(file: string): Promise<void> {
    const resolved = path.resolve(file);
    if (!this.following.show(resolved)) return this.pin(resolved);
    this.pinnedFile = undefined;
    this.log.info(`following ${resolved}`);
    await this.schedule({ refresh: true }, 0);
  }

  async listSessions(options: SessionListOptions = {}): Promise<SessionInfo[]> {
    // the scanner's last result when there is one (the picker opens at once), else a scan of our own
    const found =
      this.discoveryValue.phase === "ready"
        ? this.following.found
        : (await new SessionScanner().scan(this.plans)).sessions;
    return this.listing.list(
      found.map((f) => ({ file: f.file, dev: f.dev, ino: f.ino, size: f.size, mtimeMs: f.mtimeMs })),
      options,
    );
  }

  sessionInfo(file: string): Promise<SessionInfo | undefined> {
    return this.listing.info(file);
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
    if (work.replan || work.reanalyze) this.configSig = await configSignature(this.agentDirValue, this.plans);
    if (work.scan) {
      this.step = "scan";
      this.dirSig = await dirSignature(this.plans, this.currentValue?.file);
      const result = await this.scanner.scan(this.plans);
      this.following.onScan(result.sessions);
      this.discoveryValue = {
        phase: "ready",
        workspace: this.plans.some((p) => p.index >= 0),
        searchedDirs: result.searchedDirs,
        sessionCount: result.sessions.length,
        agentDir: this.agentDirValue,
      };
      this.ensureWatchers(result.existingDirs);
      this.once.skipped(result.skipped);
    }

    const { target, reason } = this.following.choose(
      this.pinnedFile,
      this.plans.some((p) => p.index >= 0),
      this.currentValue?.file,
    );
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
        session = await openSession(target);
      } catch (error) {
        this.handleUnreadable(target, error);
        return;
      }
      const next = await this.analyze(session, reason);
      this.currentValue = next;
      this.log.info(`${describeReason(reason)} session ${target} (${session.records.length} entries)`);
      this.once.problems(next);
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
    const next = await this.analyze(current.session, reason, changed || work.reanalyze ? undefined : current);
    if (
      changed ||
      work.reanalyze ||
      next.pinned !== current.pinned ||
      next.followedBy !== current.followedBy ||
      next.label !== current.label ||
      next.liveSessions.map((l) => l.file).join("|") !== current.liveSessions.map((l) => l.file).join("|")
    ) {
      this.currentValue = next;
      this.once.problems(next);
      this.emitter.fire(next);
    }
  }

  /** The pi a session's numbers follow: the one running it in the followed terminal, else the installed one. */
  private piFor(file: string): UserPi {
    const pid = this.following.terminalPid(file);
    return (pid !== undefined ? this.pi?.forProcess(pid) : undefined) ?? this.pi!.current;
  }

  private async analyze(
    session: SessionFile,
    reason: FollowReason,
    previous?: CurrentSession,
  ): Promise<CurrentSession> {
    const config = this.config();
    if (!previous?.analysis) this.projectSig = await sessionProjectSignature(session.filePath, session.cwd);
    const analysis =
      previous?.analysis ??
      analyzeLoaded(session, {
        agentDir: this.agentDirValue,
        projectSettings: config.projectSettings,
        ...(this.pi ? { pi: this.piFor(session.filePath) } : {}),
      });
    const headerCwd = session.cwd;
    const folder = (vscode.workspace.workspaceFolders ?? []).find(
      (f) =>
        headerCwd !== undefined && this.plans.some((p) => p.index === f.index && sameOrInside(headerCwd, p.folder)),
    );
    const liveSessions: { file: string; label: string }[] = [];
    const snapshot = await processSnapshot().catch(() => undefined);
    for (const other of this.following.liveOthers(session.filePath, snapshot))
      liveSessions.push({ file: other.file, label: await this.listing.labelOf(other.file) });
    return {
      file: session.filePath,
      session,
      analysis,
      pinned: reason === "pinned",
      followedBy: reason,
      label: await this.listing.labelOf(session.filePath, session.name ?? ""),
      liveSessions,
      workspaceFolder: folder,
      agentDir: this.agentDirValue,
      updatedAt: previous?.updatedAt ?? Date.now(),
    };
  }

  private handleUnreadable(file: string, error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code;
    this.scanner.forget(file);
    if (code === "ENOENT") this.log.info(`session ${file} is gone`);
    else this.log.warn(`cannot read session ${file}: ${(error as Error).message}`);
    if (this.pinnedFile === file) {
      this.pinnedFile = undefined;
      const base = path.basename(file);
      const label = this.currentValue?.file === file ? `“${this.currentValue.label}” (${base})` : base;
      // once: the pin is gone, so the next update follows the latest session and never gets here again for it
      const message = pinLostMessage(label, code === "ENOENT" ? undefined : (error as Error).message);
      this.log.warn(message);
      this.notices.push(message);
      if (code === "ENOENT") void notify.info(message).then(undefined, () => undefined);
      else void notify.warn(message).then(undefined, () => undefined);
    }
    if (this.currentValue) {
      this.currentValue = undefined;
      this.emitter.fire(undefined);
    }
    void this.schedule({ scan: true });
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
      latest: this.following.found[0]?.file,
      current: this.currentValue?.file,
      stats: { ...this.stats },
      step: this.step,
      pollInterval: this.pollInterval,
    };
  }

  /** For tests of the poll path and for diagnosing hosts whose events do not arrive. */
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

  /** Compares the disk with what the last update processed; `stat`s and `readdir`s only. */
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
    if ((await configSignature(this.agentDirValue, this.plans)) !== this.configSig) {
      work.replan = true;
      work.reanalyze = true;
    }
    if (current && (await sessionProjectSignature(current.file, current.session.cwd)) !== this.projectSig)
      work.reanalyze = true;
    if ((await dirSignature(this.plans, this.currentValue?.file)) !== this.dirSig) work.scan = true;
    // other live sessions age out of the live window: look again now and then
    if (current && current.liveSessions.length > 0 && Date.now() - this.following.lastScanAt > 10_000) work.scan = true;
    this.stats.lastPollEnd = Date.now();
    if (this.disposed || current !== this.currentValue) return; // changed meanwhile: look again next time
    if (hasWork({ ...NO_WORK, ...work })) {
      this.stats.pollDetected++;
      void this.schedule(work, 0);
    }
  }
}

function hasWork(w: Work): boolean {
  return w.replan || w.scan || w.refresh || w.reanalyze;
}
