/**
 * The user's pi headless (`--mode rpc --session <file>`), JSON lines split on `\n` only as pi's docs
 * require. pi writes its own entries; pi-context writes nothing. pi exits 1 when the header's `cwd` is
 * missing; `--no-mcp` exists only from 1.4.0; extension dialogs are answered `cancelled` (they would
 * block); `compact` aborts a running turn, so only idle sessions; cancel = `abort`.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import type { PiRuntime } from "./node";
import { rulesFor } from "./versions";

export type PiRpcErrorKind = "cwd-missing" | "start" | "exited" | "no-model" | "refused" | "cancelled" | "timeout";

/** `message` is a full sentence for the user (pi's own words where it gave any). */
export class PiRpcError extends Error {
  readonly kind: PiRpcErrorKind;
  /** Last 4 kB, when pi exited. */
  readonly stderr?: string;
  constructor(kind: PiRpcErrorKind, message: string, stderr?: string) {
    super(message);
    this.name = "PiRpcError";
    this.kind = kind;
    if (stderr) this.stderr = stderr;
  }
}

export type RpcRecord = Record<string, unknown> & { type?: string };

export interface RpcState {
  model?: { provider?: string; id?: string; contextWindow?: number } | null;
  sessionFile?: string;
  isStreaming?: boolean;
  isCompacting?: boolean;
  thinkingLevel?: string;
}

export interface PiRpcOptions {
  runtime: PiRuntime;
  sessionFile: string;
  /** Must exist (pi refuses otherwise); the child runs there. */
  cwd: string;
  /** `PI_CODING_AGENT_DIR`; default pi's own. */
  agentDir?: string;
  extensions?: string[];
  /** `PI_OFFLINE=1` is added: no catalog refresh at startup. */
  env?: NodeJS.ProcessEnv;
  /** ms, default 30 000. */
  startTimeoutMs?: number;
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

export class PiRpc {
  private buffer = "";
  private stderrText = "";
  private nextId = 1;
  private readonly waiters = new Map<string, (record: RpcRecord) => void>();
  private readonly listeners = new Set<(record: RpcRecord) => void>();
  private exit: { code: number | null; signal: string | null } | undefined;
  private readonly exited: Promise<{ code: number | null; signal: string | null }>;
  state: RpcState = {};

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.onData(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderrText = (this.stderrText + chunk).slice(-4096);
    });
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
        for (const waiter of this.waiters.values()) waiter({ type: "exit", code, signal });
        this.waiters.clear();
      });
    });
  }

  static args(options: PiRpcOptions): string[] {
    const args = [options.runtime.install.cliPath, "--mode", "rpc", "--session", options.sessionFile];
    if (rulesFor(options.runtime.install.version).noMcpFlag) args.push("--no-mcp");
    for (const ext of options.extensions ?? []) args.push("-e", ext);
    return args;
  }

  /** Start pi and wait for `get_state`. @throws {PiRpcError} `cwd-missing`, `start`, `timeout`. */
  static async start(options: PiRpcOptions): Promise<PiRpc> {
    if (!fs.existsSync(options.cwd) || !fs.statSync(options.cwd).isDirectory())
      throw new PiRpcError(
        "cwd-missing",
        `pi cannot open this session: its working directory ${options.cwd} does not exist any more (pi refuses to resume a session whose cwd is gone). Nothing was written.`,
      );
    const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), PI_OFFLINE: "1" };
    if (options.agentDir) env.PI_CODING_AGENT_DIR = options.agentDir;
    const child = spawn(options.runtime.node, PiRpc.args(options), {
      cwd: options.cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const rpc = new PiRpc(child);
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => reject(new PiRpcError("start", `pi could not be started: ${error.message}`)));
    });
    await spawned;
    const timeout = options.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      rpc.send({ type: "get_state" }),
      new Promise<RpcRecord>((resolve) => {
        timer = setTimeout(() => resolve({ type: "timeout" }), timeout);
      }),
    ]).finally(() => clearTimeout(timer));
    if (answer.type === "timeout") {
      rpc.kill();
      throw new PiRpcError("timeout", `pi did not answer within ${Math.round(timeout / 1000)} s. Nothing was written.`);
    }
    if (answer.type === "exit") throw rpc.exitError("start");
    rpc.state = (answer.data as RpcState | undefined) ?? {};
    return rpc;
  }

  exitError(kind: "start" | "exited"): PiRpcError {
    const stderr = this.stderrText.trim();
    const first = stderr.split("\n").find((l) => l.trim()) ?? "";
    return new PiRpcError(
      kind,
      `pi exited${this.exit?.code !== null && this.exit?.code !== undefined ? ` with code ${this.exit.code}` : ""}${first ? `: ${first}` : ""}`,
      stderr,
    );
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let record: RpcRecord;
      try {
        record = JSON.parse(line) as RpcRecord;
      } catch {
        continue; // not ours (an extension printing to stdout)
      }
      if (record.type === "response" && typeof record.id === "string" && this.waiters.has(record.id)) {
        const waiter = this.waiters.get(record.id)!;
        this.waiters.delete(record.id);
        waiter(record);
        continue;
      }
      if (record.type === "extension_ui_request" && DIALOGS.has(String(record.method)))
        this.write({ type: "extension_ui_response", id: record.id, cancelled: true });
      for (const listener of this.listeners) listener(record);
    }
  }

  private write(record: Record<string, unknown>): void {
    if (!this.exit && this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(record)}\n`);
  }

  /** Resolves with pi's `response` record (or `{type: "exit"}` when pi exited first). */
  send(command: Record<string, unknown>): Promise<RpcRecord> {
    if (this.exit) return Promise.resolve({ type: "exit", ...this.exit });
    const id = `pictx-${this.nextId++}`;
    return new Promise((resolve) => {
      this.waiters.set(id, resolve);
      this.write({ ...command, id });
    });
  }

  /** Everything but the responses to {@link send}. */
  onEvent(listener: (record: RpcRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Close stdin and wait for pi to exit (killed after `ms`). */
  async close(ms = 5000): Promise<void> {
    if (this.exit) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill(), ms);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.exit) this.child.kill("SIGKILL");
  }

  get stderr(): string {
    return this.stderrText;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

export interface PiCompactResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
  /** `provider/id`. */
  model?: string;
}

/**
 * Compact an idle session with the user's pi, which appends its own `compaction` entry.
 * @throws {PiRpcError} `cwd-missing`, `start`, `no-model`, `refused` (pi's message), `cancelled`
 *   (nothing written), `exited`.
 */
export async function compactWithPi(
  options: PiRpcOptions & {
    customInstructions?: string;
    signal?: AbortSignal;
    onEvent?: (record: RpcRecord) => void;
    onStarted?: (rpc: PiRpc) => void;
  },
): Promise<PiCompactResult> {
  if (options.signal?.aborted) throw new PiRpcError("cancelled", "Compaction cancelled");
  const rpc = await PiRpc.start(options);
  try {
    options.onStarted?.(rpc);
    const model = rpc.state.model;
    if (!model?.provider || !model.id)
      throw new PiRpcError(
        "no-model",
        "your pi has no model with credentials for this session (pi: no model selected). Log in or set up a model in pi (/login, models.json), then try again.",
      );
    let cancelled = false;
    const off = rpc.onEvent((record) => {
      // an abort before pi started compacting would be lost: abort again
      if (cancelled && record.type === "compaction_start") void rpc.send({ type: "abort" });
      options.onEvent?.(record);
    });
    const onAbort = () => {
      cancelled = true;
      void rpc.send({ type: "abort" });
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let response: RpcRecord;
    try {
      response = await rpc.send({
        type: "compact",
        ...(options.customInstructions?.trim() ? { customInstructions: options.customInstructions.trim() } : {}),
      });
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      off();
    }
    if (response.type === "exit") throw rpc.exitError("exited");
    if (response.success !== true) {
      const error = typeof response.error === "string" ? response.error : "pi could not compact the session";
      if (cancelled || error === "Compaction cancelled") throw new PiRpcError("cancelled", "Compaction cancelled");
      throw new PiRpcError("refused", error);
    }
    const data = (response.data ?? {}) as Record<string, unknown>;
    return {
      summary: typeof data.summary === "string" ? data.summary : "",
      firstKeptEntryId: String(data.firstKeptEntryId ?? ""),
      tokensBefore: typeof data.tokensBefore === "number" ? data.tokensBefore : 0,
      ...(typeof data.estimatedTokensAfter === "number" ? { estimatedTokensAfter: data.estimatedTokensAfter } : {}),
      model: `${model.provider}/${model.id}`,
    };
  } finally {
    await rpc.close();
  }
}
