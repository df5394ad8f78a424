/**
 * The one message protocol between the Pi Context panel's host (`src/panel/`) and its webview
 * (`webview/main.ts`). Both sides import this file; it has no runtime dependencies (no `vscode`,
 * no `node:` modules) so the browser bundle can include it.
 *
 * Host → webview: {@link HostMessage} (the whole view model as `state`, plus small updates).
 * Webview → host: {@link WebviewMessage} (commands). The host runs {@link parseWebviewMessage} on
 * every message it receives and ignores (and logs) anything that does not match exactly.
 *
 * All token numbers are integers (pi's estimator units); times are ISO strings from the session.
 */

import {
  TRIM_CHOICES,
  type TrimListModel,
  type TrimPreviewModel,
  type TrimRequestItem,
  type TrimSuggestionKind,
} from "./trim";
import type { FixedContextModel } from "./fixedContext";
import type { LostModel, SummaryModel } from "./summaries";

// --- View models (host → webview) -------------------------------------------------------------

/** Where a setting's value came from (pi's settings layers; `override` = `compaction.modelOverrides`). */
export type SettingSource = "default" | "global" | "project" | "override";

/** The context gauge: pi's numbers at the leaf. */
export interface GaugeModel {
  /** Tokens in context: pi's projected estimate (`estimateProjectedContextTokens`), the headline. */
  used: number;
  /** The model's context window, null when unknown. */
  window: number | null;
  /** Where the window came from (catalog, models.json, …) and a human detail. */
  windowSource: string;
  windowDetail?: string;
  /** The window's source in words, e.g. `models.json: providers.scripted, model scripted-small` (see `windowSourceText`). */
  windowSourceText: string;
  /** The file the window came from (models.json, models-store.json), when it came from a file. */
  windowFile?: string;
  /** `compaction.reserveTokens` (null when the setting is invalid). */
  reserveTokens: number | null;
  reserveSource: SettingSource;
  /** The file the reserve came from (absent for the default). */
  reserveFile?: string;
  /** Settings key that set the reserve, e.g. `compaction.modelOverrides["a/b"].reserveTokens`. */
  reserveKey: string;
  keepRecentTokens: number | null;
  /** Where `keepRecentTokens` was set (like {@link reserveSource}), its file and settings key. */
  keepRecentSource: SettingSource;
  keepRecentFile?: string;
  keepRecentKey: string;
  /** `window − reserveTokens`: pi auto-compacts when `used > threshold`. Null when unknown. */
  threshold: number | null;
  /** Above the threshold with nothing pi can summarize: why (pi then does not compact; `nothingToCompact`). */
  nothingToCompact?: string;
  /** `threshold − used` (negative once past the threshold); null when unknown. */
  tokensUntilCompaction: number | null;
  /** `used / window * 100`, null without a window. */
  percent: number | null;
  /** pi's `compaction.enabled`. */
  autoCompaction: boolean;
  /** pi's `shouldCompact(used, window, settings)`. */
  shouldCompact: boolean | null;
  /** False where pi's footer shows `?` (right after a compaction, before the next answer): `used` is our estimate. */
  usageKnown: boolean;
  /** pi has no estimate here (`core/rules/estimateFailure.ts`): where it fails; `used` is then only ours. */
  estimateFailure?: string;
  /** `usage+estimate`: last provider usage + estimates after it; `estimate`: estimates only. */
  method: "usage+estimate" | "estimate";
  /** Provider-reported tokens of the last valid assistant usage (0 without one). */
  usageTokens: number;
  /** Estimated tokens after that usage (everything, without one). */
  trailingTokens: number;
  /** pi's footer text, e.g. `26.4%/16k (auto)` or `?/16k (auto)`. */
  footer: string;
  /**
   * The colour: by the distance to pi's auto-compaction threshold (`levelBasis: "threshold"`,
   * the default) or pi's own footer rule (`"piFooter"`: > 90 % error, > 70 % warning; setting
   * `piContext.gauge.colors`).
   */
  level: "normal" | "warning" | "error";
  levelBasis?: "threshold" | "piFooter";
  /** `provider/modelId` or null. */
  model: string | null;
  thinkingLevel: string;
  /** Which pi the numbers follow, in words: `1.5.2 — the pi on the PATH (/usr/local/bin/pi)` (see `piText`). */
  pi: string;
  /** That pi's package dir (for the title), when one was found. */
  piPath?: string;
  /** What the user should know about it: an older pi's note, an unreadable catalog (see `piWarnings`). */
  piWarnings: string[];
  /**
   * Set when a running pi with the live bridge serves the session: the numbers above are pi's own
   * (`LiveBridge.liveAnalysis`, the same the status bar shows), not computed from the file.
   */
  live?: LiveModel;
}

/** The running pi whose live bridge reported a gauge's numbers. */
export interface LiveModel {
  pid: number;
  piVersion: string;
  bridgeVersion: string;
  /** What pi is doing (`idle`, `streaming`, `compacting`, …). */
  activity: string;
}

/** Breakdown categories, in display order. `free` and `reserve` complete the window. */
export const CATEGORY_IDS = [
  "system",
  "summaries",
  "user",
  "assistantText",
  "thinking",
  "toolCalls",
  "toolResults",
  "other",
  "free",
  "reserve",
] as const;
export type CategoryId = (typeof CATEGORY_IDS)[number];

/** One of the largest entries of a category. */
export interface CategoryEntry {
  entryId: string;
  /** Entry type or message role (`user`, `assistant`, `toolResult`, `compaction`, …). */
  kind: string;
  /** Tool name(s) for tool calls/results. */
  tool?: string;
  /** First line of the entry's text (≤ 160 chars), when it has one. */
  preview?: string;
  timestamp: string;
  /** This entry's tokens in this category (scaled like the category). */
  tokens: number;
}

/** One category of the breakdown. */
export interface CategoryModel {
  id: CategoryId;
  label: string;
  /** Tokens attributed to the category; the in-context categories sum to {@link GaugeModel.used}. */
  tokens: number;
  /** Unscaled estimate (pi's `estimateTokens` per message, split by character kind). */
  estimated: number;
  /** Number of entries contributing. */
  entryCount: number;
  /** The largest entries, biggest first (at most the requested limit). */
  top: CategoryEntry[];
}

/** The breakdown of the headline by category. */
export interface BreakdownModel {
  categories: CategoryModel[];
  /** Σ of the in-context categories (everything but `free`/`reserve`) — always equals `GaugeModel.used`. */
  total: number;
  /** `scaled`: messages up to the last provider usage scaled to it (later ones not); `estimate`: no scaling. */
  method: "scaled" | "estimate";
  /** `usageTokens / estimated tokens of the same messages` when scaled, else 1. */
  scale: number;
  /** The drill-down of `system` (pi's system message by part). */
  fixed?: FixedContextModel;
}

/** One point of the history sparkline: the context size an assistant response reported. */
export interface HistoryPoint {
  /** The response's place among all of the path's points (0-based; the x position; a chart may skip some). */
  turn: number;
  entryId: string;
  timestamp: string;
  /** `calculateContextTokens(usage)` of that response. */
  tokens: number;
  /** The prompt cache of that request (absent without a prompt in the usage). */
  cache?: {
    /** cacheRead / (input + cacheRead + cacheWrite), 0…1. */
    hitRate: number | null;
    promptTokens: number;
    cacheRead: number;
    /** The cache went cold: tokens re-sent, what they cost above the cache-read rate (US dollars), why. */
    cold?: { missedTokens: number; missedCost: number; counted: boolean; causes: string[] };
  };
}

/** A compaction marker on the sparkline. */
export interface HistoryCompaction {
  entryId: string;
  timestamp: string;
  tokensBefore: number | null;
  /** The `turn` of the first point after the compaction (= `turns` when none). */
  atPoint: number;
}

export interface HistoryModel {
  /** Responses with a trusted usage on the path (the caption's count; `points` may be fewer). */
  turns: number;
  /** In `turn` order: every point, or for a long path a subset that draws the same chart (every cold turn kept). */
  points: HistoryPoint[];
  compactions: HistoryCompaction[];
}

export { LOST_ITEMS_SHOWN, type LostModel, type SummaryModel } from "./summaries";

/** Usage and cost like pi's footer and `/session` (every entry of the file), the cache and the forecast. */
export interface UsageModel {
  /** pi's footer statistics, e.g. `↑274k ↓2.5k R274k CH50.0% $0.306` (empty: nothing used yet). */
  footer: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** `/session` Input: input + cacheRead + cacheWrite. */
  promptTokens: number;
  totalTokens: number;
  /** US dollars, as stored in the entries. */
  cost: number;
  /** Percent: pi's footer `CH` (latest assistant), `/session` "Cached (x%)". */
  latestCacheHitRate: number | null;
  sessionCacheHitRate: number | null;
  byModel: { key: string; cost: number; tokens: number }[];
  messages: { total: number; user: number; assistant: number; toolCalls: number; toolResults: number };
  /** Entries whose usage could not be read (counted as 0). */
  incomplete: number;
  /** pi's "Cache Re-billed" over the file. */
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  /** Cold turns on the current path. */
  cold: { count: number; missedTokens: number; missedCost: number };
  reportedCache: boolean;
  cacheTtl: { ms: number; source: string };
  /** The current model as pi's footer shows it (`provider/id • high`), null without one. */
  model: string | null;
  thinkingLevel: string;
  /** The current model's prices in words, and where they come from (`windowSourceText`: `the running pi (pi 1.5.2, pid 42)`); null when unknown. */
  prices: string | null;
  pricesSource: string | null;
  forecast: {
    turns: number;
    growthPerTurn: number;
    basisTurns: number;
    remainingTokens: number;
    /** `≈ 6 turns until auto-compaction`. */
    text: string;
    /** The basis in words. */
    basis: string;
  } | null;
  /** Why there is no forecast. */
  forecastUnavailable: string | null;
}

/** Where a tracked file came from. */
export interface FileSource {
  /** `compaction`: carried in the latest compaction's `details`; `turn`: a tool call since. */
  kind: "compaction" | "turn";
  /** The compaction entry, or the assistant entry whose tool call touched the file. */
  entryId: string;
  timestamp: string;
  /** For turns: 1-based number of the assistant response on the path; for compactions: 1-based compaction number. */
  ordinal: number;
  /** `read` | `write` | `edit`, or for compactions the list the file was in (`read`/`modified`). */
  op: "read" | "write" | "edit" | "modified";
}

/** A tracked file as pi's compaction would list it. */
export interface TrackedFileModel {
  /** The path exactly as pi lists it (as the tool call wrote it). */
  path: string;
  /** Resolved against the session `cwd` like pi's tools (`~`, `@` prefix, `file://`). */
  absolutePath: string;
  /** pi's `computeFileLists`: modified = edited ∪ written, read = read − modified. */
  list: "read" | "modified";
  /** The sources in path order: every one, or the last few when the builder was given `maxSources`. */
  sources: FileSource[];
  /** How many sources there are in all (`sources.length` unless capped). */
  sourceCount: number;
  /** Filled by the host: the file exists on disk (undefined = not checked yet). */
  exists?: boolean;
  /** Filled by the host: an editor tab shows this file. */
  openInTab?: boolean;
  /** Filled by the host: outside every workspace folder. */
  outsideWorkspace?: boolean;
  /** Filled by the host: the git extension knows a repository containing the file. */
  inGitRepo?: boolean;
}

export interface TrackedFilesModel {
  readFiles: TrackedFileModel[];
  modifiedFiles: TrackedFileModel[];
  /** The compaction whose `details` seeded the lists (null without one or when it is `fromHook`). */
  seededFrom: string | null;
  /** The session `cwd` paths were resolved against. */
  cwd: string | null;
}

/** The session shown. */
export interface SessionModel {
  file: string;
  id: string | null;
  name: string | null;
  /** The display label (pi's rule: name, else first user message), as every surface shows it. */
  label: string;
  cwd: string | null;
  leafId: string | null;
  /** The entry the Pi Session tree (default filter) shows for the leaf: `leafId` unless that is a hidden entry (`defaultShownLeaf`). */
  shownLeafId: string | null;
  entryCount: number;
  pinned: boolean;
  /** When the session file was last written (its mtime) and when pi-context last read it (ms since epoch). */
  modifiedAt: number;
  readAt: number;
  /** The session doctor's findings, errors first (see `src/viewModel/problems.ts`). */
  problems: ProblemModel[];
  /** Why "Compact…" would do nothing now (pi's words), if so. */
  compactionUnavailable: string | null;
}

/** One problem of the session or pi's settings: a finding of the session doctor (`src/core/health/`). */
export interface ProblemModel {
  /** `p0`, `p1`, … — unique within one state; named by the `openProblem` message. */
  id: string;
  severity: "error" | "warning" | "info";
  /** Where it was found: the session file, pi's settings files, models.json. */
  source: "session" | "settings" | "models";
  /** The doctor's finding code (`orphan-result`, `malformed-line`, `missing-parent`, `invalid-setting`, …). */
  code: string;
  /** Short kind, e.g. `Malformed line`. */
  title: string;
  /** What and where, e.g. `unparseable line 5 (164 bytes): …`. */
  message: string;
  /** The file the problem is in (absolute), when known. */
  file?: string;
  /** 1-based line in `file`. */
  line?: number;
  /** The entry it concerns (revealable in the Pi Session tree). */
  entryId?: string;
  /** The other entries involved (a tool result's call, the message in between, a cycle's members…). */
  relatedIds?: string[];
  /** What "Pi Context: Check Session Health" can do about it: append an entry, or offer a compaction. */
  repair?: "context-edit" | "leaf-marker" | "compaction";
}

/** The context surgery section: the trim list plus what a running pi has not applied yet. */
export interface TrimSectionModel extends TrimListModel {
  /** Entry ids whose context edits wait for the running pi's next turn boundary. */
  pending: string[];
}

/** Everything the panel renders. `session` null = no session (the other fields are empty). */
export interface PanelState {
  session: SessionModel | null;
  gauge: GaugeModel | null;
  breakdown: BreakdownModel | null;
  history: HistoryModel | null;
  /** Usage and cost of the file (absent in the empty state). */
  usage?: UsageModel | null;
  summaries: SummaryModel[];
  files: TrackedFilesModel | null;
  /** Context surgery: the largest items and suggestions (null without a session). */
  trim: TrimSectionModel | null;
  /**
   * True when what each compaction lost (`summaries[].lost`) and what each trim suggestion saves
   * (`tokensSaved`, 0 until then — not shown) follow in a `details` message ({@link PanelDetails}).
   */
  detailsPending?: boolean;
  /** Message for the empty state ("No pi session in this workspace", an error reading it…). */
  emptyMessage?: string;
  /** Why the panel is empty: no folder open, no session for the folders, still looking, or an error. */
  emptyReason?: "starting" | "no-folder" | "no-session" | "error";
  /** The UI language (`vscode.env.language`): times are formatted in it (`formatDateTime`). */
  locale?: string;
  /** Which optional host capabilities exist (commands registered by other features, git). */
  capabilities: {
    compact: boolean;
    focusTree: boolean;
    revealEntry: boolean;
    selectSession: boolean;
    git: boolean;
    summaryDiffEditor: boolean;
    /** The trim commands exist (`piContext.trim.apply`). */
    trim: boolean;
    /** "Pi Context: Check Session Health" (findings and repairs). */
    checkHealth: boolean;
    /** "Pi Context: Compact Up to Here…" and "Pi Context: Summarize These Messages…" (issue 41). */
    compactUpToHere: boolean;
    summarizeSpan: boolean;
  };
}

/**
 * The slow parts of a state, sent after it (the state opens the panel first): what each compaction
 * on the path lost, by entry id, and what each trim suggestion saves, by kind (tokens).
 */
export interface PanelDetails {
  /** The state they belong to (`session.file`, `session.leafId`). */
  file: string;
  leafId: string | null;
  lost: Record<string, LostModel>;
  savings: Partial<Record<TrimSuggestionKind, number>>;
}

/**
 * Fill a state's pending details in (`summaries[].lost`, trim `tokensSaved`) and clear
 * `detailsPending`. @returns false (nothing changed) when they belong to another session or leaf.
 */
export function applyPanelDetails(state: PanelState, details: PanelDetails): boolean {
  if (!state.detailsPending || state.session?.file !== details.file || state.session.leafId !== details.leafId)
    return false;
  for (const sm of state.summaries) {
    const lost = details.lost[sm.entryId];
    if (lost) sm.lost = lost;
  }
  for (const sg of state.trim?.suggestions ?? []) sg.tokensSaved = details.savings[sg.kind] ?? sg.tokensSaved;
  delete state.detailsPending;
  return true;
}

/** Host → webview messages. */
export type HostMessage =
  | { type: "state"; state: PanelState }
  /** The pending details of the last state (see {@link PanelDetails}). */
  | { type: "details"; details: PanelDetails }
  /** Updated host-filled flags of tracked files, keyed by absolute path. */
  | {
      type: "fileStatus";
      files: Record<string, Pick<TrackedFileModel, "exists" | "openInTab" | "outsideWorkspace" | "inGitRepo">>;
    }
  /** The full list of a category's entries (answer to `requestCategory`). */
  | { type: "category"; category: CategoryId; entries: CategoryEntry[] }
  /** A short transient notice shown inside the panel (never a popup). */
  | { type: "notice"; level: "info" | "warning" | "error"; text: string }
  /** The preview of a trim request (answer to `previewTrim`; `preview` null with `error` when it could not be made). */
  | { type: "trimPreview"; requestId: number; preview: TrimPreviewModel | null; error?: string };

// --- Commands (webview → host) ---------------------------------------------------------------

/** Webview → host messages. */
export type WebviewMessage =
  /** The webview loaded and wants the current state. */
  | { type: "ready" }
  /** Open a tracked file (by its absolute path, which must be one the host sent). */
  | { type: "openFile"; path: string; preview: boolean; toSide?: boolean }
  /** Open a modified tracked file's diff against git HEAD. */
  | { type: "openGitDiff"; path: string }
  /** Open the native diff editor on two summaries (entry ids on the current path). */
  | { type: "openDiff"; fromId: string; toId: string }
  /** Copy a tracked file's absolute path to the clipboard. */
  | { type: "copyPath"; path: string }
  /** Reveal an entry in the Pi Session tree. */
  | { type: "revealEntry"; entryId: string }
  /** Open the file of a problem of the current state at its line (by the problem's id). */
  | { type: "openProblem"; id: string }
  /** "Open Folder…" in the no-folder state. */
  | { type: "openFolder" }
  /** All entries of a breakdown category. */
  | { type: "requestCategory"; category: CategoryId }
  /** Preview a trim request (answered by `trimPreview` with the same `requestId`). */
  | { type: "previewTrim"; requestId: number; items: TrimRequestItem[] }
  /** Write a previewed trim request (asks again when the plan changed since preview `requestId`). */
  | { type: "applyTrim"; requestId: number; items: TrimRequestItem[] }
  /** "Pi Context: Trim Context…" (the quick pick). */
  | { type: "openTrim" }
  /** The same commands as the palette. */
  | { type: "compact" }
  /** "Pi Context: Compact Up to Here…" (its pick of the entry), "Pi Context: Summarize These Messages…" (its picks). */
  | { type: "compactUpToHere" }
  | { type: "summarizeSpan" }
  /** Summarize the span from one item of the panel's list to another (the earliest and latest ticked). */
  | { type: "summarizeSelection"; fromId: string; toId: string }
  /** "Pi Context: Check Session Health" on the shown session. */
  | { type: "checkHealth" }
  | { type: "focusTree" }
  | { type: "selectSession" }
  | { type: "refresh" };

/** Maximum length of a path or id accepted from the webview. */
export const MAX_FIELD_LENGTH = 4096;

/** Most items of one trim request, and the longest note, accepted from the webview. */
export const MAX_TRIM_ITEMS = 1000;
export const MAX_NOTE_FIELD_LENGTH = 100_000;

type Field = "string" | "boolean" | "optional-boolean" | "category" | "request-id" | "trim-items";
const SCHEMA: { [K in WebviewMessage["type"]]: Record<string, Field> } = {
  ready: {},
  openFile: { path: "string", preview: "boolean", toSide: "optional-boolean" },
  openGitDiff: { path: "string" },
  openDiff: { fromId: "string", toId: "string" },
  copyPath: { path: "string" },
  revealEntry: { entryId: "string" },
  openProblem: { id: "string" },
  openFolder: {},
  requestCategory: { category: "category" },
  previewTrim: { requestId: "request-id", items: "trim-items" },
  applyTrim: { requestId: "request-id", items: "trim-items" },
  openTrim: {},
  compact: {},
  compactUpToHere: {},
  summarizeSpan: {},
  summarizeSelection: { fromId: "string", toId: "string" },
  checkHealth: {},
  focusTree: {},
  selectSession: {},
  refresh: {},
};

/** The result of {@link parseWebviewMessage}. */
export type ParseResult = { ok: true; message: WebviewMessage } | { ok: false; error: string };

/**
 * Validate a message received from the webview against the protocol: a plain object with a known
 * `type`, exactly the fields of that type (no extra keys), each of the right type, strings
 * non-empty and at most {@link MAX_FIELD_LENGTH} characters.
 * @returns the typed message, or why it was rejected. Never throws.
 */
export function parseWebviewMessage(value: unknown): ParseResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, error: "not an object" };
  const obj = value as Record<string, unknown>;
  const type = obj.type;
  if (typeof type !== "string" || !Object.prototype.hasOwnProperty.call(SCHEMA, type))
    return { ok: false, error: `unknown type ${JSON.stringify(type)}` };
  const fields = SCHEMA[type as WebviewMessage["type"]];
  for (const key of Object.keys(obj)) {
    if (key !== "type" && !Object.prototype.hasOwnProperty.call(fields, key))
      return { ok: false, error: `${type}: unexpected field ${JSON.stringify(key)}` };
  }
  for (const [key, kind] of Object.entries(fields)) {
    const v = obj[key];
    switch (kind) {
      case "string":
        if (typeof v !== "string" || v.length === 0 || v.length > MAX_FIELD_LENGTH)
          return { ok: false, error: `${type}.${key} must be a non-empty string` };
        break;
      case "boolean":
        if (typeof v !== "boolean") return { ok: false, error: `${type}.${key} must be a boolean` };
        break;
      case "optional-boolean":
        if (v !== undefined && typeof v !== "boolean") return { ok: false, error: `${type}.${key} must be a boolean` };
        break;
      case "category":
        if (typeof v !== "string" || !(CATEGORY_IDS as readonly string[]).includes(v))
          return { ok: false, error: `${type}.${key} must be a category id` };
        break;
      case "request-id":
        if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 2 ** 31)
          return { ok: false, error: `${type}.${key} must be a whole number` };
        break;
      case "trim-items": {
        const problem = trimItemsProblem(v);
        if (problem) return { ok: false, error: `${type}.${key}${problem}` };
        break;
      }
    }
  }
  return { ok: true, message: obj as unknown as WebviewMessage };
}

/** Why `v` is not a list of trim request items (1 to {@link MAX_TRIM_ITEMS}, exact fields), or undefined. */
function trimItemsProblem(v: unknown): string | undefined {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_TRIM_ITEMS)
    return ` must be a list of 1 to ${MAX_TRIM_ITEMS} items`;
  for (const [i, x] of v.entries()) {
    if (typeof x !== "object" || x === null || Array.isArray(x)) return `[${i}] is not an object`;
    const item = x as Record<string, unknown>;
    for (const k of Object.keys(item))
      if (k !== "entryId" && k !== "choice" && k !== "note") return `[${i}]: unexpected field ${JSON.stringify(k)}`;
    if (typeof item.entryId !== "string" || item.entryId.length === 0 || item.entryId.length > MAX_FIELD_LENGTH)
      return `[${i}].entryId must be a non-empty string`;
    if (typeof item.choice !== "string" || !(TRIM_CHOICES as readonly string[]).includes(item.choice))
      return `[${i}].choice must be one of ${TRIM_CHOICES.join(", ")}`;
    if (item.note !== undefined && (typeof item.note !== "string" || item.note.length > MAX_NOTE_FIELD_LENGTH))
      return `[${i}].note must be a string of at most ${MAX_NOTE_FIELD_LENGTH} characters`;
  }
  return undefined;
}
