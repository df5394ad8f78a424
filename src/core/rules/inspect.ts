/**
 * What the gauge, the tooltip and `pi-context inspect` show for a session: pi's numbers at the
 * leaf plus the compaction preview, as one plain JSON-able object (pi's names at the top level).
 */

import { isPrepared, NOTHING_TO_COMPACT_MESSAGES, prepareCompaction, type CompactionPreparation } from "./compaction";
import { buildProjection, type Projection } from "./context";
import type { PiLeafView } from "./piLeaf";
import { estimateFailureText, projectedEstimateFailure, type EstimateFailure } from "./estimateFailure";
import type { SessionFile } from "../read/session";
import { compactionSettingsOf, type ResolvedSettings, type Sourced, type ValueSource } from "./settings";
import { estimateProjectedContextTokens, isUsageUnknown, shouldCompact, type ContextEstimate } from "./tokens";
import { StructureTracker } from "./tree";
import type { Diagnostic } from "../types";
import type { PiReport } from "../pi/userPi";
import type { PiRules } from "../pi/versions";
import { formatTokens } from "../../shared/format";
import { NO_PRICES, type PriceLookup } from "./cost";
import { attachEconomics, type EconomicsFields } from "./economics";
import { fixedContextOf, type FixedContext } from "./fixedContext";
import * as l10n from "@vscode/l10n";

/** A context window and where it came from. */
export interface ResolvedWindow {
  value: number | undefined;
  source: "catalog" | "models-store" | "models-json" | "models-json-override" | "unknown" | "live" | "given";
  /** Human-readable detail (file, provider entry). */
  detail?: string;
  /** The file the window came from (models.json, models-store.json), if any. */
  file?: string;
  /** Where in it, without the path: `providers.scripted, model scripted-small`, `cached catalog for openai`, `openai/gpt-4o`. */
  where?: string;
  /**
   * The built-in catalog the resolution started from, in words: `pi 1.5.2's model catalog`, or
   * `pi-context's snapshot of pi 1.6.0's catalog` when the user's pi's catalog was not available.
   */
  catalog?: string;
}

/**
 * The JSON `pi-context inspect --json` prints and the UI renders. `usage`, `cost`, `cache` and
 * `forecast` ({@link EconomicsFields}, `economics.ts`) are computed on first read.
 */
export interface InspectResult extends EconomicsFields {
  file: string;
  sessionId: string | undefined;
  sessionName: string | undefined;
  cwd: string | undefined;
  entryCount: number;
  leafId: string | null;
  model: { provider: string; modelId: string } | null;
  thinkingLevel: string;
  /** The projected estimate pi's threshold uses (also computed when pi's footer shows `?`). */
  contextTokens: number;
  /** False where pi's footer shows `?` (right after a compaction, before the next answer). */
  usageKnown: boolean;
  /**
   * Where pi's own estimate fails at this leaf (its `estimateTokens` throws on a message, or counts
   * `NaN`; `estimateFailure.ts`): pi has no `contextTokens` then — its footer, its auto-compaction
   * check and `/compact` fail — so every surface shows this instead of the number. Absent: pi has it.
   */
  estimateFailure?: EstimateFailure;
  /**
   * The file's last line is not an entry with a string id: pi's leaf is not the file's last entry
   * (`piLeaf.ts`). `leafId` is then null, and the numbers are pi's for the context it builds there.
   */
  piLeaf?: { line: number; what: string; branchEmpty: boolean };
  /** How `contextTokens` was computed. */
  estimate: ContextEstimate & { method: "usage+estimate" | "estimate" };
  contextWindow: ResolvedWindow;
  /**
   * Where `cost.prices` came from when that is not {@link contextWindow}'s resolution (the prices
   * are resolved like the window: catalog → models-store.json → models.json): set by the live
   * bridge's `applyLiveState` (the running pi's prices, or the installed catalog's beside the
   * running pi's window). Absent: `contextWindow` says it.
   */
  pricesFrom?: Pick<ResolvedWindow, "source" | "detail" | "where" | "catalog">;
  /** `contextTokens / contextWindow * 100`, null without a window. */
  percent: number | null;
  /** pi's footer text, e.g. `26.4%/16k (auto)` or `?/16k (auto)`. */
  footer: string;
  compactionEnabled: { value: boolean; source: ValueSource; file?: string };
  reserveTokens: SourcedNumber;
  keepRecentTokens: SourcedNumber;
  /** `contextWindow − reserveTokens` (null when either is unknown). */
  threshold: number | null;
  /** `threshold − contextTokens`, can be negative (null when unknown). */
  tokensUntilCompaction: number | null;
  /** pi's `shouldCompact` (null without window or reserve). */
  shouldCompact: boolean | null;
  compaction: CompactionPreview | null;
  /**
   * The fixed part of the context (pi's system message: sections and tool declarations) at the
   * leaf, and what it cost over the branch so far (`fixedContext.ts`); computed on first read.
   */
  fixedContext: FixedContext;
  /** Why `compaction` is null. */
  compactionUnavailable?: string;
  diagnostics: Diagnostic[];
  settingsProblems: ResolvedSettings["problems"];
  /** The pi the numbers follow: version, where it was found, its catalog (see `pi/userPi.ts`); absent when the caller gave none. */
  pi?: PiReport;
}

export interface SourcedNumber {
  value: number | null;
  source: ValueSource;
  file?: string;
  key: string;
  error?: string;
}

/** The compaction preview: what pi's `prepareCompaction` would do at the leaf. */
export interface CompactionPreview {
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  turnStartEntryId: string | null;
  tokensBefore: number;
  /** Where pi's own `prepareCompaction` fails (see `estimateFailure.ts`); absent when it works. */
  estimateFailure?: EstimateFailure;
  /** Estimated tokens after compaction, without the summary itself: checkpoint + kept messages. */
  tokensAfterWithoutSummary: number;
  hasPreviousSummary: boolean;
  previousCompactionId: string | null;
  /** Entry ids whose messages are summarized (history part), and the split turn's prefix. */
  summarizedEntryIds: string[];
  turnPrefixEntryIds: string[];
  summarizedTokens: number;
  keptEntryCount: number;
  keptTokens: number;
  /** True when the kept tail alone exceeds `keepRecentTokens` (a call and its results cannot be split). */
  keptExceedsKeepRecent: boolean;
  readFiles: string[];
  modifiedFiles: string[];
}

/** Options for {@link inspectSession}. */
export interface InspectOptions {
  settings: ResolvedSettings;
  /** The context window of the session's model (resolved by the caller). */
  contextWindow: ResolvedWindow;
  /** Leaf to inspect (default: the file's leaf). */
  leafId?: string | null;
  /** Model prices by `provider/model` (cost of cache misses, the current model's prices); default none known. */
  prices?: PriceLookup;
  /** The pi the numbers follow (copied to the result). */
  pi?: PiReport;
  /** That pi's rule switches for the compaction preview (default: the reference version's). */
  rules?: Pick<PiRules, "nestedCallFileOps">;
  /**
   * `buildProjection(session, leafId)` when the caller has just built it (the session unchanged
   * since): the path is walked once per analysis, not twice.
   */
  projection?: Projection;
  /**
   * pi's leaf when the file's last line is not an entry with a string id (`piLeaf.ts`): the
   * projection is then pi's, on this view, and the compaction preview is prepared there (at no
   * leaf when pi's branch is empty).
   */
  piLeaf?: PiLeafView;
}

function sourced(s: Sourced<number>): SourcedNumber {
  const out: SourcedNumber = { value: s.value ?? null, source: s.source, key: s.key };
  if (s.file) out.file = s.file;
  if (s.error) out.error = s.error;
  return out;
}

const structureTrackers = new WeakMap<SessionFile, StructureTracker>();

/** {@link structureDiagnostics}, kept up to date incrementally per session. */
function cachedStructureDiagnostics(session: SessionFile): Diagnostic[] {
  let tracker = structureTrackers.get(session);
  if (!tracker) structureTrackers.set(session, (tracker = new StructureTracker()));
  return tracker.diagnostics(session);
}

/** Compaction preview from a preparation. */
export function previewOf(preparation: CompactionPreparation): CompactionPreview {
  const preview: CompactionPreview = {
    firstKeptEntryId: preparation.firstKeptEntryId,
    isSplitTurn: preparation.isSplitTurn,
    turnStartEntryId: preparation.turnStartEntryId ?? null,
    tokensBefore: preparation.tokensBefore,
    tokensAfterWithoutSummary: preparation.checkpointTokens + preparation.keptTokens,
    hasPreviousSummary: preparation.previousSummary !== undefined,
    previousCompactionId: preparation.previousCompactionId ?? null,
    summarizedEntryIds: preparation.messagesToSummarize.map((e) => e.record.id),
    turnPrefixEntryIds: preparation.turnPrefixMessages.map((e) => e.record.id),
    summarizedTokens: 0,
    keptEntryCount: preparation.keptEntries.length,
    keptTokens: preparation.keptTokens,
    keptExceedsKeepRecent: preparation.keptTokens > preparation.settings.keepRecentTokens,
    readFiles: preparation.readFiles,
    modifiedFiles: preparation.modifiedFiles,
    ...(preparation.estimateFailure ? { estimateFailure: preparation.estimateFailure } : {}),
  };
  // Measured on first read (it may need to re-read long lines from disk).
  Object.defineProperty(preview, "summarizedTokens", {
    get: () => preparation.summarizedTokens,
    enumerable: true,
    configurable: true,
  });
  return preview;
}

/**
 * The context pi builds at an odd leaf (`piLeaf.ts`): the projection on pi's view; with an empty
 * branch (a falsy leaf id) its path is empty — pi trusts no usage and sees no compaction then.
 */
export function piProjection(odd: PiLeafView): Projection {
  const projection = buildProjection(odd.view, odd.leafId);
  if (!odd.branchEmpty) return projection;
  const { compaction: _compaction, ...rest } = projection;
  return { ...rest, path: [] };
}

/**
 * Everything the gauge and `inspect` show, computed like pi at the leaf.
 * Never throws for bad session content (problems are in `diagnostics`).
 */
export function inspectSession(session: SessionFile, options: InspectOptions): InspectResult {
  const odd = options.piLeaf;
  const reader = odd?.view ?? session;
  const projection: Projection =
    options.projection ?? (odd ? piProjection(odd) : buildProjection(session, options.leafId));
  const projected = estimateProjectedContextTokens(projection, reader);
  const windowValue = options.contextWindow.value;
  // pi's getContextUsage(): `?` when the usage is unknown, else the projected estimate above.
  const unknown = isUsageUnknown(projection);
  const settings = options.settings;
  const compactionSettings = compactionSettingsOf(settings);
  const reserve = settings.compaction.reserveTokens.value;
  const threshold = windowValue && windowValue > 0 && reserve !== undefined ? windowValue - reserve : null;
  const percent = windowValue && windowValue > 0 ? (projected.tokens / windowValue) * 100 : null;
  const enabled = settings.compaction.enabled.value ?? true;
  let footer: string;
  if (!windowValue || windowValue <= 0) footer = `0.0%/${windowValue ? formatTokens(windowValue) : "?"}`;
  else if (unknown) footer = `?/${formatTokens(windowValue)}`;
  else footer = `${((projected.tokens / windowValue) * 100).toFixed(1)}%/${formatTokens(windowValue)}`;
  if (enabled) footer += " (auto)";

  // The compaction preview is prepared on first read: the gauge does not need it, and preparing
  // measures the kept tail (long lines are measured lazily, from disk).
  let preview: { compaction: CompactionPreview | null; unavailable?: string } | undefined;
  const preparePreview = (): { compaction: CompactionPreview | null; unavailable?: string } => {
    if (preview) return preview;
    try {
      const prepared = odd
        ? prepareCompaction(odd.view, compactionSettings, odd.view, odd.branchEmpty ? null : odd.leafId, options.rules)
        : prepareCompaction(session, compactionSettings, session, options.leafId, options.rules);
      preview = isPrepared(prepared)
        ? { compaction: previewOf(prepared) }
        : {
            compaction: null,
            unavailable: prepared.estimateFailure
              ? l10n.t("pi's /compact fails: {0}", estimateFailureText(prepared.estimateFailure))
              : NOTHING_TO_COMPACT_MESSAGES[prepared.reason],
          };
    } catch (error) {
      preview = {
        compaction: null,
        unavailable: l10n.t("Could not prepare a compaction: {0}", (error as Error).message),
      };
    }
    return preview;
  };

  const diagnostics = [...session.diagnostics, ...cachedStructureDiagnostics(session)];
  if (projection.pathInfo.cycleAt) {
    diagnostics.push({
      severity: "error",
      code: "path-cycle",
      message: l10n.t("the leaf's path loops at {0}; the path was cut there", projection.pathInfo.cycleAt),
      entryId: projection.pathInfo.cycleAt,
    });
  }

  const result: InspectResult = {
    file: session.filePath,
    sessionId: session.sessionId,
    sessionName: session.name,
    cwd: session.cwd,
    entryCount: session.records.length,
    leafId: odd ? null : projection.leafId,
    model: projection.model,
    thinkingLevel: projection.thinkingLevel,
    contextTokens: projected.tokens,
    usageKnown: !unknown,
    estimate: { ...projected, method: projected.lastUsageIndex === null ? "estimate" : "usage+estimate" },
    contextWindow: options.contextWindow,
    percent,
    footer,
    compactionEnabled: {
      value: enabled,
      source: settings.compaction.enabled.source,
      ...(settings.compaction.enabled.file ? { file: settings.compaction.enabled.file } : {}),
    },
    reserveTokens: sourced(settings.compaction.reserveTokens),
    keepRecentTokens: sourced(settings.compaction.keepRecentTokens),
    threshold,
    tokensUntilCompaction: threshold === null ? null : threshold - projected.tokens,
    shouldCompact:
      threshold === null ? null : shouldCompact(projected.tokens, windowValue as number, compactionSettings),
    compaction: null,
    diagnostics,
    settingsProblems: settings.problems,
  } as Omit<InspectResult, keyof EconomicsFields | "fixedContext"> as InspectResult;
  attachEconomics(result, {
    records: session.records,
    projection,
    prices: options.prices,
    tokens: projected.tokens,
    threshold,
    autoCompaction: enabled,
    usageKnown: !unknown,
  });
  if (options.pi) result.pi = options.pi;
  const failure = projectedEstimateFailure(projection, reader);
  if (failure) result.estimateFailure = failure;
  if (odd) result.piLeaf = { line: odd.tail.line, what: odd.tail.what, branchEmpty: odd.branchEmpty };
  Object.defineProperty(result, "compaction", {
    get: () => preparePreview().compaction,
    enumerable: true,
    configurable: true,
  });
  let fixed: FixedContext | undefined;
  Object.defineProperty(result, "fixedContext", {
    get: () => (fixed ??= fixedContextOf(projection, options.prices ?? NO_PRICES, session)),
    enumerable: true,
    configurable: true,
  });
  Object.defineProperty(result, "compactionUnavailable", {
    get: () => preparePreview().unavailable,
    enumerable: true,
    configurable: true,
  });
  return result;
}
