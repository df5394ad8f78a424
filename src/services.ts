/**
 * The contracts between the extension's parts: what the composition root (`extension.ts`) builds
 * once and hands to every VS Code surface (status bar, panel, session tree, compaction, live
 * bridge, summarizers). Types only: the implementations live in their folders, and a surface that
 * needs another surface's service or outcome type finds it here (lint forbids adapter → adapter
 * imports).
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

/** The session pi-context currently shows, refreshed in place as pi appends. */
export interface CurrentSession {
  /** Absolute path of the session file. */
  file: string;
  /** The live index of the file (refreshed incrementally; do not mutate). */
  session: SessionFile;
  /** pi's view at the file's leaf, recomputed after every change. */
  analysis: Analysis;
  /** True when the user pinned this session ("Pi Context: Select Session…"); false when following the latest. */
  pinned: boolean;
  /** Why this session is shown: pinned, the pi in the focused terminal, or followed in its folder. */
  followedBy: FollowReason;
  /** The display label, pi's rule (`core/rules/sessionLabel.ts`): every surface shows this one. */
  label: string;
  /** The other live sessions of its folder (written within a minute, or open in a running pi), newest first. */
  liveSessions: { file: string; label: string }[];
  /** The workspace folder whose sessions this one belongs to (by header `cwd`), if any. */
  workspaceFolder: vscode.WorkspaceFolder | undefined;
  /** The pi agent dir used for settings, models and (by default) sessions. */
  agentDir: string;
  /** When the file was last read (ms since epoch). */
  updatedAt: number;
}

/** Why a session is the current one. */
export type FollowReason = "pinned" | "terminal" | "latest";

/** Options of {@link SessionSource.listSessions}. */
export interface SessionListOptions {
  /** The sessions known so far (newest first; `complete: false` = still being read) and whether the listing is done. */
  onProgress?: (sessions: SessionInfo[], done: boolean) => void;
  signal?: AbortSignal;
}

/** Finds, follows and re-reads pi sessions (implemented by `sessions/source.ts`). */
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
  /** Follow this session in its folder without pinning it (the gauge's "switch to the other live session"). */
  show(file: string): Promise<void>;
  /**
   * Sessions of the workspace folders, newest first: asynchronous and incremental (the listing
   * cache); `onProgress` gets the first rows at once and more as they are read.
   */
  listSessions(options?: SessionListOptions): Promise<SessionInfo[]>;
  /** One session's listing facts (name, first message, counts), up to date; undefined when it is not a session. */
  sessionInfo(file: string): Promise<SessionInfo | undefined>;
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

// ── Command outcomes (what commands resolve with; the panel and the integration tests read them) ──

/** Where the user stopped a compaction without an error. */
export type DeclinedStage = "session" | "instructions" | "preview" | "api-key" | "review";

/** Options of {@link LiveBridge.routeCompaction}. */
export interface RouteCompactionOptions {
  signal?: AbortSignal;
  skipPreview?: boolean;
  /** "Compact up to here": pi keeps from this entry (bridge 1.3.0+; an older bridge is refused). */
  keepFrom?: string;
  /** How the session is named in the progress and result messages (default: its label). */
  title?: string;
}

/** What `piContext.compact` resolves with. */
export type CompactCommandOutcome =
  | {
      kind: "compacted";
      file: string;
      entryId: string;
      previousCompactionId?: string;
      tokensBefore: number;
      /** null: written, but the file could not be read back afterwards. */
      tokensAfter: number | null;
      firstKeptEntryId: string;
      /** `pi`: the user's own pi compacted the idle session and wrote the entry (else pi-context or the live pi). */
      by?: "pi";
    }
  | { kind: "declined" | "cancelled" | "nothing"; file?: string; message?: string; stage?: DeclinedStage }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string; actions?: string[] };

/** What `piContext.tree.switchToHere` resolves with. */
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

/** Where the user stopped a trim without an error. */
export type TrimDeclinedStage = "pick" | "empty" | "action" | "note" | "preview";

/** What the `piContext.trim*` commands resolve with. */
export type TrimCommandOutcome =
  | {
      kind: "edited";
      file: string;
      /** The appended `context_edit` entries, in order. */
      entries: { id: string; targetId: string }[];
      /** pi's pure estimate before and its estimate after (tokens). */
      tokensBefore: number;
      tokensAfter: number;
      /** Set when the running pi appended them (live bridge). */
      live?: { pid: number; piVersion: string };
    }
  /** Queued in a running pi that is answering: pi applies them at its next turn boundary. */
  | { kind: "pending"; file: string; batchId: string; targetIds: string[]; live: { pid: number; piVersion: string } }
  /** Nothing to write: every item was refused or already shows that (`message` says which). */
  | { kind: "nothing"; file: string; message: string }
  | { kind: "declined"; file?: string; stage: TrimDeclinedStage }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** Where the user stopped "Summarize These Messages…" without an error. */
export type SummarizeDeclinedStage = "span" | "instructions" | "preview" | "api-key";

/** What `piContext.summarizeSpan` resolves with. */
export type SummarizeCommandOutcome =
  | {
      kind: "summarized";
      file: string;
      /** The appended `context_edit` entries, in order. */
      entries: { id: string; targetId: string }[];
      /** The message that carries the summary; the span's first and last message. */
      targetId: string;
      fromId: string;
      toId: string;
      /** pi's pure estimate before; its estimate after (null when a running pi appended them). */
      tokensBefore: number;
      tokensAfter: number | null;
      live?: { pid: number; piVersion: string };
    }
  | { kind: "pending"; file: string; batchId: string; targetIds: string[]; live: { pid: number; piVersion: string } }
  | { kind: "declined"; file?: string; stage: SummarizeDeclinedStage }
  | { kind: "cancelled"; file?: string; message: string }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** What a running pi did with context edits sent through its live bridge (already reported to the user when an error). */
export type LiveEditOutcome =
  | { kind: "applied"; entries: { id: string; targetId: string }[]; leafId: string | null; live: LiveSource }
  | { kind: "queued"; batchId: string; targetIds: string[]; live: LiveSource }
  | { kind: "error"; errorKind: string; message: string };

/** A batch of context edits a running pi has not applied yet. */
export interface PendingContextEdits {
  batchId: string;
  targetIds: string[];
  /** `queued` (waits for pi's turn boundary) or `handed` (pi is appending it). */
  status: "queued" | "handed";
}

/** A label written (or cleared): the `label` entry's id and the label (null = cleared). */
export interface LabelResult {
  entryId: string;
  label: string | null;
}

// ── Summarizers (implemented by `summarizers/`) ──

/** The summarizer the `piContext.summarizer.*` settings describe, and its API key. */
export interface SummarizerProvider {
  /**
   * The configured summarizer. With `allowMissingKey`, an OpenAI-compatible summarizer whose server
   * needs a key that is not stored is returned anyway (`needsApiKey`: it counts and previews;
   * {@link ready} asks for the key before sending).
   * @throws {SummarizerError} `config` when the settings are unusable or no model is available.
   */
  get(options?: { allowMissingKey?: boolean }): Promise<Summarizer>;
  /** Ask for a missing key (password box) and rebuild; undefined when the user pressed Escape. */
  ready(summarizer: Summarizer): Promise<Summarizer | undefined>;
  /** After HTTP 401/403: ask for a (new) key and rebuild; undefined when cancelled or not key-based. */
  withNewKey(summarizer: Summarizer, error: Error): Promise<Summarizer | undefined>;
  /** The origin (`scheme://host:port`) the configured summarizer's key is stored under. */
  keyOrigin(): string;
  /**
   * Whether the user's own pi summarizes (headless, writing its own entries): setting `pi`, or
   * `auto` when a pi is found and no OpenAI-compatible summarizer is configured (base URL
   * set, or an API key stored). See `summarizers/select.ts`.
   */
  usesPi(): Promise<boolean>;
}

// ── The user's pi (implemented by `userPi/`) ──

/** The pi the user runs: found once at start and again when the setting or the install changes. */
export interface UserPiService {
  /** The pi the numbers follow now (its rules and catalog; the snapshot and pi 1.6.0's rules when none is found). */
  readonly current: UserPi;
  /** Fires when another pi (or another version of it) is found. */
  readonly onDidChange: vscode.Event<UserPi>;
  /** Look again (the PATH, the login shell's PATH, pi's managed install, npm's global packages). */
  refresh(again?: boolean): Promise<UserPi>;
  /**
   * The pi a running process executes, with its rules and catalog (`core/pi/locate.ts`
   * `piOfProcess`: files only, nothing run); undefined when it cannot be told. Cached per pid.
   */
  forProcess(pid: number): UserPi | undefined;
  /**
   * The pi to summarize with and the Node to run it.
   * @throws {NoNodeForPiError} when no Node satisfies pi's `engines.node`; an Error when no pi is found.
   */
  runtime(): Promise<PiRuntime>;
}

// ── Live bridge (implemented by `liveBridge/`) ──

/** A running pi with the live bridge, as the gauge names it. */
export interface LiveSource {
  pid: number;
  piVersion: string;
  bridgeVersion: string;
  /** What pi is doing (`idle`, `streaming`, `compacting`, …). */
  activity: string;
  /** pi's in-memory leaf (a navigation without summary or label is not in the file). */
  leafId?: string | null;
}

/** A compaction that failed in a running pi (its `session_compact_failed`, through the live bridge). */
export interface LiveCompactionFailure {
  file: string;
  pid: number;
  piVersion: string;
  /** pi's `/compact`, the context threshold, or context overflow recovery. */
  reason: "manual" | "threshold" | "overflow";
  /** pi's error text (e.g. "Auto-compaction failed: …"). */
  errorMessage: string | undefined;
  willRetry: boolean;
  fromExtension: boolean;
}

/** Options of {@link LiveBridge.routeSwitch}. */
export interface RouteSwitchOptions {
  /** The choice when the caller already has one (skips pi's question). */
  given?: SwitchChoice;
  /** Shows pi's "Summarize branch?" question for the plan; undefined = declined. */
  ask: (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>;
  signal?: AbortSignal;
  /** Do not show the result notification (tests). */
  quiet?: boolean;
}

/**
 * Running pi processes with the live bridge: pi's own numbers for the current session, and routes
 * that make Compact, Switch to Here and labels run inside that pi. Every route resolves
 * `undefined` when no live bridge serves the file: the caller's file-based flow (with its
 * live-session guard) runs.
 */
export interface LiveBridge {
  /** Fires when a live connection appears, goes, or pushes new numbers. */
  readonly onDidChange: vscode.Event<void>;
  /**
   * The session file every running pi with the bridge announced (its pid and `sessionFile`), as of
   * the last look (every 1.5 s): exact, where the process table can only guess.
   */
  announcedSessions(): readonly { pid: number; sessionFile: string }[];
  /** The announcements read now (alive pis; none when `piContext.liveBridge.enabled` is false): the access model's certain evidence. */
  announcedNow(): readonly AnnouncedPi[];
  /** "Pi Context: Install Live Bridge" (asks first). */
  install(): Promise<unknown>;
  /** True when our bridge file is installed in pi's extensions folder (any version), false when not, undefined when unknown. */
  bridgeInstalled(): boolean | undefined;
  /**
   * Mark a pi process as pi-context's own headless run (the user's pi started for one switch):
   * its bridge serves the routes as usual, but it is not shown as a running "live" pi and gets no
   * "untested pi version" warning. Dispose when the process is gone.
   */
  markHeadless(pid: number): vscode.Disposable;
  /**
   * The one place live numbers are applied: pi's own usage, window and compaction settings over
   * the file's analysis, and who reported them; undefined without a live bridge for the session.
   */
  liveAnalysis(current: CurrentSession): { analysis: Analysis; live: LiveSource } | undefined;
  /**
   * pi's own compactions that failed in a running pi with the live bridge (bridge 1.3.0+: pi's
   * `session_compact_failed`; not the ones a route of ours started and reported, not aborted ones).
   */
  readonly onDidCompactionFail: vscode.Event<LiveCompactionFailure>;
  /**
   * A summary made by our summarizer, appended by the running pi itself (bridge 1.3.0+), for the
   * plan whose pi leaf is `leafId`. Undefined = no live bridge serves `file`.
   * @throws {SessionChangedError} when pi's session moved on since the plan (nothing written; plan again);
   *   an Error saying what to do when the bridge is too old or pi refused (nothing written).
   */
  routeCompactionSummary(
    file: string,
    summary: { summary: string; firstKeptEntryId: string; details: { readFiles: string[]; modifiedFiles: string[] } },
    leafId: string | null,
  ): Promise<{ entryId: string; bytesBefore: number; live: LiveSource } | undefined>;
  /** "Pi Context: Compact Session…" in the running pi (after the instructions box). */
  routeCompaction(
    file: string,
    instructions: string,
    options?: RouteCompactionOptions,
  ): Promise<CompactCommandOutcome | undefined>;
  /** "Switch to Here…" in the running pi: `given` skips the question, else `ask` shows pi's. */
  routeSwitch(file: string, targetId: string, options: RouteSwitchOptions): Promise<SwitchCommandOutcome | undefined>;
  /** Name the session in the running pi (pi's `/name`); `{ result: undefined }` = failed (reported to the user). */
  routeName(
    file: string,
    name: string,
  ): Promise<{ result: { entryId: string | null; name: string | null } | undefined } | undefined>;
  /**
   * The `-e` extension files a headless pi run by pi-context needs to serve the live bridge: none
   * when the bridge is installed in the agent dir (pi discovers it), else the shipped bundle.
   */
  headlessExtensions(): string[];
  /** Set or clear a label in the running pi; `{ result: undefined }` = failed (reported to the user). */
  routeLabel(
    file: string,
    targetId: string,
    label: string | undefined,
  ): Promise<{ result: LabelResult | undefined } | undefined>;
  /**
   * Context edits in the running pi (it appends them itself: at once while idle, at its next turn
   * boundary while it streams). `leafId`: the leaf they were planned at (pi refuses when its leaf
   * moved). Undefined = no live bridge serves `file`.
   */
  routeContextEdit(
    file: string,
    drafts: readonly ContextEditDraft[],
    leafId: string | null,
  ): Promise<LiveEditOutcome | undefined>;
  /**
   * The running pi's leaf and activity now, asked from pi itself (its last state push may be a
   * turn behind); undefined without a live bridge for `file`.
   */
  livePosition(
    file: string,
  ): Promise<{ leafId: string | null; activity: string; pid: number; piVersion: string } | undefined>;
  /** Batches a running pi of `file` has not applied yet (shown as pending). */
  pendingContextEdits(file: string): PendingContextEdits[];
}

// ── Access (implemented by `access/`) ──

/** A route as a surface receives it: a refusal carries its message and the buttons it was shown with. */
export type ActionRoute =
  | Extract<Route, { kind: "bridge" }>
  /** Our file flow; an action that summarizes learns who writes the summary: the user's own pi, or the configured summarizer. */
  | (Extract<Route, { kind: "file" }> & { summarizer?: "user-pi" | "configured" })
  | (Extract<Route, { kind: "refuse" }> & { message: string; actions: string[] });

/** What every write flow takes so that its last check before the append agrees with the route. */
export interface FlowAccessOptions {
  guardSeconds: number;
  /** The user chose *Anyway*: only a pi with the live bridge on the session stops the write. */
  force: boolean;
  announced: () => readonly AnnouncedPi[];
}

/**
 * Who has a session open and what to do about it (`core/access/`): the one seam every action goes
 * through. A surface asks {@link route} before it asks the user anything and acts on the answer.
 */
export interface SessionAccessService {
  /** Who has `file` open now (fresh process table and announcements). */
  access(file: string): Promise<SessionAccess>;
  /**
   * Which of `sessions` someone has open (`core/access/access.ts` `liveAmong`: one fresh process
   * table and the announcements; the sessions are the attribution's candidates): Select Session's
   * live marks. Keyed by file; a session nobody has open is not in the map.
   */
  live(sessions: readonly SessionInfo[]): Promise<Map<string, SessionAccess>>;
  /**
   * The route of `action` on `file`: `bridge` (the running pi does it: `services.liveBridge.route…`),
   * `file` (our flow, with {@link flowOptions}), or `refuse` — then the refusal has been shown
   * (unless `quiet`), with *Anyway* running `retry` where the evidence allows it.
   */
  route(
    file: string,
    action: SessionAction,
    options?: { force?: boolean; retry?: () => void; quiet?: boolean },
  ): Promise<ActionRoute>;
  /** The options of our write flows (guard seconds, *Anyway*, the announcements). */
  flowOptions(force?: boolean): FlowAccessOptions;
  /** Show a refusal a flow threw (its ways out as buttons); returns the buttons. */
  showRefusal(error: LiveSessionError, file: string, retry?: () => void): string[];
}

// ── The command table and what surfaces call of each other (implemented by `commands.ts`) ──

/** A surface's commands by id (`commands.ts` `CommandTable`). */
export interface CommandRegistry {
  /** Add a surface's command handlers (registered with VS Code once, by the composition root). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- VS Code passes anything
  add(handlers: Record<string, (...args: any[]) => unknown>): void;
}

/** The commands one surface runs of another, as direct calls (never `executeCommand` of our own ids). */
export interface SurfaceActions {
  /** "Pi Context: Compact Session…" (default: the current session). */
  compact(file?: string): Promise<CompactCommandOutcome>;
  openPanel(): Promise<unknown>;
  /** "Pi Context: Check Session Health" of `file` (default: the current session). */
  checkHealth(file?: string): Promise<unknown>;
  selectSession(): Promise<unknown>;
  /** "Pi Context: Trim Context…". */
  trim(): Promise<TrimCommandOutcome>;
  /** "Compact Up to Here…" (asks for the entry). */
  compactUpToHere(): Promise<unknown>;
  /** "Summarize These Messages…" (asks for the ends unless given). */
  summarizeSpan(fromId?: string, toId?: string): Promise<unknown>;
  /** Re-read the session and look for pi again. */
  refresh(): Promise<unknown>;
  setApiKey(): Promise<unknown>;
  installBridge(): Promise<unknown>;
}

/** The Pi Session tree as other surfaces reach it. */
export interface TreeService {
  /** Reveal, select and focus an entry of the current session; false when the tree does not show it. */
  reveal(entryId: string): Promise<boolean>;
  /** Reveal the leaf. */
  revealLeaf(): Promise<unknown>;
}

/** What every surface receives (built once by `activate()`; every member is set before any surface registers). */
export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  sessions: SessionSource;
  /** The current typed settings (read on each call; cheap). */
  config(): PiContextConfig;
  /** The configured summarizer and its API key. */
  summarizers: SummarizerProvider;
  /** Running pi processes with the live bridge. */
  liveBridge: LiveBridge;
  /** Who has a session open, and the route of every action. */
  access: SessionAccessService;
  /** The command table: each surface adds its commands here. */
  commands: CommandRegistry;
  /** What surfaces call of each other. */
  actions: SurfaceActions;
  /** The Pi Session tree. */
  tree: TreeService;
  /** The user's pi (version, rules, catalog; the runtime to summarize with). */
  pi: UserPiService;
  /** When the user last did something with our views (work that can wait waits for a pause). */
  activity: UserActivity;
}

/** The user's activity with our views (`ui/activity.ts`: `UserActivityClock`). */
export interface UserActivity {
  /** The user did something just now. */
  note(): void;
  /** How long until the user has paused (ms; ≤ 0: paused now). */
  pauseIn(): number;
}

/** What the services that others are built from need: the base every service is constructed with. */
export type BaseServices = Pick<Services, "context" | "log" | "sessions" | "config" | "pi" | "commands">;
