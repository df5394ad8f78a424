/**
 * The Pi Session tree as the panel reaches it: its view id (from package.json, the tree view of the
 * Pi view container), and revealing an entry in it — a reveal command when one is registered,
 * else the `sessionTree.reveal` API the extension exports.
 */

import * as vscode from "vscode";
import type { Services } from "../services";

/** Commands that reveal an entry id in the Pi Session tree, tried in order. */
export const REVEAL_COMMANDS = ["piContext.tree.reveal", "piContext.revealEntry"];
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

/** The part of the tree's exported API the panel uses. */
interface TreeApi {
  reveal(entryId: string, options?: { select?: boolean; focus?: boolean }): Promise<unknown>;
}

/** The tree view's API (`activate()` exports `sessionTree.reveal(entryId, options)`), if present. */
export function treeApi(services: Services): TreeApi | undefined {
  const exports = services.context.extension.exports as { sessionTree?: { reveal?: unknown } } | undefined;
  const tree = exports?.sessionTree;
  return tree && typeof tree.reveal === "function" ? (tree as TreeApi) : undefined;
}

/**
 * Reveal an entry in the Pi Session tree (selected and focused).
 * @returns false when neither a reveal command nor the tree's API exists.
 */
export async function revealEntry(services: Services, entryId: string): Promise<boolean> {
  const commands = new Set(await vscode.commands.getCommands(true));
  for (const id of REVEAL_COMMANDS) {
    if (commands.has(id)) {
      await vscode.commands.executeCommand(id, entryId);
      return true;
    }
  }
  const api = treeApi(services);
  if (!api) return false;
  await api.reveal(entryId, { select: true, focus: true });
  return true;
}

/** Focus the Pi Session tree view. @returns false when there is none. */
export async function focusTree(services: Services): Promise<boolean> {
  const tree = treeViewId(services);
  if (!tree) return false;
  await vscode.commands.executeCommand(`${tree}.focus`);
  return true;
}
