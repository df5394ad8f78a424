/** pi's numbers at the leaf plus the compaction preview, as one JSON-able object (pi's names at the top level). */

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

export interface ResolvedWindow {
  value: number | undefined;
  source: "catalog" | "models-store" | "models-json" | "models-json-override" | "unknown" | "live" | "given";
  detail?: string;
  file?: string;
  /** Where in that file, e.g. `providers.scripted, model scripted-small`. */
  where?: string;
  /** The built-in catalog resolution started from, e.g. `pi-context's snapshot of pi 1.6.0's catalog`. */
  catalog?: string;
}

/** What `inspect --json` prints and the UI renders; the {@link EconomicsFields} are computed on first read. */
export interface InspectResult extends EconomicsFields {
  file: string;
  sessionId: string | undefined;
  sessionName: string | undefined;
  cwd: string | undefined;
  entryCount: number;
  leafId: string | null;
  model: { provider: string; modelId: string } | null;
  thinkingLevel: string;
  /** The projected estimate pi's threshold uses (also when pi's footer shows `?`). */
  contextTokens: number;
  /** False where pi's footer shows `?` (after a compaction, before the next answer). */
  usageKnown: boolean;
  /** Where pi's own estimate fails (`estimateFailure.ts`): pi has no number, so surfaces show this instead. */
  estimateFailure?: EstimateFailure;
  /** pi's leaf is not the file's last entry (`piLeaf.ts`): `leafId` is null, numbers are pi's context there. */
  piLeaf?: { line: number; what: string; branchEmpty: boolean };
  estimate: ContextEstimate & { method: "usage+estimate" | "estimate" };
  contextWindow: ResolvedWindow;
  /** Where `cost.prices` came from when not {@link contextWindow}'s resolution (set by the live bridge). */
  pricesFrom?: Pick<ResolvedWindow, "source" | "detail" | "where" | "catalog">;
  percent: number | null;
  /** pi's footer text, e.g. `26.4%/16k (auto)` or `?/16k (auto)`. */
  footer: string;
  compactionEnabled: { value: boolean; source: ValueSource; file?: string };
  reserveTokens: SourcedNumber;
  keepRecentTokens: SourcedNumber;
  /** `contextWindow − reserveTokens`. */
  threshold: number | null;
  /** Can be negative. */
  tokensUntilCompaction: number | null;
  /** pi's `shouldCompact` (null without window or reserve). */
  shouldCompact: boolean | null;
  compaction: CompactionPreview | null;
  /** pi's system message itemised, with its cost over the branch (`fixedContext.ts`); computed on first read. */
  fixedContext: FixedContext;
  compactionUnavailable?: string;
  diagnostics: Diagnostic[];
  settingsProblems: ResolvedSettings["problems"];
  /** Absent when the caller gave none (see `pi/userPi.ts`). */
  pi?: PiReport;
}

export interface SourcedNumber {
  value: number | null;
  source: ValueSource;
  file?: string;
  key: string;
  error?: string;
}

/** What pi's `prepareCompaction` would do at the leaf. */
export interface CompactionPreview {
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  turnStartEntryId: string | null;
  tokensBefore: number;
  estimateFailure?: EstimateFailure;
  /** Checkpoint + kept messages, without the summary itself. */
  tokensAfterWithoutSummary: number;
  hasPreviousSummary: boolean;
  previousCompactionId: string | null;
  summarizedEntryIds: string[];
  turnPrefixEntryIds: string[];
  summarizedTokens: number;
  keptEntryCount: number;
  keptTokens: number;
  /** The kept tail alone exceeds `keepRecentTokens` (a call and its results cannot be split). */
  keptExceedsKeepRecent: boolean;
  readFiles: string[];
  modifiedFiles: string[];
}

export interface InspectOptions {
  settings: ResolvedSettings;
  contextWindow: ResolvedWindow;
  leafId?: string | null;
  prices?: PriceLookup;
  pi?: PiReport;
  rules?: Pick<PiRules, "nestedCallFileOps">;
  /** Pass it when just built (session unchanged) so the path is walked once per analysis. */
  projection?: Projection;
  /** pi's leaf at an odd last line (`piLeaf.ts`): projection and compaction preview are pi's there. */
  piLeaf?: PiLeafView;
}

function sourced(s: Sourced<number>): SourcedNumber {
  const out: SourcedNumber = { value: s.value ?? null, source: s.source, key: s.key };
  if (s.file) out.file = s.file;
  if (s.error) out.error = s.error;
  return out;
}

const structureTrackers = new WeakMap<SessionFile, StructureTracker>();

function cachedStructureDiagnostics(session: SessionFile): Diagnostic[] {
  let tracker = structureTrackers.get(session);
  if (!tracker) structureTrackers.set(session, (tracker = new StructureTracker()));
  return tracker.diagnostics(session);
}

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

/** The context pi builds at an odd leaf (`piLeaf.ts`); an empty branch has an empty path (no usage, no compaction). */
export function piProjection(odd: PiLeafView): Projection {
  const projection = buildProjection(odd.view, odd.leafId);
  if (!odd.branchEmpty) return projection;
  const { compaction: _compaction, ...rest } = projection;
  return { ...rest, path: [] };
}

/** Everything the gauge and `inspect` show, like pi at the leaf; never throws for bad content (see `diagnostics`). */
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

  // Prepared on first read: the gauge does not need it, and it measures the kept tail lazily from disk.
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
