/**
 * The process table, one module for every platform: which processes run, their parents, command
 * lines, start times, and — for the pi processes — their working directory and the session they
 * name. Used by the live-session guard (`flows/live.ts`) and by session following (the pi in the
 * focused terminal). Asynchronous and cheap: one `/proc` walk (Linux), one `ps` + one `lsof`
 * (macOS), one PowerShell CIM query (Windows); a snapshot is reused for {@link SNAPSHOT_TTL_MS}.
 *
 * What pi looks like in the table (pi 1.6.0 `cli/setup.js` sets `process.title = "pi"`):
 * - Linux and macOS: Node overwrites the argument area, so the command line reads just `pi` — the
 *   arguments (`--session …`) are gone; the working directory comes from `/proc/<pid>/cwd` or `lsof`.
 * - Windows: the command line stays as started (`node.exe …\pi-coding-agent\dist\cli.js --session …`);
 *   another process's working directory cannot be read without native code, so it is unknown.
 *
 * {@link isPiCommandLine} is the one rule that recognises pi (documented in `docs/testing.md` for the
 * integration tests' pi-like process).
 */

import * as path from "node:path";
import { listDarwinProcesses } from "./darwin";
import { listLinuxProcesses } from "./linux";
import { listWindowsProcesses } from "./win32";
import { defaultRunner, type CommandRunner } from "./run";
import type { PiProcess, ProcessInfo, ProcessSnapshot } from "./types";

export type { PiProcess, ProcessInfo, ProcessSnapshot } from "./types";

/** Options of {@link readProcessSnapshot}. */
export interface SnapshotOptions {
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** Linux: root of the proc file system (tests); default `/proc`. */
  procRoot?: string;
  /** macOS / Windows: runs `ps`, `lsof`, PowerShell (tests give recorded output). */
  run?: CommandRunner;
  /** Processes to leave out (default: this process). */
  ignorePids?: readonly number[];
}

/** How long a snapshot is reused by {@link processSnapshot} (ms). */
export const SNAPSHOT_TTL_MS = 1000;

const RUNTIMES = /^(node|nodejs|bun|deno|tsx|sh|bash|dash|zsh)(\d+(\.\d+)*)?(\.exe)?$/i;
const PI_NAMES = /^pi(\.exe|\.cmd|\.js|\.mjs)?$/i;
const PI_PACKAGE = /[/\\](pi-coding-agent|@earendil-works[/\\]pi)[/\\]/;

/**
 * True when a command line is the pi coding agent. The rule, exactly:
 * - the program (first argument) is named `pi` (`pi.exe`, `pi.cmd`; any folder) — this is what pi's
 *   `process.title = "pi"` leaves on Linux and macOS; or
 * - the program is a JavaScript runtime (`node`, `nodejs`, `node22`, `bun`, `deno`, `tsx`, `.exe`
 *   allowed) or a shell running a script (`sh`, `bash`, `dash`, `zsh`: a wrapper) and its script (the first argument not starting with `-`) is named `pi` (`pi.js`,
 *   `pi.mjs`) or lies in a `pi-coding-agent` / `@earendil-works/pi` package folder.
 * `pip`, `vim pi`, `node server.js` are not pi.
 */
export function isPiCommandLine(argv: readonly string[]): boolean {
  const program = argv[0];
  if (program === undefined) return false;
  const base = basenameAny(program);
  if (PI_NAMES.test(base) && !/\.(js|mjs)$/i.test(base)) return true;
  if (!RUNTIMES.test(base)) return false;
  const script = argv.slice(1).find((a) => !a.startsWith("-"));
  if (script === undefined) return false;
  return PI_NAMES.test(basenameAny(script)) || PI_PACKAGE.test(script);
}

/** The basename for both separators (a Windows path read on any platform). */
function basenameAny(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return i >= 0 ? p.slice(i + 1) : p;
}

/** `--session` / `--session-dir` of a pi command line (pi's `cli/args.js` spellings). */
export function piSessionArguments(argv: readonly string[]): { sessionArg?: string; sessionDirArg?: string } {
  const out: { sessionArg?: string; sessionDirArg?: string } = {};
  for (let i = 1; i < argv.length - 1; i++) {
    if (argv[i] === "--session") out.sessionArg = argv[++i]!;
    else if (argv[i] === "--session-dir") out.sessionDirArg = argv[++i]!;
  }
  return out;
}

/**
 * Read the process table now. Never throws: a failure is `error` with an empty table.
 * @param options.platform `linux` (`/proc`), `darwin` (`ps`, `lsof`), `win32` (PowerShell CIM);
 *   other platforms give an empty table with an `error`.
 */
export async function readProcessSnapshot(options: SnapshotOptions = {}): Promise<ProcessSnapshot> {
  const platform = options.platform ?? process.platform;
  const ignore = new Set(options.ignorePids ?? [process.pid]);
  const run = options.run ?? defaultRunner;
  const at = Date.now();
  let processes: ProcessInfo[];
  try {
    if (platform === "linux") processes = await listLinuxProcesses(options.procRoot ?? "/proc", isPiCommandLine);
    else if (platform === "darwin") processes = await listDarwinProcesses(run, isPiCommandLine);
    else if (platform === "win32") processes = await listWindowsProcesses(run);
    else return { at, platform, processes: [], pi: [], error: `no process table on ${platform}` };
  } catch (error) {
    return { at, platform, processes: [], pi: [], error: (error as Error).message };
  }
  processes = processes.filter((p) => !ignore.has(p.pid));
  const pi: PiProcess[] = processes
    .filter((p) => isPiCommandLine(p.argv))
    .map((p) => ({ ...p, ...piSessionArguments(p.argv) }));
  return { at, platform, processes, pi };
}

let cached: { key: string; at: number; snapshot: Promise<ProcessSnapshot> } | undefined;

/**
 * {@link readProcessSnapshot}, shared: callers within {@link SNAPSHOT_TTL_MS} of each other get the
 * same snapshot (the guard, the terminal follower and the gauge may all ask within a second).
 * `maxAgeMs: 0` forces a fresh read (the guard right before a write).
 */
export function processSnapshot(options: SnapshotOptions & { maxAgeMs?: number } = {}): Promise<ProcessSnapshot> {
  const key = `${options.platform ?? process.platform}|${options.procRoot ?? ""}|${options.run ? "custom" : ""}`;
  const maxAge = options.maxAgeMs ?? SNAPSHOT_TTL_MS;
  const now = Date.now();
  if (!options.run && cached && cached.key === key && now - cached.at < maxAge) return cached.snapshot;
  const snapshot = readProcessSnapshot(options);
  if (!options.run) cached = { key, at: now, snapshot };
  return snapshot;
}

/** The processes below `pid` (children, grandchildren…), nearest first; cycle-safe. */
export function descendantsOf(snapshot: ProcessSnapshot, pid: number): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const p of snapshot.processes) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const out: ProcessInfo[] = [];
  const seen = new Set<number>([pid]);
  let level = [pid];
  while (level.length > 0) {
    const next: number[] = [];
    for (const parent of level)
      for (const child of children.get(parent) ?? []) {
        if (seen.has(child.pid)) continue;
        seen.add(child.pid);
        out.push(child);
        next.push(child.pid);
      }
    level = next;
  }
  return out;
}

/**
 * The pi processes running in a terminal whose shell is `shellPid`: the shell itself when it is pi,
 * else its descendants that are pi (nearest first).
 */
export function piProcessesUnder(snapshot: ProcessSnapshot, shellPid: number): PiProcess[] {
  const byPid = new Map(snapshot.pi.map((p) => [p.pid, p]));
  const self = byPid.get(shellPid);
  const below = descendantsOf(snapshot, shellPid)
    .map((p) => byPid.get(p.pid))
    .filter((p): p is PiProcess => p !== undefined);
  return self ? [self, ...below] : below;
}

/**
 * A process for messages: `process 123 “node …/pi-coding-agent/dist/cli.js --session …/--a--/x.jsonl”`:
 * the program by its name, a script by its last three path parts, other paths by their last two,
 * control characters as spaces, cut at 120 characters.
 */
export function describeProcess(p: Pick<ProcessInfo, "pid" | "command"> & { argv?: readonly string[] }): string {
  const argv = p.argv && p.argv.length > 0 ? p.argv : undefined;
  let text = p.command;
  if (argv) {
    const [program, ...rest] = argv;
    const scriptIndex = RUNTIMES.test(basenameAny(program!)) ? rest.findIndex((a) => !a.startsWith("-")) : -1;
    const shown = rest.map((a, i) => {
      const keep = i === scriptIndex ? 3 : 2;
      const parts = a.split(/[/\\]/);
      const short = parts.length > keep + 1 ? `…/${parts.slice(-keep).join("/")}` : a;
      return /\s/.test(short) ? `"${short}"` : short;
    });
    text = [basenameAny(program!), ...shown].join(" ");
  }
  text = text.replace(/[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, " ");
  // quotes, not a Markdown code span: toasts and the CLI show backticks as they are
  return `process ${p.pid} “${text.length > 120 ? `${text.slice(0, 119)}…` : text}”`;
}

/** pi's rule (`main.js` `resolveSessionPath`): a `--session` value with a separator or ending in `.jsonl` is a path, else an id prefix. */
export function isSessionPathArg(arg: string): boolean {
  return arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl");
}

/** Resolve a `--session <path>` argument like pi (`resolvePath(arg, cwd)`); undefined for an id, or a relative path without a known cwd. */
export function sessionArgPath(arg: string, cwd: string | undefined): string | undefined {
  if (!isSessionPathArg(arg)) return undefined;
  if (path.isAbsolute(arg) || /^[A-Za-z]:[\\/]/.test(arg)) return arg;
  return cwd ? path.resolve(cwd, arg) : undefined;
}
