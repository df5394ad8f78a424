/**
 * `pi-context fork <session.jsonl> <entryId> [--json] [--pi PATH]` and
 * `pi-context clone <session.jsonl> [--json] [--pi PATH]`: pi's `/fork` and `/clone` on a file
 * (`core/flows/fork.ts`) — a new session file next to the source, which is only read. Forking a
 * user message ends the new session before it and prints its text (pi puts it back into the
 * editor); every other entry is kept. Prints the command that resumes the new session in the
 * user's pi, quoted for `$SHELL`.
 *
 * Exit codes: 0 forked, 1 refused or failed (nothing written), 2 usage.
 */

import * as path from "node:path";
import { NothingToForkError, planFork, writeFork, type ForkPlan, type ForkResult } from "../core/flows/fork";
import { commandLine, resumeArgv, resumeCwd, shellKindOf } from "../core/pi/resume";
import type { UserPi } from "../core/pi/userPi";
import { entryWords } from "../viewModel/treeText";
import { lineText } from "../shared/untrusted";
import { checkFlags, parseArgs, type CliCommand, UsageError, userPiFrom } from "./args";

export const FORK_USAGE = `pi-context fork <session.jsonl> <entryId> [--json] [--pi PATH]`;
export const CLONE_USAGE = `pi-context clone <session.jsonl> [--json] [--pi PATH]`;

const KNOWN = new Set(["json", "pi"]);

/**
 * How to resume the new session: the program and arguments, the session's folder (pi runs a
 * `--session` there wherever it starts), the line for `$SHELL`.
 */
export interface ResumeHint {
  argv: string[];
  cwd: string | null;
  command: string;
}

/**
 * The line that resumes `file` in the user's pi, for the shell named by `shell` (`$SHELL`): the
 * pi on the PATH as `pi`, another pi by its path; no pi found: `pi`, as the user would type it.
 */
export function resumeHint(pi: UserPi, file: string, cwd: string | undefined, shell: string | undefined): ResumeHint {
  const install = pi.install;
  let argv = install ? resumeArgv(install, file) : undefined;
  if (!argv || install?.source === "path") argv = ["pi", "--session", path.resolve(file)];
  let command: string;
  try {
    command = commandLine(argv, shellKindOf(shell));
  } catch (error) {
    command = `(${(error as Error).message})`;
  }
  return { argv, cwd: resumeCwd(cwd) ?? null, command };
}

async function run(
  file: string,
  entryId: string | null,
  args: ReturnType<typeof parseArgs>,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  const json = args.flags.get("json") === true;
  let plan: ForkPlan;
  try {
    plan = await planFork(file, entryId);
  } catch (error) {
    if (error instanceof NothingToForkError) {
      if (json)
        out(
          JSON.stringify({ forked: false, reason: error.message, selectedText: error.selectedText ?? null }, null, 2),
        );
      err(`${error.message} Nothing was written.`);
      if (!json && error.selectedText !== undefined) err(`\nthe message:\n${error.selectedText}`);
      return 1;
    }
    throw error;
  }
  const result = await writeFork(plan);
  const hint = resumeHint(await userPiFrom(args), result.file, plan.header.cwd, process.env.SHELL);
  if (json) {
    out(JSON.stringify(forkJson(result, hint), null, 2));
    return 0;
  }
  const words = (id: string) => lineText(entryWords(plan.session.byId.get(id)));
  const where =
    result.position === "before"
      ? `before ${result.entryId} ${words(result.entryId)}`
      : `at ${result.entryId} ${words(result.entryId)}`;
  out(`${entryId === null ? "cloned" : "forked"} ${lineText(path.basename(result.source))} ${where}`);
  out(`new session ${result.file}`);
  out(
    `  ${result.pathCount} entries of the path${result.labelCount ? ` + ${result.labelCount} label${result.labelCount === 1 ? "" : "s"}` : ""}, ${result.bytes} bytes; pi resumes after ${result.pathLeafId} ${words(result.pathLeafId)}`,
  );
  out(`  parentSession ${result.source} (the source was only read)`);
  if (result.selectedText !== undefined)
    out(`\nthe message (pi's /fork puts it back into the editor; send it again to continue):\n${result.selectedText}`);
  out(`\nresume it in pi:\n  ${hint.command}`);
  return 0;
}

/** What `--json` prints for a fork. */
function forkJson(r: ForkResult, resume: ResumeHint) {
  return {
    forked: true,
    file: r.file,
    source: r.source,
    sessionId: r.sessionId,
    entryId: r.entryId,
    position: r.position,
    leafId: r.leafId,
    pathLeafId: r.pathLeafId,
    entries: r.pathCount,
    labels: r.labelCount,
    bytes: r.bytes,
    selectedText: r.selectedText ?? null,
    resume,
  };
}

export const forkCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["json"]));
  checkFlags(args, KNOWN, FORK_USAGE);
  const [file, entryId, ...more] = args.positional;
  if (!file || !entryId || more.length > 0) throw new UsageError(`usage: ${FORK_USAGE}`);
  return run(file, entryId, args, out, err);
};

export const cloneCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["json"]));
  checkFlags(args, KNOWN, CLONE_USAGE);
  const [file, ...more] = args.positional;
  if (!file || more.length > 0) throw new UsageError(`usage: ${CLONE_USAGE}`);
  return run(file, null, args, out, err);
};
