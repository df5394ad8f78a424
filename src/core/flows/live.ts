/**
 * Live-session guard: is pi likely to have this session open right now?
 *
 * pi 1.6.0 keeps a running session in memory and never re-reads its file (`SessionManager` only
 * appends). A line we append while pi runs on the session is ignored by that pi, and pi's next entry
 * hangs off pi's own leaf, so our entry ends up on a dead branch. Before writing we therefore refuse
 * when the session looks live:
 * - the file was modified less than `guardSeconds` ago (pi writes after every message);
 * - on Linux (cheap: `/proc`), a running `pi` process whose working directory is the session's `cwd`
 *   or whose command line names the session file.
 * Neither check is proof (pi can sit idle with the session open, in another cwd via `--session`
 * under a different path spelling); they catch the common case.
 */

import * as fs from "node:fs";
import * as path from "node:path";

/** One reason the session looks live. */
export type LiveReason =
  | { kind: "recent-write"; ageSeconds: number; guardSeconds: number }
  | { kind: "pi-process"; pid: number; command: string; cwd: string; match: "cwd" | "session-file" };

/** Result of {@link checkLiveSession}. */
export interface LiveCheck {
  live: boolean;
  reasons: LiveReason[];
  /** True when running processes were looked at (Linux `/proc`); false where we cannot see them. */
  processChecked?: boolean;
}

/** Options of {@link checkLiveSession}. */
export interface LiveCheckOptions {
  /** Seconds since the last write below which the session counts as live (0 = no time check). */
  guardSeconds: number;
  /** The session header's `cwd` (pi runs there). */
  sessionCwd?: string;
  /** Current time in ms (tests). */
  now?: number;
  /** Root of the proc file system (tests); default `/proc` on Linux, none elsewhere. */
  procRoot?: string | null;
  /** Process ids to ignore (default: this process). */
  ignorePids?: readonly number[];
}

/** True when a command line (argv) looks like the pi coding agent. */
export function isPiCommandLine(argv: readonly string[]): boolean {
  const candidates = argv.slice(0, 3);
  return candidates.some((arg, i) => {
    const base = path.basename(arg);
    if (i === 0 && /^node(\d+)?(\.exe)?$/.test(base)) return false;
    return (
      base === "pi" ||
      base === "pi.exe" ||
      /[/\\]pi-coding-agent[/\\]/.test(arg) ||
      /[/\\]@earendil-works[/\\]pi[/\\]/.test(arg)
    );
  });
}

function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Running pi processes (Linux `/proc`): pid, argv, cwd. Processes we cannot inspect (other users)
 * are skipped. Returns `[]` when there is no proc file system.
 */
export function listPiProcesses(
  procRoot: string,
  ignorePids: readonly number[] = [process.pid],
): { pid: number; argv: string[]; cwd: string }[] {
  let names: string[];
  try {
    names = fs.readdirSync(procRoot);
  } catch {
    return [];
  }
  const out: { pid: number; argv: string[]; cwd: string }[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (ignorePids.includes(pid)) continue;
    try {
      const argv = fs
        .readFileSync(path.join(procRoot, name, "cmdline"), "utf8")
        .split("\0")
        .filter((a) => a !== "");
      if (!isPiCommandLine(argv)) continue;
      const cwd = fs.readlinkSync(path.join(procRoot, name, "cwd"));
      out.push({ pid, argv, cwd });
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/**
 * Does the session look live? See the file comment for the rules.
 * @param file the session file (its mtime is read; a missing file is not live).
 */
export function checkLiveSession(file: string, options: LiveCheckOptions): LiveCheck {
  const reasons: LiveReason[] = [];
  const now = options.now ?? Date.now();
  if (options.guardSeconds > 0) {
    try {
      const ageSeconds = Math.max(0, (now - fs.statSync(file).mtimeMs) / 1000);
      if (ageSeconds < options.guardSeconds)
        reasons.push({ kind: "recent-write", ageSeconds, guardSeconds: options.guardSeconds });
    } catch {
      // a missing file is reported by the write path
    }
  }
  const procRoot = options.procRoot === undefined ? (process.platform === "linux" ? "/proc" : null) : options.procRoot;
  let processChecked = false;
  if (procRoot && fs.existsSync(procRoot)) {
    processChecked = true;
    const cwd = options.sessionCwd ? realpathOr(options.sessionCwd) : undefined;
    const sessionFile = realpathOr(file);
    for (const p of listPiProcesses(procRoot, options.ignorePids ?? [process.pid])) {
      const command = p.argv.join(" ");
      if (p.argv.some((a) => a === file || a === sessionFile || realpathOr(path.resolve(p.cwd, a)) === sessionFile)) {
        reasons.push({ kind: "pi-process", pid: p.pid, command, cwd: p.cwd, match: "session-file" });
      } else if (cwd && realpathOr(p.cwd) === cwd) {
        reasons.push({ kind: "pi-process", pid: p.pid, command, cwd: p.cwd, match: "cwd" });
      }
    }
  }
  return { live: reasons.length > 0, reasons, processChecked };
}

/**
 * May the user override this refusal ("Compact Anyway")? Only when the one reason is the write-age
 * guard — the file was written recently — and the process check ran and found no `pi` on the
 * session (its folder or its file). Never when a pi process was found, and never where processes
 * cannot be seen (no `/proc`: a pi could be running unseen). Overriding skips only the time check
 * of one run; the process check still runs, again right before the write.
 */
export function isOverridable(check: Pick<LiveCheck, "reasons" | "processChecked">): boolean {
  return (
    check.processChecked === true && check.reasons.length > 0 && check.reasons.every((r) => r.kind === "recent-write")
  );
}

/** Thrown when we refuse to write because the session looks live. */
export class LiveSessionError extends Error {
  readonly reasons: LiveReason[];
  /** See {@link isOverridable}. */
  readonly overridable: boolean;
  constructor(message: string, reasons: LiveReason[], processChecked = false) {
    super(message);
    this.name = "LiveSessionError";
    this.reasons = reasons;
    this.overridable = isOverridable({ reasons, processChecked });
  }
}

/** {@link LiveSessionError} for a live check, in {@link describeLive}'s words. */
export function liveSessionError(
  check: LiveCheck,
  what = "compact",
  surface: MessageSurface = "vscode",
  inPi?: string | null,
): LiveSessionError {
  return new LiveSessionError(describeLive(check, what, surface, inPi), check.reasons, check.processChecked === true);
}

/** Where a message is shown: VS Code (settings, commands) or the `pi-context` CLI (flags). */
export type MessageSurface = "vscode" | "cli";

/**
 * The user-facing explanation of a live check, with what to do.
 * @param what the refused action as a verb phrase ("compact", "switch branches in", …).
 * @param surface names the guard as VS Code's setting `piContext.liveSession.guardSeconds` and
 *   offers the live bridge (`vscode`, default), or as the CLI's `--guard-seconds` (`cli`).
 * @param inPi what to do inside pi instead (`run /compact` for compactions, `use /tree` for
 *   everything else by default); `null` when pi has no command for it.
 */
export function describeLive(
  check: LiveCheck,
  what = "compact",
  surface: MessageSurface = "vscode",
  inPi: string | null = what === "compact" ? "run /compact" : "use /tree",
): string {
  const parts: string[] = [];
  const guard =
    surface === "cli" ? "--guard-seconds N sets it, 0 turns it off" : "setting piContext.liveSession.guardSeconds";
  for (const r of check.reasons) {
    if (r.kind === "recent-write")
      parts.push(
        `the session file was written ${r.ageSeconds.toFixed(0)} s ago (less than the ${r.guardSeconds} s guard; ${guard})`,
      );
    else
      parts.push(
        `pi is running on it (process ${r.pid} \`${r.command.length > 80 ? `${r.command.slice(0, 77)}…` : r.command}\`, ${r.match === "cwd" ? `in the session's folder ${r.cwd}` : "opened with this session file"})`,
      );
  }
  const bridge =
    surface === "cli" ? "" : ` — or install the live bridge ("Pi: Install Live Bridge") so this runs inside pi`;
  const anyway = isOverridable(check)
    ? surface === "cli"
      ? " No pi process was found on it: if nothing else writes to it, --guard-seconds 0 goes ahead."
      : ' No pi process was found on it: if nothing else writes to it, "Anyway" goes ahead.'
    : "";
  return `Refusing to ${what} this session while pi may have it open: ${parts.join("; ")}. A running pi keeps the session in memory and never re-reads the file, so it would ignore the new entry and its next message would branch off it. Quit pi${inPi ? ` (or ${inPi} inside pi)` : ""}, wait until the session is idle, then try again${bridge}.${anyway} Nothing was written.`;
}

/**
 * The whole refusal as a markdown document ("Show Details"): why, each reason on its own line, and
 * every way forward. Text from the system (commands, paths) is in code spans.
 * @param bridgeInstalled whether our live bridge file is installed (false: say how to install it).
 */
export function liveRefusalMarkdown(
  error: Pick<LiveSessionError, "reasons" | "overridable" | "message">,
  file: string,
  bridgeInstalled: boolean | undefined,
): string {
  const code = (t: string) => `\`${t.replace(/`/g, "'")}\``;
  const reasons = error.reasons.map((r) =>
    r.kind === "recent-write"
      ? `- The session file was written ${r.ageSeconds.toFixed(0)} s ago — less than the ${r.guardSeconds} s guard (setting ${code("piContext.liveSession.guardSeconds")}).`
      : `- pi process ${r.pid} is running ${r.match === "cwd" ? `in the session's folder ${code(r.cwd)}` : "with this session file"}: ${code(r.command)}`,
  );
  const ways = [
    "- Quit pi, or run the command inside pi (`/compact`, `/tree`), then try again.",
    bridgeInstalled === false
      ? '- Install the live bridge ("Pi: Install Live Bridge"): a running pi then does it itself, with its own model (pi loads it at its next start or after `/reload`).'
      : "- With the live bridge, a running pi does it itself: start pi again (or `/reload` in it) so it loads the bridge.",
    ...(error.overridable
      ? [
          '- No pi process was found on this session, so only the recent write stopped it. If nothing else is writing to the file, "Anyway" goes ahead (the time check is skipped once; a pi process is still looked for right before writing).',
        ]
      : []),
  ];
  return [
    "# Refused: pi may have this session open",
    "",
    `Session file: ${code(file)}`,
    "",
    "## Why",
    "",
    ...reasons,
    "",
    "A running pi keeps its session in memory and never re-reads the file: an entry written now would be ignored by it, and its next message would branch off it. Nothing was written.",
    "",
    "## What you can do",
    "",
    ...ways,
    "",
  ].join("\n");
}

/**
 * Throw {@link LiveSessionError} when {@link checkLiveSession} finds the session live.
 * @throws {LiveSessionError}
 */
export function assertNotLive(file: string, options: LiveCheckOptions, what?: string): void {
  const check = checkLiveSession(file, options);
  if (check.live) throw liveSessionError(check, what);
}
