/**
 * The contracts between the extension's parts, built once by `extension.ts`. Types only: a surface
 * that needs another surface's type finds it here (lint forbids adapter → adapter imports).
 */

import type * as vscode from "vscode";
import type { AnnouncedPi, SessionAccess } from "./core/access/access";
import type { Route, SessionAction } from "./core/access/route";
import type { LiveSessionError } from "./core/access/words";
import type { Summarizer } from "./core/flows/summarizer";
import type { SwitchChoice, SwitchPlan } from "./core/flows/switch";
import type { SessionInfo } from "./core/read/sessionInfo";
import type { SessionFile } from "./core/read/session";
import type { Analysis } from "./core/rules/analyze";
import type { ContextEditDraft } from "./core/rules/contextEdit";
import type { PiRuntime } from "./core/pi/node";
import type { UserPi } from "./core/pi/userPi";
import type { PiContextConfig } from "./config";

export interface CurrentSession {
  file: string;
  /** Refreshed incrementally; do not mutate. */
  session: SessionFile;
  analysis: Analysis;
  pinned: boolean;
  followedBy: FollowReason;
  /** pi's rule (`core/rules/sessionLabel.ts`): every surface shows this one. */
  label: string;
  /** Written within a minute, or open in a running pi; newest first. */
  liveSessions: { file: string; label: string }[];
  workspaceFolder: vscode.WorkspaceFolder | undefined;
  agentDir: string;
  updatedAt: number;
}

export type FollowReason = "pinned" | "terminal" | "latest";

export interface SessionListOptions {
  /** `complete: false` rows are still being read. */
  onProgress?: (sessions: SessionInfo[], done: boolean) => void;
  signal?: AbortSignal;
}

/** Finds, follows and re-reads pi sessions (`sessions/source.ts`). */
export interface SessionSource extends vscode.Disposable {
  readonly current: CurrentSession | undefined;
  readonly onDidChange: vscode.Event<CurrentSession | undefined>;
  refresh(): Promise<void>;
  pin(file: string): Promise<void>;
  followLatest(): Promise<void>;
  /** Follow this session without pinning it. */
  show(file: string): Promise<void>;
  /** Newest first, incremental: `onProgress` gets the first rows at once. */
  listSessions(options?: SessionListOptions): Promise<SessionInfo[]>;
  sessionInfo(file: string): Promise<SessionInfo | undefined>;
  /** Setting `piContext.agentDir`, else `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
  agentDir(): string;
  readonly discovery?: SessionDiscoveryInfo;
}

export interface SessionDiscoveryInfo {
  phase: "starting" | "ready";
  workspace: boolean;
  searchedDirs: string[];
  sessionCount: number;
  agentDir?: string;
}

export type DeclinedStage = "session" | "instructions" | "preview" | "api-key" | "review";

export interface RouteCompactionOptions {
  signal?: AbortSignal;
  skipPreview?: boolean;
  /** "Compact up to here" (bridge 1.3.0+; an older bridge is refused). */
  keepFrom?: string;
  title?: string;
}

export type CompactCommandOutcome =
  | {
      kind: "compacted";
      file: string;
      entryId: string;
      previousCompactionId?: string;
      tokensBefore: number;
      /** null: written, but the file could not be read back. */
      tokensAfter: number | null;
      firstKeptEntryId: string;
      /** `pi`: the user's own pi compacted the idle session. */
      by?: "pi";
    }
  | { kind: "declined" | "cancelled" | "nothing"; file?: string; message?: string; stage?: DeclinedStage }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string; actions?: string[] };

export type SwitchCommandOutcome =
  | {
      kind: "switched";
      file: string;
      targetId: string;
      newLeafId: string | null;
      entries: { type: string; id: string; parentId: string | null }[];
      editorText?: string;
    }
  | { kind: "noop"; file: string; targetId: string; editorText?: string }
  | { kind: "declined" | "cancelled"; file?: string; message?: string }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string; actions?: string[] };

export type TrimDeclinedStage = "pick" | "empty" | "action" | "note" | "preview";

export type TrimCommandOutcome =
  | {
      kind: "edited";
      file: string;
      entries: { id: string; targetId: string }[];
      tokensBefore: number;
      tokensAfter: number;
      live?: { pid: number; piVersion: string };
    }
  /** Queued in a running pi that is answering: applied at its next turn boundary. */
  | { kind: "pending"; file: string; batchId: string; targetIds: string[]; live: { pid: number; piVersion: string } }
  | { kind: "nothing"; file: string; message: string }
  | { kind: "declined"; file?: string; stage: TrimDeclinedStage }
  | { kind: "error"; file?: string; errorKind: string; message: string };

export type SummarizeDeclinedStage = "span" | "instructions" | "preview" | "api-key";

export type SummarizeCommandOutcome =
  | {
      kind: "summarized";
      file: string;
      entries: { id: string; targetId: string }[];
      targetId: string;
      fromId: string;
      toId: string;
      /** Null after when a running pi appended them. */
      tokensBefore: number;
      tokensAfter: number | null;
      live?: { pid: number; piVersion: string };
    }
  | { kind: "pending"; file: string; batchId: string; targetIds: string[]; live: { pid: number; piVersion: string } }
  | { kind: "declined"; file?: string; stage: SummarizeDeclinedStage }
  | { kind: "cancelled"; file?: string; message: string }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** Errors have already been reported to the user. */
export type LiveEditOutcome =
  | { kind: "applied"; entries: { id: string; targetId: string }[]; leafId: string | null; live: LiveSource }
  | { kind: "queued"; batchId: string; targetIds: string[]; live: LiveSource }
  | { kind: "error"; errorKind: string; message: string };

export interface PendingContextEdits {
  batchId: string;
  targetIds: string[];
  status: "queued" | "handed";
}

export interface LabelResult {
  entryId: string;
  label: string | null;
}

/** The summarizer the `piContext.summarizer.*` settings describe (`summarizers/`), and its API key. */
export interface SummarizerProvider {
  /**
   * With `allowMissingKey`, a summarizer whose key is not stored yet (it can count and preview).
   * @throws {SummarizerError} `config` when the settings are unusable or no model is available.
   */
  get(options?: { allowMissingKey?: boolean }): Promise<Summarizer>;
  /** Undefined when the user pressed Escape. */
  ready(summarizer: Summarizer): Promise<Summarizer | undefined>;
  /** After HTTP 401/403; undefined when cancelled or not key-based. */
  withNewKey(summarizer: Summarizer, error: Error): Promise<Summarizer | undefined>;
  keyOrigin(): string;
  /** The user's own pi summarizes (see `summarizers/select.ts`). */
  usesPi(): Promise<boolean>;
}

/** The pi the user runs (`userPi/`), found again when the setting or the install changes. */
export interface UserPiService {
  /** pi 1.6.0's rules and the snapshot catalog when none is found. */
  readonly current: UserPi;
  readonly onDidChange: vscode.Event<UserPi>;
  refresh(again?: boolean): Promise<UserPi>;
  /** The pi a running process executes (`core/pi/locate.ts` `piOfProcess`: files only). Cached per pid. */
  forProcess(pid: number): UserPi | undefined;
  /** @throws {NoNodeForPiError} when no Node satisfies pi's `engines.node`; an Error when no pi is found. */
  runtime(): Promise<PiRuntime>;
}

export interface LiveSource {
  pid: number;
  piVersion: string;
  bridgeVersion: string;
  activity: string;
  /** pi's in-memory leaf (a navigation without summary or label is not in the file). */
  leafId?: string | null;
}

export interface LiveCompactionFailure {
  file: string;
  pid: number;
  piVersion: string;
  reason: "manual" | "threshold" | "overflow";
  errorMessage: string | undefined;
  willRetry: boolean;
  fromExtension: boolean;
}

export interface RouteSwitchOptions {
  given?: SwitchChoice;
  /** undefined = declined. */
  ask: (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>;
  signal?: AbortSignal;
  quiet?: boolean;
}

/**
 * Running pis with the live bridge (`liveBridge/`). Every route resolves `undefined` when no bridge
 * serves the file: the caller's file-based flow (with its live-session guard) runs.
 */
export interface LiveBridge {
  readonly onDidChange: vscode.Event<void>;
  /** As of the last look: exact, where the process table can only guess. */
  announcedSessions(): readonly { pid: number; sessionFile: string }[];
  announcedNow(): readonly AnnouncedPi[];
  install(): Promise<unknown>;
  /** undefined when unknown. */
  bridgeInstalled(): boolean | undefined;
  /** pi-context's own headless run: its bridge serves routes but it is not shown as a live pi. */
  markHeadless(pid: number): vscode.Disposable;
  /** The one place live numbers (pi's usage, window, settings) are applied over the file's analysis. */
  liveAnalysis(current: CurrentSession): { analysis: Analysis; live: LiveSource } | undefined;
  /** Bridge 1.3.0+; not the ones a route of ours started and reported, not aborted ones. */
  readonly onDidCompactionFail: vscode.Event<LiveCompactionFailure>;
  /**
   * Our summary, appended by the running pi itself (bridge 1.3.0+). Undefined = no bridge serves `file`.
   * @throws {SessionChangedError} when pi's session moved on since the plan (nothing written).
   */
  routeCompactionSummary(
    file: string,
    summary: { summary: string; firstKeptEntryId: string; details: { readFiles: string[]; modifiedFiles: string[] } },
    leafId: string | null,
  ): Promise<{ entryId: string; bytesBefore: number; live: LiveSource } | undefined>;
  routeCompaction(
    file: string,
    instructions: string,
    options?: RouteCompactionOptions,
  ): Promise<CompactCommandOutcome | undefined>;
  routeSwitch(file: string, targetId: string, options: RouteSwitchOptions): Promise<SwitchCommandOutcome | undefined>;
  /** `{ result: undefined }` = failed (reported to the user). */
  routeName(
    file: string,
    name: string,
  ): Promise<{ result: { entryId: string | null; name: string | null } | undefined } | undefined>;
  /** None when the bridge is installed in the agent dir (pi discovers it), else the shipped bundle. */
  headlessExtensions(): string[];
  routeLabel(
    file: string,
    targetId: string,
    label: string | undefined,
  ): Promise<{ result: LabelResult | undefined } | undefined>;
  /** pi refuses when its leaf moved from `leafId`. Undefined = no live bridge serves `file`. */
  routeContextEdit(
    file: string,
    drafts: readonly ContextEditDraft[],
    leafId: string | null,
  ): Promise<LiveEditOutcome | undefined>;
  /** Asked from pi itself: its last state push may be a turn behind. */
  livePosition(
    file: string,
  ): Promise<{ leafId: string | null; activity: string; pid: number; piVersion: string } | undefined>;
  pendingContextEdits(file: string): PendingContextEdits[];
}

export type ActionRoute =
  | Extract<Route, { kind: "bridge" }>
  | (Extract<Route, { kind: "file" }> & { summarizer?: "user-pi" | "configured" })
  | (Extract<Route, { kind: "refuse" }> & { message: string; actions: string[] });

export interface FlowAccessOptions {
  guardSeconds: number;
  /** *Anyway*: only a pi with the live bridge on the session stops the write. */
  force: boolean;
  announced: () => readonly AnnouncedPi[];
}

/** Who has a session open (`core/access/`): every action asks {@link route} before asking the user. */
export interface SessionAccessService {
  access(file: string): Promise<SessionAccess>;
  /** Keyed by file; a session nobody has open is not in the map. */
  live(sessions: readonly SessionInfo[]): Promise<Map<string, SessionAccess>>;
  /** `bridge`, `file` (with {@link flowOptions}) or `refuse`, already shown unless `quiet`. */
  route(
    file: string,
    action: SessionAction,
    options?: { force?: boolean; retry?: () => void; quiet?: boolean },
  ): Promise<ActionRoute>;
  flowOptions(force?: boolean): FlowAccessOptions;
  showRefusal(error: LiveSessionError, file: string, retry?: () => void): string[];
}

export interface CommandRegistry {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- VS Code passes anything
  add(handlers: Record<string, (...args: any[]) => unknown>): void;
}

/** Direct calls, never `executeCommand` of our own ids. */
export interface SurfaceActions {
  compact(file?: string): Promise<CompactCommandOutcome>;
  openPanel(): Promise<unknown>;
  checkHealth(file?: string): Promise<unknown>;
  selectSession(): Promise<unknown>;
  trim(): Promise<TrimCommandOutcome>;
  compactUpToHere(): Promise<unknown>;
  summarizeSpan(fromId?: string, toId?: string): Promise<unknown>;
  refresh(): Promise<unknown>;
  setApiKey(): Promise<unknown>;
  installBridge(): Promise<unknown>;
}

export interface TreeService {
  /** False when the tree does not show it. */
  reveal(entryId: string): Promise<boolean>;
  revealLeaf(): Promise<unknown>;
}

/** Every member is set before any surface registers. */
export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  sessions: SessionSource;
  config(): PiContextConfig;
  summarizers: SummarizerProvider;
  liveBridge: LiveBridge;
  access: SessionAccessService;
  commands: CommandRegistry;
  actions: SurfaceActions;
  tree: TreeService;
  pi: UserPiService;
  /** Work that can wait waits for a pause. */
  activity: UserActivity;
}

export interface UserActivity {
  note(): void;
  /** ms; ≤ 0: paused now. */
  pauseIn(): number;
}

export type BaseServices = Pick<Services, "context" | "log" | "sessions" | "config" | "pi" | "commands">;
