/** The one notification helper: "Pi Context: …" toasts, one per failure (details in the log). */

import * as vscode from "vscode";
import { isCancellation, SummarizerError } from "../core/flows/summarizer";
import { isUnauthorized } from "../core/flows/summarizer";
import { accessRefusalMarkdown, anywayLabel, LiveSessionError } from "../core/access/words";
import { SessionChangedError, SessionWriteError, UnsafeSessionWriteError } from "../core/flows/write";
import { NoNodeForPiError } from "../core/pi/node";
import { PiRpcError } from "../core/pi/rpc";
import { nothingWritten, PRODUCT_NAME } from "../shared/format";
import { notificationText } from "../shared/untrusted";
import { setVirtualDocument, SUMMARY_SCHEME } from "./summaryDocuments";

/** Session text stays text: no link VS Code would make clickable. */
const prefix = (text: string) => `${PRODUCT_NAME}: ${notificationText(text)}`;

export function info(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(prefix(text), ...actions);
}

export function warn(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(prefix(text), ...actions);
}

export function error(text: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(prefix(text), ...actions);
}

function runAction(choice: string | undefined, setApiKey: (() => unknown) | undefined): void {
  if (choice === vscode.l10n.t("Set API Key…")) void setApiKey?.();
  else if (choice === vscode.l10n.t("Open Settings"))
    void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
}

export type FlowFailure =
  | { kind: "cancelled"; file: string; message: string }
  | { kind: "error"; file: string; errorKind: string; message: string; actions?: string[] };

export interface LiveRefusalOptions {
  /** Offered only when the evidence is probable or possible, not certain. */
  anyway?: () => void;
  installBridge?: () => void;
  showTerminal?: () => void;
}

let detailsCounter = 0;

/** The route chooser's offers (`core/access/route.ts`) as buttons, plus Show Details. @returns the buttons. */
export function showLiveRefusal(error: LiveSessionError, file: string, options: LiveRefusalOptions): string[] {
  const buttons: [string, () => void][] = [];
  if (error.offers.includes("anyway") && options.anyway) buttons.push([anywayLabel(error.action), options.anyway]);
  if (error.offers.includes("install-bridge") && options.installBridge)
    buttons.push([INSTALL_BRIDGE(), options.installBridge]);
  if (error.offers.includes("show-terminal") && options.showTerminal)
    buttons.push([SHOW_TERMINAL(), options.showTerminal]);
  const showDetails = async () => {
    const uri = vscode.Uri.from({
      scheme: SUMMARY_SCHEME,
      path: `/preview/${vscode.l10n.t("Refused {0} — pi may have the session open", ++detailsCounter)}.md`,
    });
    setVirtualDocument(uri, accessRefusalMarkdown(error, file));
    await vscode.commands
      .executeCommand("markdown.showPreview", uri)
      .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
  };
  buttons.push([SHOW_DETAILS(), () => void showDetails()]);
  void warn(error.message, ...buttons.map(([label]) => label)).then((choice) =>
    buttons.find(([label]) => label === choice)?.[1](),
  );
  return buttons.map(([label]) => label);
}

/** Evaluated when shown: the bundle is VS Code's. */

const INSTALL_BRIDGE = () => vscode.l10n.t("Install Live Bridge");
const SHOW_TERMINAL = () => vscode.l10n.t("Show Terminal");
const SHOW_DETAILS = () => vscode.l10n.t("Show Details");

/** The bridge announces the session but does not answer (stopped or hangs). */
export function bridgeSilent(pid: number): string {
  const message = vscode.l10n.t(
    "pi (process {0}) has this session open with the live bridge, but the bridge does not answer. Nothing was written.",
    pid,
  );
  void error(message);
  return message;
}

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
 * Tell the user once why a write flow stopped, log it, and return the outcome: a cancel is info,
 * the live-session guard a warning, anything else "<operation> failed: … Nothing was written.".
 */
export function reportFlowFailure(
  log: vscode.LogOutputChannel,
  options: {
    operation: string;
    logPrefix: string;
    file: string;
    error: unknown;
    configActions: string[];
    /** Without: Show Details only. */
    refused?: (error: LiveSessionError) => string[];
    setApiKey?: () => unknown;
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
    const actions = options.refused ? options.refused(e) : showLiveRefusal(e, file, {});
    return { kind: "error", file, errorKind, message, actions };
  }
  const run = (choice: string | undefined) => runAction(choice, options.setApiKey);
  if (errorKind === "config") void error(message, ...configActions).then(run);
  else
    void error(
      vscode.l10n.t("{0} failed: {1}", operation, nothingWritten(message)),
      ...(isUnauthorized(e) && options.setApiKey ? [vscode.l10n.t("Set API Key…")] : []),
    ).then(run);
  return { kind: "error", file, errorKind, message };
}
