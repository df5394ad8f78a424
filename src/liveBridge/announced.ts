/**
 * Which session each running pi with the live bridge has open, from its announcement file
 * (`<agentDir>/pi-context/live/`): the access model's certain evidence (`core/access/`). Only
 * trusted announcements (`bridge/announce.ts` `readAnnouncements`) of pis that are still running
 * count; a stale one (pi killed) is no evidence. No `vscode`: the extension and the CLI both use it.
 */

import { isProcessAlive, readAnnouncements } from "../bridge/announce";
import type { Announcement } from "../bridge/protocol";
import type { AnnouncedPi } from "../core/access/access";

/** The live announcements of `agentDir`, newest pi first. */
export function liveAnnouncements(agentDir: string): Announcement[] {
  return readAnnouncements(agentDir)
    .flatMap((r) => ("announcement" in r && isProcessAlive(r.announcement.pid) ? [r.announcement] : []))
    .sort((a, b) => b.startedAt - a.startedAt);
}

/** {@link liveAnnouncements} as the access model's input. */
export function announcedPis(announcements: readonly Announcement[]): AnnouncedPi[] {
  return announcements.map((a) => ({ pid: a.pid, sessionFile: a.sessionFile, piVersion: a.piVersion }));
}
