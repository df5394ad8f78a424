/**
 * Which session file a running pi has open, from the process table alone: pi keeps no file open
 * (`appendFileSync`) and hides its arguments on Linux and macOS (`process.title = "pi"`). Rules:
 * `--session` argument; else the newest session of its cwd it started (last pi started before the
 * header time); else the newest one of its cwd written since it started (`pi -c`, `/resume`). A
 * session pi-context created (fork, clone) that nobody wrote since (`ours`) is no pi's.
 */

import * as path from "node:path";
import { isSessionPathArg, sessionArgPath, type PiProcess } from "./table";

export interface AttributableSession {
  file: string;
  cwd?: string | undefined;
  id?: string | undefined;
  created?: number | undefined;
  mtimeMs: number;
  /** Created by pi-context and not written since (`access/ownWrites.ts` `ownWriteChecker`). */
  ours?: boolean | undefined;
}

const START_SLACK_MS = 50;

export type Attribution = "session-argument" | "started-here" | "written-since-start";

/**
 * The session `pi` has open, or undefined; `others` own what they started, `claimed` files are never
 * chosen; `tableAt` (ms) is when the process table was read.
 */
export function attributeSession(
  pi: PiProcess,
  others: readonly PiProcess[],
  sessions: readonly AttributableSession[],
  claimed: ReadonlySet<string> = new Set(),
  tableAt?: number,
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
  // a session begun after the table was read may be a pi's the table has not seen yet: not judged from it
  const here = sessions.filter(
    (s) =>
      s.cwd &&
      path.resolve(s.cwd) === cwd &&
      !claimed.has(s.file) &&
      !s.ours &&
      !(tableAt !== undefined && s.created !== undefined && s.created > tableAt),
  );
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
