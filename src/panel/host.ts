/** What the panel's message handlers need from the host (`controller.ts`). */

import * as vscode from "vscode";
import type { HostMessage, PanelState } from "../shared/protocol";
import type { Services } from "../services";

export type HostKind = "panel" | "view";

export interface Sender {
  readonly kind: HostKind;
  /** Undefined when a test injected the message. */
  readonly post?: (message: HostMessage) => void;
}

export interface PanelHost {
  readonly services: Services;
  readonly state: PanelState | undefined;
  readonly panelColumn: vscode.ViewColumn | undefined;
  update(): Promise<void>;
  postFileStatus(): Promise<void>;
}

export function notice(sender: Sender, level: "info" | "warning" | "error", text: string): void {
  sender.post?.({ type: "notice", level, text });
}

/** Like a click in the Explorer, a plain click never makes a new editor group; `toSide`: beside. */
export function editorColumn(host: PanelHost, from: HostKind, toSide: boolean): vscode.ViewColumn {
  if (toSide) return vscode.ViewColumn.Beside;
  if (from === "view") return vscode.ViewColumn.Active;
  const panelColumn = host.panelColumn;
  if (panelColumn === undefined) return vscode.ViewColumn.Active;
  const other = vscode.window.tabGroups.all.find((g) => g.viewColumn !== panelColumn);
  return other ? other.viewColumn : panelColumn;
}
