/** The whole panel view model for one session at its leaf. Pure; the host adds what only VS Code knows. */

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
  updatedAt: number;
  /** mtime, ms since epoch; default `session.mtimeMs`. */
  modifiedAt?: number;
  label?: string;
  live?: LiveModel;
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

/** The last sources per tracked file: a file read every turn has hundreds, shown only in a tooltip. */
export const FILE_SOURCES_PANEL_LIMIT = 12;

/** What {@link buildPanelState} can be told beyond its input. */
export interface PanelStateOptions {
  topLimit?: number;
  home?: string;
  warningMargin?: number;
  colors?: GaugeColors;
  /** false: leave the slow parts (lost items, trim savings) for {@link panelDetailSteps}. */
  details?: boolean;
}

/** Build the panel state at the analysis' leaf at once ({@link panelStateSteps} run to its end). */
export function buildPanelState(input: PanelInput, options: PanelStateOptions = {}): PanelState {
  return drain(panelStateSteps(input, options));
}

/**
 * In steps, so the extension host can answer the user between them; the caller makes sure
 * `input.session` did not change meanwhile. @throws {StaleSessionError} when a body changed on disk.
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

/** The details a `detailsPending` state left out, in steps. @throws {StaleSessionError} */
export function* panelDetailSteps(session: SessionFile, state: PanelState): Generator<void, PanelDetails> {
  const details: PanelDetails = {
    file: state.session?.file ?? "",
    leafId: state.session?.leafId ?? null,
    lost: {},
    savings: {},
  };
  if (!state.session) return details;
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
