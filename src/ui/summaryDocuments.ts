/**
 * Summaries as read-only markdown documents and their diff in VS Code's diff editor.
 * URI: `pi-context-summary:/<file name>/<entryId>.md?<file path>`; entry id `empty` = no summary.
 */

import * as path from "node:path";
import * as vscode from "vscode";
import type { SessionFile } from "../core/read/session";
import { openSession } from "../core/read/store";
import type { Services } from "../services";

export const SUMMARY_SCHEME = "pi-context-summary";
export const EMPTY_SUMMARY_ID = "empty";

export function summaryUri(file: string, entryId: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: SUMMARY_SCHEME,
    path: `/${path.basename(file)}/${entryId}.md`,
    query: encodeURIComponent(file),
  });
}

export function parseSummaryUri(uri: vscode.Uri): { file: string; entryId: string } {
  const file = decodeURIComponent(uri.query);
  const entryId = path.posix.basename(uri.path, ".md");
  return { file, entryId };
}

export function summaryOf(session: SessionFile, entryId: string): string | undefined {
  const record = session.byId.get(entryId);
  if (!record || (record.type !== "compaction" && record.type !== "branch_summary")) return undefined;
  const entry = session.readEntry(record) as { summary?: unknown };
  return typeof entry.summary === "string" ? entry.summary : "";
}

const virtualDocuments = new Map<string, string>();

/** In-memory read-only documents under `/preview/` (the compaction preview), kept for the window's life. */
export function setVirtualDocument(uri: vscode.Uri, text: string): void {
  virtualDocuments.set(uri.toString(), text);
}

export class SummaryDocumentProvider implements vscode.TextDocumentContentProvider {
  private readonly sessions = new Map<string, SessionFile>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const virtual = virtualDocuments.get(uri.toString());
    if (virtual !== undefined) return virtual;
    const { file, entryId } = parseSummaryUri(uri);
    if (entryId === EMPTY_SUMMARY_ID) return "";
    try {
      let session = this.sessions.get(file);
      if (session) await session.refresh();
      else {
        session = await openSession(file);
        this.sessions.set(file, session);
      }
      const text = summaryOf(session, entryId);
      return text ?? vscode.l10n.t("(entry {0} is not a compaction or branch summary in {1})", entryId, file);
    } catch (error) {
      return vscode.l10n.t("(cannot read {0}: {1})", file, (error as Error).message);
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.sessions.clear();
  }
}

/** Older summary (undefined: empty) left, newer right. */
export async function openSummaryDiff(
  file: string,
  olderEntryId: string | undefined,
  newerEntryId: string,
  sessionLabel = path.basename(file),
): Promise<void> {
  const left = summaryUri(file, olderEntryId ?? EMPTY_SUMMARY_ID);
  const right = summaryUri(file, newerEntryId);
  const title = vscode.l10n.t(
    "{0} ↔ New Summary — {1}",
    olderEntryId ? vscode.l10n.t("Previous Summary") : vscode.l10n.t("No Previous Summary"),
    sessionLabel,
  );
  await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: false });
}

export function registerSummaryDocuments(services: Services): void {
  const provider = new SummaryDocumentProvider();
  services.context.subscriptions.push(
    provider,
    vscode.workspace.registerTextDocumentContentProvider(SUMMARY_SCHEME, provider),
  );
  services.commands.add({
    "piContext.openSummaryDiff": (file: unknown, older: unknown, newer: unknown) => {
      if (typeof file !== "string" || typeof newer !== "string")
        throw new Error("piContext.openSummaryDiff(file, olderEntryId | undefined, newerEntryId)");
      return openSummaryDiff(file, typeof older === "string" ? older : undefined, newer);
    },
  });
}
