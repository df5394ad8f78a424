/** Read-only documents the tree view opens. */

import * as vscode from "vscode";
import type { EntryRecord } from "../core/read/entries";
import type { SessionFile } from "../core/read/session";
import { setVirtualDocument, SUMMARY_SCHEME, summaryOf } from "../ui/summaryDocuments";
import { summaryPreviewMarkdown } from "../shared/summaryMarkdown";
import { entryWords, summaryTitle } from "../viewModel/treeText";
import { fileTitle } from "../viewModel/treeTextLines";

/** No HTML and no images: the text is the LLM's. @returns false when the entry has no summary. */
export async function openSummary(session: SessionFile | undefined, id: string | undefined): Promise<boolean> {
  const record = id ? session?.byId.get(id) : undefined;
  if (!id || !session || !record) return false;
  const text = summaryOf(session, id);
  if (text === undefined) return false;
  const uri = vscode.Uri.from({
    scheme: SUMMARY_SCHEME,
    path: `/preview/summary-${id}/${summaryTitle(record)}.md`,
  });
  setVirtualDocument(uri, summaryPreviewMarkdown(text));
  await vscode.commands.executeCommand("markdown.showPreview", uri).then(undefined, async () => {
    await vscode.window.showTextDocument(uri, { preview: true });
  });
  return true;
}

let textCounter = 0;

/** Show the text of a message the user switched to, in a new read-only document titled by the message's words. */
export async function showMessageText(text: string, target: EntryRecord | undefined): Promise<void> {
  const title = target ? vscode.l10n.t("Message {0}", entryWords(target, 40)) : vscode.l10n.t("Message");
  const uri = vscode.Uri.from({
    scheme: SUMMARY_SCHEME,
    path: `/preview/message-${++textCounter}/${fileTitle(title)}.md`,
  });
  setVirtualDocument(uri, text);
  await vscode.window.showTextDocument(uri, { preview: true });
}
