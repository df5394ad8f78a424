/** The Pi Session tree as the panel reaches it. */

import * as vscode from "vscode";
import type { Services } from "../services";

export const VIEW_CONTAINER_ID = "pi-context";

export function treeViewId(services: Services): string | undefined {
  const views = (services.context.extension.packageJSON?.contributes?.views?.[VIEW_CONTAINER_ID] ?? []) as {
    id?: string;
    type?: string;
  }[];
  return views.find((v) => v.id && v.type !== "webview")?.id;
}

/** @returns false when the tree does not show it. */
export function revealEntry(services: Services, entryId: string): Promise<boolean> {
  return services.tree.reveal(entryId);
}

export async function focusTree(services: Services): Promise<boolean> {
  const tree = treeViewId(services);
  if (!tree) return false;
  await vscode.commands.executeCommand(`${tree}.focus`);
  return true;
}
