/**
 * The Pi Session tree as the panel reaches it: its view id (from package.json, the tree view of the
 * Pi view container), and revealing an entry in it (`services.tree`).
 */

import * as vscode from "vscode";
import type { Services } from "../services";

/** The view container (package.json `viewsContainers.activitybar`). */
export const VIEW_CONTAINER_ID = "pi-context";

/** The tree view's id in the Pi view container (its first view that is not a webview), if any. */
export function treeViewId(services: Services): string | undefined {
  const views = (services.context.extension.packageJSON?.contributes?.views?.[VIEW_CONTAINER_ID] ?? []) as {
    id?: string;
    type?: string;
  }[];
  return views.find((v) => v.id && v.type !== "webview")?.id;
}

/**
 * Reveal an entry in the Pi Session tree (selected and focused), through `services.tree`.
 * @returns false when the tree does not show it.
 */
export function revealEntry(services: Services, entryId: string): Promise<boolean> {
  return services.tree.reveal(entryId);
}

/** Focus the Pi Session tree view. @returns false when there is none. */
export async function focusTree(services: Services): Promise<boolean> {
  const tree = treeViewId(services);
  if (!tree) return false;
  await vscode.commands.executeCommand(`${tree}.focus`);
  return true;
}
