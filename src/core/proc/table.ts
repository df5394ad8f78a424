/**
 * The process table on every platform, reused for {@link SNAPSHOT_TTL_MS}. pi 1.6.0 sets
 * `process.title = "pi"`: on Linux and macOS its command line reads just `pi` (no arguments); on
 * Windows the arguments stay but another process's cwd is unreadable.
 */

import * as path from "node:path";
import { listDarwinProcesses } from "./darwin";
import { listLinuxProcesses } from "./linux";
import { listWindowsProcesses } from "./win32";
import { defaultRunner, type CommandRunner } from "./run";
import type { PiProcess, ProcessInfo, ProcessSnapshot } from "./types";

export type { PiProcess, ProcessInfo, ProcessSnapshot } from "./types";

export interface SnapshotOptions {
  platform?: NodeJS.Platform;
  procRoot?: string;
  run?: CommandRunner;
  ignorePids?: readonly number[];
}

export const SNAPSHOT_TTL_MS = 1000;

const RUNTIMES = /^(node|nodejs|bun|deno|tsx|sh|bash|dash|zsh)(\d+(\.\d+)*)?(\.exe)?$/i;
const PI_NAMES = /^pi(\.exe|\.cmd|\.js|\.mjs)?$/i;
const PI_PACKAGE = /[/\\](pi-coding-agent|@earendil-works[/\\]pi)[/\\]/;

/**
 * True when a command line is pi: the program is named `pi`, or a JS runtime or shell runs a script named
 * `pi` or inside a `pi-coding-agent` / `@earendil-works/pi` package (rule documented in `docs/testing.md`).
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

/** Read the process table now. Never throws: a failure is `error` with an empty table. */
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

/** {@link readProcessSnapshot} shared within {@link SNAPSHOT_TTL_MS}; `maxAgeMs: 0` forces a fresh read. */
export function processSnapshot(options: SnapshotOptions & { maxAgeMs?: number } = {}): Promise<ProcessSnapshot> {
  const key = `${options.platform ?? process.platform}|${options.procRoot ?? ""}|${options.run ? "custom" : ""}`;
  const maxAge = options.maxAgeMs ?? SNAPSHOT_TTL_MS;
  const now = Date.now();
  if (!options.run && cached && cached.key === key && now - cached.at < maxAge) return cached.snapshot;
  const snapshot = readProcessSnapshot(options);
  if (!options.run) cached = { key, at: now, snapshot };
  return snapshot;
}

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

/** The pi processes in a terminal: the shell itself when it is pi, else its pi descendants, nearest first. */
export function piProcessesUnder(snapshot: ProcessSnapshot, shellPid: number): PiProcess[] {
  const byPid = new Map(snapshot.pi.map((p) => [p.pid, p]));
  const self = byPid.get(shellPid);
  const below = descendantsOf(snapshot, shellPid)
    .map((p) => byPid.get(p.pid))
    .filter((p): p is PiProcess => p !== undefined);
  return self ? [self, ...below] : below;
}

/** A process for messages: program name, shortened paths, control characters as spaces, ≤ 120 characters. */
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
  // quotes, not backticks: toasts and the CLI show backticks as they are
  return `process ${p.pid} “${text.length > 120 ? `${text.slice(0, 119)}…` : text}”`;
}

/** pi's `resolveSessionPath` rule: a value with a separator or ending in `.jsonl` is a path, else an id prefix. */
export function isSessionPathArg(arg: string): boolean {
  return arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl");
}

/** A `--session <path>` resolved like pi; undefined for an id, or a relative path without a cwd. */
export function sessionArgPath(arg: string, cwd: string | undefined): string | undefined {
  if (!isSessionPathArg(arg)) return undefined;
  if (path.isAbsolute(arg) || /^[A-Za-z]:[\\/]/.test(arg)) return arg;
  return cwd ? path.resolve(cwd, arg) : undefined;
}
