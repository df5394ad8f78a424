/** The bridge of one pi session: socket, announcement, state pushes and operations. */

import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { randomHex, removeAnnouncement, removeStaleAnnouncements, socketPathFor, writeAnnouncement } from "./announce";
import { BridgeClients } from "./clients";
import { ContextEditQueue } from "./contextEdits";
import { BridgeOperations, type Running, type WithCommandContext } from "./operations";
import type { BridgeDeps, PiApi, PiContext } from "./piApi";
import {
  ANNOUNCE_KIND,
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  type Announcement,
  type BridgeActivity,
  type BridgeCompactionFailure,
  type BridgeState,
  type ProvidedCompaction,
} from "./protocol";

/** The bridge of one pi session: socket server, announcement, state pushes, operations. */
export class BridgeServer {
  compacting = false;
  navigating = false;
  running: Running | undefined;
  compactionFailure: BridgeCompactionFailure | undefined;
  private failures = 0;
  /** A client's own summary for the compaction started now ({@link provideCompaction} hands it to pi). */
  provided: { compaction: ProvidedCompaction; taken: boolean; mismatch?: string } | undefined;
  readonly edits: ContextEditQueue;
  private server: net.Server | undefined;
  private readonly clients: BridgeClients;
  private readonly operations: BridgeOperations;
  private seq = 0;
  private pushTimer: NodeJS.Timeout | undefined;
  private announceFile: string | undefined;
  private socketPath: string | undefined;
  private agentDir = "";
  private token = "";
  private sessionFile = "";
  private disposed = false;
  private readonly exitHook = () => this.cleanupFiles();

  constructor(
    private readonly pi: PiApi,
    private readonly ctx: PiContext,
    private readonly deps: BridgeDeps,
    withCommandContext: WithCommandContext,
  ) {
    this.edits = new ContextEditQueue(ctx, () => this.schedulePush());
    this.operations = new BridgeOperations(pi, ctx, this, withCommandContext);
    this.clients = new BridgeClients({
      token: () => this.token,
      welcome: () => ({
        piVersion: this.deps.piVersion,
        pid: process.pid,
        sessionFile: this.sessionFile,
        state: this.state(),
      }),
      execute: (op, params) => this.operations.execute(op, params),
      pushNow: () => this.pushNow(),
    });
  }

  /** @throws when the socket or the announcement cannot be created. */
  async start(sessionFile: string): Promise<void> {
    this.sessionFile = sessionFile;
    const agentDir = this.deps.agentDir();
    this.agentDir = agentDir;
    removeStaleAnnouncements(agentDir);
    const name = `${process.pid}-${randomHex(6)}`;
    const socketPath = socketPathFor(agentDir, name);
    if (process.platform !== "win32") {
      try {
        if (fs.lstatSync(socketPath).isSocket()) fs.unlinkSync(socketPath);
      } catch {
        // not there
      }
    }
    this.token = randomHex(32);
    const server = net.createServer((socket) => this.onConnection(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", (error) => this.deps.log?.(`bridge server: ${error.message}`));
    this.socketPath = socketPath;
    if (process.platform !== "win32") fs.chmodSync(socketPath, 0o600);
    process.once("exit", this.exitHook);
    const sm = this.ctx.sessionManager;
    const announcement: Announcement = {
      kind: ANNOUNCE_KIND,
      protocol: BRIDGE_PROTOCOL,
      bridgeVersion: BRIDGE_VERSION,
      piVersion: this.deps.piVersion,
      pid: process.pid,
      sessionFile,
      sessionId: sm.getSessionId(),
      cwd: sm.getCwd(),
      socket: socketPath,
      token: this.token,
      startedAt: Date.now(),
    };
    this.announceFile = writeAnnouncement(agentDir, name, announcement);
    if (this.disposed) this.cleanupFiles();
  }

  describe(): string {
    const labels = this.clients.labels();
    const n = labels.length;
    return `pi-context live bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}, pi ${this.deps.piVersion}): listening for ${path.basename(this.sessionFile)}; ${n} client${n === 1 ? "" : "s"} connected${
      n ? ` (${labels.join(", ")})` : ""
    }.`;
  }

  /** Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.pushTimer);
    this.edits.dispose();
    this.clients.destroyAll();
    this.server?.close();
    this.cleanupFiles();
    process.off("exit", this.exitHook);
  }

  private cleanupFiles(): void {
    if (this.announceFile) removeAnnouncement(this.agentDir, this.announceFile, this.socketPath);
    else if (this.socketPath) removeAnnouncement(this.agentDir, "", this.socketPath);
    this.announceFile = undefined;
  }

  state(): BridgeState {
    const ctx = this.ctx;
    const sm = ctx.sessionManager;
    let usage: BridgeState["usage"] = null;
    try {
      const u = ctx.getContextUsage();
      if (u) usage = { tokens: u.tokens ?? null, contextWindow: u.contextWindow, percent: u.percent ?? null };
    } catch {
      usage = null;
    }
    const model = ctx.model
      ? {
          provider: ctx.model.provider,
          id: ctx.model.id,
          ...(typeof ctx.model.contextWindow === "number" ? { contextWindow: ctx.model.contextWindow } : {}),
          ...(ctx.model.cost && typeof ctx.model.cost === "object" ? { cost: ctx.model.cost } : {}),
        }
      : null;
    const idle = ctx.isIdle();
    if (idle) {
      this.compacting = false;
      this.navigating = false;
    }
    const activity: BridgeActivity = idle
      ? "idle"
      : this.compacting
        ? "compacting"
        : this.navigating
          ? "navigating"
          : "streaming";
    const state: BridgeState = {
      seq: ++this.seq,
      at: Date.now(),
      sessionFile: this.sessionFile,
      sessionId: sm.getSessionId(),
      leafId: sm.getLeafId(),
      idle,
      activity,
      usage,
      model,
      compaction: null,
      contextEdits: this.edits.snapshot(),
      ...(this.compactionFailure ? { compactionFailure: this.compactionFailure } : {}),
    };
    if (typeof ctx.thinkingLevel === "string") state.thinkingLevel = ctx.thinkingLevel;
    try {
      const s = this.deps.settingsFor(this.pi.getSettings(), ctx.model);
      state.compaction = s.compaction;
      state.branchSummary = s.branchSummary;
    } catch (error) {
      state.compactionError = (error as Error).message;
    }
    return state;
  }

  recordCompactionFailure(event: {
    reason?: string;
    errorMessage?: string;
    aborted?: boolean;
    willRetry?: boolean;
    fromExtension?: boolean;
  }): void {
    const reason = event?.reason === "threshold" || event?.reason === "overflow" ? event.reason : "manual";
    this.compactionFailure = {
      seq: ++this.failures,
      at: Date.now(),
      reason,
      ...(typeof event?.errorMessage === "string" ? { errorMessage: event.errorMessage } : {}),
      aborted: event?.aborted === true,
      willRetry: event?.willRetry === true,
      fromExtension: event?.fromExtension === true,
      byClient: this.running?.kind === "compact",
    };
  }

  /** Our summary when pi's preparation keeps from the same entry, else pi's compaction is cancelled. */
  provideCompaction(event: {
    reason?: string;
    preparation?: { firstKeptEntryId?: string; tokensBefore?: number };
  }): { cancel: true } | { compaction: ProvidedCompaction & { tokensBefore: number } } | undefined {
    const p = this.provided;
    if (!p || p.taken || event?.reason !== "manual") return undefined;
    p.taken = true;
    const prep = event.preparation;
    if (!prep || prep.firstKeptEntryId !== p.compaction.firstKeptEntryId || typeof prep.tokensBefore !== "number") {
      p.mismatch = `pi would keep the context from entry ${prep?.firstKeptEntryId ?? "?"}, the summary was made for a cut at ${p.compaction.firstKeptEntryId}: the session changed since it was planned. Nothing was written.`;
      return { cancel: true };
    }
    return { compaction: { ...p.compaction, tokensBefore: prep.tokensBefore } };
  }

  /** Coalesces bursts of events. */
  schedulePush(): void {
    if (this.disposed || this.pushTimer) return;
    this.pushTimer = setTimeout(() => this.pushNow(), 25);
  }

  pushNow(): void {
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    if (this.disposed || !this.clients.anyAuthenticated()) return;
    let state: BridgeState;
    try {
      state = this.state();
    } catch (error) {
      this.deps.log?.(`bridge state: ${(error as Error).message}`);
      return;
    }
    this.clients.broadcast({ type: "state", state });
  }

  private onConnection(socket: net.Socket): void {
    if (this.disposed) {
      socket.destroy();
      return;
    }
    this.clients.accept(socket);
  }
}
