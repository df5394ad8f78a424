/**
 * `pi-context`: the same core as the extension, without VS Code. One file per command
 * (`inspect.ts`, `compact.ts`, `tree.ts`, `switch.ts`, `sessions.ts`, `fork.ts`, `trim.ts`, `summarize.ts`, `doctor.ts`); shared parsing in `args.ts`.
 *
 * Exit codes: 0 done, 1 refused or failed (nothing written; also: not a pi session), 2 usage.
 * Messages are full sentences; numbers use thousands separators (en-US).
 */

import { format } from "node:util";
import { terminalText } from "../shared/untrusted";
import { type CliCommand, errorText, formatUsage, UsageError } from "./args";
import { compactCommand, COMPACT_USAGE } from "./compact";
import { doctorCommand, DOCTOR_USAGE } from "./doctor";
import { cloneCommand, CLONE_USAGE, forkCommand, FORK_USAGE } from "./fork";
import { inspectCommand, INSPECT_USAGE } from "./inspect";
import { sessionsCommand, SESSIONS_USAGE } from "./sessions";
import { switchCommand, SWITCH_USAGE } from "./switch";
import { treeCommand, TREE_USAGE } from "./tree";
import { restoreCommand, RESTORE_USAGE, trimCommand, TRIM_USAGE } from "./trim";
import { summarizeCommand, SUMMARIZE_USAGE } from "./summarize";

/** All sub-commands by name, with their usage (`pi-context <command> --help`). */
const COMMANDS: [string, CliCommand, string][] = [
  ["inspect", inspectCommand, INSPECT_USAGE],
  ["compact", compactCommand, COMPACT_USAGE],
  ["tree", treeCommand, TREE_USAGE],
  ["switch", switchCommand, SWITCH_USAGE],
  ["sessions", sessionsCommand, SESSIONS_USAGE],
  ["fork", forkCommand, FORK_USAGE],
  ["clone", cloneCommand, CLONE_USAGE],
  ["trim", trimCommand, TRIM_USAGE],
  ["restore", restoreCommand, RESTORE_USAGE],
  ["summarize", summarizeCommand, SUMMARIZE_USAGE],
  ["doctor", doctorCommand, DOCTOR_USAGE],
];

/** All sub-commands by name. */
export const cliCommands = new Map<string, CliCommand>(COMMANDS.map(([name, run]) => [name, run]));

/** Each sub-command's usage text by name. */
export const cliUsages = new Map<string, string>(COMMANDS.map(([name, , usage]) => [name, usage]));

/** One command's help: its usage, with its "API key:" line (the full help lists the environment instead). */
function commandHelp(usage: string): string {
  const keyLines = usage
    .split("\n")
    .filter((l) => /^\s*API key:/.test(l))
    .map((l) => `  ${l.trim()}`);
  return [`usage:\n${formatUsage(usage, 2)}`, ...keyLines].join("\n");
}

/** `--help` / `-h` anywhere before a `--` asks for the command's usage (never a flag value). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

const USAGE = `pi-context — see and steer pi's context window

usage:
${[INSPECT_USAGE, COMPACT_USAGE, TREE_USAGE, SWITCH_USAGE, SESSIONS_USAGE, FORK_USAGE, CLONE_USAGE, TRIM_USAGE, RESTORE_USAGE, SUMMARIZE_USAGE, DOCTOR_USAGE].map((u) => formatUsage(u, 2)).join("\n")}

which pi: the numbers follow the rules and the model catalog of your pi — --pi PATH (pi, a
  launcher, or pi's package dir), else the pi on the PATH, pi's managed install
  ($PI_MANAGED_INSTALL_ROOT, ~/.pi/agent/install), npm's global packages; without one, pi-context's
  snapshot of pi 1.6.0's catalog (inspect names the source).

environment:
  PI_CODING_AGENT_DIR   pi's agent dir (default ~/.pi/agent; --agent-dir overrides it)
  PI_CONTEXT_API_KEY    API key of the summarizer (compact, summarize, switch --summarize), sent to the
                        --base-url you give; there is no flag for it
  OPENAI_API_KEY        used when that is not set, and only for OpenAI's own API
                        (https://api.openai.com), never for another --base-url
  PI_CONTEXT_BASE_URL   default of --base-url (else OpenAI)
  PI_CONTEXT_MODEL      default of --model (else gpt-4o-mini)

exit codes: 0 done, 1 refused or failed (nothing written), 2 usage error.
  doctor: 0 no errors, 1 errors found (after --repair: errors left), 2 usage error.`;

/**
 * Run the CLI. Everything a command prints goes through {@link terminalText} here, at the one
 * output boundary: session text (assistant answers, names, labels, model ids, paths) can carry
 * terminal escapes, and no command has to remember that.
 * @returns the process exit code (0 ok, 1 failure, 2 usage).
 */
export async function main(
  argv: readonly string[],
  rawOut: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  rawErr: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const out = (s: string) => rawOut(terminalText(s));
  const err = (s: string) => rawErr(terminalText(s));
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    // `pi-context help <command>`: that command's usage
    const asked = command === "help" ? rest[0] : undefined;
    const usage = asked !== undefined ? cliUsages.get(asked) : undefined;
    if (asked !== undefined && !usage) {
      err(`Unknown command "${asked}".\n\n${USAGE}`);
      return 2;
    }
    out(usage ? commandHelp(usage) : USAGE);
    return command ? 0 : 2;
  }
  const run = cliCommands.get(command);
  if (!run) {
    err(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }
  if (asksForHelp(rest)) {
    out(commandHelp(cliUsages.get(command)!));
    return 0;
  }
  try {
    return await run(rest, out, err);
  } catch (error) {
    if (error instanceof UsageError) {
      err(error.message);
      return 2;
    }
    err(`pi-context ${command}: ${errorText(error)}`);
    return 1;
  }
}

/**
 * A line writer to `stream` that stops writing once the stream failed: output piped into a reader
 * that stopped reading (`pi-context tree … | head`) is EPIPE on the next write, an `error` event
 * that would otherwise end the process with a stack trace — possibly between two steps of a write
 * to a session. The command runs to its end and keeps its exit code; only its output is dropped.
 * A failure other than EPIPE (a full disk under a redirect) makes the exit code 1.
 */
export function pipeSafeWriter(stream: NodeJS.WritableStream): (s: string) => void {
  let failed = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    failed = true;
    if (error.code !== "EPIPE") process.exitCode = 1;
  });
  return (s) => {
    if (!failed) stream.write(`${s}\n`);
  };
}

/**
 * Route whatever a library prints with `console.*` to `write` as terminal text, like our own
 * output: the `openai` package prints a malformed stream event's raw bytes with `console.error`
 * (terminal control characters from the server). `write` is stderr in the program, so stdout
 * stays the command's (`--json`). Returns a function that puts the console back.
 */
export function guardConsole(write: (s: string) => void): () => void {
  const levels = ["log", "info", "warn", "error", "debug", "trace"] as const;
  const originals = levels.map((level) => console[level]);
  for (const level of levels) console[level] = (...args: unknown[]) => write(terminalText(format(...args)));
  return () => levels.forEach((level, i) => (console[level] = originals[i]!));
}

if (require.main === module) {
  const stderr = pipeSafeWriter(process.stderr);
  guardConsole(stderr);
  main(process.argv.slice(2), pipeSafeWriter(process.stdout), stderr).then(
    (code) => {
      if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${terminalText(String(error))}\n`);
      process.exitCode = 1;
    },
  );
}
