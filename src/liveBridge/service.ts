/**
 * The live bridge in VS Code (`services.liveBridge`): discovery of running bridges for the
 * current session (announcement files in `<agentDir>/pi-context/live/`), one authenticated
 * connection per live pi, and pi's live numbers for the gauge. The routes that make "Pi Context: Compact
 * Session…", "Switch to Here…" and labels run inside the running pi are in `routes.ts`; "Pi Context:
 * Install Live Bridge" / "Pi Context: Remove Live Bridge" and the update offer in `install.ts`.
 *
 * Hooks (small, in their owners' files): `compaction/command.ts` asks
 * {@link LiveBridgeService.routeCompaction} before its own flow, `tree/register.ts` asks
 * {@link LiveBridgeService.routeSwitch} / {@link LiveBridgeService.routeLabel}, `trim/command.ts`
 * {@link LiveBridgeService.routeContextEdit} (`editRoute.ts`), the status bar
 * renders {@link LiveBridgeService.liveAnalysis}. Each route returns `undefined` when no live
 * bridge serves the file (or its pi is gone), and the owner's file-based flow with its
 * live-session guard runs as before.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { afterActivation } from "../ui/afterActivation";
import { isProcessAlive, readAnnouncements, removeAnnouncement, sameFile } from "../bridge/announce";
import {
  BRIDGE_VERSION,
  isTestedPiVersion,
  PI_VERSION_RANGE,
  type Announcement,
  type BridgeState,
} from "../bridge/protocol";
import type { Analysis } from "../core/rules/analyze";
import type { ContextEditDraft } from "../core/rules/contextEdit";
import type {
  BaseServices,
  CompactCommandOutcome,
  CurrentSession,
  LabelResult,
  LiveBridge,
  LiveCompactionFailure,
  LiveEditOutcome,
  LiveSource,
  PendingContextEdits,
  RouteSwitchOptions,
  SwitchCommandOutcome,
} from "../services";
import * as notify from "../ui/notify";
import { BridgeError, connectBridge, type BridgeConnection } from "./client";
import { LiveEditRoute } from "./editRoute";
import { BridgeInstaller, type BridgeCommandOptions, type BridgeCommandOutcome } from "./install";
import { bridgeInstallPath, type BridgeFileStatus } from "./installFile";
import { applyLiveState, matchingState, stateMatches } from "./liveUsage";
import { announcedPis, liveAnnouncements } from "./announced";
import type { AnnouncedPi } from "../core/access/access";
import { LiveRoutes } from "./routes";
import { describePi, type LiveBridgeStats, type LiveResolution, type LiveTarget } from "./target";

/** How often the announcement folder is looked at (ms). */
export const LIVE_POLL_MS = 1500;

/** One announced bridge we know about. */
interface Tracked {
  file: string;
  announcement: Announcement;
  connection?: BridgeConnection;
  connecting?: Promise<BridgeConnection>;
  /** Why the last connection attempt failed (not retried by the poll until the announcement changes). */
  problem?: BridgeError;
}

/** The service behind `services.liveBridge`. */
export class LiveBridgeService implements LiveBridge, vscode.Disposable {
  readonly stats: LiveBridgeStats = {
    connects: 0,
    compactions: 0,
    switches: 0,
    labels: 0,
    contextEdits: 0,
    statePushes: 0,
  };
  private readonly tracked = new Map<string, Tracked>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when a live connection appears, goes, or pushes new numbers. */
  readonly onDidChange = this.changed.event;
  private readonly compactionFailed = new vscode.EventEmitter<LiveCompactionFailure>();
  /** See {@link LiveBridge.onDidCompactionFail}. */
  readonly onDidCompactionFail = this.compactionFailed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private syncAgain = false;
  private disposed = false;
  private readonly notified = new Set<string>();
  private readonly installer: BridgeInstaller;
  private readonly routes: LiveRoutes;
  private announced: { pid: number; sessionFile: string }[] = [];
  private readonly editRoute: LiveEditRoute;
  /** pids of the headless pi processes pi-context itself runs (see {@link LiveBridge.markHeadless}). */
  private readonly headless = new Set<number>();
  /** Per connection, its last pushed state that matched the file (`matchingState`). */
  private readonly lastMatching = new WeakMap<BridgeConnection, BridgeState>();

  /** @param bundlePath the shipped bundle (`dist/bridge/pi-context-bridge.js`). */
  constructor(
    private readonly services: BaseServices,
    private readonly bundlePath: string,
  ) {
    this.installer = new BridgeInstaller(services, bundlePath);
    this.routes = new LiveRoutes(services, this.stats, (file) => this.resolve(file));
    this.editRoute = new LiveEditRoute(
      services,
      this.stats,
      (file) => this.resolve(file),
      (file) => this.liveFor(file),
    );
  }

  /** Start following the current session's live bridges. */
  start(): void {
    this.disposables.push(
      this.services.sessions.onDidChange(() => void this.sync()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("piContext.liveBridge") || e.affectsConfiguration("piContext.agentDir"))
          void this.sync();
      }),
    );
    this.timer = setInterval(() => void this.sync(), LIVE_POLL_MS);
    // the first look (reading pi's live folder) right after activate() returns
    this.disposables.push(afterActivation(() => void this.sync()));
    setTimeout(() => void this.offerUpdateIfOutdated(), 3000);
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
    for (const t of this.tracked.values()) t.connection?.close();
    this.tracked.clear();
    this.changed.dispose();
    this.compactionFailed.dispose();
  }

  private enabled(): boolean {
    return this.services.config().liveBridge.enabled;
  }

  private agentDir(): string {
    return this.services.sessions.agentDir();
  }

  /** Which session each announcing pi has open (as of the last look; see {@link LiveBridge.announcedSessions}). */
  announcedSessions(): readonly { pid: number; sessionFile: string }[] {
    return this.announced;
  }

  /** See {@link LiveBridge.announcedNow}. */
  announcedNow(): readonly AnnouncedPi[] {
    return this.enabled() ? announcedPis(liveAnnouncements(this.agentDir())) : [];
  }

  /** The connected bridge serving `file`, if any (newest pi first). */
  liveFor(file: string): LiveTarget | undefined {
    let best: LiveTarget | undefined;
    for (const t of this.tracked.values()) {
      if (!t.connection || t.connection.closed || !sameFile(t.announcement.sessionFile, file)) continue;
      if (!best || t.announcement.startedAt > best.announcement.startedAt)
        best = { announcement: t.announcement, connection: t.connection };
    }
    return best;
  }

  /** See {@link LiveBridge.markHeadless}. */
  markHeadless(pid: number): vscode.Disposable {
    this.headless.add(pid);
    this.changed.fire();
    return new vscode.Disposable(() => {
      this.headless.delete(pid);
      this.changed.fire();
    });
  }

  /** pi's numbers for the current session and who reported them, or undefined without a live bridge (see {@link LiveBridge.liveAnalysis}). */
  liveAnalysis(current: CurrentSession): { analysis: Analysis; live: LiveSource } | undefined {
    if (!this.enabled()) return undefined;
    const target = this.liveFor(current.file);
    // pi-context's own headless pi (a switch it runs) is no running pi of the user's: no "live" state
    if (!target || this.headless.has(target.announcement.pid)) return undefined;
    const pushed = target.connection.state;
    // pi's numbers over the file's analysis only while both describe the same context
    const state = matchingState(current.analysis, pushed, this.lastMatching.get(target.connection));
    if (stateMatches(current.analysis, pushed)) this.lastMatching.set(target.connection, pushed);
    const source = {
      pid: target.announcement.pid,
      piVersion: target.announcement.piVersion,
      bridgeVersion: target.announcement.bridgeVersion,
    };
    return {
      analysis: applyLiveState(current.analysis, state, source),
      live: { ...source, activity: pushed.activity, leafId: pushed.leafId },
    };
  }

  /** Whether a live bridge serves `file` now (see {@link LiveBridge.availability}). */
  async availability(file: string): Promise<"live" | "problem" | "none"> {
    return (await this.resolve(file)).kind;
  }

  /** See {@link LiveBridge.livePosition}. */
  async livePosition(
    file: string,
  ): Promise<{ leafId: string | null; activity: string; pid: number; piVersion: string } | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind !== "live") return undefined;
    const { connection, announcement } = resolution.target;
    const state = await connection.request("state", {}).catch(() => connection.state);
    return {
      leafId: state.leafId ?? null,
      activity: state.activity,
      pid: announcement.pid,
      piVersion: announcement.piVersion,
    };
  }

  /** Problems of announced bridges for the current session (for the log and tests). */
  problems(): { announcement: Announcement; error: BridgeError }[] {
    return [...this.tracked.values()]
      .filter((t) => t.problem)
      .map((t) => ({ announcement: t.announcement, error: t.problem! }));
  }

  /** Look at the announcements again now (the poll does this every {@link LIVE_POLL_MS}). */
  sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.syncAgain = false;
        try {
          await this.syncOnce();
        } catch (error) {
          this.services.log.warn(`live bridge: ${(error as Error).message}`);
        }
      } while (this.syncAgain && !this.disposed);
    })().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.disposed) return;
    const file = this.services.sessions.current?.file;
    const wanted = new Map<string, Announcement>();
    if (this.enabled()) {
      const announced: { pid: number; sessionFile: string }[] = [];
      for (const read of readAnnouncements(this.agentDir())) {
        if (!("announcement" in read)) continue;
        announced.push({ pid: read.announcement.pid, sessionFile: read.announcement.sessionFile });
        if (file && sameFile(read.announcement.sessionFile, file)) wanted.set(read.file, read.announcement);
      }
      this.announced = announced;
    } else this.announced = [];
    let changed = false;
    for (const [key, t] of this.tracked) {
      const a = wanted.get(key);
      if (!a || a.token !== t.announcement.token || a.startedAt !== t.announcement.startedAt) {
        if (t.connection) changed = true;
        t.connection?.close();
        this.tracked.delete(key);
      }
    }
    for (const [key, announcement] of wanted) {
      let t = this.tracked.get(key);
      if (!t) {
        t = { file: key, announcement };
        this.tracked.set(key, t);
      }
      if (t.connection && !t.connection.closed) continue;
      if (t.problem) continue; // reported once; retried when the announcement changes or a command asks
      try {
        await this.connect(t);
      } catch {
        // recorded in t.problem
      }
    }
    if (changed) this.changed.fire();
  }

  /** Connect (or reuse the connection) to one tracked bridge. */
  private connect(t: Tracked): Promise<BridgeConnection> {
    if (t.connection && !t.connection.closed) return Promise.resolve(t.connection);
    if (t.connecting) return t.connecting;
    const a = t.announcement;
    t.connecting = connectBridge(a, { timeoutMs: 3000 })
      .then(
        (connection) => {
          t.connection = connection;
          t.problem = undefined;
          this.stats.connects++;
          this.services.log.info(
            `live bridge: connected to ${describePi(a)} for ${a.sessionFile} (bridge ${a.bridgeVersion})`,
          );
          // (not for pi-context's own headless pi: the user's pi, run for one switch, its version known)
          if (!isTestedPiVersion(a.piVersion) && !this.headless.has(a.pid))
            this.notifyOnce(
              `pi-version:${a.piVersion}`,
              "warning",
              vscode.l10n.t(
                "the running pi is {0}; the live bridge is tested with pi {1}. It may not work as expected.",
                a.piVersion,
                PI_VERSION_RANGE.text,
              ),
            );
          if (a.bridgeVersion !== BRIDGE_VERSION) void this.offerUpdateIfOutdated();
          // pi's failed compactions from now on (one reported at connect is history)
          let failureSeen = connection.state.compactionFailure?.seq ?? 0;
          connection.onState(() => {
            this.stats.statePushes++;
            const f = connection.state.compactionFailure;
            if (f && f.seq > failureSeen) {
              failureSeen = f.seq;
              this.reportFailure(t, f);
            }
            this.changed.fire();
          });
          connection.onClose((reason) => {
            if (t.connection === connection) t.connection = undefined;
            this.services.log.info(`live bridge: ${describePi(a)}: ${reason.message}`);
            this.changed.fire();
            setTimeout(() => void this.sync(), 200);
          });
          this.changed.fire();
          return connection;
        },
        (error: unknown) => {
          const e = error instanceof BridgeError ? error : new BridgeError("closed", String(error));
          t.problem = e;
          if (e.code === "stale") {
            if (!isProcessAlive(a.pid)) {
              removeAnnouncement(this.agentDir(), t.file, a.socket); // only a trusted announcement and its bridge socket
              this.tracked.delete(t.file);
              this.services.log.info(
                `live bridge: removed the stale announcement of ${describePi(a)} (${path.basename(t.file)})`,
              );
            } else this.services.log.info(`live bridge: ${e.message}`);
          } else {
            this.services.log.warn(`live bridge: ${e.message}`);
            this.notifyOnce(`${t.file}:${a.token}:${e.code}`, "warning", `${e.message}`);
          }
          throw e;
        },
      )
      .finally(() => (t.connecting = undefined));
    return t.connecting;
  }

  private notifyOnce(key: string, level: "warning" | "info", message: string): void {
    if (this.notified.has(key)) return;
    this.notified.add(key);
    this.services.log.info(`live bridge: told the user: ${message}`);
    if (level === "warning") void notify.warn(message);
    else void notify.info(message);
  }

  /**
   * Find a live bridge for `file` now (connecting if needed; retries earlier failures).
   * `none` = no announcement, or only stale ones (pi gone): the file-based flows apply.
   */
  async resolve(file: string): Promise<LiveResolution> {
    if (!this.enabled()) return { kind: "none", stale: 0 };
    const existing = this.liveFor(file);
    if (existing) return { kind: "live", target: existing };
    const reads = readAnnouncements(this.agentDir())
      .filter(
        (r): r is { file: string; announcement: Announcement } =>
          "announcement" in r && sameFile(r.announcement.sessionFile, file),
      )
      .sort((x, y) => y.announcement.startedAt - x.announcement.startedAt);
    let stale = 0;
    let problem: { error: BridgeError; announcement: Announcement } | undefined;
    for (const read of reads) {
      let t = this.tracked.get(read.file);
      if (!t || t.announcement.token !== read.announcement.token) {
        t = { file: read.file, announcement: read.announcement };
        this.tracked.set(read.file, t);
      }
      t.problem = undefined;
      try {
        const connection = await this.connect(t);
        return { kind: "live", target: { announcement: t.announcement, connection } };
      } catch (error) {
        const e = error instanceof BridgeError ? error : new BridgeError("closed", String(error));
        if (e.code === "stale") stale++;
        else problem ??= { error: e, announcement: read.announcement };
      }
    }
    return problem ? { kind: "problem", ...problem } : { kind: "none", stale };
  }

  // ---------------------------------------------------------------------------------------------
  // install / remove (install.ts)

  /** The installed bridge compared with the shipped one. */
  installedStatus(): BridgeFileStatus {
    return this.installer.installedStatus();
  }

  bridgeInstalled(): boolean | undefined {
    try {
      const state = this.installedStatus().state;
      return state === "foreign" ? undefined : state !== "missing";
    } catch {
      return undefined;
    }
  }

  /** "Pi Context: Install Live Bridge" (see {@link BridgeInstaller.install}). */
  install(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    return this.installer.install(options).finally(() => this.installedChanged());
  }

  /** "Pi Context: Remove Live Bridge" (see {@link BridgeInstaller.remove}). */
  remove(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    return this.installer.remove(options).finally(() => this.installedChanged());
  }

  /** After an install or remove: {@link bridgeInstalled} may differ (the welcome views follow). */
  private installedChanged(): void {
    if (!this.disposed) this.changed.fire();
  }

  /** Offer an update when our installed bridge is outdated (see {@link BridgeInstaller.offerUpdateIfOutdated}); nothing once disposed. */
  offerUpdateIfOutdated(): Promise<BridgeFileStatus | undefined> {
    if (this.disposed) return Promise.resolve(undefined);
    return this.installer.offerUpdateIfOutdated();
  }

  // ---------------------------------------------------------------------------------------------
  // routes (routes.ts)

  /** The live Compact preview's quick picks, recorded (the integration tests read and answer them). */
  get prompter(): LiveRoutes["prompter"] {
    return this.routes.prompter;
  }

  /** See {@link LiveBridge.routeCompactionSummary}. */
  routeCompactionSummary(
    file: string,
    summary: Parameters<LiveBridge["routeCompactionSummary"]>[1],
    leafId: string | null,
  ): ReturnType<LiveBridge["routeCompactionSummary"]> {
    return this.routes.routeCompactionSummary(file, summary, leafId);
  }

  /**
   * A failed compaction pushed by a bridge: logged, and announced to the surfaces unless it was
   * aborted, or a route of ours started it (its response said so already), or it ran in a headless
   * pi of ours.
   */
  private reportFailure(t: Tracked, f: NonNullable<BridgeState["compactionFailure"]>): void {
    const a = t.announcement;
    this.services.log.warn(
      `live bridge: ${describePi(a)}: compaction failed (${f.reason}${f.aborted ? ", aborted" : ""}${f.byClient ? ", ours" : ""}): ${f.errorMessage ?? "no message"}`,
    );
    if (f.aborted || f.byClient || this.headless.has(a.pid)) return;
    this.compactionFailed.fire({
      file: a.sessionFile,
      pid: a.pid,
      piVersion: a.piVersion,
      reason: f.reason,
      errorMessage: f.errorMessage,
      willRetry: f.willRetry,
      fromExtension: f.fromExtension,
    });
  }

  /** "Pi Context: Compact Session…" in the running pi (see {@link LiveRoutes.routeCompaction}). */
  routeCompaction(
    file: string,
    instructions: string,
    options: { signal?: AbortSignal; skipPreview?: boolean } = {},
  ): Promise<CompactCommandOutcome | undefined> {
    return this.routes.routeCompaction(file, instructions, options);
  }

  /** "Switch to Here…" in the running pi (see {@link LiveRoutes.routeSwitch}). */
  routeName(
    file: string,
    name: string,
  ): Promise<{ result: { entryId: string | null; name: string | null } | undefined } | undefined> {
    return this.routes.routeName(file, name);
  }

  routeSwitch(file: string, targetId: string, options: RouteSwitchOptions): Promise<SwitchCommandOutcome | undefined> {
    return this.routes.routeSwitch(file, targetId, options);
  }

  /** Set or clear a label in the running pi (see {@link LiveRoutes.routeLabel}). */
  /** See {@link LiveBridge.headlessExtensions}. */
  headlessExtensions(): string[] {
    return fs.existsSync(bridgeInstallPath(this.agentDir())) ? [] : [this.bundlePath];
  }

  routeLabel(
    file: string,
    targetId: string,
    label: string | undefined,
  ): Promise<{ result: LabelResult | undefined } | undefined> {
    return this.routes.routeLabel(file, targetId, label);
  }

  /** Context edits in the running pi (see {@link LiveEditRoute.routeContextEdit}). */
  routeContextEdit(
    file: string,
    drafts: readonly ContextEditDraft[],
    leafId: string | null,
  ): Promise<LiveEditOutcome | undefined> {
    return this.editRoute.routeContextEdit(file, drafts, leafId);
  }

  /** Batches a running pi of `file` has not applied yet (see {@link LiveEditRoute.pending}). */
  pendingContextEdits(file: string): PendingContextEdits[] {
    if (!this.enabled()) return [];
    return this.editRoute.pending(file);
  }
}

/** The live bridge service (not started): the composition root builds it before any surface registers. */
export function createLiveBridge(services: BaseServices): LiveBridgeService {
  return new LiveBridgeService(
    services,
    services.context.asAbsolutePath(path.join("dist", "bridge", "pi-context-bridge.js")),
  );
}

/** Register "Pi Context: Install Live Bridge" / "Pi Context: Remove Live Bridge" and start following live bridges. */
export function registerLiveBridge(services: BaseServices, service: LiveBridgeService): void {
  const options = (arg: unknown): BridgeCommandOptions =>
    arg && typeof arg === "object" ? (arg as BridgeCommandOptions) : {};
  services.context.subscriptions.push(service);
  services.commands.add({
    "piContext.installBridge": (arg?: unknown) => service.install(options(arg)),
    "piContext.removeBridge": (arg?: unknown) => service.remove(options(arg)),
  });
  service.start();
}
