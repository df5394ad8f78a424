/**
 * `services.access`: every action asks {@link AccessService.route} before any question — the live
 * bridge, our file flow, or a refusal with its ways out. The same words as `cli/route.ts`.
 */

import * as vscode from "vscode";
import { listedSession, liveAmong, type AnnouncedPi, type SessionAccess } from "../core/access/access";
import { ownWriteChecker } from "../core/access/ownWrites";
import { processFacts, sessionAccess } from "../core/access/gather";
import type { SessionInfo } from "../core/read/sessionInfo";
import { chooseRoute, type SessionAction } from "../core/access/route";
import { accessRefusal, LiveSessionError } from "../core/access/words";
import { descendantsOf, processSnapshot } from "../core/proc/table";
import type {
  ActionRoute,
  BaseServices,
  FlowAccessOptions,
  LiveBridge,
  SessionAccessService,
  SummarizerProvider,
} from "../services";
import * as notify from "../ui/notify";

/** The service behind `services.access`. */
export class AccessService implements SessionAccessService {
  constructor(
    private readonly services: BaseServices,
    private readonly liveBridge: Pick<LiveBridge, "bridgeInstalled" | "install" | "announcedNow">,
    private readonly summarizers: Pick<SummarizerProvider, "usesPi">,
  ) {}

  /** The live bridges' announcements now (none when the bridge is turned off in the settings). */
  private announced(): readonly AnnouncedPi[] {
    return this.liveBridge.announcedNow();
  }

  /** See {@link SessionAccessService.flowOptions}. */
  flowOptions(force = false): FlowAccessOptions {
    return {
      guardSeconds: this.services.config().liveSession.guardSeconds,
      force,
      announced: () => this.announced(),
    };
  }

  /** See {@link SessionAccessService.access}. */
  access(file: string): Promise<SessionAccess> {
    const o = this.flowOptions();
    return sessionAccess(file, { guardSeconds: o.guardSeconds, announced: o.announced });
  }

  /** See {@link SessionAccessService.live}. */
  async live(sessions: readonly SessionInfo[]): Promise<Map<string, SessionAccess>> {
    const facts = await processFacts({ announced: () => this.announced() });
    const own = ownWriteChecker();
    return liveAmong(
      sessions.map((s) => listedSession(s, own(s.file, s))),
      { ...facts, ignorePids: [process.pid] },
      Date.now(),
    );
  }

  /** See {@link SessionAccessService.route}. */
  async route(
    file: string,
    action: SessionAction,
    options: { force?: boolean; retry?: () => void; quiet?: boolean } = {},
  ): Promise<ActionRoute> {
    const access = await this.access(file);
    const terminalPids = await this.terminalPids(access);
    const route = chooseRoute(action, access, {
      force: options.force === true,
      bridgeInstalled: this.liveBridge.bridgeInstalled(),
      terminalPids,
    });
    this.services.log.info(
      `access ${action.id} ${file}: ${access.strength}${access.evidence.length ? ` (${access.evidence.map((e) => e.kind + ("pid" in e ? ` ${e.pid}` : "")).join(", ")})` : ""} → ${route.kind}${route.kind === "file" && route.forced ? " (anyway)" : ""}`,
    );
    if (route.kind === "file" && action.summarizes)
      return { ...route, summarizer: (await this.summarizers.usesPi()) ? "user-pi" : "configured" };
    if (route.kind !== "refuse") return route;
    const error = this.refusal(access, action, terminalPids);
    const actions = options.quiet ? [] : this.showRefusal(error, file, options.retry);
    return { ...route, message: error.message, actions };
  }

  /** The refusal of `action` for this access, with the offers of `core/access/route.ts`. */
  refusal(access: SessionAccess, action: SessionAction, terminalPids?: ReadonlySet<number>): LiveSessionError {
    return accessRefusal(access, action, {
      bridgeInstalled: this.liveBridge.bridgeInstalled(),
      ...(terminalPids ? { terminalPids } : {}),
    });
  }

  /** See {@link SessionAccessService.showRefusal}. */
  showRefusal(error: LiveSessionError, file: string, retry?: () => void): string[] {
    this.services.log.warn(`refused on ${file}: ${error.message}`);
    return notify.showLiveRefusal(error, file, {
      ...(retry ? { anyway: retry } : {}),
      installBridge: () => void this.liveBridge.install(),
      showTerminal: () => void this.showTerminal(error.access),
    });
  }

  /** The pids of the evidence that run in one of VS Code's terminals. */
  private async terminalPids(access: SessionAccess): Promise<Set<number>> {
    const pids = new Set<number>();
    const wanted = access.evidence.flatMap((e) => (e.kind === "recent-write" ? [] : [e.pid]));
    if (wanted.length === 0) return pids;
    for (const pid of wanted) if (await this.terminalOf(pid)) pids.add(pid);
    return pids;
  }

  /** The terminal whose shell is `pid` or runs it below itself. */
  private async terminalOf(pid: number): Promise<vscode.Terminal | undefined> {
    const snapshot = await processSnapshot().catch(() => undefined);
    for (const terminal of vscode.window.terminals) {
      const shell = await terminal.processId;
      if (shell === undefined) continue;
      if (shell === pid || (snapshot && descendantsOf(snapshot, shell).some((p) => p.pid === pid))) return terminal;
    }
    return undefined;
  }

  /** Show the terminal of the first pi of the evidence that runs in one. */
  private async showTerminal(access: SessionAccess): Promise<void> {
    for (const e of access.evidence) {
      if (e.kind === "recent-write") continue;
      const terminal = await this.terminalOf(e.pid);
      if (terminal) return terminal.show();
    }
    void notify.info(vscode.l10n.t("That pi does not run in a terminal of this window."));
  }
}
