/** The webview's commands (already validated), carried out in VS Code. */

import * as vscode from "vscode";
import { analysisProjection } from "../core/rules/analyze";
import { categoryEntries } from "../viewModel/breakdown";
import { formatDateTime } from "../shared/format";
import type { WebviewMessage } from "../shared/protocol";
import { openSummaryDiff, summaryUri } from "../ui/summaryDocuments";
import { isFile, runFileCommand } from "./files";
import { editorColumn, notice, type PanelHost, type Sender } from "./host";
import { focusTree, revealEntry } from "./sessionTree";
import { shownAnalysis } from "./state";
import { applyTrim, previewTrim } from "./trim";

export type PanelCommand = Exclude<WebviewMessage, { type: "ready" }>;

/** Errors propagate (the controller logs them and tells the sender). */
export async function handleCommand(host: PanelHost, message: PanelCommand, sender: Sender): Promise<void> {
  const { services } = host;
  switch (message.type) {
    case "refresh":
      await services.actions.refresh();
      await host.update();
      return;
    case "compact":
      await services.actions.compact();
      return;
    case "compactUpToHere":
      await services.actions.compactUpToHere();
      return;
    case "summarizeSpan":
      await services.actions.summarizeSpan();
      return;
    case "summarizeSelection":
      await services.actions.summarizeSpan(message.fromId, message.toId);
      return;
    case "checkHealth":
      await services.actions.checkHealth(services.sessions.current?.file);
      return;
    case "selectSession":
      await services.actions.selectSession();
      return;
    case "focusTree":
      if (!(await focusTree(services)))
        notice(sender, "warning", vscode.l10n.t("The Pi Session tree is not available."));
      return;
    case "revealEntry":
      if (!(await revealEntry(services, message.entryId))) await focusTree(services);
      return;
    case "openProblem":
      await openProblem(host, message.id, sender);
      return;
    case "openFolder":
      await vscode.commands.executeCommand("workbench.action.files.openFolder");
      return;
    case "requestCategory": {
      const current = services.sessions.current;
      if (!current || !sender.post) return;
      const { analysis } = shownAnalysis(services, current);
      const inspect = analysis.inspect;
      const projection = analysisProjection(analysis);
      const entries = categoryEntries(projection, inspect, current.session, message.category);
      sender.post({ type: "category", category: message.category, entries });
      return;
    }
    case "openFile":
    case "openGitDiff":
    case "copyPath":
      await runFileCommand(host, message, sender);
      return;
    case "openDiff":
      await openDiff(host, message.fromId, message.toId, sender);
      return;
    case "previewTrim":
      previewTrim(host, message.requestId, message.items, sender);
      return;
    case "applyTrim":
      await applyTrim(host, message.requestId, message.items);
      return;
    case "openTrim":
      await services.actions.trim();
      return;
  }
}

/** Opens only files the host itself put in the state. */
async function openProblem(host: PanelHost, id: string, sender: Sender): Promise<void> {
  const problem = host.state?.session?.problems.find((p) => p.id === id);
  if (!problem) {
    notice(sender, "warning", vscode.l10n.t("That problem is no longer reported."));
    return;
  }
  if (problem.entryId && problem.source === "session" && (await revealEntry(host.services, problem.entryId))) return;
  if (problem.file && (await isFile(problem.file))) {
    const uri = vscode.Uri.file(problem.file);
    const options: vscode.TextDocumentShowOptions = {
      preview: true,
      viewColumn: editorColumn(host, sender.kind, false),
    };
    if (problem.line !== undefined && problem.line >= 1) {
      const line = problem.line - 1;
      options.selection = new vscode.Range(line, 0, line, 0);
    }
    await vscode.commands.executeCommand("vscode.open", uri, options);
    if (problem.line !== undefined)
      host.services.log.info(`panel: opened ${problem.file}:${problem.line} (${problem.code})`);
    return;
  }
  notice(sender, "info", problem.file ? vscode.l10n.t("{0} does not exist.", problem.file) : problem.message);
}

async function openDiff(host: PanelHost, fromId: string, toId: string, sender: Sender): Promise<void> {
  const state = host.state;
  const older = state?.summaries.find((s) => s.entryId === fromId);
  const newer = state?.summaries.find((s) => s.entryId === toId);
  if (!older || !newer) {
    notice(sender, "warning", vscode.l10n.t("That summary is no longer on the current path."));
    return;
  }
  const file = state!.session!.file;
  const label = `"${state!.session!.label}"`;
  if (sender.kind === "view") {
    await openSummaryDiff(file, older.entryId, newer.entryId, label);
    return;
  }
  const when = (s: typeof older) =>
    `${s.type === "compaction" ? vscode.l10n.t("Compaction summary") : vscode.l10n.t("Branch summary")} ${formatDateTime(s.timestamp, vscode.env.language)}`;
  const title = vscode.l10n.t("{0} ↔ {1} — {2}", when(older), when(newer), label);
  await vscode.commands.executeCommand(
    "vscode.diff",
    summaryUri(file, older.entryId),
    summaryUri(file, newer.entryId),
    title,
    { viewColumn: editorColumn(host, sender.kind, false), preview: false },
  );
}
