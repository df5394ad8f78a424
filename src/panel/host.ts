/**
 * What the panel's message handlers (`messages.ts`, `files.ts`) need from the host
 * (`controller.ts`): the services, the state last sent, the editor panel's column, and ways to
 * refresh — plus the webview a message came from, to answer it with a notice.
 */

import * as vscode from "vscode";
import type { HostMessage, PanelState } from "../shared/protocol";
import type { Services } from "../services";

/** Where a webview is: the editor panel or the sidebar view. */
export type HostKind = "panel" | "view";

/** The webview a message came from. */
export interface Sender {
  readonly kind: HostKind;
  /** Post a message back to it; undefined when a test injected the message (`receive`). */
  readonly post?: (message: HostMessage) => void;
}

/** The panel host as the handlers see it (implemented by the controller). */
export interface PanelHost {
  readonly services: Services;
  /** The state last built (what the webviews show), undefined before the first build. */
  readonly state: PanelState | undefined;
  /** The editor panel's view column, undefined while it is not open. */
  readonly panelColumn: vscode.ViewColumn | undefined;
  /** Rebuild the state now and send it to the ready webviews. */
  update(): Promise<void>;
  /** Re-check the tracked files' flags and send them to the visible webviews. */
  postFileStatus(): Promise<void>;
}

/** A short notice inside the sender's webview (never a popup); nothing for an injected message. */
export function notice(sender: Sender, level: "info" | "warning" | "error", text: string): void {
  sender.post?.({ type: "notice", level, text });
}

/**
 * Where to open an editor for a click in the panel, like a click in the Explorer: a plain click
 * never makes a new editor group. From the sidebar view: the active group; from the editor panel:
 * another group when there is one (the panel stays in sight), else the panel's own group (a
 * preview tab in front of it, as the README describes). `toSide` (Ctrl/Cmd): beside.
 */
export function editorColumn(host: PanelHost, from: HostKind, toSide: boolean): vscode.ViewColumn {
  if (toSide) return vscode.ViewColumn.Beside;
  if (from === "view") return vscode.ViewColumn.Active;
  const panelColumn = host.panelColumn;
  if (panelColumn === undefined) return vscode.ViewColumn.Active;
  const other = vscode.window.tabGroups.all.find((g) => g.viewColumn !== panelColumn);
  return other ? other.viewColumn : panelColumn;
}
