/**
 * The message protocol between the panel host (`src/panel/`) and its webview (`webview/main.ts`).
 * No `vscode` or `node:` imports: the browser bundle includes it. Tokens are pi's estimator units.
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

export type SettingSource = "default" | "global" | "project" | "override";

/** The context gauge: pi's numbers at the leaf. */
export interface GaugeModel {
  /** pi's `estimateProjectedContextTokens`, the headline. */
  used: number;
  window: number | null;
  windowSource: string;
  windowDetail?: string;
  windowSourceText: string;
  windowFile?: string;
  reserveTokens: number | null;
  reserveSource: SettingSource;
  reserveFile?: string;
  reserveKey: string;
  keepRecentTokens: number | null;
  keepRecentSource: SettingSource;
  keepRecentFile?: string;
  keepRecentKey: string;
  /** `window − reserveTokens`: pi auto-compacts when `used > threshold`. */
  threshold: number | null;
  /** Above the threshold with nothing pi can summarize: why (pi then does not compact). */
  nothingToCompact?: string;
  tokensUntilCompaction: number | null;
  percent: number | null;
  autoCompaction: boolean;
  shouldCompact: boolean | null;
  /** False where pi's footer shows `?` (right after a compaction): `used` is our estimate. */
  usageKnown: boolean;
  estimateFailure?: string;
  method: "usage+estimate" | "estimate";
  usageTokens: number;
  trailingTokens: number;
  footer: string;
  /** By the distance to pi's threshold, or pi's footer rule (> 90 % error, > 70 % warning). */
  level: "normal" | "warning" | "error";
  levelBasis?: "threshold" | "piFooter";
  model: string | null;
  thinkingLevel: string;
  pi: string;
  piPath?: string;
  piWarnings: string[];
  /** Set when a running pi's live bridge reported the numbers above (not computed from the file). */
  live?: LiveModel;
}

export interface LiveModel {
  pid: number;
  piVersion: string;
  bridgeVersion: string;
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

export interface CategoryEntry {
  entryId: string;
  kind: string;
  tool?: string;
  preview?: string;
  timestamp: string;
  tokens: number;
}

export interface CategoryModel {
  id: CategoryId;
  label: string;
  /** The in-context categories sum to {@link GaugeModel.used}. */
  tokens: number;
  estimated: number;
  entryCount: number;
  top: CategoryEntry[];
}

export interface BreakdownModel {
  categories: CategoryModel[];
  total: number;
  /** `scaled`: messages up to the last provider usage scaled to it; `estimate`: no scaling. */
  method: "scaled" | "estimate";
  scale: number;
  fixed?: FixedContextModel;
}

export interface HistoryPoint {
  /** Index among all of the path's points (the x position; a chart may skip some). */
  turn: number;
  entryId: string;
  timestamp: string;
  tokens: number;
  cache?: {
    hitRate: number | null;
    promptTokens: number;
    cacheRead: number;
    /** Tokens re-sent, their cost above the cache-read rate (US dollars), why. */
    cold?: { missedTokens: number; missedCost: number; counted: boolean; causes: string[] };
  };
}

export interface HistoryCompaction {
  entryId: string;
  timestamp: string;
  tokensBefore: number | null;
  atPoint: number;
}

export interface HistoryModel {
  turns: number;
  /** Every point, or for a long path a subset that draws the same chart (cold turns kept). */
  points: HistoryPoint[];
  compactions: HistoryCompaction[];
}

export { LOST_ITEMS_SHOWN, type LostModel, type SummaryModel } from "./summaries";

/** Usage and cost like pi's footer and `/session` (every entry of the file). */
export interface UsageModel {
  footer: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  promptTokens: number;
  totalTokens: number;
  cost: number;
  latestCacheHitRate: number | null;
  sessionCacheHitRate: number | null;
  byModel: { key: string; cost: number; tokens: number }[];
  messages: { total: number; user: number; assistant: number; toolCalls: number; toolResults: number };
  incomplete: number;
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  cold: { count: number; missedTokens: number; missedCost: number };
  reportedCache: boolean;
  cacheTtl: { ms: number; source: string };
  model: string | null;
  thinkingLevel: string;
  prices: string | null;
  pricesSource: string | null;
  forecast: {
    turns: number;
    growthPerTurn: number;
    basisTurns: number;
    remainingTokens: number;
    text: string;
    basis: string;
  } | null;
  forecastUnavailable: string | null;
}

export interface FileSource {
  /** `compaction`: carried in the latest compaction's `details`; `turn`: a tool call since. */
  kind: "compaction" | "turn";
  entryId: string;
  timestamp: string;
  /** Turns: 1-based assistant response on the path; compactions: 1-based compaction number. */
  ordinal: number;
  op: "read" | "write" | "edit" | "modified";
}

export interface TrackedFileModel {
  /** Exactly as pi lists it (as the tool call wrote it). */
  path: string;
  /** Resolved against the session `cwd` like pi's tools (`~`, `@` prefix, `file://`). */
  absolutePath: string;
  /** pi's `computeFileLists`: modified = edited ∪ written, read = read − modified. */
  list: "read" | "modified";
  sources: FileSource[];
  sourceCount: number;
  /** This and the next three are filled by the host (undefined = not checked yet). */
  exists?: boolean;
  openInTab?: boolean;
  outsideWorkspace?: boolean;
  inGitRepo?: boolean;
}

export interface TrackedFilesModel {
  readFiles: TrackedFileModel[];
  modifiedFiles: TrackedFileModel[];
  seededFrom: string | null;
  cwd: string | null;
}

export interface SessionModel {
  file: string;
  id: string | null;
  name: string | null;
  label: string;
  cwd: string | null;
  leafId: string | null;
  /** The entry the tree's default filter shows for the leaf (`defaultShownLeaf`). */
  shownLeafId: string | null;
  entryCount: number;
  pinned: boolean;
  /** ms since epoch. */
  modifiedAt: number;
  readAt: number;
  problems: ProblemModel[];
  compactionUnavailable: string | null;
}

/** A finding of the session doctor (`src/core/health/`). */
export interface ProblemModel {
  id: string;
  severity: "error" | "warning" | "info";
  source: "session" | "settings" | "models";
  code: string;
  title: string;
  message: string;
  file?: string;
  line?: number;
  entryId?: string;
  relatedIds?: string[];
  repair?: "context-edit" | "leaf-marker" | "compaction";
}

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
  usage?: UsageModel | null;
  summaries: SummaryModel[];
  files: TrackedFilesModel | null;
  trim: TrimSectionModel | null;
  /** Set when `summaries[].lost` and trim `tokensSaved` follow in a `details` message. */
  detailsPending?: boolean;
  emptyMessage?: string;
  emptyReason?: "starting" | "no-folder" | "no-session" | "error";
  locale?: string;
  capabilities: {
    compact: boolean;
    focusTree: boolean;
    revealEntry: boolean;
    selectSession: boolean;
    git: boolean;
    summaryDiffEditor: boolean;
    trim: boolean;
    checkHealth: boolean;
    compactUpToHere: boolean;
    summarizeSpan: boolean;
  };
}

/** The slow parts of a state, sent after it: what each compaction lost, what each trim saves. */
export interface PanelDetails {
  file: string;
  leafId: string | null;
  lost: Record<string, LostModel>;
  savings: Partial<Record<TrimSuggestionKind, number>>;
}

/** Fill a state's pending details in. @returns false when they belong to another session or leaf. */
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

export type HostMessage =
  | { type: "state"; state: PanelState }
  | { type: "details"; details: PanelDetails }
  | {
      type: "fileStatus";
      files: Record<string, Pick<TrackedFileModel, "exists" | "openInTab" | "outsideWorkspace" | "inGitRepo">>;
    }
  | { type: "category"; category: CategoryId; entries: CategoryEntry[] }
  | { type: "notice"; level: "info" | "warning" | "error"; text: string }
  | { type: "trimPreview"; requestId: number; preview: TrimPreviewModel | null; error?: string };

export type WebviewMessage =
  | { type: "ready" }
  /** By absolute path, which must be one the host sent. */
  | { type: "openFile"; path: string; preview: boolean; toSide?: boolean }
  | { type: "openGitDiff"; path: string }
  | { type: "openDiff"; fromId: string; toId: string }
  | { type: "copyPath"; path: string }
  | { type: "revealEntry"; entryId: string }
  | { type: "openProblem"; id: string }
  | { type: "openFolder" }
  | { type: "requestCategory"; category: CategoryId }
  | { type: "previewTrim"; requestId: number; items: TrimRequestItem[] }
  /** Asks again when the plan changed since preview `requestId`. */
  | { type: "applyTrim"; requestId: number; items: TrimRequestItem[] }
  | { type: "openTrim" }
  | { type: "compact" }
  | { type: "compactUpToHere" }
  | { type: "summarizeSpan" }
  | { type: "summarizeSelection"; fromId: string; toId: string }
  | { type: "checkHealth" }
  | { type: "focusTree" }
  | { type: "selectSession" }
  | { type: "refresh" };

export const MAX_FIELD_LENGTH = 4096;

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

export type ParseResult = { ok: true; message: WebviewMessage } | { ok: false; error: string };

/**
 * Validate a webview message: a known `type`, exactly its fields, strings non-empty and at most
 * {@link MAX_FIELD_LENGTH} long. @returns the typed message, or why it was rejected. Never throws.
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
