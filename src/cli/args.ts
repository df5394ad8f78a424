/**
 * What every `pi-context` command shares: argument parsing, the flags that choose pi's settings
 * (`--agent-dir`, `--cwd`, `--project-settings`, `--context-window`, `--leaf`), usage text layout,
 * and the errors that map to exit codes (2 usage, 1 refused or failed).
 */

import * as path from "node:path";
import { parseArgs as parseNodeArgs, type ParseArgsConfig } from "node:util";
import { locatePi, piAt } from "../core/pi/locate";
import { npmGlobalRoot } from "../core/pi/shellPath";
import { userPiOf, type UserPi } from "../core/pi/userPi";
import { getAgentDir, type ProjectSettingsMode } from "../core/rules/settings";
import { withPeriod } from "../shared/format";

/** Parsed command-line flags: `--name value`, `--flag`, and positional arguments. */
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
  /**
   * The first flag that takes a value but got none: it came last (`--agent-dir`), or another flag
   * followed it (`--note --dry-run`).
   */
  missingValue?: string;
}

/** An argument that is a flag (`--dry-run`) or `--`, never a flag's value. */
const FLAG_LIKE = /^--(?:$|[A-Za-z])/;

/**
 * Parse `argv` (without node and script) with Node's `util.parseArgs`. Flags listed in `booleans`
 * take no value (`--json=x` is a usage error); every other flag takes the next argument unless that
 * is itself a flag — `--note --dry-run` is a missing note, not the note "--dry-run" written for
 * real — so a value starting with `--` is given as `--note=--text`. `--` ends the flags (a file named
 * `--x.jsonl` after it). There are no one-letter flags: `-x` is a usage error (`-h` is read by
 * main.ts before), a lone `-` an argument.
 * @throws {UsageError} for a boolean flag with a value and for `-x`.
 */
export function parseArgs(argv: readonly string[], booleans: ReadonlySet<string>): ParsedArgs {
  // [index in argv, name, value]: the flags in the order given (checkFlags reports the first unknown one)
  const given: [number, string, string | true][] = [];
  let missingValue: string | undefined;
  // util.parseArgs gives a string option the next argument whatever it is: a value flag followed by a
  // flag (or by nothing) is taken out here, as a flag without its value.
  const end = argv.indexOf("--");
  const kept: number[] = [];
  argv.forEach((arg, i) => {
    const next = argv[i + 1];
    const valueFlag = (end === -1 || i < end) && /^--[A-Za-z][^=]*$/.test(arg) && !booleans.has(arg.slice(2));
    if (!valueFlag || (next !== undefined && !FLAG_LIKE.test(next))) kept.push(i);
    else {
      // Reported by checkFlags, after unknown flags: a misspelt or unsupported switch at the end
      // (`--yes` on switch) is "Unknown flag --yes", not "--yes needs a value".
      given.push([i, arg.slice(2), true]);
      missingValue ??= arg;
    }
  });
  const args = kept.map((i) => argv[i]!);
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const arg of args.includes("--") ? args.slice(0, args.indexOf("--")) : args) {
    const name = /^--([^=]+)/.exec(arg)?.[1];
    if (name !== undefined) options[name] = { type: booleans.has(name) ? "boolean" : "string" };
  }
  const { tokens } = parseNodeArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") positional.push(token.value);
    else if (token.kind === "option") {
      if (!token.rawName.startsWith("--"))
        throw new UsageError(
          `Unknown flag ${token.rawName}: flags are --name (an argument that starts with - goes after --).`,
        );
      if (booleans.has(token.name) && token.inlineValue) throw new UsageError(`${token.rawName} takes no value.`);
      given.push([kept[token.index]!, token.name, token.value ?? true]);
    }
  }
  const flags = new Map(given.sort((a, b) => a[0] - b[0]).map(([, name, value]) => [name, value]));
  return missingValue === undefined ? { positional, flags } : { positional, flags, missingValue };
}

/** A user error on the command line (exit code 2). */
export class UsageError extends Error {}

/** The analysis options the shared flags describe. */
export function analyzeOptionsFrom(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env) {
  const agentDir = stringFlag(args, "agent-dir") ? path.resolve(stringFlag(args, "agent-dir")!) : getAgentDir(env);
  const mode = stringFlag(args, "project-settings") ?? "auto";
  if (!["auto", "always", "never"].includes(mode))
    throw new UsageError("--project-settings must be auto, always or never.");
  const windowFlag = args.flags.get("context-window");
  const contextWindow = windowFlag !== undefined ? decimalNumber(windowFlag) : undefined;
  if (contextWindow !== undefined && !(contextWindow > 0))
    throw new UsageError("--context-window must be a positive number.");
  const leaf = stringFlag(args, "leaf");
  return {
    agentDir,
    projectSettings: mode as ProjectSettingsMode,
    ...(stringFlag(args, "cwd") ? { cwd: path.resolve(stringFlag(args, "cwd")!) } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(leaf !== undefined ? { leafId: leaf === "null" ? null : leaf } : {}),
  };
}

/**
 * The user's pi for the numbers (its rules and catalog): `--pi <path to pi or its package dir>`,
 * else found like the extension does — `pi` on the PATH, pi's managed install, npm's global
 * packages (`npm root -g` is asked only when the files alone find none). The CLI runs in the
 * user's shell, so there is no login-shell lookup.
 * @throws {UsageError} when `--pi` does not point at a pi.
 */
export async function userPiFrom(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env): Promise<UserPi> {
  const flag = stringFlag(args, "pi");
  if (args.flags.get("pi") === true) throw new UsageError("--pi needs a value.");
  if (flag !== undefined) {
    const found = piAt(flag, "flag", env, env.PATH);
    if ("problem" in found) throw new UsageError(`--pi ${flag}: ${withPeriod(found.problem)}`);
    return userPiOf({ pi: found, tried: [{ where: "--pi", result: `pi ${found.version} at ${found.packageDir}` }] });
  }
  let location = locatePi({ env });
  if (!location.pi) {
    const npmRoot = await npmGlobalRoot(env.PATH, env);
    if (npmRoot) location = locatePi({ env, npmRoot });
  }
  return userPiOf(location);
}

/** The file is not a pi session (first line is no session header) or is empty. */
export class NotASessionError extends Error {
  constructor(file: string, empty: boolean) {
    super(
      empty
        ? `${file} is empty: not a pi session.`
        : `${file} is not a pi session: its first line is not a session header ({"type":"session",…}).`,
    );
    this.name = "NotASessionError";
  }
}

/** A CLI sub-command: returns the exit code. */
export type CliCommand = (
  argv: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
) => Promise<number>;

/**
 * One command's usage, indented by `indent` spaces, continuation lines aligned under its first
 * argument; "API key:" lines are dropped (the help lists the environment once).
 */
export function formatUsage(usage: string, indent: number): string {
  const lines = usage.split("\n").filter((l) => !/^\s*API key:/.test(l));
  const first = lines[0]!.trim();
  const m = /^pi-context \S+ /.exec(first);
  const column = indent + (m ? m[0].length : 2);
  return [" ".repeat(indent) + first, ...lines.slice(1).map((l) => " ".repeat(column) + l.trim())].join("\n");
}

/** A failure's message for the terminal: file-system errors in words, always a full sentence. */
export function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const file = typeof e?.path === "string" ? e.path : undefined;
  if (e?.code === "ENOENT" && file) return `${file}: no such file.`;
  if (e?.code === "EISDIR") return `${file ?? "the path"} is a directory, not a session file.`;
  if ((e?.code === "EACCES" || e?.code === "EPERM") && file) return `${file}: permission denied.`;
  return withPeriod(e instanceof Error ? e.message : String(error));
}

/** A flag's string value (undefined when absent or given without a value). */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === "string" ? v : undefined;
}

/** A number written in decimal (`30`, `2.5`, `2e5`). */
const DECIMAL = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A flag's value as a finite decimal number, else NaN. `Number()` alone would read `""` and
 * `" "` as 0 (`--guard-seconds "$UNSET"` would turn the live-session guard off), `0x10` as 16 and
 * `1e400` as Infinity.
 */
function decimalNumber(value: string | boolean): number {
  if (typeof value !== "string" || !DECIMAL.test(value)) return NaN;
  const v = Number(value);
  return Number.isFinite(v) ? v : NaN;
}

/**
 * A whole, non-negative number flag (floored).
 * @throws {UsageError} when the value is not a non-negative decimal number.
 */
export function intFlag(args: ParsedArgs, name: string): number | undefined {
  const value = args.flags.get(name);
  if (value === undefined) return undefined;
  const v = decimalNumber(value);
  if (!(v >= 0)) throw new UsageError(`--${name} must be a non-negative number.`);
  return Math.floor(v);
}

/**
 * Refuse unknown flags (with the command's usage) and `--api-key` (keys come from the environment only).
 * @throws {UsageError}
 */
export function checkFlags(args: ParsedArgs, known: ReadonlySet<string>, usage: string): void {
  for (const name of args.flags.keys()) {
    if (name === "api-key")
      throw new UsageError(
        "There is no --api-key flag: put the key in PI_CONTEXT_API_KEY or OPENAI_API_KEY (flags end up in shell history and process lists).",
      );
    if (!known.has(name)) throw new UsageError(`Unknown flag --${name}.\nusage:\n${formatUsage(usage, 2)}`);
  }
  if (args.missingValue !== undefined) throw new UsageError(`${args.missingValue} needs a value.`);
}
