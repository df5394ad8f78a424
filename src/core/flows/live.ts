/**
 * Live-session guard: is pi likely to have this session open right now?
 *
 * pi 1.6.0 keeps a running session in memory and never re-reads its file (`SessionManager` only
 * appends). A line we append while pi runs on the session is ignored by that pi, and pi's next entry
 * hangs off pi's own leaf, so our entry ends up on a dead branch. Before writing we therefore refuse
 * when the session looks live:
 * - the file was modified less than `guardSeconds` ago (pi writes after every message);
 * - a running `pi` process (the process table, `core/proc/`: Linux `/proc`, macOS `ps` + `lsof`,
 *   Windows PowerShell CIM) whose `--session` names this file or id, or whose working directory is
 *   the session's `cwd`; on Windows, where another process's folder cannot be read, any pi that
 *   does not name another session with `--session` counts (its folder is unknown).
 * Neither check is proof: pi can run in another cwd via `--session` — on Linux its process title
 * `pi` replaces its arguments in `/proc/<pid>/cmdline`, so such a pi is not matched at all (seen
 * with pi 1.6.0 in trial 9) — or under a different path spelling; they catch the common case, and
 * the refusal names the process found.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { guardProcessesFromEnv } from "../proc/guardTable";
import { describeProcess, isPiCommandLine, isSessionPathArg, processSnapshot, sessionArgPath } from "../proc/table";
import type { PiProcess, ProcessSnapshot } from "../proc/table";
import * as l10n from "@vscode/l10n";

export { isPiCommandLine };

/** One reason the session looks live. */
export type LiveReason =
  | { kind: "recent-write"; ageSeconds: number; guardSeconds: number }
  | {
      kind: "pi-process";
      pid: number;
      command: string;
      /** The arguments, as far as the platform tells them. */
      argv?: string[];
      cwd: string;
      /** `session-file`: its `--session` names this session; `cwd`: it runs in the session's folder; `unknown-cwd`: Windows, folder unknown. */
      match: "cwd" | "session-file" | "unknown-cwd";
    };

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
  /** The session header's `id` (pi's `--session <id prefix>`). */
  sessionId?: string;
  /** Current time in ms (tests). */
  now?: number;
  /**
   * `null`: do not look at processes. A string: Linux proc root to read (tests). Default: the pi
   * processes listed in `PI_CONTEXT_GUARD_PROCESSES` when set (test runners, `proc/guardTable.ts`),
   * else this platform's process table.
   */
  procRoot?: string | null;
  /** The process table to use (tests: recorded macOS / Windows output); default {@link processSnapshot}. */
  processes?: () => Promise<ProcessSnapshot>;
  /** Process ids to ignore (default: this process). */
  ignorePids?: readonly number[];
}

function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * How a pi process relates to a session: it names it (`--session` path or id prefix), runs in its
 * folder, or (Windows) its folder is unknown and it names no other session; undefined = unrelated.
 * @param session `file` (absolute), header `cwd` and `id`.
 */
export function piMatchesSession(
  p: PiProcess,
  session: { file: string; cwd?: string | undefined; id?: string | undefined },
): "session-file" | "cwd" | "unknown-cwd" | undefined {
  const arg = p.sessionArg;
  if (arg !== undefined) {
    if (isSessionPathArg(arg)) {
      const abs = sessionArgPath(arg, p.cwd);
      if (abs !== undefined)
        return abs === session.file || realpathOr(abs) === realpathOr(session.file) ? "session-file" : undefined;
      // a relative path and no known folder (Windows): the file name decides
      return arg.split(/[/\\]/).pop() === path.basename(session.file) ? "session-file" : undefined;
    }
    if (session.id) return session.id.startsWith(arg) ? "session-file" : undefined;
    // an id prefix and no id to compare it with: the folder decides
  }
  if (p.cwd === undefined) return "unknown-cwd";
  if (session.cwd && realpathOr(p.cwd) === realpathOr(session.cwd)) return "cwd";
  return undefined;
}

/**
 * Does the session look live? See the file comment for the rules. Reads the file's mtime and the
 * process table (asynchronously; a table that cannot be read adds no reason). Which table:
 * `options.processes`, else `options.procRoot`, else `PI_CONTEXT_GUARD_PROCESSES`, else the machine's.
 * @throws Error when `PI_CONTEXT_GUARD_PROCESSES` is set to something unreadable (tests only).
 * @param file the session file (a missing file is not live).
 */
export async function checkLiveSession(file: string, options: LiveCheckOptions): Promise<LiveCheck> {
  const reasons: LiveReason[] = [];
  const now = options.now ?? Date.now();
  if (options.guardSeconds > 0) {
    try {
      const ageSeconds = Math.max(0, (now - (await fs.promises.stat(file)).mtimeMs) / 1000);
      if (ageSeconds < options.guardSeconds)
        reasons.push({ kind: "recent-write", ageSeconds, guardSeconds: options.guardSeconds });
    } catch {
      // a missing file is reported by the write path
    }
  }
  let processChecked = false;
  if (options.procRoot !== null) {
    const ignorePids = options.ignorePids ?? [process.pid];
    const injected = options.processes ? await options.processes() : undefined;
    const fromEnv = injected || options.procRoot !== undefined ? undefined : await guardProcessesFromEnv();
    const snapshot =
      injected ??
      fromEnv ??
      (options.procRoot !== undefined
        ? await processSnapshot({ maxAgeMs: 0, ignorePids, procRoot: options.procRoot, platform: "linux" })
        : await processSnapshot({ maxAgeMs: 0, ignorePids }));
    // a table given to us counts as looked at; a read one only when it lists processes (an empty
    // one means we could not see them: no /proc, a failing ps)
    processChecked = injected !== undefined || fromEnv !== undefined || snapshot.processes.length > 0;
    const session = { file: path.resolve(file), cwd: options.sessionCwd, id: options.sessionId };
    for (const p of snapshot.pi) {
      if (ignorePids.includes(p.pid)) continue;
      const match = piMatchesSession(p, session);
      if (match)
        reasons.push({ kind: "pi-process", pid: p.pid, command: p.command, argv: p.argv, cwd: p.cwd ?? "", match });
    }
  }
  return { live: reasons.length > 0, reasons, processChecked };
}

/** What a writing flow's options give the live-session guard. */
export type SessionLiveOptions = Pick<LiveCheckOptions, "guardSeconds" | "procRoot" | "processes">;

/**
 * The live-session guard of every writing flow (compaction, switch, label, name, context edit,
 * repair), on a session it has read: {@link checkLiveSession} for its file with the header's `cwd`
 * and `id` (so a pi started with `--session <id prefix>` counts wherever it runs).
 * @param session what the flow read (`SessionFile`): `filePath`, header `cwd` and `sessionId`.
 */
export function checkSessionLive(
  session: { filePath: string; cwd?: string | undefined; sessionId?: string | undefined },
  options: SessionLiveOptions,
): Promise<LiveCheck> {
  return checkLiveSession(session.filePath, {
    guardSeconds: options.guardSeconds,
    ...(session.cwd ? { sessionCwd: session.cwd } : {}),
    ...(session.sessionId ? { sessionId: session.sessionId } : {}),
    ...(options.procRoot !== undefined ? { procRoot: options.procRoot } : {}),
    ...(options.processes ? { processes: options.processes } : {}),
  });
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
  inPi: string | null = what === "compact" ? l10n.t("run /compact") : l10n.t("use /tree"),
): string {
  const parts: string[] = [];
  const guard =
    surface === "cli"
      ? "--guard-seconds N sets it, 0 turns it off"
      : l10n.t("setting piContext.liveSession.guardSeconds");
  for (const r of check.reasons) {
    if (r.kind === "recent-write")
      parts.push(
        l10n.t(
          "the session file was written {0} s ago (less than the {1} s guard; {2})",
          r.ageSeconds.toFixed(0),
          r.guardSeconds,
          guard,
        ),
      );
    else
      parts.push(
        l10n.t(
          "pi is running on it ({0}, {1})",
          describeProcess(r),
          r.match === "cwd"
            ? l10n.t("in the session's folder {0}", r.cwd)
            : r.match === "session-file"
              ? l10n.t("started with this session")
              : l10n.t("its folder cannot be read on this system"),
        ),
      );
  }
  const bridge =
    surface === "cli"
      ? ""
      : l10n.t(' — or install the live bridge ("Pi Context: Install Live Bridge") so this runs inside pi');
  const anyway = isOverridable(check)
    ? surface === "cli"
      ? l10n.t(" No pi process was found on it: if nothing else writes to it, --guard-seconds 0 goes ahead.")
      : l10n.t(' No pi process was found on it: if nothing else writes to it, "Anyway" goes ahead.')
    : "";
  return l10n.t(
    "Refusing to {0} this session while pi may have it open: {1}. A running pi keeps the session in memory and never re-reads the file, so it would ignore the new entry and its next message would branch off it. Quit pi{2}, wait until the session is idle, then try again{3}.{4} Nothing was written.",
    what,
    parts.join("; "),
    inPi ? l10n.t(" (or {0} inside pi)", inPi) : "",
    bridge,
    anyway,
  );
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
      ? l10n.t(
          "- The session file was written {0} s ago — less than the {1} s guard (setting {2}).",
          r.ageSeconds.toFixed(0),
          r.guardSeconds,
          code("piContext.liveSession.guardSeconds"),
        )
      : l10n.t(
          "- pi process {0} is running {1}: {2}",
          r.pid,
          r.match === "cwd" ? l10n.t("in the session's folder {0}", code(r.cwd)) : l10n.t("with this session file"),
          code(r.command),
        ),
  );
  const ways = [
    l10n.t("- Quit pi, or run the command inside pi (`/compact`, `/tree`), then try again."),
    bridgeInstalled === false
      ? l10n.t(
          '- Install the live bridge ("Pi Context: Install Live Bridge"): a running pi then does it itself, with its own model (pi loads it at its next start or after `/reload`).',
        )
      : l10n.t(
          "- With the live bridge, a running pi does it itself: start pi again (or `/reload` in it) so it loads the bridge.",
        ),
    ...(error.overridable
      ? [
          l10n.t(
            '- No pi process was found on this session, so only the recent write stopped it. If nothing else is writing to the file, "Anyway" goes ahead (the time check is skipped once; a pi process is still looked for right before writing).',
          ),
        ]
      : []),
  ];
  return [
    "# Refused: pi may have this session open",
    "",
    l10n.t("Session file: {0}", code(file)),
    "",
    "## Why",
    "",
    ...reasons,
    "",
    l10n.t(
      "A running pi keeps its session in memory and never re-reads the file: an entry written now would be ignored by it, and its next message would branch off it. Nothing was written.",
    ),
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
export async function assertNotLive(file: string, options: LiveCheckOptions, what?: string): Promise<void> {
  const check = await checkLiveSession(file, options);
  if (check.live) throw liveSessionError(check, what);
}
