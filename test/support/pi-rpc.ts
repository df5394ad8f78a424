/**
 * The real pi 1.6.0 CLI in RPC mode (`node <pkg>/dist/bundle/cli.js --mode rpc`, Node 22 from the
 * conformance package), for tests that need a *running* pi: a temporary agent dir whose
 * `models.json` points at a scripted OpenAI-compatible server on 127.0.0.1, `HOME` in a temp dir,
 * `PI_OFFLINE=1`. JSON lines on stdin/stdout (split on `\n` only, as pi's docs require).
 *
 * Used by the node conformance tests (`test/oracle/`) and by the integration suites inside the
 * real extension host.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {} from "./paths";

/** Repository root (this file compiles to `out/test/support/`). */
export { REPO_ROOT } from "./paths";
import { REPO_ROOT } from "./paths";
const CONFORMANCE = path.join(REPO_ROOT, "test", "conformance", "oracle");
/** pi's CLI bundle of one pi version of the conformance matrix (`node_modules/pi-<version>`). */
export function piCliOf(version: string): string {
  return path.join(CONFORMANCE, "node_modules", `pi-${version}`, "dist", "bundle", "cli.js");
}
/**
 * pi 1.6.0's CLI bundle in the conformance package (the reference version) — or, under
 * `npm run test:pi-next`, the newest pi's (`PI_ORACLE_PACKAGE_DIR`).
 */
export const PI_CLI = process.env.PI_ORACLE_PACKAGE_DIR
  ? path.join(process.env.PI_ORACLE_PACKAGE_DIR, "dist", "bundle", "cli.js")
  : piCliOf("1.6.0");

/** Node 22 for pi (installs the conformance package when needed). */
export async function node22Path(): Promise<string> {
  const setup = path.join(CONFORMANCE, "setup.mjs");
  const mod = (await import(pathToFileURL(setup).href)) as { ensureConformanceInstall(): { node22Path: string } };
  return mod.ensureConformanceInstall().node22Path;
}

/** The scripted model as pi sees it. */
export interface ScriptedModelOptions {
  baseURL: string;
  provider?: string;
  model?: string;
  contextWindow?: number;
  maxTokens?: number;
  /** settings.json `compaction` (reserveTokens, keepRecentTokens, enabled, modelOverrides…). */
  compaction?: Record<string, unknown>;
  /** More settings.json keys. */
  settings?: Record<string, unknown>;
}

/** Write `models.json` + `settings.json` for a scripted provider into `agentDir` (created). */
export function writeScriptedAgentDir(agentDir: string, options: ScriptedModelOptions): void {
  const provider = options.provider ?? "scripted";
  const model = options.model ?? "scripted-small";
  fs.mkdirSync(agentDir, { recursive: true });
  fs.writeFileSync(
    path.join(agentDir, "models.json"),
    JSON.stringify(
      {
        providers: {
          [provider]: {
            baseUrl: options.baseURL,
            api: "openai-completions",
            apiKey: "scripted-dummy-key",
            compat: {
              supportsStore: false,
              supportsDeveloperRole: false,
              supportsReasoningEffort: false,
              maxTokensField: "max_tokens",
            },
            models: [
              {
                id: model,
                name: model,
                contextWindow: options.contextWindow ?? 16000,
                maxTokens: options.maxTokens ?? 2048,
                input: ["text"],
                reasoning: false,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              },
            ],
          },
        },
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(agentDir, "settings.json"),
    JSON.stringify(
      {
        defaultProvider: provider,
        defaultModel: model,
        cacheWarming: "off",
        enableInstallTelemetry: false,
        retry: { enabled: false },
        ...(options.compaction ? { compaction: options.compaction } : {}),
        ...options.settings,
      },
      null,
      2,
    ),
  );
}

/** Options of {@link PiRpc.start}. */
export interface PiRpcOptions {
  cwd: string;
  agentDir: string;
  home: string;
  /** `-e <file>` extensions. */
  extensions?: string[];
  /** More CLI arguments (e.g. `--session <file>`). */
  args?: string[];
  env?: Record<string, string>;
  node?: string;
}

/** An RPC event or response line. */
export type RpcLine = { type: string; id?: string; [key: string]: unknown };

/** A response's `data`: free-form JSON, read by the tests field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pi's RPC data is untyped JSON here
export type RpcData = Record<string, any>;

/** A running pi in RPC mode. */
export class PiRpc {
  readonly events: RpcLine[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private buffer = "";
  private nextId = 1;
  private readonly waiters: { match: (line: RpcLine) => boolean; resolve: (line: RpcLine) => void }[] = [];

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      for (;;) {
        const nl = this.buffer.indexOf("\n");
        if (nl < 0) break;
        const text = this.buffer.slice(0, nl).replace(/\r$/, "");
        this.buffer = this.buffer.slice(nl + 1);
        if (!text.trim()) continue;
        let line: RpcLine;
        try {
          line = JSON.parse(text) as RpcLine;
        } catch {
          this.stderr += `[non-JSON stdout] ${text}\n`;
          continue;
        }
        this.events.push(line);
        for (const w of [...this.waiters]) {
          if (w.match(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-50_000);
    });
    this.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      }),
    );
  }

  /** Start pi; resolves once the process runs and answers `get_state`. */
  static async start(options: PiRpcOptions): Promise<PiRpc> {
    const node = options.node ?? (await node22Path());
    const args = [
      PI_CLI,
      "--mode",
      "rpc",
      ...(options.extensions ?? []).flatMap((e) => ["-e", e]),
      ...(options.args ?? []),
    ];
    const child = spawn(node, args, {
      cwd: options.cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: options.home,
        PI_CODING_AGENT_DIR: options.agentDir,
        PI_OFFLINE: "1",
        LANG: "C.UTF-8",
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    const pi = new PiRpc(child);
    await pi.command({ type: "get_state" }, 30_000);
    return pi;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Wait for an event/response matching `match` (also one already received after `since`). */
  waitFor(match: (line: RpcLine) => boolean, timeoutMs = 30_000, since = this.events.length): Promise<RpcLine> {
    const earlier = this.events.slice(since).find(match);
    if (earlier) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(
          new Error(
            `pi: timed out after ${timeoutMs} ms; last events: ${this.events
              .slice(-5)
              .map((e) => e.type)
              .join(", ")}\nstderr: ${this.stderr.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        match,
        resolve: (line: RpcLine) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      this.waiters.push(waiter);
      void this.exited.then(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          clearTimeout(timer);
          reject(
            new Error(
              `pi exited (${JSON.stringify(this.exitInfo)}) while waiting\nstderr: ${this.stderr.slice(-2000)}`,
            ),
          );
        }
      });
    });
  }

  /** Send a command and resolve with its response (rejects on `success: false`). */
  async command(command: Record<string, unknown>, timeoutMs = 30_000): Promise<RpcLine & { data: RpcData }> {
    const id = `t${this.nextId++}`;
    const since = this.events.length;
    this.child.stdin.write(JSON.stringify({ ...command, id }) + "\n");
    const response = await this.waitFor((l) => l.type === "response" && l.id === id, timeoutMs, since);
    if (response.success === false) throw new Error(`pi ${String(command.type)}: ${String(response.error)}`);
    return response as RpcLine & { data: RpcData };
  }

  /** `prompt` and wait until pi settles (`agent_settled`). */
  async prompt(message: string, timeoutMs = 60_000): Promise<void> {
    const since = this.events.length;
    const response = await this.command({ type: "prompt", message }, timeoutMs);
    if ((response.data as { disposition?: string } | undefined)?.disposition === "handled") return;
    await this.waitFor((l) => l.type === "agent_settled", timeoutMs, since);
  }

  /** Send `prompt` without waiting for the run (for tests that act while pi streams). */
  startPrompt(message: string): Promise<RpcLine> {
    return this.command({ type: "prompt", message });
  }

  /** Close stdin (pi shuts down cleanly); SIGKILL after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kill pi without letting it clean up (SIGKILL). */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** A session file line as tests read it (pi's entry fields, loosely typed). */
export interface SessionLine {
  type: string;
  id: string;
  parentId: string | null;
  message?: { role: string; content: unknown };
  summary?: string;
  label?: string;
  targetId?: string;
  firstKeptEntryId?: string;
  tokensBefore?: number;
  [key: string]: unknown;
}

/** Every line of a session file, parsed. */
export function readSessionLines(file: string): SessionLine[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as SessionLine);
}

/** The text of a message's content (string or text parts). */
export function messageText(message: { content: unknown } | undefined): string {
  const c = message?.content;
  if (typeof c === "string") return c;
  return Array.isArray(c)
    ? c.map((p: { type?: string; text?: string }) => (p.type === "text" ? (p.text ?? "") : "")).join("")
    : "";
}
