/**
 * "Resume in pi": the command that opens a session in the user's pi — `pi --session <file>`, run
 * in the session's working directory (pi resumes a `--session` there) — and that command quoted for
 * the shell that will read it. Nothing is run here; the surfaces type the line into a terminal the
 * user asked for, or print it.
 *
 * Quoting is exact for each family of shells, and refuses what no quoting makes safe to type:
 * control characters (a newline would run what follows it; C1 codes are terminal controls), and in
 * `cmd.exe` a `"` or `%` (expanded even inside quotes).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import type { PiInstall } from "./locate";

/** How a shell reads a command line. */
export type ShellKind = "posix" | "fish" | "powershell" | "cmd";

/**
 * The shell family of a shell program (`vscode.env.shell`, `$SHELL`): by its file name — `pwsh`,
 * `powershell`, `cmd`, `fish`; anything else (sh, bash, dash, zsh, ksh…) is given POSIX quoting.
 * No shell known: PowerShell on Windows (VS Code's default there), POSIX elsewhere.
 */
export function shellKindOf(shell: string | undefined, platform: NodeJS.Platform = process.platform): ShellKind {
  if (!shell) return platform === "win32" ? "powershell" : "posix";
  const name = (shell.split(/[\\/]/).pop() ?? "").toLowerCase().replace(/\.exe$/, "");
  if (name === "pwsh" || name === "powershell" || name.startsWith("pwsh-")) return "powershell";
  if (name === "cmd") return "cmd";
  if (name === "fish") return "fish";
  return "posix";
}

/** An argument that cannot be typed into that shell safely; nothing was run. */
export class UnquotableArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnquotableArgumentError";
  }
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Needs no quotes in any POSIX shell (no `=` or `~` first: zsh and others expand them there). */
const PLAIN_POSIX = /^[A-Za-z0-9_/.,:+@-][A-Za-z0-9_/.,:+@=~-]*$/;

/**
 * `arg` quoted for `kind`, so that the shell passes exactly `arg` as one argument.
 * @throws {UnquotableArgumentError} for control characters, and `"` or `%` for `cmd.exe`.
 */
export function quoteArgument(arg: string, kind: ShellKind): string {
  if (CONTROL.test(arg))
    throw new UnquotableArgumentError(
      `${JSON.stringify(arg)} contains a control character: it cannot be typed into a shell safely.`,
    );
  switch (kind) {
    case "posix":
      if (PLAIN_POSIX.test(arg)) return arg;
      return `'${arg.replace(/'/g, `'\\''`)}'`;
    case "fish":
      if (PLAIN_POSIX.test(arg)) return arg;
      return `'${arg.replace(/[\\']/g, "\\$&")}'`;
    case "powershell":
      // PowerShell also ends a single-quoted string at the typographic quotes: doubled, like `'`
      return `'${arg.replace(/['\u2018\u2019\u201a\u201b]/g, "$&$&")}'`;
    case "cmd":
      if (/["%]/.test(arg))
        throw new UnquotableArgumentError(
          `${JSON.stringify(arg)} contains " or %, which cmd.exe expands or ends even inside quotes.`,
        );
      return `"${arg}"`;
  }
}

/**
 * A command line for `kind`: the program and its arguments quoted (PowerShell runs a quoted
 * program with its call operator `&`).
 * @throws {UnquotableArgumentError} see {@link quoteArgument}.
 */
export function commandLine(argv: readonly string[], kind: ShellKind): string {
  const quoted = argv.map((a) => quoteArgument(a, kind));
  if (kind === "powershell") return `& ${quoted.join(" ")}`;
  return quoted.join(" ");
}

/**
 * The program and arguments that open `sessionFile` in `pi`: its executable (the `pi` the user
 * runs: a launcher or npm's link) when that is a file, else the Node that runs pi with pi's CLI
 * script. Undefined when neither is known (a package dir without a Node for it).
 */
export function resumeArgv(
  pi: Pick<PiInstall, "executable" | "cliPath">,
  sessionFile: string,
  node?: string,
): string[] | undefined {
  const file = path.resolve(sessionFile);
  if (pi.executable && isFile(pi.executable)) return [pi.executable, "--session", file];
  if (node) return [node, pi.cliPath, "--session", file];
  return undefined;
}

/**
 * Where pi resumes a session: the header's working directory when it is a folder (pi runs a
 * `--session` there whatever folder it starts in; a missing one, pi's interactive mode asks about),
 * else undefined.
 */
export function resumeCwd(cwd: string | undefined): string | undefined {
  if (!cwd || !path.isAbsolute(cwd)) return undefined;
  try {
    return fs.statSync(cwd).isDirectory() ? cwd : undefined;
  } catch {
    return undefined;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
