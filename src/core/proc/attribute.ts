/**
 * Which session file a running pi has open, from what the process table tells (no bridge): pi
 * keeps no file open (it appends with `appendFileSync`), and on Linux and macOS its arguments are
 * hidden by `process.title = "pi"`. The rules, in order:
 * 1. `--session <path>` (resolved against its folder) or `--session <id prefix>` (Windows keeps the arguments);
 * 2. among the sessions whose header `cwd` is the process's folder: the sessions this process
 *    started — a session belongs to the pi in that folder that started last before the session's
 *    header time (pi writes the header time when it creates the session, at start or `/new`) —
 *    the most recently written one;
 * 3. else a session of that folder that nobody started but was written since this pi started
 *    (`pi -c`, `/resume`), the most recently written one.
 * A `/new` in the earlier of two pis in one folder is attributed to the later one: the live bridge's
 * announcement (exact) wins whenever there is one.
 */

import * as path from "node:path";
import { isSessionPathArg, sessionArgPath, type PiProcess } from "./table";

/** A session as attribution needs it. */
export interface AttributableSession {
  file: string;
  cwd?: string | undefined;
  id?: string | undefined;
  /** Header time (ms). */
  created?: number | undefined;
  mtimeMs: number;
}

/** Clock slack between a process's recorded start and the session header it writes (ms). */
const START_SLACK_MS = 50;

/** How a session was attributed (for the log and the tooltip). */
export type Attribution = "session-argument" | "started-here" | "written-since-start";

/**
 * The session `pi` has open, by the rules above; undefined when nothing fits.
 * @param others the other pi processes (same snapshot) — they own the sessions they started.
 * @param claimed files other processes are known to have open (bridge announcements): never chosen.
 */
export function attributeSession(
  pi: PiProcess,
  others: readonly PiProcess[],
  sessions: readonly AttributableSession[],
  claimed: ReadonlySet<string> = new Set(),
): { file: string; how: Attribution } | undefined {
  if (pi.sessionArg !== undefined) {
    if (isSessionPathArg(pi.sessionArg)) {
      const file = sessionArgPath(pi.sessionArg, pi.cwd);
      if (file) return { file, how: "session-argument" };
    } else {
      const s = sessions.find((x) => x.id?.startsWith(pi.sessionArg!));
      if (s) return { file: s.file, how: "session-argument" };
    }
  }
  if (pi.cwd === undefined) return undefined;
  const cwd = path.resolve(pi.cwd);
  const here = sessions.filter((s) => s.cwd && path.resolve(s.cwd) === cwd && !claimed.has(s.file));
  const rivals = [pi, ...others.filter((o) => o.pid !== pi.pid && o.cwd && path.resolve(o.cwd) === cwd)];
  const starterOf = (s: AttributableSession): PiProcess | undefined => {
    if (s.created === undefined) return undefined;
    let best: PiProcess | undefined;
    for (const r of rivals)
      if (
        r.startedAt !== undefined &&
        r.startedAt <= s.created + START_SLACK_MS &&
        (!best || r.startedAt > best.startedAt!)
      )
        best = r;
    return best;
  };
  const newest = (list: AttributableSession[]) => list.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
  const started = newest(here.filter((s) => starterOf(s)?.pid === pi.pid));
  if (started) return { file: started.file, how: "started-here" };
  const since = newest(
    here.filter((s) => starterOf(s) === undefined && pi.startedAt !== undefined && s.mtimeMs >= pi.startedAt),
  );
  if (since) return { file: since.file, how: "written-since-start" };
  return undefined;
}
