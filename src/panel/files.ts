/** Tracked files in VS Code: host-only flags and file commands, only for paths the host itself sent. */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { HostMessage, PanelState, TrackedFileModel, WebviewMessage } from "../shared/protocol";
import * as notify from "../ui/notify";
import { isNetworkPath } from "../shared/untrusted";
import { editorColumn, notice, type PanelHost, type Sender } from "./host";

export type FileCommand = Extract<WebviewMessage, { type: "openFile" | "openGitDiff" | "copyPath" }>;

export function trackedFiles(state: PanelState | undefined): TrackedFileModel[] {
  return state?.files ? [...state.files.readFiles, ...state.files.modifiedFiles] : [];
}

/** Windows UNC, device or `file://host/` paths: never stat'ed, opened or diffed. */
export function isNetworkFile(f: Pick<TrackedFileModel, "path" | "absolutePath">): boolean {
  return isNetworkPath(f.absolutePath, process.platform) || isNetworkPath(f.path, process.platform);
}

export function isFile(file: string): Promise<boolean> {
  return fs.promises.stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}

export async function fillFileFlags(state: PanelState): Promise<void> {
  const files = trackedFiles(state);
  if (files.length === 0) return;
  const open = openTabPaths();
  const git = await gitApi();
  await Promise.all(
    files.map(async (f) => {
      const uri = vscode.Uri.file(f.absolutePath);
      if (isNetworkFile(f)) {
        // never touched: a stat would connect to that server (Windows offers it the user's credentials)
        f.openInTab = open.has(uri.fsPath);
        f.outsideWorkspace = true;
        f.inGitRepo = false;
        return;
      }
      f.exists = await isFile(f.absolutePath);
      f.openInTab = open.has(uri.fsPath);
      f.outsideWorkspace = vscode.workspace.getWorkspaceFolder(uri) === undefined;
      try {
        f.inGitRepo = Boolean(f.exists && git?.getRepository(uri));
      } catch {
        f.inGitRepo = false;
      }
    }),
  );
}

export function fileStatusMessage(state: PanelState): Extract<HostMessage, { type: "fileStatus" }> {
  const files: Extract<HostMessage, { type: "fileStatus" }>["files"] = {};
  for (const f of trackedFiles(state)) {
    const flags: (typeof files)[string] = {};
    if (f.exists !== undefined) flags.exists = f.exists;
    if (f.openInTab !== undefined) flags.openInTab = f.openInTab;
    if (f.outsideWorkspace !== undefined) flags.outsideWorkspace = f.outsideWorkspace;
    if (f.inGitRepo !== undefined) flags.inGitRepo = f.inGitRepo;
    files[f.absolutePath] = flags;
  }
  return { type: "fileStatus", files };
}

/** A path that is not a tracked file of the current state is logged and ignored. */
export async function runFileCommand(host: PanelHost, message: FileCommand, sender: Sender): Promise<void> {
  const file = trackedFiles(host.state).find((f) => f.absolutePath === message.path);
  if (!file) {
    host.services.log.warn(`panel: ${message.type} for a path that is not a tracked file: ${message.path}`);
    return;
  }
  const uri = vscode.Uri.file(file.absolutePath);
  if (message.type === "copyPath") {
    await vscode.env.clipboard.writeText(file.absolutePath);
    notice(sender, "info", vscode.l10n.t("Copied {0}", file.absolutePath));
    return;
  }
  if (isNetworkFile(file)) {
    host.services.log.warn(`panel: ${message.type} refused for a network path: ${file.absolutePath}`);
    notice(
      sender,
      "warning",
      vscode.l10n.t(
        "{0} is on another machine (a network path): Pi Context does not open it, because Windows would connect to that server with your credentials. Copy the path to open it yourself.",
        file.path,
      ),
    );
    return;
  }
  if (!(await isFile(file.absolutePath))) {
    file.exists = false;
    void host.postFileStatus();
    notice(sender, "warning", vscode.l10n.t("{0} does not exist on disk.", file.path));
    void offerMissing(file);
    return;
  }
  const viewColumn = editorColumn(host, sender.kind, message.type === "openFile" && message.toSide === true);
  if (message.type === "openFile") {
    await vscode.commands.executeCommand("vscode.open", uri, {
      preview: message.preview,
      viewColumn,
      preserveFocus: false,
    });
    return;
  }
  const git = await gitApi();
  if (!git?.getRepository(uri)) {
    notice(sender, "warning", vscode.l10n.t("{0} is not in a git repository.", file.path));
    return;
  }
  const head = git.toGitUri(uri, "HEAD");
  await vscode.commands.executeCommand(
    "vscode.diff",
    head,
    uri,
    vscode.l10n.t("{0} (HEAD ↔ Working Tree)", path.basename(file.absolutePath)),
    { viewColumn, preview: true },
  );
}

async function offerMissing(file: TrackedFileModel): Promise<void> {
  const last = file.sources[file.sources.length - 1];
  const seen = !last
    ? ""
    : last.op === "read"
      ? vscode.l10n.t(" (pi read it in {0} {1})", last.kind, last.ordinal)
      : vscode.l10n.t(" (pi changed it in {0} {1})", last.kind, last.ordinal);
  let folder = path.dirname(file.absolutePath);
  while (!(await isDirectory(folder)) && path.dirname(folder) !== folder) folder = path.dirname(folder);
  const folderUri = vscode.Uri.file(folder);
  const inWorkspace = vscode.workspace.getWorkspaceFolder(folderUri) !== undefined;
  const revealFolder = vscode.l10n.t("Reveal Folder");
  const copyPath = vscode.l10n.t("Copy Path");
  const actions = [...(inWorkspace ? [revealFolder] : []), copyPath];
  const choice = await notify.warn(
    vscode.l10n.t("{0} does not exist on disk{1}.", file.absolutePath, seen),
    ...actions,
  );
  if (choice === revealFolder) await vscode.commands.executeCommand("revealInExplorer", folderUri);
  else if (choice === copyPath) await vscode.env.clipboard.writeText(file.absolutePath);
}

function isDirectory(dir: string): Promise<boolean> {
  return fs.promises.stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

function openTabPaths(): Set<string> {
  const out = new Set<string>();
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      if (
        input instanceof vscode.TabInputText ||
        input instanceof vscode.TabInputCustom ||
        input instanceof vscode.TabInputNotebook
      ) {
        if (input.uri.scheme === "file") out.add(input.uri.fsPath);
      } else if (input instanceof vscode.TabInputTextDiff) {
        if (input.modified.scheme === "file") out.add(input.modified.fsPath);
      }
    }
  }
  return out;
}

interface GitApi {
  getRepository(uri: vscode.Uri): unknown;
  toGitUri(uri: vscode.Uri, ref: string): vscode.Uri;
}

async function gitApi(): Promise<GitApi | undefined> {
  try {
    const ext = vscode.extensions.getExtension<{ enabled: boolean; getAPI(version: 1): GitApi }>("vscode.git");
    if (!ext) return undefined;
    const exports = ext.isActive ? ext.exports : await ext.activate();
    return exports?.enabled ? exports.getAPI(1) : undefined;
  } catch {
    return undefined;
  }
}
