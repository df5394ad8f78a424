/**
 * The panel state the host sends: the view model of `src/viewModel/panelState.ts` for the current
 * session (or the empty state in the gauge's words), plus what only VS Code knows — which
 * optional commands exist.
 *
 * Live numbers: when a running pi with the live bridge serves the session, the panel shows pi's
 * own numbers, exactly as the status bar does — both take them from `services.liveBridge.liveAnalysis`
 * (the one place they are applied), so gauge and panel never disagree; the gauge is marked `live`.
 */

import * as vscode from "vscode";
import { emptyStateMessage } from "../viewModel/statusBar";
import { emptyPanelState, panelStateSteps } from "../viewModel/panelState";
import { drain } from "../core/steps";
import type { Analysis } from "../core/rules/analyze";
import type { LiveModel, PanelState } from "../shared/protocol";
import type { CurrentSession, Services } from "../services";
import { treeViewId } from "./sessionTree";

/**
 * The analysis the panel shows for `current`: pi's live numbers and who reported them when a live
 * bridge serves the session (as the status bar), else the file's analysis.
 */
export function shownAnalysis(services: Services, current: CurrentSession): { analysis: Analysis; live?: LiveModel } {
  const live = services.liveBridge.liveAnalysis(current);
  if (!live) return { analysis: current.analysis };
  const { pid, piVersion, bridgeVersion, activity } = live.live;
  return { analysis: live.analysis, live: { pid, piVersion, bridgeVersion, activity } };
}

/**
 * The state for `current` at its leaf (live numbers per {@link shownAnalysis}); without a session the empty state (why: still looking, no
 * folder, no session). A failure to build is logged and shown as an `error` empty state. Never throws.
 * `options.details` false: the slow parts follow (`detailsPending`, see `viewModel/panelState.ts`).
 */
export function buildState(
  services: Services,
  current: CurrentSession | undefined,
  options: { details?: boolean } = {},
): PanelState {
  return drain(buildStateSteps(services, current, options));
}

/**
 * {@link buildState} in steps (`panelStateSteps`: the caller gives the event loop a turn between
 * them, and makes sure `current.session` did not change meanwhile). Never throws.
 */
export function* buildStateSteps(
  services: Services,
  current: CurrentSession | undefined,
  options: { details?: boolean } = {},
): Generator<void, PanelState> {
  if (!current) {
    // the same words as the gauge's tooltip (the Pi Session tree says it for the tree)
    const d = services.sessions.discovery;
    const reason = !d || d.phase === "starting" ? "starting" : !d.workspace ? "no-folder" : "no-session";
    return emptyPanelState(emptyStateMessage(d), undefined, reason);
  }
  try {
    return yield* panelStateSteps(
      {
        file: current.file,
        session: current.session,
        ...shownAnalysis(services, current),
        pinned: current.pinned,
        label: current.label,
        updatedAt: current.updatedAt,
        modifiedAt: current.session.mtimeMs,
        pendingEdits: services.liveBridge.pendingContextEdits(current.file).flatMap((b) => b.targetIds),
      },
      {
        warningMargin: services.config().warning.margin,
        colors: services.config().gauge.colors,
        ...(options.details === false ? { details: false } : {}),
      },
    );
  } catch (error) {
    services.log.error(`panel: could not build the view of ${current.file}: ${(error as Error).stack ?? error}`);
    return emptyPanelState(
      vscode.l10n.t("Could not show “{0}”: {1}", current.label, (error as Error).message),
      undefined,
      "error",
    );
  }
}

/**
 * What the panel can offer: our own commands always exist (one command table); VS Code's view focus
 * command and the git extension are looked up.
 */
export async function capabilities(services: Services): Promise<PanelState["capabilities"]> {
  const tree = treeViewId(services);
  const focus = tree !== undefined && (await vscode.commands.getCommands(true)).includes(`${tree}.focus`);
  return {
    compact: true,
    selectSession: true,
    focusTree: focus,
    revealEntry: true,
    git: vscode.extensions.getExtension("vscode.git") !== undefined,
    summaryDiffEditor: true,
    trim: true,
    checkHealth: true,
    compactUpToHere: true,
    summarizeSpan: true,
  };
}
