/**
 * "Resume in pi": `pi --session <file>` in the session's folder, quoted for the shell that reads it.
 * Quoting refuses what is never safe to type: control characters (a newline runs what follows), and
 * `"` or `%` in `cmd.exe` (expanded even inside quotes).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import type { PiInstall } from "./locate";

export type ShellKind = "posix" | "fish" | "powershell" | "cmd";

/** Shell family by file name (`pwsh`, `powershell`, `cmd`, `fish`, else POSIX); none: PowerShell on Windows. */
export function shellKindOf(shell: string | undefined, platform: NodeJS.Platform = process.platform): ShellKind {
  if (!shell) return platform === "win32" ? "powershell" : "posix";
  const name = (shell.split(/[\\/]/).pop() ?? "").toLowerCase().replace(/\.exe$/, "");
  if (name === "pwsh" || name === "powershell" || name.startsWith("pwsh-")) return "powershell";
  if (name === "cmd") return "cmd";
  if (name === "fish") return "fish";
  return "posix";
}

export class UnquotableArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnquotableArgumentError";
  }
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** No `=` or `~` first: zsh and others expand them there. */
const PLAIN_POSIX = /^[A-Za-z0-9_/.,:+@-][A-Za-z0-9_/.,:+@=~-]*$/;

/** `arg` as one argument of `kind`. @throws {UnquotableArgumentError} for control characters, `"`/`%` in cmd. */
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

/** The quoted command line (PowerShell runs a quoted program with `&`). @throws {UnquotableArgumentError} */
export function commandLine(argv: readonly string[], kind: ShellKind): string {
  const quoted = argv.map((a) => quoteArgument(a, kind));
  if (kind === "powershell") return `& ${quoted.join(" ")}`;
  return quoted.join(" ");
}

/** The user's `pi` executable when it is a file, else Node with pi's CLI script; undefined when neither is known. */
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

/** The header's cwd when it is a folder (pi's interactive mode asks about a missing one), else undefined. */
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
