/**
 * The one notification helper of the VS Code surfaces: every toast starts with the product name
 * ("Pi Context: …", written once here), and a failed flow that writes to a session (compaction,
 * branch switch, label) maps its error to one message and one outcome in one place. Messages never
 * loop: one toast per failure, details in the log.
 */

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

/** Run the action a failure toast's button names: "Set API Key…" (`setApiKey`) or "Open Settings" (as localised). */
function runAction(choice: string | undefined, setApiKey: (() => unknown) | undefined): void {
  if (choice === vscode.l10n.t("Set API Key…")) void setApiKey?.();
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

/** What the buttons of a refusal do (see {@link showLiveRefusal}); a missing one is not offered. */
export interface LiveRefusalOptions {
  /** *Anyway*: run the action again, going ahead despite evidence that is only probable or possible. */
  anyway?: () => void;
  /** Install the live bridge (`services.liveBridge.install`). */
  installBridge?: () => void;
  /** Show the terminal the pi runs in. */
  showTerminal?: () => void;
}

let detailsCounter = 0;

/**
 * A refusal because pi may have the session open, as a warning that leads somewhere: the offers of
 * the route chooser (`core/access/route.ts`) as buttons — *Anyway* (only when the evidence allows
 * it), Install Live Bridge, Show Terminal — and Show Details (the whole text as a document).
 * @returns the buttons offered.
 */
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

/** The refusal's buttons, in the user's language (evaluated when shown: the bundle is VS Code's). */

const INSTALL_BRIDGE = () => vscode.l10n.t("Install Live Bridge");
const SHOW_TERMINAL = () => vscode.l10n.t("Show Terminal");
const SHOW_DETAILS = () => vscode.l10n.t("Show Details");

/**
 * A pi announces the session with its live bridge, but the bridge does not answer (it stopped
 * between the route and the request, or hangs): said once; the outcome's message.
 */
export function bridgeSilent(pid: number): string {
  const message = vscode.l10n.t(
    "pi (process {0}) has this session open with the live bridge, but the bridge does not answer. Nothing was written.",
    pid,
  );
  void error(message);
  return message;
}

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
    /** Shows a refusal because pi may have the session open (`services.access.showRefusal`); without: Show Details only. */
    refused?: (error: LiveSessionError) => string[];
    /** "Set API Key…" (`services.actions.setApiKey`). */
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
