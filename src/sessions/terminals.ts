/**
 * The pi in the focused terminal: its shell's pid → the pi below it (`core/proc/`) → its session:
 * the bridge announcement (exact), else the process table's attribution (`core/proc/attribute.ts`).
 */

import * as vscode from "vscode";
import { attributeSession, type AttributableSession, type Attribution } from "../core/proc/attribute";
import { piProcessesUnder, processSnapshot, type PiProcess } from "../core/proc/table";

/** How often the active terminal's pi is looked up again (ms). */
export const TERMINAL_POLL_MS = 2000;

/** The active terminal's pi and its session. */
export interface TerminalTarget {
  /** The terminal's name (for the log and the tooltip). */
  terminal: string;
  pi: PiProcess;
  /** The session file, when known. */
  file?: string;
  how?: Attribution | "bridge";
}

/** Options of {@link TerminalFollower}. */
export interface TerminalFollowerOptions {
  /** The known sessions (the scanner's), for attribution. */
  sessions: () => readonly AttributableSession[];
  /** pid → session file of pis that announced one (the live bridge). */
  announced: () => readonly { pid: number; sessionFile: string }[];
  /** Called when the target changes (another terminal, another pi, another session). */
  onDidChange: (target: TerminalTarget | undefined) => void;
  log: vscode.LogOutputChannel;
}

/** Watches the active terminal and resolves the pi session running in it. */
export class TerminalFollower implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private current: TerminalTarget | undefined;
  private resolving = false;
  private again = false;

  constructor(private readonly options: TerminalFollowerOptions) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTerminal(() => void this.resolve()),
      vscode.window.onDidCloseTerminal(() => void this.resolve()),
    );
    this.timer = setInterval(() => {
      if (vscode.window.activeTerminal) void this.resolve();
    }, TERMINAL_POLL_MS);
    void this.resolve();
  }

  /** Look again now. Never throws. */
  async resolve(): Promise<void> {
    if (this.resolving) {
      this.again = true;
      return;
    }
    this.resolving = true;
    try {
      do {
        this.again = false;
        let failed = false;
        const next = await this.lookUp().catch((error: unknown) => {
          this.options.log.warn(`terminal follow: ${(error as Error).message}`);
          failed = true;
          return undefined;
        });
        // a failed look (the process table read mid-change) keeps what was followed: no flap to another session
        if (failed) continue;
        const same =
          next?.file === this.current?.file &&
          next?.pi.pid === this.current?.pi.pid &&
          next?.terminal === this.current?.terminal;
        this.current = next;
        if (!same) this.options.onDidChange(next);
      } while (this.again);
    } finally {
      this.resolving = false;
    }
  }

  private async lookUp(): Promise<TerminalTarget | undefined> {
    const terminal = vscode.window.activeTerminal;
    if (!terminal) return undefined;
    const shellPid = await terminal.processId;
    if (shellPid === undefined) return undefined;
    const snapshot = await processSnapshot();
    const pi = piProcessesUnder(snapshot, shellPid)[0];
    if (!pi) return undefined;
    const target: TerminalTarget = { terminal: terminal.name, pi };
    const announced = this.options.announced();
    const exact = announced.find((a) => a.pid === pi.pid);
    if (exact) return { ...target, file: exact.sessionFile, how: "bridge" };
    const claimed = new Set(announced.map((a) => a.sessionFile));
    const found = attributeSession(
      pi,
      snapshot.pi.filter((p) => p.pid !== pi.pid),
      this.options.sessions(),
      claimed,
      snapshot.at,
    );
    return found ? { ...target, file: found.file, how: found.how } : target;
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
