/**
 * The panel's context surgery: `applyTrim` skips the command's own preview only when its plan has
 * exactly the drafts the panel previewed, and asks again otherwise.
 */

import * as vscode from "vscode";
import type { ContextEditDraft } from "../core/rules/contextEdit";
import { prepareContextEdits } from "../core/rules/editPlan";
import type { TrimCommandOutcome } from "../services";
import type { TrimRequestItem } from "../shared/trim";
import { trimActions } from "../viewModel/trimActions";
import { sessionTrimPreview } from "../viewModel/trimPreview";
import type { PanelHost, Sender } from "./host";

const previews = new WeakMap<PanelHost, Map<number, { file: string; drafts: ContextEditDraft[] }>>();
const REMEMBERED = 20;

export function previewTrim(host: PanelHost, requestId: number, items: TrimRequestItem[], sender: Sender): void {
  const current = host.services.sessions.current;
  if (!sender.post) return;
  if (!current) {
    sender.post({ type: "trimPreview", requestId, preview: null, error: vscode.l10n.t("No pi session.") });
    return;
  }
  try {
    const prep = prepareContextEdits(current.session, trimActions(current.session, items));
    const preview = sessionTrimPreview(
      current.session,
      prep,
      current.analysis.inspect,
      host.services.config().warning.margin,
    );
    let map = previews.get(host);
    if (!map) previews.set(host, (map = new Map()));
    map.set(requestId, { file: current.file, drafts: prep.drafts });
    for (const key of [...map.keys()].slice(0, Math.max(0, map.size - REMEMBERED))) map.delete(key);
    sender.post({ type: "trimPreview", requestId, preview });
  } catch (error) {
    sender.post({ type: "trimPreview", requestId, preview: null, error: (error as Error).message });
  }
}

export async function applyTrim(host: PanelHost, requestId: number, items: TrimRequestItem[]): Promise<void> {
  const shown = previews.get(host)?.get(requestId);
  const outcome = await vscode.commands.executeCommand<TrimCommandOutcome>(
    "piContext.trim.apply",
    items,
    shown ? { file: shown.file, confirmedDrafts: shown.drafts } : {},
  );
  host.services.log.info(`panel: trim ${outcome?.kind ?? "?"}`);
  await host.update();
}
