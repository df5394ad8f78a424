/**
 * The Pi Context panel host: "Pi: Open Context Panel" (`piContext.openPanel`, a `WebviewPanel` in
 * the editor area) and the same UI as the `piContext.panelView` `WebviewView` in the Pi view
 * container. Both render `webview/main.ts` (bundled to `dist/webview/`), talk through
 * `src/protocol.ts`, and show the view model of `src/viewModel/panelState.ts` for
 * `services.sessions.current`.
 *
 * - Live: `sessions.onDidChange` → one throttled rebuild ({@link UPDATE_THROTTLE_MS}) shared by every
 *   visible webview; hidden webviews are refreshed when they become visible again.
 * - `retainContextWhenHidden` is not used: the whole state is re-sent on `ready`/visibility, and the
 *   webview keeps its UI state (open sections, filter, selected diff pair) in `vscode.setState`.
 * - Every message from a webview goes through `parseWebviewMessage`; invalid ones are logged and
 *   dropped. File commands only accept absolute paths the host itself sent as tracked files.
 * - "Open in Diff Editor" shows the `pi-context-summary:` documents of `src/summaryDocuments.ts`.
 * - Actions run the palette's commands (`piContext.compact`, `piContext.selectSession`,
 *   `piContext.refresh`, `<tree view id>.focus`) when registered; "reveal in tree" uses a
 *   `piContext.tree.reveal(entryId)` command when there is one, else the tree view's exported API.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { buildProjection } from "../core/rules/context";
import { PRODUCT_NAME } from "../shared/format";
import { emptyStateMessage } from "../viewModel/statusBar";
import { categoryEntries } from "../viewModel/breakdown";
import { buildPanelState, emptyPanelState } from "../viewModel/panelState";
import {
  parseWebviewMessage,
  type HostMessage,
  type PanelState,
  type TrackedFileModel,
  type WebviewMessage,
} from "../shared/protocol";
import type { CurrentSession, Services } from "../services";
import { openSummaryDiff, summaryUri } from "../ui/summaryDocuments";

/** Minimum time between two rebuilds of the view model (ms). */
export const UPDATE_THROTTLE_MS = 250;
/** Commands that reveal an entry id in the Pi Session tree, tried in order. */
const REVEAL_COMMANDS = ["piContext.tree.reveal", "piContext.revealEntry"];
/** `WebviewPanel` view type and the `WebviewView` id (package.json). */
export const PANEL_VIEW_TYPE = "piContext.panel";
export const VIEW_ID = "piContext.panelView";
/** The view container (package.json `viewsContainers.activitybar`). */
export const VIEW_CONTAINER_ID = "pi-context";

/** A webview we render into (the editor panel or the sidebar view). */
interface Target {
  readonly kind: "panel" | "view";
  readonly webview: vscode.Webview;
  visible(): boolean;
  /** Set when a state was skipped while hidden. */
  stale: boolean;
  ready: boolean;
}

/** What the extension exposes for tests (`panelController()` in the integration suites). */
export interface PanelControllerApi {
  readonly state: PanelState | undefined;
  readonly panel: vscode.WebviewPanel | undefined;
  /** Messages received from webviews, in order, with the validator's verdict (for tests). */
  readonly received: { message: unknown; ok: boolean; error?: string }[];
  /** Handle a message as if a webview had posted it (runs the same validator). */
  receive(message: unknown, from?: "panel" | "view"): Promise<void>;
  /** Rebuild now (skips the throttle; builds even when no webview is visible). */
  update(force?: boolean): Promise<void>;
}

let controller: PanelController | undefined;

/** The live controller (undefined before `registerPanel`). For integration tests. */
export function panelController(): PanelControllerApi | undefined {
  return controller;
}

/** Register `piContext.openPanel`, the sidebar view provider and the summary document provider. */
export function registerPanel(services: Services): void {
  const c = new PanelController(services);
  controller = c;
  services.context.subscriptions.push(c);
}

function nonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 32; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

class PanelController implements vscode.Disposable, PanelControllerApi {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly targets = new Set<Target>();
  private panelValue: vscode.WebviewPanel | undefined;
  private stateValue: PanelState | undefined;
  private lastUpdate = 0;
  private timer: NodeJS.Timeout | undefined;
  private updating: Promise<void> | undefined;
  readonly received: { message: unknown; ok: boolean; error?: string }[] = [];

  constructor(private readonly services: Services) {
    const { context } = services;
    this.disposables.push(
      vscode.commands.registerCommand("piContext.openPanel", () => this.openPanel()),
      // Not contributed (not in the palette): the controller for integration tests.
      vscode.commands.registerCommand("piContext._panelController", (): PanelControllerApi => this),
      vscode.window.registerWebviewViewProvider(VIEW_ID, { resolveWebviewView: (view) => this.resolveView(view) }),
      vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => this.adoptPanel(panel),
      }),
      services.sessions.onDidChange(() => this.schedule()),
      vscode.window.tabGroups.onDidChangeTabs(() => this.postFileStatus()),
      vscode.workspace.onDidCreateFiles(() => this.postFileStatus()),
      vscode.workspace.onDidDeleteFiles(() => this.postFileStatus()),
      vscode.workspace.onDidRenameFiles(() => this.postFileStatus()),
    );
    void context;
  }

  get state(): PanelState | undefined {
    return this.stateValue;
  }

  get panel(): vscode.WebviewPanel | undefined {
    return this.panelValue;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.panelValue?.dispose();
    for (const d of this.disposables) d.dispose();
    if (controller === this) controller = undefined;
  }

  // ------------------------------------------------------------------ webviews

  private webviewOptions(): vscode.WebviewOptions {
    return {
      enableScripts: true,
      enableCommandUris: false,
      localResourceRoots: [vscode.Uri.joinPath(this.services.context.extensionUri, "dist", "webview")],
    };
  }

  private html(webview: vscode.Webview, kind: "panel" | "view"): string {
    const root = vscode.Uri.joinPath(this.services.context.extensionUri, "dist", "webview");
    const uri = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(root, f)).toString();
    const n = nonce();
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${n}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri("codicon.css")}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${uri("panel.css")}">
<title>${PRODUCT_NAME}</title>
</head>
<body data-host="${kind}">
<div id="app" role="main"><p class="loading">Loading…</p></div>
<script type="module" nonce="${n}" src="${uri("main.js")}"></script>
</body>
</html>`;
  }

  private attach(
    target: Target,
    onDispose: (l: () => void) => vscode.Disposable,
    onVisible: (l: () => void) => vscode.Disposable,
  ): void {
    this.targets.add(target);
    const subs = [
      target.webview.onDidReceiveMessage((m) => void this.receive(m, target.kind, target)),
      onVisible(() => {
        if (target.visible() && target.stale) this.schedule();
      }),
    ];
    onDispose(() => {
      this.targets.delete(target);
      for (const s of subs) s.dispose();
    });
  }

  private openPanel(): vscode.WebviewPanel {
    if (this.panelValue) {
      this.panelValue.reveal(undefined, false);
      return this.panelValue;
    }
    const panel = vscode.window.createWebviewPanel(
      PANEL_VIEW_TYPE,
      PRODUCT_NAME,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      this.webviewOptions(),
    );
    this.adoptPanel(panel);
    return panel;
  }

  private adoptPanel(panel: vscode.WebviewPanel): void {
    this.panelValue?.dispose();
    this.panelValue = panel;
    panel.iconPath = vscode.Uri.joinPath(this.services.context.extensionUri, "media", "pi-context.svg");
    panel.webview.options = this.webviewOptions();
    panel.webview.html = this.html(panel.webview, "panel");
    const target: Target = {
      kind: "panel",
      webview: panel.webview,
      visible: () => panel.visible,
      stale: true,
      ready: false,
    };
    this.attach(
      target,
      (l) =>
        panel.onDidDispose(() => {
          if (this.panelValue === panel) this.panelValue = undefined;
          l();
        }),
      (l) => panel.onDidChangeViewState(l),
    );
  }

  private resolveView(view: vscode.WebviewView): void {
    view.webview.options = this.webviewOptions();
    view.webview.html = this.html(view.webview, "view");
    const target: Target = {
      kind: "view",
      webview: view.webview,
      visible: () => view.visible,
      stale: true,
      ready: false,
    };
    this.attach(
      target,
      (l) => view.onDidDispose(l),
      (l) => view.onDidChangeVisibility(l),
    );
  }

  private post(target: Target, message: HostMessage): void {
    void target.webview.postMessage(message).then(undefined, () => undefined);
  }

  // ------------------------------------------------------------------ state

  /** Throttled rebuild: at most one per {@link UPDATE_THROTTLE_MS}, always a trailing one. */
  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastUpdate + UPDATE_THROTTLE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update(false);
    }, wait);
  }

  async update(force = true): Promise<void> {
    while (this.updating) await this.updating;
    this.updating = this.doUpdate(force).finally(() => (this.updating = undefined));
    return this.updating;
  }

  private async doUpdate(force: boolean): Promise<void> {
    this.lastUpdate = Date.now();
    const ready = [...this.targets].filter((t) => t.ready);
    const visible = ready.filter((t) => t.visible());
    if (!force && visible.length === 0) {
      // nothing shows it: build when a webview becomes visible again
      for (const t of ready) t.stale = true;
      return;
    }
    const state = this.buildState(this.services.sessions.current);
    state.capabilities = await this.capabilities();
    state.locale = vscode.env.language;
    await this.fillFileFlags(state);
    this.stateValue = state;
    for (const t of ready) {
      if (t.visible()) {
        t.stale = false;
        this.post(t, { type: "state", state });
      } else t.stale = true;
    }
  }

  private buildState(current: CurrentSession | undefined): PanelState {
    if (!current) {
      // the same words as the gauge's tooltip and the Pi Session tree
      const d = this.services.sessions.discovery;
      const reason = !d || d.phase === "starting" ? "starting" : !d.workspace ? "no-folder" : "no-session";
      return emptyPanelState(emptyStateMessage(d), undefined, reason);
    }
    try {
      return buildPanelState(
        {
          file: current.file,
          session: current.session,
          analysis: current.analysis,
          pinned: current.pinned,
          updatedAt: current.updatedAt,
          modifiedAt: current.session.mtimeMs,
        },
        { warningMargin: this.services.config().warning.margin },
      );
    } catch (error) {
      this.services.log.error(`panel: could not build the view of ${current.file}: ${(error as Error).stack ?? error}`);
      return emptyPanelState(
        `Could not show ${path.basename(current.file)}: ${(error as Error).message}`,
        undefined,
        "error",
      );
    }
  }

  private treeViewId(): string | undefined {
    const views = (this.services.context.extension.packageJSON?.contributes?.views?.[VIEW_CONTAINER_ID] ?? []) as {
      id?: string;
      type?: string;
    }[];
    return views.find((v) => v.id && v.type !== "webview")?.id;
  }

  private async capabilities(): Promise<PanelState["capabilities"]> {
    const commands = new Set(await vscode.commands.getCommands(true));
    const tree = this.treeViewId();
    return {
      compact: commands.has("piContext.compact"),
      selectSession: commands.has("piContext.selectSession"),
      focusTree: tree !== undefined && commands.has(`${tree}.focus`),
      revealEntry: REVEAL_COMMANDS.some((id) => commands.has(id)) || this.treeApi() !== undefined,
      git: vscode.extensions.getExtension("vscode.git") !== undefined,
      summaryDiffEditor: true,
    };
  }

  private trackedFiles(state: PanelState | undefined = this.stateValue): TrackedFileModel[] {
    return state?.files ? [...state.files.readFiles, ...state.files.modifiedFiles] : [];
  }

  /** Fill exists / openInTab / outsideWorkspace / inGitRepo of every tracked file (in place). */
  private async fillFileFlags(state: PanelState): Promise<void> {
    const files = this.trackedFiles(state);
    if (files.length === 0) return;
    const open = openTabPaths();
    const git = await gitApi();
    await Promise.all(
      files.map(async (f) => {
        const uri = vscode.Uri.file(f.absolutePath);
        f.exists = await fs.promises.stat(f.absolutePath).then(
          (s) => s.isFile(),
          () => false,
        );
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

  private async postFileStatus(): Promise<void> {
    const state = this.stateValue;
    if (!state?.files) return;
    await this.fillFileFlags(state);
    const files: Extract<HostMessage, { type: "fileStatus" }>["files"] = {};
    for (const f of this.trackedFiles(state)) {
      const flags: (typeof files)[string] = {};
      if (f.exists !== undefined) flags.exists = f.exists;
      if (f.openInTab !== undefined) flags.openInTab = f.openInTab;
      if (f.outsideWorkspace !== undefined) flags.outsideWorkspace = f.outsideWorkspace;
      if (f.inGitRepo !== undefined) flags.inGitRepo = f.inGitRepo;
      files[f.absolutePath] = flags;
    }
    for (const t of this.targets) if (t.ready && t.visible()) this.post(t, { type: "fileStatus", files });
  }

  // ------------------------------------------------------------------ messages

  async receive(raw: unknown, from: "panel" | "view" = "panel", target?: Target): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    this.received.push(parsed.ok ? { message: raw, ok: true } : { message: raw, ok: false, error: parsed.error });
    if (this.received.length > 200) this.received.splice(0, this.received.length - 200);
    if (!parsed.ok) {
      this.services.log.warn(`panel: ignored an invalid message from the webview: ${parsed.error}`);
      return;
    }
    try {
      await this.handle(parsed.message, from, target);
    } catch (error) {
      this.services.log.error(`panel: ${parsed.message.type} failed: ${(error as Error).stack ?? error}`);
      if (target)
        this.post(target, {
          type: "notice",
          level: "error",
          text: `${parsed.message.type} failed: ${(error as Error).message}`,
        });
    }
  }

  private notice(target: Target | undefined, level: "info" | "warning" | "error", text: string): void {
    if (target) this.post(target, { type: "notice", level, text });
  }

  private async handle(message: WebviewMessage, from: "panel" | "view", target: Target | undefined): Promise<void> {
    switch (message.type) {
      case "ready":
        if (target) {
          target.ready = true;
          target.stale = true;
        }
        await this.update();
        return;
      case "refresh":
        if (await hasCommand("piContext.refresh")) await vscode.commands.executeCommand("piContext.refresh");
        else await this.services.sessions.refresh();
        await this.update();
        return;
      case "compact":
        await vscode.commands.executeCommand("piContext.compact");
        return;
      case "selectSession":
        await vscode.commands.executeCommand("piContext.selectSession");
        return;
      case "focusTree": {
        const tree = this.treeViewId();
        if (tree) await vscode.commands.executeCommand(`${tree}.focus`);
        else this.notice(target, "warning", "The Pi Session tree is not available.");
        return;
      }
      case "revealEntry":
        if (!(await this.revealEntry(message.entryId))) {
          const tree = this.treeViewId();
          if (tree) await vscode.commands.executeCommand(`${tree}.focus`);
        }
        return;
      case "openProblem":
        await this.openProblem(message.id, from, target);
        return;
      case "openFolder":
        await vscode.commands.executeCommand("workbench.action.files.openFolder");
        return;
      case "requestCategory": {
        const current = this.services.sessions.current;
        if (!current || !target) return;
        const projection = buildProjection(current.session, current.analysis.inspect.leafId);
        const entries = categoryEntries(projection, current.analysis.inspect, current.session, message.category);
        this.post(target, { type: "category", category: message.category, entries });
        return;
      }
      case "openFile":
      case "openGitDiff":
      case "copyPath": {
        const file = this.trackedFiles().find((f) => f.absolutePath === message.path);
        if (!file) {
          this.services.log.warn(`panel: ${message.type} for a path that is not a tracked file: ${message.path}`);
          return;
        }
        const uri = vscode.Uri.file(file.absolutePath);
        if (message.type === "copyPath") {
          await vscode.env.clipboard.writeText(file.absolutePath);
          this.notice(target, "info", `Copied ${file.absolutePath}`);
          return;
        }
        const exists = await fs.promises.stat(file.absolutePath).then(
          (s) => s.isFile(),
          () => false,
        );
        if (!exists) {
          file.exists = false;
          void this.postFileStatus();
          this.notice(target, "warning", `${file.path} no longer exists.`);
          return;
        }
        const viewColumn = this.editorColumn(from, message.type === "openFile" && message.toSide === true);
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
          this.notice(target, "warning", `${file.path} is not in a git repository.`);
          return;
        }
        const head = git.toGitUri(uri, "HEAD");
        await vscode.commands.executeCommand(
          "vscode.diff",
          head,
          uri,
          `${path.basename(file.absolutePath)} (HEAD ↔ Working Tree)`,
          { viewColumn, preview: true },
        );
        return;
      }
      case "openDiff":
        await this.openSummaryDiff(message.fromId, message.toId, from, target);
        return;
    }
  }

  /**
   * Show where a problem is: its file (the session file, a pi settings file, models.json — only
   * files the host itself put in the state) at its line, selected; an entry without a line is
   * revealed in the Pi Session tree.
   */
  private async openProblem(id: string, from: "panel" | "view", target: Target | undefined): Promise<void> {
    const problem = this.stateValue?.session?.problems.find((p) => p.id === id);
    if (!problem) {
      this.notice(target, "warning", "That problem is no longer reported.");
      return;
    }
    if (
      problem.file &&
      (await fs.promises.stat(problem.file).then(
        (s) => s.isFile(),
        () => false,
      ))
    ) {
      const uri = vscode.Uri.file(problem.file);
      const options: vscode.TextDocumentShowOptions = { preview: true, viewColumn: this.editorColumn(from, false) };
      if (problem.line !== undefined && problem.line >= 1) {
        const line = problem.line - 1;
        options.selection = new vscode.Range(line, 0, line, 0);
      }
      await vscode.commands.executeCommand("vscode.open", uri, options);
      if (problem.line !== undefined)
        this.services.log.info(`panel: opened ${problem.file}:${problem.line} (${problem.code})`);
      return;
    }
    if (problem.entryId && (await this.revealEntry(problem.entryId))) return;
    this.notice(target, "info", problem.file ? `${problem.file} does not exist.` : problem.message);
  }

  /** The tree view's API (`activate()` exports `sessionTree.reveal(entryId, options)`), if present. */
  private treeApi():
    { reveal(entryId: string, options?: { select?: boolean; focus?: boolean }): Promise<unknown> } | undefined {
    const exports = this.services.context.extension.exports as { sessionTree?: { reveal?: unknown } } | undefined;
    const tree = exports?.sessionTree;
    return tree && typeof tree.reveal === "function"
      ? (tree as { reveal(entryId: string, options?: { select?: boolean; focus?: boolean }): Promise<unknown> })
      : undefined;
  }

  /** Reveal an entry in the Pi Session tree: a reveal command if one is registered, else the tree's API. */
  private async revealEntry(entryId: string): Promise<boolean> {
    const commands = new Set(await vscode.commands.getCommands(true));
    for (const id of REVEAL_COMMANDS) {
      if (commands.has(id)) {
        await vscode.commands.executeCommand(id, entryId);
        return true;
      }
    }
    const api = this.treeApi();
    if (!api) return false;
    await api.reveal(entryId, { select: true, focus: true });
    return true;
  }

  /** Where to open an editor for a click in the panel: not on top of the panel itself. */
  private editorColumn(from: "panel" | "view", toSide: boolean): vscode.ViewColumn {
    if (from === "view") return toSide ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    const panelColumn = this.panelValue?.viewColumn;
    if (toSide || panelColumn === undefined) return vscode.ViewColumn.Beside;
    const other = vscode.window.tabGroups.all.find((g) => g.viewColumn !== panelColumn);
    return other ? other.viewColumn : vscode.ViewColumn.Beside;
  }

  private async openSummaryDiff(
    fromId: string,
    toId: string,
    from: "panel" | "view",
    target: Target | undefined,
  ): Promise<void> {
    const state = this.stateValue;
    const older = state?.summaries.find((s) => s.entryId === fromId);
    const newer = state?.summaries.find((s) => s.entryId === toId);
    if (!older || !newer) {
      this.notice(target, "warning", "That summary is no longer on the current path.");
      return;
    }
    const file = state!.session!.file;
    if (from === "view") {
      // the compaction feature's diff (pi-context-summary: documents read from the session file)
      await openSummaryDiff(file, older.entryId, newer.entryId);
      return;
    }
    // from the editor panel: the same documents, but beside the panel instead of on top of it
    const title = `Summary: ${older.entryId} ↔ ${newer.entryId} — ${path.basename(file)}`;
    await vscode.commands.executeCommand(
      "vscode.diff",
      summaryUri(file, older.entryId),
      summaryUri(file, newer.entryId),
      title,
      { viewColumn: this.editorColumn(from, false), preview: false },
    );
  }
}

async function hasCommand(id: string): Promise<boolean> {
  return (await vscode.commands.getCommands(true)).includes(id);
}

/** Absolute paths of files shown in editor tabs (text, diff, custom and notebook editors). */
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

/** The subset of the git extension's API (v1) we use. */
interface GitApi {
  getRepository(uri: vscode.Uri): unknown;
  toGitUri(uri: vscode.Uri, ref: string): vscode.Uri;
}

/** The git extension's API, when the extension exists and is enabled. Never throws. */
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
