/**
 * Summaries of compaction and branch-summary entries as virtual, read-only markdown documents
 * (`pi-context-summary:` scheme), and the summary diff in VS Code's native diff editor.
 * Used after a compaction (previous summary → new one) and by the panel.
 *
 * URI: `pi-context-summary:/<session file name>/<entryId>.md?<session file path, URI-encoded>`;
 * the entry id `empty` stands for "no summary" (the left side of a first compaction's diff).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import type { SessionFile } from "../core/read/session";
import { openSession } from "../core/read/store";
import type { Services } from "../services";

/** The URI scheme of summary documents. */
export const SUMMARY_SCHEME = "pi-context-summary";
/** The pseudo entry id of an empty left side. */
export const EMPTY_SUMMARY_ID = "empty";

/** The URI of an entry's summary document. */
export function summaryUri(file: string, entryId: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: SUMMARY_SCHEME,
    path: `/${path.basename(file)}/${entryId}.md`,
    query: encodeURIComponent(file),
  });
}

/** Session file and entry id of a summary URI. */
export function parseSummaryUri(uri: vscode.Uri): { file: string; entryId: string } {
  const file = decodeURIComponent(uri.query);
  const entryId = path.posix.basename(uri.path, ".md");
  return { file, entryId };
}

/** The summary text of a `compaction` or `branch_summary` entry (undefined for other entries). */
export function summaryOf(session: SessionFile, entryId: string): string | undefined {
  const record = session.byId.get(entryId);
  if (!record || (record.type !== "compaction" && record.type !== "branch_summary")) return undefined;
  const entry = session.readEntry(record) as { summary?: unknown };
  return typeof entry.summary === "string" ? entry.summary : "";
}

const virtualDocuments = new Map<string, string>();

/**
 * Serve `text` at `uri` (same scheme, path under `/preview/`): in-memory read-only documents such
 * as the compaction preview. Kept for the session of the window (a few KB each).
 */
export function setVirtualDocument(uri: vscode.Uri, text: string): void {
  virtualDocuments.set(uri.toString(), text);
}

/** Serves summary documents from session files (each file indexed once, refreshed on every read). */
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

/**
 * Open the native diff editor: the older summary (or empty) on the left, the newer on the right.
 * @param olderEntryId a compaction / branch summary id, or undefined for "no previous summary".
 * @param sessionLabel how the title names the session (default: the file name), e.g. its quoted name.
 */
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

/** Register the `pi-context-summary:` provider and the `piContext.openSummaryDiff` command. */
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
