/**
 * Which session to follow in a workspace folder, without `vscode` (unit-tested): the newest one,
 * but never flapping between sessions written at the same time. Two pi terminals in one repository
 * both write every few seconds; following "the newest" would jump on every write. The rules:
 * - a session is *live* when it was written within {@link LIVE_WINDOW_MS} or a running pi has it open;
 * - the followed session stays while it is live, unless a *new* session appears (first seen after
 *   the followed one was chosen: pi's `/new`, a new pi) — then the new one is followed;
 * - a followed session that is no longer live gives way to the newest.
 * The gauge's "N live" count is the access model's (`core/access/`), not this window.
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

/**
 * The session to follow in a folder given the previous choice (see the file comment); undefined
 * when the folder has no session.
 */
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
