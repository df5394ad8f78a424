/**
 * The contracts between the extension's parts: what `activate()` builds once and hands to every
 * feature module (status bar, commands, tree view, panel, live bridge). Types only, plus a tiny
 * registry; the implementations live in their own files.
 */

import type * as vscode from "vscode";
import type { Analysis } from "./core/rules/analyze";
import type { SessionSummary } from "./core/read/locate";
import type { SessionFile } from "./core/read/session";
import type { PiContextConfig } from "./config";
import type { LiveBridgeService } from "./liveBridge/service";

/** The session pi-context currently shows, refreshed in place as pi appends. */
export interface CurrentSession {
  /** Absolute path of the session file. */
  file: string;
  /** The live index of the file (refreshed incrementally; do not mutate). */
  session: SessionFile;
  /** pi's view at the file's leaf, recomputed after every change. */
  analysis: Analysis;
  /** True when the user pinned this session ("Pi: Select Session…"); false when following the latest. */
  pinned: boolean;
  /** The workspace folder whose sessions this one belongs to (by header `cwd`), if any. */
  workspaceFolder: vscode.WorkspaceFolder | undefined;
  /** The pi agent dir used for settings, models and (by default) sessions. */
  agentDir: string;
  /** When the file was last read (ms since epoch). */
  updatedAt: number;
}

/** Finds, follows and re-reads pi sessions (implemented by `sessions.ts`). */
export interface SessionSource extends vscode.Disposable {
  /** The session shown now, or undefined when the workspace has none. */
  readonly current: CurrentSession | undefined;
  /** Fires after every change of `current` (new session, appended entries, re-read, unpinned…). */
  readonly onDidChange: vscode.Event<CurrentSession | undefined>;
  /** Re-read the current session now (and look for newer sessions when following). */
  refresh(): Promise<void>;
  /** Show this session file and stop following the latest one. */
  pin(file: string): Promise<void>;
  /** Follow the most recently written session of the workspace again. */
  followLatest(): Promise<void>;
  /** Sessions of the workspace folders, newest first (header + tail reads only). */
  listSessions(): Promise<SessionSummary[]>;
  /** The agent dir in use (setting `piContext.agentDir`, else `PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
  agentDir(): string;
  /** What discovery found so far (to explain "no session" states). */
  readonly discovery?: SessionDiscoveryInfo;
}

/** The state of session discovery, for "no session" explanations. */
export interface SessionDiscoveryInfo {
  /** `starting` until the first scan finished. */
  phase: "starting" | "ready";
  /** False when no (local) workspace folder is open. */
  workspace: boolean;
  /** Folders that were looked in. */
  searchedDirs: string[];
  /** Sessions found for the workspace folders. */
  sessionCount: number;
  agentDir?: string;
}

/** What every feature module receives. */
export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  sessions: SessionSource;
  /** The current typed settings (read on each call; cheap). */
  config(): PiContextConfig;
  /** Running pi processes with the live bridge (`liveBridge.ts`); set by `registerLiveBridge`. */
  liveBridge?: LiveBridgeService;
}

/** A feature module's entry point: register commands/views, push disposables to `context.subscriptions`. */
export type FeatureRegistration = (services: Services) => void;
