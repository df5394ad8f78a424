/**
 * The one notification helper of the VS Code surfaces: every toast starts with the product name
 * ("Pi Context: …", written once here), and a failed flow that writes to a session (compaction,
 * branch switch, label) maps its error to one message and one outcome in one place. Messages never
 * loop: one toast per failure, details in the log.
 */

import * as vscode from "vscode";
import { isCancellation, SummarizerError } from "../core/flows/summarizer";
import { isUnauthorized } from "../core/flows/summarizer";
import { LiveSessionError, liveRefusalMarkdown } from "../core/flows/live";
import { SessionChangedError, SessionWriteError, UnsafeSessionWriteError } from "../core/flows/write";
import { NoNodeForPiError } from "../core/pi/node";
import { PiRpcError } from "../core/pi/rpc";
import { nothingWritten, PRODUCT_NAME } from "../shared/format";
import { notificationText } from "../shared/untrusted";
import { setVirtualDocument, SUMMARY_SCHEME } from "./summaryDocuments";

/** "Pi Context: " + the text; session text in it stays text (no link VS Code would make clickable). */
const prefix = (text: string) => `${PRODUCT_NAME}: ${notificationText(text)}`;

/** An information toast, "Pi Context: " + `text`; resolves with the chosen action. */
export function info(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(prefix(text), ...actions);
}

/** A warning toast, "Pi Context: " + `text`; resolves with the chosen action. */
export function warn(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(prefix(text), ...actions);
}

/** An error toast, "Pi Context: " + `text`; resolves with the chosen action. */
export function error(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(prefix(text), ...actions);
}

/** Run the action a failure toast's button names: "Set API Key…" or "Open Settings" (as localised). */
function runAction(choice: string | undefined): void {
  if (choice === vscode.l10n.t("Set API Key…")) void vscode.commands.executeCommand("piContext.setApiKey");
  else if (choice === vscode.l10n.t("Open Settings"))
    void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
}

/**
 * The outcome of a failed flow: `cancelled`, or `error` with a kind (`live`, `config`, `changed`,
 * `unsafe`, `write-failed`, a summarizer error kind, `error`) and the actions its message offered.
 */
export type FlowFailure =
  | { kind: "cancelled"; file: string; message: string }
  | { kind: "error"; file: string; errorKind: string; message: string; actions?: string[] };

/** What a live-session refusal can offer (see {@link showLiveRefusal}). */
export interface LiveRefusalOptions {
  /** Whether our live bridge is installed (false: "Install Live Bridge" is offered). */
  bridgeInstalled: boolean | undefined;
  /** "Compact Anyway" etc.: offered only when the refusal is overridable (`isOverridable`). */
  anyway?: { label: string; run: () => void };
}

let detailsCounter = 0;

/**
 * A live-session refusal as a warning that leads somewhere: "<Verb> Anyway" (only when overridable:
 * the write-age guard alone, no pi process found), "Install Live Bridge" (when it is not installed),
 * and "Show Details" (the whole text as a document, which stays after the toast is gone).
 * @returns the actions offered.
 */
export function showLiveRefusal(error: LiveSessionError, file: string, options: LiveRefusalOptions): string[] {
  const actions = [
    ...(error.overridable && options.anyway ? [options.anyway.label] : []),
    ...(options.bridgeInstalled === false ? [INSTALL_BRIDGE()] : []),
    SHOW_DETAILS(),
  ];
  void warn(error.message, ...actions).then(async (choice) => {
    if (choice === options.anyway?.label) options.anyway?.run();
    else if (choice === INSTALL_BRIDGE()) void vscode.commands.executeCommand("piContext.installBridge");
    else if (choice === SHOW_DETAILS()) {
      const uri = vscode.Uri.from({
        scheme: SUMMARY_SCHEME,
        path: `/preview/${vscode.l10n.t("Refused {0} — pi may have the session open", ++detailsCounter)}.md`,
      });
      setVirtualDocument(uri, liveRefusalMarkdown(error, file, options.bridgeInstalled));
      await vscode.commands
        .executeCommand("markdown.showPreview", uri)
        .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
    }
  });
  return actions;
}

/** The refusal's buttons, in the user's language (evaluated when shown: the bundle is VS Code's). */
const INSTALL_BRIDGE = () => vscode.l10n.t("Install Live Bridge");
const SHOW_DETAILS = () => vscode.l10n.t("Show Details");

/** The kind a flow error is reported as (`errorKind` of the outcome). */
export function errorKindOf(error: unknown): string {
  if (error instanceof LiveSessionError) return "live";
  if (error instanceof SummarizerError) return error.kind;
  if (error instanceof SessionChangedError) return "changed";
  if (error instanceof UnsafeSessionWriteError) return "unsafe";
  if (error instanceof SessionWriteError) return "write-failed";
  if (error instanceof PiRpcError) return `pi-${error.kind}`;
  if (error instanceof NoNodeForPiError) return "pi-node";
  return "error";
}

/**
 * Tell the user once why a flow that writes to a session stopped, log it, and return the outcome.
 * A cancel is information ("<operation> cancelled. Nothing was written."); the live-session guard
 * is a warning with its own words; a summarizer configuration problem offers `configActions`;
 * anything else is "<operation> failed: <message> Nothing was written." (with "Set API Key…" after
 * HTTP 401/403).
 * @param operation how the message names the flow: `compaction`, `branch switch`.
 * @param logPrefix the log line's prefix (`compact`, `switch`).
 */
export function reportFlowFailure(
  log: vscode.LogOutputChannel,
  options: {
    operation: string;
    logPrefix: string;
    file: string;
    error: unknown;
    configActions: string[];
    /** The live-session refusal's actions (without: "Show Details" only). */
    live?: LiveRefusalOptions;
  },
): FlowFailure {
  const { operation, logPrefix, file, error: e, configActions } = options;
  const message = e instanceof Error ? e.message : String(e);
  log.warn(`${logPrefix} ${file}: ${e instanceof Error ? e.name : "error"}: ${message}`);
  if (isCancellation(e)) {
    void info(vscode.l10n.t("{0} cancelled. Nothing was written.", operation));
    return { kind: "cancelled", file, message };
  }
  const errorKind = errorKindOf(e);
  if (e instanceof LiveSessionError) {
    const actions = showLiveRefusal(e, file, options.live ?? { bridgeInstalled: undefined });
    return { kind: "error", file, errorKind, message, actions };
  }
  if (errorKind === "config") void error(message, ...configActions).then(runAction);
  else
    void error(
      vscode.l10n.t("{0} failed: {1}", operation, nothingWritten(message)),
      ...(isUnauthorized(e) ? [vscode.l10n.t("Set API Key…")] : []),
    ).then(runAction);
  return { kind: "error", file, errorKind, message };
}
