/** The following state of `PiSessionSource`, without `vscode`. */

import * as path from "node:path";
import { liveAmong, ownMarks } from "../core/access/access";
import { ownWriteChecker } from "../core/access/ownWrites";
import type { ProcessSnapshot } from "../core/proc/types";
import { chooseInFolder, type FolderChoice, type FollowInput } from "./follow";
import type { FoundSession } from "./scan";
import type { TerminalTarget } from "./terminals";

/** Why a session is shown (= `FollowReason` of `services.ts`). */
export type FollowReason = "pinned" | "terminal" | "latest";

/** Which session to show, and why. */
export class Following {
  /** The last scan's sessions, newest first. */
  found: FoundSession[] = [];
  /** When the last scan ran (ms). */
  lastScanAt = 0;
  /** What the user looked at last. */
  focus: { kind: "terminal" } | { kind: "editor"; folderIndex: number } | undefined;
  /** The active terminal's pi and its session, as last resolved. */
  terminal: TerminalTarget | undefined;
  /** pid → session file of the pis whose bridge announced one. */
  announced: () => readonly { pid: number; sessionFile: string }[] = () => [];
  private readonly choices = new Map<number, FolderChoice>();
  private readonly firstSeen = new Map<string, number>();

  /** The pid of the pi in the followed terminal when it has `file` open (its version is what counts). */
  terminalPid(file: string): number | undefined {
    const t = this.terminal;
    return t?.file && path.resolve(t.file) === path.resolve(file) ? t.pi.pid : undefined;
  }

  /** Record a scan's result. */
  onScan(sessions: FoundSession[], at = Date.now()): void {
    this.lastScanAt = at;
    this.found = sessions;
    for (const f of sessions) if (!this.firstSeen.has(f.file)) this.firstSeen.set(f.file, at);
  }

  /** What `follow.ts` decides from. */
  input(now = Date.now()): FollowInput {
    const running = new Set<string>(this.announced().map((a) => path.resolve(a.sessionFile)));
    if (this.terminal?.file) running.add(path.resolve(this.terminal.file));
    return { sessions: this.found, now, running, firstSeen: this.firstSeen };
  }

  /** The pinned one; else the pi in the focused terminal; else the followed session of the active folder. */
  choose(
    pinned: string | undefined,
    hasWorkspace: boolean,
    currentFile: string | undefined,
  ): { target: string | undefined; reason: FollowReason } {
    if (pinned) return { target: pinned, reason: "pinned" };
    if (!hasWorkspace) return { target: undefined, reason: "latest" };
    if (this.focus?.kind === "terminal" && this.terminal?.file) {
      const file = path.resolve(this.terminal.file);
      const found = this.found.find((f) => f.file === file);
      if (found) this.choices.set(found.folderIndex, { file, since: Date.now() });
      return { target: file, reason: "terminal" };
    }
    const folderIndex =
      (this.focus?.kind === "editor" ? this.focus.folderIndex : undefined) ??
      this.found.find((f) => f.file === currentFile)?.folderIndex ??
      this.found[0]?.folderIndex;
    if (folderIndex === undefined) return { target: undefined, reason: "latest" };
    const choice = chooseInFolder(this.input(), folderIndex, this.choices.get(folderIndex));
    if (choice) this.choices.set(folderIndex, choice);
    else this.choices.delete(folderIndex);
    return { target: choice?.file, reason: "latest" };
  }

  /** By the access model (`core/access/`): the gauge's "N live". */
  liveOthers(file: string, snapshot: ProcessSnapshot | undefined, now = Date.now()): FoundSession[] {
    const mine = this.found.find((f) => f.file === file);
    if (!mine) return [];
    const folder = this.found.filter((f) => f.folderIndex === mine.folderIndex);
    if (folder.length < 2) return [];
    const announced = this.announced().map((a) => ({ pid: a.pid, sessionFile: a.sessionFile }));
    const own = ownWriteChecker();
    const sessions = folder.map((f) => ({ ...f, ...ownMarks(own(f.file, f)) }));
    const live = liveAmong(sessions, { announced, snapshot, ignorePids: [process.pid] }, now);
    return folder.filter((f) => f.file !== file && live.has(f.file));
  }

  /** Follow `file` in its folder from now on; false when it is not a known session of a folder. */
  show(file: string): boolean {
    const found = this.found.find((f) => f.file === file);
    if (!found) return false;
    this.choices.set(found.folderIndex, { file, since: Date.now() });
    if (found.folderIndex >= 0) this.focus = { kind: "editor", folderIndex: found.folderIndex };
    return true;
  }

  /** Follow the newest session of every folder again (and stop following the terminal). */
  followLatest(): void {
    if (this.focus?.kind === "terminal") this.focus = undefined;
    for (const [index, choice] of this.choices) {
      const newest = this.found.find((f) => f.folderIndex === index);
      if (newest && newest.file !== choice.file) this.choices.set(index, { file: newest.file, since: Date.now() });
    }
  }
}

/** How the log says why a session is shown. */
export function describeReason(reason: FollowReason): string {
  return reason === "pinned" ? "showing pinned" : reason === "terminal" ? "following the terminal's" : "following";
}

/** True when `cwd` is `folder` or inside it. */
export function sameOrInside(cwd: string, folder: string): boolean {
  const a = path.resolve(cwd);
  const b = path.resolve(folder);
  return a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep);
}
