/**
 * The whole panel view model for one session at its leaf: gauge, breakdown, history, summaries,
 * tracked files and the context surgery list, computed from the core's analysis. Pure (no `vscode`); the host adds the
 * capabilities and the per-file flags it can only know inside VS Code.
 */

import { analysisProjection, type Analysis } from "../core/rules/analyze";
import { buildProjection } from "../core/rules/context";
import type { SessionFile } from "../core/read/session";
import { compactionLostItemSteps, spanLostItemSteps, spanSummaryOf } from "../core/rules/lostItems";
import { defaultShownLeaf } from "../core/treeModel/filters";
import type { LiveModel, PanelDetails, PanelState, SessionModel } from "../shared/protocol";
import { buildBreakdown } from "./breakdown";
import { buildGauge, type GaugeColors } from "./gauge";
import { buildHistory, downsampleHistory } from "./history";
import { collectProblems } from "./problems";
import { buildSummaries } from "./summaries";
import { buildTrackedFiles } from "./trackedFiles";
import { buildUsageModel } from "./usage";
import { buildTrimList, suggestionSavings } from "./trimList";
import { lostModel } from "./lostItems";
import { drain } from "../core/steps";

/** What {@link buildPanelState} needs to know about the shown session. */
export interface PanelInput {
  file: string;
  session: SessionFile;
  analysis: Analysis;
  pinned: boolean;
  /** When pi-context last read the file (ms since epoch). */
  updatedAt: number;
  /** When the file was last written (mtime, ms since epoch); default `session.mtimeMs`. */
  modifiedAt?: number;
  /** The display label (`CurrentSession.label`, pi's rule). */
  label?: string;
  /** The running pi whose live numbers `analysis` holds (`LiveBridge.liveAnalysis`), if any: marks the gauge live. */
  live?: LiveModel;
  /** Entry ids whose context edits a running pi has not applied yet (`LiveBridge.pendingContextEdits`). */
  pendingEdits?: readonly string[];
}

/** Capabilities when the host has not filled them (nothing optional available). */
export const NO_CAPABILITIES: PanelState["capabilities"] = {
  compact: false,
  focusTree: false,
  revealEntry: false,
  selectSession: false,
  git: false,
  summaryDiffEditor: false,
  trim: false,
  checkHealth: false,
  compactUpToHere: false,
  summarizeSpan: false,
};

/** An empty panel with a message (no session, or the session could not be read) and why it is empty. */
export function emptyPanelState(
  message: string,
  capabilities: PanelState["capabilities"] = NO_CAPABILITIES,
  reason?: PanelState["emptyReason"],
): PanelState {
  return {
    session: null,
    gauge: null,
    breakdown: null,
    history: null,
    usage: null,
    summaries: [],
    files: null,
    trim: null,
    emptyMessage: message,
    ...(reason ? { emptyReason: reason } : {}),
    capabilities,
  };
}

/** Items listed in the panel's context surgery section (largest first). */
export const TRIM_PANEL_LIMIT = 40;

/**
 * The sources the panel keeps per tracked file (the last ones; the tooltip says how many more).
 * On the 128 MB bench session 7 files had ≈ 120 each: 90 kB of the state for a tooltip.
 */
export const FILE_SOURCES_PANEL_LIMIT = 12;

/** What {@link buildPanelState} can be told beyond its input. */
export interface PanelStateOptions {
  /** Largest entries kept per breakdown category (default 8). */
  topLimit?: number;
  home?: string;
  /** Tokens before the threshold where the gauge turns to warning (as the status bar). */
  warningMargin?: number;
  /** The gauge's colour mode (`piContext.gauge.colors`, as the status bar). */
  colors?: GaugeColors;
  /**
   * false: leave out what each compaction lost and what each trim suggestion saves (the slow parts:
   * they read every summarized body, ≈ 1 s on a 128 MB session) and mark the state
   * `detailsPending`; {@link panelDetailSteps} computes them. Default true (everything).
   */
  details?: boolean;
}

/** Build the panel state at the analysis' leaf at once ({@link panelStateSteps} run to its end). */
export function buildPanelState(input: PanelInput, options: PanelStateOptions = {}): PanelState {
  return drain(panelStateSteps(input, options));
}

/**
 * The panel state at the analysis' leaf, in steps: problems, gauge and breakdown, history and usage,
 * summaries and tracked files, the trim list (≈ 15–90 ms each on a 128 MB session, cold; ≈ 130–250
 * ms in all), yielding between them so the extension host can answer the user meanwhile (the
 * caller yields to the event loop; `next()` until done). The caller makes sure `input.session` did
 * not change between steps (it is refreshed in place as pi appends).
 * @throws {StaleSessionError} when a needed body changed on disk.
 */
export function* panelStateSteps(input: PanelInput, options: PanelStateOptions = {}): Generator<void, PanelState> {
  const details = options.details !== false;
  const { session, analysis } = input;
  const inspect = analysis.inspect;
  const projection = analysisProjection(analysis);
  const sessionModel: SessionModel = {
    file: input.file,
    id: inspect.sessionId ?? null,
    name: inspect.sessionName ?? null,
    label: input.label ?? inspect.sessionName ?? "",
    cwd: inspect.cwd ?? null,
    leafId: inspect.leafId,
    shownLeafId: defaultShownLeaf(session.byId, inspect.leafId),
    entryCount: inspect.entryCount,
    pinned: input.pinned,
    modifiedAt: input.modifiedAt ?? session.mtimeMs,
    readAt: input.updatedAt,
    problems: collectProblems(analysis, input.file),
    compactionUnavailable: inspect.compactionUnavailable ?? null,
  };
  yield;
  const gauge = {
    ...buildGauge(inspect, options.warningMargin, options.colors, input.live),
    ...(input.live ? { live: input.live } : {}),
  };
  const breakdown = buildBreakdown(
    projection,
    inspect,
    session,
    options.topLimit !== undefined ? { topLimit: options.topLimit } : {},
  );
  yield;
  const history = downsampleHistory(buildHistory(projection.path, inspect.cache));
  const usage = buildUsageModel(inspect, analysis.model?.reasoning);
  yield;
  const summaries = buildSummaries(projection, details ? session : undefined, session);
  const files = buildTrackedFiles(projection, session, inspect.cwd, {
    maxSources: FILE_SOURCES_PANEL_LIMIT,
    ...(options.home !== undefined ? { home: options.home } : {}),
  });
  yield;
  const trim = {
    ...buildTrimList(session, {
      limit: TRIM_PANEL_LIMIT,
      savings: details,
      ...(options.home !== undefined ? { home: options.home } : {}),
    }),
    pending: [...(input.pendingEdits ?? [])],
  };
  return {
    session: sessionModel,
    gauge,
    breakdown,
    history,
    usage,
    summaries,
    files,
    trim,
    capabilities: NO_CAPABILITIES,
    ...(details ? {} : { detailsPending: true }),
  };
}

/**
 * The details a `detailsPending` state of {@link buildPanelState} left out, in steps: every
 * hundred entries read for what a compaction lost, and each trim suggestion's plan (the caller
 * yields to the event loop between steps; `next()` until done). The same numbers as a full build.
 * @throws {StaleSessionError} when a needed body changed on disk.
 */
export function* panelDetailSteps(session: SessionFile, state: PanelState): Generator<void, PanelDetails> {
  const details: PanelDetails = {
    file: state.session?.file ?? "",
    leafId: state.session?.leafId ?? null,
    lost: {},
    savings: {},
  };
  if (!state.session) return details;
  // the records the summaries were built from (the path of the state's leaf, as buildSummaries)
  for (const record of buildProjection(session, state.session.leafId).path) {
    const span = record.type === "context_edit" ? spanSummaryOf(session, record) : undefined;
    if (span) {
      const report = yield* spanLostItemSteps(session, span);
      if (report) details.lost[record.id] = lostModel(report);
      yield;
      continue;
    }
    if (record.type !== "compaction") continue;
    const report = yield* compactionLostItemSteps(session, record);
    if (report) details.lost[record.id] = lostModel(report);
    yield;
  }
  for (const sg of state.trim?.suggestions ?? []) {
    details.savings[sg.kind] = suggestionSavings(session, sg.actions);
    yield;
  }
  return details;
}
