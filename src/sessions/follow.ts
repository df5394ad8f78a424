/**
 * Which session to follow in a folder: the newest, but never flapping between two pis that both
 * write every few seconds. The followed one stays while live (written within {@link LIVE_WINDOW_MS}
 * or open in a running pi) unless a new session appears; one no longer live gives way to the newest.
 */

import type { FoundSession } from "./scan";

/** A session written this recently counts as live (ms). */
export const LIVE_WINDOW_MS = 60_000;

/** What the choice is made from. */
export interface FollowInput {
  /** The sessions of all folders, newest first (the scanner's order). */
  sessions: readonly FoundSession[];
  now: number;
  /** Files a running pi has open (bridge announcements, the process table). */
  running: ReadonlySet<string>;
  /** When each file was first seen by the scanner (ms). */
  firstSeen: ReadonlyMap<string, number>;
}

/** The session followed in one folder, and since when. */
export interface FolderChoice {
  file: string;
  since: number;
}

/** True when the session counts as live (see the file comment). */
export function isLive(input: FollowInput, s: FoundSession): boolean {
  return input.running.has(s.file) || input.now - s.mtimeMs < LIVE_WINDOW_MS;
}

/** Undefined when the folder has no session. */
export function chooseInFolder(
  input: FollowInput,
  folderIndex: number,
  previous: FolderChoice | undefined,
): FolderChoice | undefined {
  const mine = input.sessions.filter((s) => s.folderIndex === folderIndex);
  const newest = mine[0];
  if (!newest) return undefined;
  const kept = previous ? mine.find((s) => s.file === previous.file) : undefined;
  if (!kept || !previous) return { file: newest.file, since: input.now };
  if (newest.file === kept.file) return previous;
  if (!isLive(input, kept)) return { file: newest.file, since: input.now };
  // a session that appeared after the choice (pi /new, another pi started): follow it
  const fresh = mine.find((s) => s.file !== kept.file && (input.firstSeen.get(s.file) ?? 0) > previous.since);
  if (fresh) return { file: fresh.file, since: input.now };
  return previous;
}
