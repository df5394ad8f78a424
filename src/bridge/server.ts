/**
 * The live bridge as it runs inside pi (bundled with `piExtension.ts` into
 * `dist/bridge/pi-context-bridge.js`, which "Pi: Install Live Bridge" copies into
 * `<agentDir>/extensions/`). No `vscode` import; only Node built-ins and the pi extension API.
 *
 * Lifecycle (pi's extension rules: no resources from the factory): on `session_start` with a
 * session file, listen on a private Unix socket / named pipe and announce it (`announce.ts`); on
 * `session_shutdown` (quit, reload, /new, /resume, /fork) close and remove both; a `process` exit
 * hook removes them if pi exits without a shutdown event. A killed pi leaves stale files, which
 * every bridge start and every client tolerate and clean up. One bridge per pi process (a second
 * copy loaded by mistake stays passive).
 *
 * Operations run through pi's own APIs, so pi's model, auth, prompts and rules apply:
 * - usage: `ctx.getContextUsage()` (pi's footer numbers), `ctx.model`, pi's compaction settings
 *   (`SettingsManager.inMemory(pi.getSettings()).getCompactionSettings(model)`);
 * - compact: `ctx.compact({customInstructions})` = pi's `/compact`. pi's `/compact` would abort a
 *   running response first; the bridge refuses instead, with pi's wording ("Wait for …");
 * - navigate: `ctx.navigateTree()` exists only on the command context. The bridge gets one by
 *   running its own command: `pi.sendUserMessage("/pi-context-bridge run <nonce>",
 *   {expandPromptTemplates: true})` → `AgentSession.prompt` → `_tryExecuteExtensionCommand` →
 *   `runner.createCommandContext()` → our handler → `ctx.navigateTree()` → the mode's
 *   `navigateTree` action (TUI: re-renders the chat, puts a user message's text into the editor).
 *   Commands run immediately even while pi streams, nothing is recorded and no model call is
 *   made; pi's own "Wait for the current response to finish…" error comes back while it streams.
 *   The command name is resolved through `pi.getCommands()` first, so the text can never reach
 *   the model as a prompt;
 * - setLabel: `pi.setLabel()` (pi's label editor; allowed while streaming, as in pi);
 * - cancel: `ctx.abort()`, only while a compaction / branch summary this bridge started runs.
 */

import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { randomHex, removeAnnouncement, removeStaleAnnouncements, socketPathFor, writeAnnouncement } from "./announce";
import {
  ANNOUNCE_KIND,
  BRIDGE_COMMAND,
  BRIDGE_OPS,
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  HELLO_TIMEOUT_MS,
  MAX_CLIENTS,
  MAX_LINE_BYTES,
  type Announcement,
  type BridgeActivity,
  type BridgeErrorCode,
  type BridgeOp,
  type BridgeOps,
  type BridgeState,
  type ServerLine,
} from "./protocol";

// ---------------------------------------------------------------------------------------------
// The part of pi's extension API the bridge uses (pi 1.6.0 `dist/core/extensions/types.d.ts`).

/** A pi session entry, as far as the bridge reads it. */
export interface PiEntry {
  type: string;
  id: string;
  parentId: string | null;
}

/** pi's `ExtensionContext` (subset). */
export interface PiContext {
  readonly sessionManager: {
    getSessionFile(): string | undefined;
    getSessionId(): string;
    getLeafId(): string | null;
    getEntries(): PiEntry[];
    getCwd(): string;
  };
  readonly model: { provider: string; id: string; contextWindow?: number } | undefined;
  readonly thinkingLevel?: string;
  readonly hasUI?: boolean;
  readonly ui?: { notify(message: string, type?: "info" | "warning" | "error"): void };
  isIdle(): boolean;
  abort(): void;
  getContextUsage(): { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
  compact(options?: {
    customInstructions?: string;
    onComplete?: (result: PiCompactionResult) => void;
    onError?: (error: Error) => void;
  }): void;
}

/** pi's `ExtensionCommandContext` (subset). */
export interface PiCommandContext extends PiContext {
  navigateTree(
    targetId: string,
    options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean }>;
}

/** pi's `CompactionResult`. */
export interface PiCompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
}

/** pi's `ExtensionAPI` (subset). */
export interface PiApi {
  on(event: string, handler: (event: never, ctx: PiContext) => unknown): void;
  registerCommand(
    name: string,
    options: { description?: string; handler: (args: string, ctx: PiCommandContext) => Promise<void> | void },
  ): void;
  sendUserMessage(
    content: string,
    options?: { expandPromptTemplates?: boolean; deliverAs?: "steer" | "followUp" },
  ): void;
  setLabel(entryId: string, label: string | undefined): void;
  getSettings(): Record<string, unknown>;
  getCommands(): { name: string; source?: string; sourceInfo?: { path?: string } }[];
}

/** What the bridge needs from its host (pi's package, given by `piExtension.ts`). */
export interface BridgeDeps {
  /** pi's `VERSION`. */
  piVersion: string;
  /** pi's `getAgentDir()`. */
  agentDir(): string;
  /** pi's compaction + branch-summary settings for a model (throws pi's validation errors). */
  settingsFor(
    settings: Record<string, unknown>,
    model: PiContext["model"],
  ): {
    compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
    branchSummary: { reserveTokens: number; skipPrompt: boolean };
  };
  /** Diagnostics (stderr only when asked; stdout belongs to pi's RPC protocol). */
  log?(message: string): void;
}

// ---------------------------------------------------------------------------------------------

const ACTIVE_KEY = Symbol.for("pi-context.bridge.active");
const JOBS_KEY = Symbol.for("pi-context.bridge.jobs");
type GlobalWithBridge = typeof globalThis & { [ACTIVE_KEY]?: object; [JOBS_KEY]?: Map<string, Job> };

/**
 * Pending command jobs by nonce, shared by every copy of the bridge in this process: if the bridge
 * is loaded twice, pi names the commands `pi-context-bridge:1`/`:2`, and whichever copy pi runs
 * finds the job.
 */
function sharedJobs(): Map<string, Job> {
  const g = globalThis as GlobalWithBridge;
  return (g[JOBS_KEY] ??= new Map<string, Job>());
}

/** pi's wait errors, for the operations pi would otherwise start anyway. */
const WAIT_RESPONSE_COMPACT = "Wait for the current response to finish before compacting.";
const WAIT_OPERATION_COMPACT = "Wait for the current compaction or tree navigation to finish before compacting.";
const WAIT_OPERATION_NAVIGATE =
  "Wait for the current compaction or tree navigation to finish before navigating the session tree.";

/** How long a dispatched command may take to start running in pi (ms). */
const COMMAND_START_TIMEOUT_MS = 15_000;

class OpError extends Error {
  constructor(
    readonly code: BridgeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface Job {
  started: boolean;
  run(ctx: PiCommandContext): Promise<void>;
  fail(error: OpError): void;
  timer: NodeJS.Timeout;
}

interface Running {
  kind: "compact" | "navigate";
  cancelled: boolean;
  compactionEntry?: PiEntry;
}

/**
 * Register the bridge with pi: the `/pi-context-bridge` command and the session events. Resources
 * are created on `session_start` only.
 */
export function activateBridge(pi: PiApi, deps: BridgeDeps): void {
  let server: BridgeServer | undefined;
  let lastProblem: string | undefined;
  const jobs = sharedJobs();
  const ownJobs = new Set<string>();

  pi.registerCommand(BRIDGE_COMMAND, {
    description:
      "pi-context live bridge: show its status (VS Code's pi-context extension also runs its requests through this command)",
    handler: async (args, ctx) => {
      const m = /^run ([0-9a-f]{32})$/.exec(args.trim());
      if (m) {
        const job = jobs.get(m[1]!);
        if (!job) {
          ctx.ui?.notify("pi-context bridge: unknown or expired request.", "warning");
          return;
        }
        jobs.delete(m[1]!);
        ownJobs.delete(m[1]!);
        clearTimeout(job.timer);
        job.started = true;
        await job.run(ctx);
        return;
      }
      const text = server
        ? server.describe()
        : `pi-context live bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}): not listening${lastProblem ? ` — ${lastProblem}` : " (no session file: pi runs without a session?)"}.`;
      ctx.ui?.notify(text, "info");
    },
  });

  /** Run `run` with a command context: dispatch our command through pi's prompt path. */
  const withCommandContext = <T>(run: (ctx: PiCommandContext) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const invocation = resolveInvocation(pi);
      if (!invocation) {
        reject(
          new OpError(
            "unavailable",
            `pi does not list the /${BRIDGE_COMMAND} command of this bridge (loaded twice?); cannot navigate from here.`,
          ),
        );
        return;
      }
      const nonce = randomHex(16);
      const job: Job = {
        started: false,
        run: async (ctx) => {
          try {
            resolve(await run(ctx));
          } catch (error) {
            reject(error);
          }
        },
        fail: (error) => reject(error),
        timer: setTimeout(() => {
          ownJobs.delete(nonce);
          if (jobs.delete(nonce))
            reject(
              new OpError("unavailable", `pi did not run /${invocation} within ${COMMAND_START_TIMEOUT_MS / 1000} s.`),
            );
        }, COMMAND_START_TIMEOUT_MS),
      };
      jobs.set(nonce, job);
      ownJobs.add(nonce);
      try {
        pi.sendUserMessage(`/${invocation} run ${nonce}`, { expandPromptTemplates: true });
      } catch (error) {
        jobs.delete(nonce);
        ownJobs.delete(nonce);
        clearTimeout(job.timer);
        reject(new OpError("unavailable", `pi refused the bridge command: ${(error as Error).message}`));
      }
    });

  pi.on("session_start", async (_event, ctx) => {
    const g = globalThis as GlobalWithBridge;
    if (g[ACTIVE_KEY]) {
      lastProblem = "another copy of the bridge is active in this pi";
      return;
    }
    const file = ctx.sessionManager.getSessionFile();
    if (!file) {
      lastProblem = "this pi runs without a session file";
      return;
    }
    const instance = new BridgeServer(pi, ctx, deps, withCommandContext);
    g[ACTIVE_KEY] = instance;
    try {
      await instance.start(file);
      server = instance;
      lastProblem = undefined;
    } catch (error) {
      lastProblem = `could not start: ${(error as Error).message}`;
      deps.log?.(lastProblem);
      instance.dispose();
      if (g[ACTIVE_KEY] === instance) delete g[ACTIVE_KEY];
    }
  });

  pi.on("session_shutdown", async () => {
    for (const nonce of ownJobs) {
      const job = jobs.get(nonce);
      jobs.delete(nonce);
      if (!job) continue;
      clearTimeout(job.timer);
      job.fail(new OpError("cancelled", "pi is shutting this session down."));
    }
    ownJobs.clear();
    const g = globalThis as GlobalWithBridge;
    if (server) {
      server.dispose();
      if (g[ACTIVE_KEY] === server) delete g[ACTIVE_KEY];
      server = undefined;
    }
  });

  const push = (mark?: (s: BridgeServer) => void) => () => {
    if (!server) return;
    mark?.(server);
    server.schedulePush();
  };
  for (const event of [
    "turn_end",
    "agent_start",
    "agent_settled",
    "model_select",
    "thinking_level_select",
    "session_info_changed",
  ])
    pi.on(event, push());
  pi.on("message_end", (event: { message?: { role?: string } }) => {
    if (event?.message?.role === "assistant") push()();
  });
  pi.on(
    "session_before_compact",
    push((s) => (s.compacting = true)),
  );
  pi.on("session_compact", (event: { compactionEntry?: PiEntry; reason?: string }) => {
    if (!server) return;
    server.compacting = false;
    if (server.running?.kind === "compact" && event?.reason === "manual" && event.compactionEntry)
      server.running.compactionEntry = event.compactionEntry;
    server.schedulePush();
  });
  pi.on(
    "session_compact_failed",
    push((s) => (s.compacting = false)),
  );
  pi.on(
    "session_before_tree",
    push((s) => (s.navigating = true)),
  );
  pi.on(
    "session_tree",
    push((s) => (s.navigating = false)),
  );
}

/**
 * The invocation name of the bridge command as pi lists it (`pi-context-bridge`, or
 * `pi-context-bridge:N` when two copies are loaded; any copy runs the shared job).
 */
function resolveInvocation(pi: PiApi): string | undefined {
  let commands: ReturnType<PiApi["getCommands"]>;
  try {
    commands = pi.getCommands();
  } catch {
    return undefined;
  }
  const ours = commands.filter(
    (c) =>
      (c.source === undefined || c.source === "extension") &&
      (c.name === BRIDGE_COMMAND || c.name.startsWith(`${BRIDGE_COMMAND}:`)),
  );
  return ours.find((c) => c.name === BRIDGE_COMMAND)?.name ?? ours[0]?.name;
}

function tokensEqual(given: unknown, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** One connected client. */
interface Client {
  socket: net.Socket;
  authenticated: boolean;
  label?: string;
}

/** The bridge of one pi session: socket server, announcement, state pushes, operations. */
export class BridgeServer {
  compacting = false;
  navigating = false;
  running: Running | undefined;
  private server: net.Server | undefined;
  private readonly clients = new Set<Client>();
  private seq = 0;
  private pushTimer: NodeJS.Timeout | undefined;
  private announceFile: string | undefined;
  private socketPath: string | undefined;
  private token = "";
  private sessionFile = "";
  private disposed = false;
  private readonly exitHook = () => this.cleanupFiles();

  constructor(
    private readonly pi: PiApi,
    private readonly ctx: PiContext,
    private readonly deps: BridgeDeps,
    private readonly withCommandContext: <T>(run: (ctx: PiCommandContext) => Promise<T>) => Promise<T>,
  ) {}

  /** Listen and announce. @throws when the socket or the announcement cannot be created. */
  async start(sessionFile: string): Promise<void> {
    this.sessionFile = sessionFile;
    const agentDir = this.deps.agentDir();
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

  /** Status text for `/pi-context-bridge`. */
  describe(): string {
    const n = [...this.clients].filter((c) => c.authenticated).length;
    return `pi-context live bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}, pi ${this.deps.piVersion}): listening for ${path.basename(this.sessionFile)}; ${n} client${n === 1 ? "" : "s"} connected${
      n
        ? ` (${[...this.clients]
            .filter((c) => c.authenticated)
            .map((c) => c.label ?? "?")
            .join(", ")})`
        : ""
    }.`;
  }

  /** Close everything and remove the announcement and socket. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.pushTimer);
    for (const c of this.clients) c.socket.destroy();
    this.clients.clear();
    this.server?.close();
    this.cleanupFiles();
    process.off("exit", this.exitHook);
  }

  private cleanupFiles(): void {
    if (this.announceFile) removeAnnouncement(this.announceFile, this.socketPath);
    else if (this.socketPath) removeAnnouncement("", this.socketPath);
    this.announceFile = undefined;
  }

  /** The state now (pi's numbers). */
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

  /** Push the state to every client soon (coalesces bursts of events). */
  schedulePush(): void {
    if (this.disposed || this.pushTimer) return;
    this.pushTimer = setTimeout(() => this.pushNow(), 25);
  }

  /** Push the state to every authenticated client now. */
  pushNow(): void {
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    if (this.disposed || ![...this.clients].some((c) => c.authenticated)) return;
    let state: BridgeState;
    try {
      state = this.state();
    } catch (error) {
      this.deps.log?.(`bridge state: ${(error as Error).message}`);
      return;
    }
    for (const c of this.clients) if (c.authenticated) send(c.socket, { type: "state", state });
  }

  private onConnection(socket: net.Socket): void {
    if (this.disposed) {
      socket.destroy();
      return;
    }
    const client: Client = { socket, authenticated: false };
    if (this.clients.size >= MAX_CLIENTS) {
      send(socket, { type: "error", code: "unavailable", message: `too many clients (${MAX_CLIENTS})` });
      socket.end();
      return;
    }
    this.clients.add(client);
    const helloTimer = setTimeout(() => {
      if (!client.authenticated) socket.destroy();
    }, HELLO_TIMEOUT_MS);
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const nl = buffer.indexOf(10);
        if (nl < 0) break;
        const line = buffer.subarray(0, nl).toString("utf8");
        buffer = buffer.subarray(nl + 1);
        this.onLine(client, line.endsWith("\r") ? line.slice(0, -1) : line, helloTimer);
        if (socket.destroyed) return;
      }
      if (buffer.length > MAX_LINE_BYTES) {
        send(socket, { type: "error", code: "bad-request", message: "line too long" });
        socket.destroy();
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(helloTimer);
      this.clients.delete(client);
    });
  }

  private onLine(client: Client, line: string, helloTimer: NodeJS.Timeout): void {
    if (line.trim() === "") return;
    let message: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      message = parsed as Record<string, unknown>;
    } catch {
      send(client.socket, { type: "error", code: "bad-request", message: "malformed line" });
      client.socket.destroy();
      return;
    }
    if (!client.authenticated) {
      if (message.type !== "hello" || !tokensEqual(message.token, this.token)) {
        send(client.socket, {
          type: "error",
          code: "unauthorized",
          message: "The live bridge refused the connection: wrong token.",
        });
        client.socket.end();
        return;
      }
      if (message.protocol !== BRIDGE_PROTOCOL) {
        send(client.socket, {
          type: "error",
          code: "protocol",
          message: `This pi runs pi-context bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}); the client speaks protocol ${String(message.protocol)}.`,
          protocol: BRIDGE_PROTOCOL,
          bridgeVersion: BRIDGE_VERSION,
        });
        client.socket.end();
        return;
      }
      clearTimeout(helloTimer);
      client.authenticated = true;
      if (typeof message.client === "string") client.label = message.client.slice(0, 100);
      send(client.socket, {
        type: "welcome",
        protocol: BRIDGE_PROTOCOL,
        bridgeVersion: BRIDGE_VERSION,
        piVersion: this.deps.piVersion,
        pid: process.pid,
        sessionFile: this.sessionFile,
        state: this.state(),
      });
      return;
    }
    const id = message.id;
    if (message.type !== "request" || typeof id !== "number" || !Number.isSafeInteger(id)) {
      send(client.socket, { type: "error", code: "bad-request", message: "expected a request with a numeric id" });
      client.socket.destroy();
      return;
    }
    const op = message.op as BridgeOp;
    const params = (message.params && typeof message.params === "object" ? message.params : {}) as Record<
      string,
      unknown
    >;
    if (!BRIDGE_OPS.includes(op)) {
      send(client.socket, {
        type: "response",
        id,
        ok: false,
        error: { code: "bad-request", message: `unknown operation ${String(op)}` },
      });
      return;
    }
    this.execute(op, params).then(
      (result) => {
        // operations that change the session: everyone sees the new state before the answer
        if (op !== "state" && op !== "cancel") this.pushNow();
        send(client.socket, { type: "response", id, ok: true, result });
      },
      (error: unknown) => {
        const code: BridgeErrorCode = error instanceof OpError ? error.code : "failed";
        send(client.socket, {
          type: "response",
          id,
          ok: false,
          error: { code, message: error instanceof Error ? error.message : String(error) },
        });
      },
    );
  }

  private async execute(op: BridgeOp, params: Record<string, unknown>): Promise<unknown> {
    const optionalString = (key: string, max = 100_000): string | undefined => {
      const v = params[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "string" || v.length > max) throw new OpError("bad-request", `${key} must be a string`);
      return v;
    };
    const optionalBool = (key: string): boolean | undefined => {
      const v = params[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "boolean") throw new OpError("bad-request", `${key} must be a boolean`);
      return v;
    };
    switch (op) {
      case "state":
        return this.state();
      case "compact":
        return this.compact(optionalString("customInstructions"));
      case "navigate": {
        const targetId = optionalString("targetId", 200);
        if (!targetId) throw new OpError("bad-request", "targetId is required");
        const options: BridgeOps["navigate"]["params"] = { targetId };
        const summarize = optionalBool("summarize");
        const replaceInstructions = optionalBool("replaceInstructions");
        const customInstructions = optionalString("customInstructions");
        const label = optionalString("label", 1000);
        if (summarize !== undefined) options.summarize = summarize;
        if (replaceInstructions !== undefined) options.replaceInstructions = replaceInstructions;
        if (customInstructions) options.customInstructions = customInstructions;
        if (label) options.label = label;
        return this.navigate(options);
      }
      case "setLabel": {
        const targetId = optionalString("targetId", 200);
        if (!targetId) throw new OpError("bad-request", "targetId is required");
        const label = optionalString("label", 1000)?.trim() || undefined;
        try {
          this.pi.setLabel(targetId, label);
        } catch (error) {
          throw new OpError("failed", (error as Error).message);
        }
        this.schedulePush();
        const leaf = this.ctx.sessionManager.getLeafId();
        return { entryId: leaf } satisfies BridgeOps["setLabel"]["result"];
      }
      case "cancel": {
        const running = this.running;
        if (!running) return { cancelled: false };
        running.cancelled = true;
        this.ctx.abort();
        return { cancelled: true };
      }
    }
  }

  private compact(customInstructions: string | undefined): Promise<BridgeOps["compact"]["result"]> {
    if (this.running || this.compacting || this.navigating)
      return Promise.reject(new OpError("busy", WAIT_OPERATION_COMPACT));
    if (!this.ctx.isIdle()) return Promise.reject(new OpError("busy", WAIT_RESPONSE_COMPACT));
    const running: Running = { kind: "compact", cancelled: false };
    this.running = running;
    return new Promise<BridgeOps["compact"]["result"]>((resolve, reject) => {
      const done = () => {
        if (this.running === running) this.running = undefined;
        this.schedulePush();
      };
      try {
        this.ctx.compact({
          ...(customInstructions?.trim() ? { customInstructions: customInstructions.trim() } : {}),
          onComplete: (result) => {
            done();
            const entryId = running.compactionEntry?.id ?? null;
            resolve({
              entryId,
              firstKeptEntryId: result.firstKeptEntryId,
              tokensBefore: result.tokensBefore,
              ...(typeof result.estimatedTokensAfter === "number"
                ? { estimatedTokensAfter: result.estimatedTokensAfter }
                : {}),
              leafId: this.ctx.sessionManager.getLeafId(),
            });
          },
          onError: (error) => {
            done();
            const message = error?.message ?? String(error);
            if (running.cancelled || message === "Compaction cancelled")
              reject(new OpError("cancelled", "Compaction cancelled"));
            else if (/^Wait for|in progress/.test(message)) reject(new OpError("busy", message));
            else reject(new OpError("failed", message));
          },
        });
      } catch (error) {
        done();
        reject(new OpError("failed", (error as Error).message));
      }
    });
  }

  private navigate(options: BridgeOps["navigate"]["params"]): Promise<BridgeOps["navigate"]["result"]> {
    if (this.running || this.compacting || this.navigating)
      return Promise.reject(new OpError("busy", WAIT_OPERATION_NAVIGATE));
    const running: Running = { kind: "navigate", cancelled: false };
    this.running = running;
    const { targetId, ...rest } = options;
    return this.withCommandContext(async (ctx) => {
      const sm = ctx.sessionManager;
      const before = sm.getEntries().length;
      const oldLeafId = sm.getLeafId();
      let result: { cancelled: boolean };
      try {
        result = await ctx.navigateTree(targetId, rest);
      } catch (error) {
        const message = (error as Error).message;
        throw new OpError(/^Wait for/.test(message) ? "busy" : "failed", message);
      }
      const entries = sm
        .getEntries()
        .slice(before)
        .map((e) => ({ type: e.type, id: e.id, parentId: e.parentId }));
      return {
        cancelled: result.cancelled,
        ...(result.cancelled && running.cancelled ? { aborted: true } : {}),
        oldLeafId,
        newLeafId: sm.getLeafId(),
        entries,
      };
    }).finally(() => {
      if (this.running === running) this.running = undefined;
      this.schedulePush();
    });
  }
}

function send(socket: net.Socket, line: ServerLine): void {
  if (socket.destroyed || !socket.writable) return;
  socket.write(JSON.stringify(line) + "\n");
}
