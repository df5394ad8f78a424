/**
 * The panel state for the current session. Live numbers come from `services.liveBridge.liveAnalysis`,
 * the one place they are applied, so gauge and panel never disagree.
 */

import * as vscode from "vscode";
import { emptyStateMessage } from "../viewModel/statusBar";
import { emptyPanelState, panelStateSteps } from "../viewModel/panelState";
import { drain } from "../core/steps";
import type { Analysis } from "../core/rules/analyze";
import type { LiveModel, PanelState } from "../shared/protocol";
import type { CurrentSession, Services } from "../services";
import { treeViewId } from "./sessionTree";

export function shownAnalysis(services: Services, current: CurrentSession): { analysis: Analysis; live?: LiveModel } {
  const live = services.liveBridge.liveAnalysis(current);
  if (!live) return { analysis: current.analysis };
  const { pid, piVersion, bridgeVersion, activity } = live.live;
  return { analysis: live.analysis, live: { pid, piVersion, bridgeVersion, activity } };
}

/** The empty state without a session; a build failure becomes an `error` empty state. Never throws. */
export function buildState(
  services: Services,
  current: CurrentSession | undefined,
  options: { details?: boolean } = {},
): PanelState {
  return drain(buildStateSteps(services, current, options));
}

/** The caller checks `current.session` did not change between steps. Never throws. */
export function* buildStateSteps(
  services: Services,
  current: CurrentSession | undefined,
  options: { details?: boolean } = {},
): Generator<void, PanelState> {
  if (!current) {
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
