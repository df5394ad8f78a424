/**
 * Commands about which session is shown: "Pi: Select Session…" (QuickPick, pins the choice),
 * "Pi: Follow Latest Session" (unpins) and "Pi: Refresh Session".
 */

import * as os from "node:os";
import * as vscode from "vscode";
import type { Services } from "../services";
import { followRow, projectFolderLabel, sessionPickRows } from "./picker";

interface SessionItem extends vscode.QuickPickItem {
  file?: string;
  follow?: boolean;
}

/** Register the session commands. */
export function registerSessionCommands(services: Services): void {
  const { context, sessions, log } = services;
  context.subscriptions.push(
    vscode.commands.registerCommand("piContext.selectSession", () => selectSession(services)),
    vscode.commands.registerCommand("piContext.followLatest", async () => {
      await sessions.followLatest();
      const c = sessions.current;
      log.info(c ? `following the latest session: ${c.file}` : "following the latest session (none yet)");
    }),
    vscode.commands.registerCommand("piContext.refresh", () => sessions.refresh()),
  );
}

/** Show the QuickPick of the workspace's sessions; pin the one picked (or follow the latest). */
async function selectSession(services: Services): Promise<void> {
  const { sessions } = services;
  const quickPick = vscode.window.createQuickPick<SessionItem>();
  quickPick.title = "Pi: Select Session";
  quickPick.placeholder = "Session name or first message";
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  quickPick.busy = true;
  quickPick.show();
  try {
    const list = await sessions.listSessions();
    const current = sessions.current;
    const folders = (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === "file")
      .map((f) => ({ name: f.name, path: f.uri.fsPath }));
    const home = os.homedir();
    const rows = sessionPickRows(list, {
      ...(current ? { currentFile: current.file, currentEntryCount: current.session.records.length } : {}),
      nowMs: Date.now(),
      locale: vscode.env.language,
      folderName: (s) => projectFolderLabel(s.cwd, folders, home),
    });
    const items: SessionItem[] = [];
    items.push({ ...followRow(!current?.pinned, folders.length > 0), follow: true } as SessionItem);
    if (rows.length > 0)
      items.push({
        label: folders.length === 0 ? "all pi sessions (no folder open)" : "sessions",
        kind: vscode.QuickPickItemKind.Separator,
      });
    for (const row of rows) {
      items.push({
        label: `${row.current ? (current?.pinned ? "$(pinned) " : "$(check) ") : ""}${row.label}`,
        description: row.description,
        detail: row.detail,
        file: row.file,
      });
    }
    if (rows.length === 0) {
      const dirs = sessions.discovery?.searchedDirs ?? [];
      items.push({
        label: "$(info) No pi sessions found",
        detail: dirs.length ? `Looked in ${dirs.join(", ")}` : undefined,
        alwaysShow: true,
      } as SessionItem);
    }
    quickPick.items = items;
    const active = items.find((i) => i.file !== undefined && i.file === current?.file);
    if (active) quickPick.activeItems = [active];
  } catch (error) {
    services.log.error(`listing sessions failed: ${(error as Error).message}`);
    quickPick.items = [{ label: "$(error) Could not list sessions", detail: (error as Error).message }];
  } finally {
    quickPick.busy = false;
  }
  const picked = await new Promise<SessionItem | undefined>((resolve) => {
    quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
    quickPick.onDidHide(() => resolve(undefined));
  });
  quickPick.dispose();
  if (!picked) return;
  if (picked.follow) await sessions.followLatest();
  else if (picked.file) await sessions.pin(picked.file);
}
