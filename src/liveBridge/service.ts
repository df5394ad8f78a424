/**
 * The live bridge in VS Code: "Pi: Install Live Bridge" / "Pi: Remove Live Bridge", discovery of
 * running bridges for the current session (announcement files in `<agentDir>/pi-context/live/`),
 * one authenticated connection per live pi, pi's live numbers for the gauge, and the routes that
 * make "Pi: Compact Session…", "Switch to Here…" and labels run inside the running pi.
 *
 * Hooks (small, in their owners' files): `compaction.ts` asks {@link LiveBridgeService.routeCompaction}
 * before its own flow, `treeView.ts` asks {@link LiveBridgeService.routeSwitch} /
 * {@link LiveBridgeService.routeLabel}, `statusBar.ts` renders {@link LiveBridgeService.gaugeInput}.
 * Each route returns `undefined` when no live bridge serves the file (or its pi is gone), and the
 * owner's file-based flow with its live-session guard runs as before.
 *
 * Results arrive through the session file as usual: pi writes the entries, the session watcher
 * picks them up; the routes only wait for that before opening the summary diff.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { isProcessAlive, liveDir, readAnnouncements, removeAnnouncement, sameFile } from "../bridge/announce";
import { BridgeError, connectBridge, type BridgeConnection } from "./client";
import {
  bridgeStatus,
  ForeignBridgeFileError,
  installBridgeFile,
  removeBridgeFile,
  type BridgeFileStatus,
} from "./installFile";
import { applyLiveState } from "./liveUsage";
import { BRIDGE_VERSION, isTestedPiVersion, PI_VERSION_RANGE, type Announcement } from "../bridge/protocol";
import type { Analysis } from "../core/rules/analyze";
import { formatTokens } from "../shared/format";
import { planSwitch, type SwitchChoice, type SwitchPlan } from "../core/flows/switch";
import type {
  BaseServices,
  CompactCommandOutcome,
  CurrentSession,
  LabelResult,
  LiveBridge,
  LiveSource,
  SwitchCommandOutcome,
} from "../services";
import * as notify from "../ui/notify";
import { openSummaryDiff } from "../ui/summaryDocuments";

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

/** A live bridge connected for a session. */
export interface LiveTarget {
  announcement: Announcement;
  connection: BridgeConnection;
}

/** What {@link LiveBridgeService.resolve} found for a session file. */
export type LiveResolution =
  | { kind: "live"; target: LiveTarget }
  | { kind: "none"; stale: number }
  | { kind: "problem"; error: BridgeError; announcement: Announcement };

/** What the install/remove commands resolve with. */
export type BridgeCommandOutcome = {
  kind: "installed" | "updated" | "removed" | "current" | "missing" | "declined" | "foreign" | "error";
  file?: string;
  message?: string;
  status?: BridgeFileStatus;
};

/** Options of the install/remove commands (scripts and tests). */
export interface BridgeCommandOptions {
  /** false: skip the modal question (the caller already has the user's consent). */
  confirm?: boolean;
}

/** Counters for tests and the log. */
export interface LiveBridgeStats {
  connects: number;
  compactions: number;
  switches: number;
  labels: number;
  statePushes: number;
}

const UPDATE_DECLINED_KEY = "piContext.liveBridge.updateDeclined";

function describe(a: Announcement): string {
  return `pi ${a.piVersion} (pid ${a.pid})`;
}

/** The service behind `services.liveBridge`. */
export class LiveBridgeService implements LiveBridge, vscode.Disposable {
  readonly stats: LiveBridgeStats = { connects: 0, compactions: 0, switches: 0, labels: 0, statePushes: 0 };
  private readonly tracked = new Map<string, Tracked>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when a live connection appears, goes, or pushes new numbers. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private syncAgain = false;
  private disposed = false;
  private readonly notified = new Set<string>();
  private updateOffered = false;

  constructor(
    private readonly services: BaseServices,
    /** The shipped bundle (`dist/bridge/pi-context-bridge.js`). */
    readonly bundlePath: string,
  ) {}

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
    void this.sync();
    setTimeout(() => void this.offerUpdateIfOutdated(), 3000);
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
    for (const t of this.tracked.values()) t.connection?.close();
    this.tracked.clear();
    this.changed.dispose();
  }

  private enabled(): boolean {
    return this.services.config().liveBridge.enabled;
  }

  private agentDir(): string {
    return this.services.sessions.agentDir();
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

  /** pi's numbers for the current session and who reported them, or undefined without a live bridge (see {@link LiveBridge.liveAnalysis}). */
  liveAnalysis(current: CurrentSession): { analysis: Analysis; live: LiveSource } | undefined {
    if (!this.enabled()) return undefined;
    const target = this.liveFor(current.file);
    if (!target) return undefined;
    const state = target.connection.state;
    const source = {
      pid: target.announcement.pid,
      piVersion: target.announcement.piVersion,
      bridgeVersion: target.announcement.bridgeVersion,
    };
    return { analysis: applyLiveState(current.analysis, state, source), live: { ...source, activity: state.activity } };
  }

  /** Whether a live bridge serves `file` now (see {@link LiveBridge.availability}). */
  async availability(file: string): Promise<"live" | "problem" | "none"> {
    return (await this.resolve(file)).kind;
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
    if (this.enabled() && file) {
      for (const read of readAnnouncements(this.agentDir())) {
        if ("announcement" in read && sameFile(read.announcement.sessionFile, file))
          wanted.set(read.file, read.announcement);
      }
    }
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
            `live bridge: connected to ${describe(a)} for ${a.sessionFile} (bridge ${a.bridgeVersion})`,
          );
          if (!isTestedPiVersion(a.piVersion))
            this.notifyOnce(
              `pi-version:${a.piVersion}`,
              "warning",
              `the running pi is ${a.piVersion}; the live bridge is tested with pi ${PI_VERSION_RANGE.text}. It may not work as expected.`,
            );
          if (a.bridgeVersion !== BRIDGE_VERSION) void this.offerUpdateIfOutdated();
          connection.onState(() => {
            this.stats.statePushes++;
            this.changed.fire();
          });
          connection.onClose((reason) => {
            if (t.connection === connection) t.connection = undefined;
            this.services.log.info(`live bridge: ${describe(a)}: ${reason.message}`);
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
              removeAnnouncement(t.file, a.socket);
              this.tracked.delete(t.file);
              this.services.log.info(
                `live bridge: removed the stale announcement of ${describe(a)} (${path.basename(t.file)})`,
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
  // install / remove

  private bundle(): string {
    return fs.readFileSync(this.bundlePath, "utf8");
  }

  /** The installed bridge compared with the shipped one. */
  installedStatus(): BridgeFileStatus {
    return bridgeStatus(this.agentDir(), this.bundle());
  }

  /** "Pi: Install Live Bridge": asks first (modal), then writes `<agentDir>/extensions/pi-context-bridge.js`. */
  async install(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    let status: BridgeFileStatus;
    let body: string;
    try {
      body = this.bundle();
      status = bridgeStatus(this.agentDir(), body);
    } catch (error) {
      const message = `cannot read the bridge: ${(error as Error).message}`;
      void notify.error(`${message}`);
      return { kind: "error", message };
    }
    if (status.state === "foreign") {
      const message = new ForeignBridgeFileError(status.file).message;
      void notify.error(`${message}`);
      return { kind: "foreign", file: status.file, message, status };
    }
    if (status.state === "current") {
      void notify.info(`the live bridge ${BRIDGE_VERSION} is installed (${status.file}).`);
      return { kind: "current", file: status.file, status };
    }
    const verb = status.state === "missing" ? "Install" : "Update";
    if (options.confirm !== false) {
      const was = status.installed
        ? ` (installed: ${status.installed.version}${status.state === "modified" ? ", edited since" : status.state === "newer" ? ", newer than this extension's" : ""})`
        : "";
      const detail = [
        `pi-context writes ${status.file}: a pi extension (bridge ${BRIDGE_VERSION}${was}, tested with pi ${PI_VERSION_RANGE.text}). pi loads it at its next start, or after /reload in a running pi, in every session.`,
        "",
        "While pi runs, the bridge lets VS Code read pi's context usage and ask pi to compact or switch branches; pi's own model and API key write the summaries.",
        "",
        `It listens only on a local socket in ${liveDir(this.agentDir())} (readable by you alone) and checks a random token; it never opens a network port.`,
        "",
        'Remove it any time with "Pi: Remove Live Bridge".',
      ].join("\n");
      const pick = await vscode.window.showInformationMessage(
        `${verb} the pi-context live bridge?`,
        { modal: true, detail },
        verb,
      );
      if (pick !== verb) return { kind: "declined", file: status.file, status };
    }
    try {
      installBridgeFile(this.agentDir(), body);
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(`could not install the live bridge: ${message}`);
      return { kind: "error", file: status.file, message };
    }
    this.services.log.info(
      `live bridge: ${verb === "Install" ? "installed" : "updated"} ${status.file} (bridge ${BRIDGE_VERSION})`,
    );
    void notify.info(
      `live bridge ${BRIDGE_VERSION} ${verb === "Install" ? "installed" : "updated"} in ${status.file}. Start pi (or run /reload in a running pi) to load it.`,
    );
    return { kind: verb === "Install" ? "installed" : "updated", file: status.file, status: this.installedStatus() };
  }

  /** "Pi: Remove Live Bridge": removes only our file (after asking). */
  async remove(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    let status: BridgeFileStatus;
    let body: string;
    try {
      body = this.bundle();
      status = bridgeStatus(this.agentDir(), body);
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(`${message}`);
      return { kind: "error", message };
    }
    if (status.state === "missing") {
      void notify.info(`no live bridge is installed (${status.file}).`);
      return { kind: "missing", file: status.file, status };
    }
    if (status.state === "foreign") {
      const message = new ForeignBridgeFileError(status.file).message;
      void notify.error(`${message}`);
      return { kind: "foreign", file: status.file, message, status };
    }
    if (options.confirm !== false) {
      const pick = await vscode.window.showWarningMessage(
        "Remove the pi-context live bridge?",
        {
          modal: true,
          detail: `Deletes ${status.file}. Running pi processes keep the bridge until they restart (or /reload).`,
        },
        "Remove",
      );
      if (pick !== "Remove") return { kind: "declined", file: status.file, status };
    }
    try {
      removeBridgeFile(this.agentDir(), body);
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(`could not remove the live bridge: ${message}`);
      return { kind: "error", file: status.file, message };
    }
    this.services.log.info(`live bridge: removed ${status.file}`);
    void notify.info(`live bridge removed. Running pi processes keep it until they restart (or /reload).`);
    return { kind: "removed", file: status.file, status };
  }

  /** Offer an update when our installed bridge is outdated (once per window; "Not Now" remembered per shipped build). */
  async offerUpdateIfOutdated(): Promise<BridgeFileStatus | undefined> {
    if (this.disposed || this.updateOffered) return undefined;
    let status: BridgeFileStatus;
    try {
      status = this.installedStatus();
    } catch (error) {
      this.services.log.warn(`live bridge: ${(error as Error).message}`);
      return undefined;
    }
    if (status.state === "modified")
      this.services.log.warn(`live bridge: ${status.file} was edited after it was installed`);
    if (status.state !== "outdated") return status;
    const state = this.services.context.globalState;
    if (state.get<string>(UPDATE_DECLINED_KEY) === status.shipped.sha256) return status;
    this.updateOffered = true;
    const pick = await notify.info(
      `the live bridge installed in pi (${status.installed?.version ?? "?"}) is outdated; this extension ships ${BRIDGE_VERSION}.`,
      "Update",
      "Not Now",
    );
    if (pick === "Update") await this.install({ confirm: false });
    else if (pick === "Not Now") await state.update(UPDATE_DECLINED_KEY, status.shipped.sha256);
    return status;
  }

  // ---------------------------------------------------------------------------------------------
  // routes

  /** Tell the user why a bridge for this session cannot be used; the outcome for the command. */
  private refuse(
    file: string,
    what: string,
    resolution: Extract<LiveResolution, { kind: "problem" }>,
  ): { kind: "error"; file: string; errorKind: string; message: string } {
    const message = `pi runs on this session with a live bridge, but it cannot be used to ${what}: ${resolution.error.message} Nothing was written.`;
    this.services.log.warn(`live bridge: ${file}: ${message}`);
    void notify.error(`${message}`);
    return { kind: "error", file, errorKind: `bridge-${resolution.error.code}`, message };
  }

  /** Wait until the session index has `entryId` (pi wrote it; our watcher reads it). */
  private async waitForEntry(file: string, entryId: string | null, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.services.sessions.refresh().catch(() => undefined);
      const current = this.services.sessions.current;
      if (
        !entryId ||
        !current ||
        !sameFile(current.file, file) ||
        current.session.byId.has(entryId) ||
        Date.now() > deadline
      )
        return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * "Pi: Compact Session…" in the running pi. Called by `compaction.ts` after the instructions
   * box. Resolves undefined when no live bridge serves `file` (the file-based flow runs).
   */
  async routeCompaction(
    file: string,
    instructions: string,
    options: { signal?: AbortSignal; skipPreview?: boolean } = {},
  ): Promise<CompactCommandOutcome | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") return this.refuse(file, "compact", resolution);
    const { announcement, connection } = resolution.target;
    const current =
      this.services.sessions.current && sameFile(this.services.sessions.current.file, file)
        ? this.services.sessions.current
        : undefined;
    const preview = current?.analysis.inspect.compaction ?? null;
    const previousCompactionId = preview?.previousCompactionId ?? undefined;
    const label = current?.analysis.inspect.sessionName
      ? `"${current.analysis.inspect.sessionName}"`
      : path.basename(file);
    if (!options.skipPreview) {
      const state = connection.state;
      const usage = state.usage
        ? `${state.usage.tokens === null ? "?" : formatTokens(state.usage.tokens)}/${formatTokens(state.usage.contextWindow)}`
        : "unknown";
      type Item = vscode.QuickPickItem & { go: boolean };
      const pick = await vscode.window.showQuickPick<Item>(
        [
          {
            go: true,
            label: "$(fold) Compact now in pi",
            description: `${describe(announcement)} · context ${usage}`,
            detail: `pi summarises with its own model${state.model ? ` (${state.model.provider}/${state.model.id})` : ""} and writes the compaction${instructions ? `; focus: ${instructions}` : ""}.${preview ? ` Expected: summarise ${preview.summarizedEntryIds.length + preview.turnPrefixEntryIds.length} entries, keep from ${preview.firstKeptEntryId}.` : ""}`,
          },
          { go: false, label: "$(close) Cancel", detail: "Nothing is sent, nothing is written." },
        ],
        {
          title: `Compact ${label} in the running pi?`,
          placeHolder: "pi runs on this session: the running pi does the compaction",
          ignoreFocusOut: true,
        },
      );
      if (!pick?.go) return { kind: "declined", file };
    }
    this.stats.compactions++;
    this.services.log.info(
      `live bridge: compact ${file} in ${describe(announcement)}${instructions ? `, instructions ${JSON.stringify(instructions)}` : ""}`,
    );
    try {
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `pi is compacting ${path.basename(file)}`,
          cancellable: true,
        },
        (progress, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort());
          options.signal?.addEventListener("abort", () => controller.abort(), { once: true });
          progress.report({
            message: `with pi's model${connection.state.model ? ` ${connection.state.model.provider}/${connection.state.model.id}` : ""}…`,
          });
          return connection.request("compact", instructions ? { customInstructions: instructions } : {}, {
            signal: controller.signal,
          });
        },
      );
      await this.waitForEntry(file, result.entryId);
      const entryId = result.entryId ?? result.leafId ?? "";
      this.services.log.info(
        `live bridge: pi wrote compaction ${entryId} (tokensBefore ${result.tokensBefore}, estimated after ${result.estimatedTokensAfter ?? "?"})`,
      );
      if (entryId)
        await openSummaryDiff(file, previousCompactionId, entryId).catch((error: unknown) =>
          this.services.log.warn(`summary diff: ${String(error)}`),
        );
      const after = result.estimatedTokensAfter;
      void notify
        .info(
          `pi compacted ${label} — ${result.tokensBefore.toLocaleString("en-US")} → ${after !== undefined ? `≈${after.toLocaleString("en-US")}` : "?"} tokens (pi's estimate).`,
          ...(entryId ? ["Show Summary Diff"] : []),
        )
        .then((choice) => (choice && entryId ? openSummaryDiff(file, previousCompactionId, entryId) : undefined));
      const outcome: CompactCommandOutcome & { live: { pid: number; piVersion: string } } = {
        kind: "compacted",
        file,
        entryId,
        ...(previousCompactionId ? { previousCompactionId } : {}),
        tokensBefore: result.tokensBefore,
        tokensAfter: after ?? this.services.sessions.current?.analysis.inspect.contextTokens ?? 0,
        firstKeptEntryId: result.firstKeptEntryId,
        live: { pid: announcement.pid, piVersion: announcement.piVersion },
      };
      return outcome;
    } catch (error) {
      const e = error instanceof BridgeError ? error : new BridgeError("failed", String(error));
      this.services.log.warn(`live bridge: compact ${file}: ${e.code}: ${e.message}`);
      if (e.code === "cancelled") {
        void notify.info("compaction cancelled in pi. Nothing was written.");
        return { kind: "cancelled", file, message: e.message };
      }
      if (e.code === "busy") {
        void notify.warn(`pi is busy: ${e.message} Nothing was sent.`);
        return { kind: "error", file, errorKind: "busy", message: e.message };
      }
      if (e.code === "failed" && /^(Nothing to compact|Already compacted)/.test(e.message)) {
        void notify.info(`${e.message}`);
        return { kind: "nothing", file, message: e.message };
      }
      if (e.code === "closed" || e.code === "timeout") {
        const message = `lost the live bridge of ${describe(announcement)} during the compaction: ${e.message} pi may still write the compaction; the session view shows it when it does.`;
        void notify.error(`${message}`);
        return { kind: "error", file, errorKind: `bridge-${e.code}`, message };
      }
      void notify.error(`pi could not compact: ${e.message}`);
      return { kind: "error", file, errorKind: e.code, message: e.message };
    }
  }

  /**
   * "Switch to Here…" in the running pi (pi's `/tree` navigation). Called by `treeView.ts`.
   * `given`: the choice when the caller already has one; otherwise `ask` shows pi's question.
   * Resolves undefined when no live bridge serves `file`.
   */
  async routeSwitch(
    file: string,
    targetId: string,
    options: {
      given?: SwitchChoice;
      ask: (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>;
      signal?: AbortSignal;
      quiet?: boolean;
    },
  ): Promise<SwitchCommandOutcome | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") return this.refuse(file, "switch branches", resolution);
    const { announcement, connection } = resolution.target;
    // pi's leaf now (a push may still be on its way): pi's navigateTree is a no-op at its own leaf
    const leafId = await connection.request("state", {}).then(
      (s) => s.leafId,
      () => connection.state.leafId,
    );
    if (leafId === targetId) {
      if (!options.quiet) void notify.info("pi is already at this point.");
      return { kind: "noop", file, targetId };
    }
    let plan: SwitchPlan | undefined;
    try {
      plan = await planSwitch(file, targetId, {
        agentDir: this.agentDir(),
        projectSettings: this.services.config().projectSettings,
        guardSeconds: 0,
        procRoot: null,
      });
    } catch (error) {
      // pi decides (e.g. an entry pi has and the file does not show yet); the question needs a plan
      if (!options.given) {
        const message = (error as Error).message;
        void notify.error(`branch switch failed: ${message}`);
        return { kind: "error", file, errorKind: "error", message };
      }
    }
    const choice = options.given ?? (plan ? await options.ask(plan, false) : undefined);
    if (!choice) return { kind: "declined", file };
    this.stats.switches++;
    this.services.log.info(
      `live bridge: switch ${file} → ${targetId} in ${describe(announcement)} (summarize ${choice.summarize}${choice.label ? `, label ${JSON.stringify(choice.label)}` : ""})`,
    );
    try {
      const params = {
        targetId,
        summarize: choice.summarize,
        ...(choice.customInstructions ? { customInstructions: choice.customInstructions } : {}),
        ...(choice.label ? { label: choice.label } : {}),
      };
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: choice.summarize ? "pi is summarising the branch you leave" : "Switching branch in pi",
          cancellable: choice.summarize,
        },
        (_progress, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort());
          options.signal?.addEventListener("abort", () => controller.abort(), { once: true });
          return connection.request("navigate", params, { signal: controller.signal });
        },
      );
      if (result.cancelled) {
        const message = result.aborted
          ? "Branch summarization cancelled"
          : "Navigation cancelled (a pi extension cancelled it)";
        void notify.info(`${message}. Nothing was written.`);
        return { kind: "cancelled", file, message };
      }
      const last = result.entries[result.entries.length - 1];
      await this.waitForEntry(file, last?.id ?? null);
      const editorText = plan?.returnsText ? plan.editorText : undefined;
      if (!options.quiet) {
        const where = result.newLeafId ?? "the start of the session";
        void notify.info(
          `pi switched to ${where}${result.entries.length ? ` (wrote ${result.entries.map((e) => e.type.replace("_", " ")).join(" + ")})` : ""}.${editorText !== undefined ? " In pi's terminal UI the message you picked is back in the editor." : ""}`,
        );
      }
      return {
        kind: "switched",
        file,
        targetId,
        newLeafId: result.newLeafId,
        entries: result.entries,
        ...(editorText !== undefined ? { editorText } : {}),
      };
    } catch (error) {
      const e = error instanceof BridgeError ? error : new BridgeError("failed", String(error));
      this.services.log.warn(`live bridge: switch ${file}: ${e.code}: ${e.message}`);
      if (e.code === "cancelled") {
        void notify.info("branch switch cancelled in pi. Nothing was written.");
        return { kind: "cancelled", file, message: e.message };
      }
      if (e.code === "busy") {
        void notify.warn(`pi is busy: ${e.message} Nothing was sent.`);
        return { kind: "error", file, errorKind: "busy", message: e.message };
      }
      void notify.error(`pi could not switch branches: ${e.message}`);
      return { kind: "error", file, errorKind: e.code, message: e.message };
    }
  }

  /**
   * Set or clear a label in the running pi (`pi.setLabel`). Called by `treeView.ts`.
   * @returns undefined when no live bridge serves `file`; else `{ result }` (undefined result = failed, reported).
   */
  async routeLabel(
    file: string,
    targetId: string,
    label: string | undefined,
  ): Promise<{ result: LabelResult | undefined } | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") {
      this.refuse(file, "label entries", resolution);
      return { result: undefined };
    }
    const { announcement, connection } = resolution.target;
    const text = label?.trim() || undefined;
    this.stats.labels++;
    try {
      const r = await connection.request("setLabel", { targetId, ...(text ? { label: text } : {}) });
      this.services.log.info(
        `live bridge: label ${targetId} → ${text ?? "(cleared)"} in ${describe(announcement)} (entry ${r.entryId})`,
      );
      await this.waitForEntry(file, r.entryId);
      return { result: r.entryId ? { entryId: r.entryId, label: text ?? null } : undefined };
    } catch (error) {
      const message = (error as Error).message;
      this.services.log.warn(`live bridge: label ${file}: ${message}`);
      void notify.error(`pi could not write the label: ${message}`);
      return { result: undefined };
    }
  }
}

/** The live bridge service (not started): the composition root builds it before any surface registers. */
export function createLiveBridge(services: BaseServices): LiveBridgeService {
  return new LiveBridgeService(
    services,
    services.context.asAbsolutePath(path.join("dist", "bridge", "pi-context-bridge.js")),
  );
}

/** Register "Pi: Install Live Bridge" / "Pi: Remove Live Bridge" and start following live bridges. */
export function registerLiveBridge(services: BaseServices, service: LiveBridgeService): void {
  const options = (arg: unknown): BridgeCommandOptions =>
    arg && typeof arg === "object" ? (arg as BridgeCommandOptions) : {};
  services.context.subscriptions.push(
    service,
    vscode.commands.registerCommand("piContext.installBridge", (arg?: unknown) => service.install(options(arg))),
    vscode.commands.registerCommand("piContext.removeBridge", (arg?: unknown) => service.remove(options(arg))),
  );
  service.start();
}
