/**
 * The Pi Context panel host: the editor `WebviewPanel` and the sidebar `WebviewView`. The state is
 * posted first; its slow details follow once states are quiet and the user has paused, since on
 * 2 cores they would hold back the user's next command. Webview messages pass `parseWebviewMessage`.
 */

import * as vscode from "vscode";
import { PRODUCT_NAME } from "../shared/format";
import {
  applyPanelDetails,
  parseWebviewMessage,
  type HostMessage,
  type PanelDetails,
  type PanelState,
} from "../shared/protocol";
import { panelDetailSteps } from "../viewModel/panelState";
import type { CurrentSession, Services } from "../services";
import { fileStatusMessage, fillFileFlags } from "./files";
import type { HostKind, PanelHost, Sender } from "./host";
import { webviewHtml, webviewOptions } from "./html";
import { handleCommand } from "./messages";
import { buildState, buildStateSteps, capabilities } from "./state";

export const UPDATE_THROTTLE_MS = 250;
/** Details are computed once no newer state came for this long (ms)… */
export const DETAILS_QUIET_MS = 600;
/** …or at the latest this long after they were first wanted (ms). */
export const DETAILS_MAX_WAIT_MS = 2000;
export const PANEL_VIEW_TYPE = "piContext.panel";
export const VIEW_ID = "piContext.panelView";

/** Run steps with an event-loop turn between them; `undefined` once `alive()` says the result is unwanted. */
async function stepwise<T>(
  steps: Generator<void, T>,
  hold: () => number,
  alive: () => boolean,
): Promise<T | undefined> {
  for (;;) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let wait = hold(); wait > 0; wait = hold()) await new Promise((resolve) => setTimeout(resolve, wait));
    if (!alive()) return undefined;
    const step = steps.next();
    if (step.done) return step.value;
  }
}

function sessionMark(session: CurrentSession["session"]): string {
  return `${session.records.length}:${session.size}:${session.mtimeMs}:${session.duplicateIds}`;
}

interface Target {
  readonly kind: HostKind;
  readonly webview: vscode.Webview;
  visible(): boolean;
  stale: boolean;
  ready: boolean;
  shown?: PanelState;
}

function newTarget(kind: Target["kind"], webview: vscode.Webview, visible: () => boolean): Target {
  return { kind, webview, visible, stale: true, ready: false };
}

/** For the integration tests. */
export interface PanelControllerApi {
  readonly state: PanelState | undefined;
  readonly panel: vscode.WebviewPanel | undefined;
  readonly received: { message: unknown; ok: boolean; error?: string }[];
  receive(message: unknown, from?: HostKind): Promise<void>;
  update(force?: boolean): Promise<void>;
  readonly builds: number;
  readonly posts: number;
  readonly fileStatusPosts: number;
  postFileStatus(): Promise<void>;
}

export function registerPanel(services: Services): void {
  services.context.subscriptions.push(new PanelController(services));
}

class PanelController implements vscode.Disposable, PanelControllerApi, PanelHost {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly targets = new Set<Target>();
  private panelValue: vscode.WebviewPanel | undefined;
  private stateValue: PanelState | undefined;
  private lastUpdate = 0;
  private timer: NodeJS.Timeout | undefined;
  private updating: Promise<void> | undefined;
  private dirty = true;
  private building = false;
  private detailsWanted: { state: PanelState; current: CurrentSession; at: number } | undefined;
  private detailsSince = 0;
  private detailsRun: Promise<void> | undefined;
  readonly received: { message: unknown; ok: boolean; error?: string }[] = [];
  builds = 0;
  posts = 0;
  fileStatusPosts = 0;

  constructor(readonly services: Services) {
    services.commands.add({
      "piContext.openPanel": () => this.openPanel(),
      // Not contributed (not in the palette): for integration tests.
      "piContext._panelController": (): PanelControllerApi => this,
    });
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, { resolveWebviewView: (view) => this.resolveView(view) }),
      vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => this.adoptPanel(panel),
      }),
      services.sessions.onDidChange(() => this.schedule()),
      services.liveBridge.onDidChange(() => this.schedule()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("piContext.gauge") || e.affectsConfiguration("piContext.warning")) this.schedule();
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => this.postFileStatus()),
      vscode.workspace.onDidCreateFiles(() => this.postFileStatus()),
      vscode.workspace.onDidDeleteFiles(() => this.postFileStatus()),
      vscode.workspace.onDidRenameFiles(() => this.postFileStatus()),
    );
  }

  get state(): PanelState | undefined {
    return this.stateValue;
  }

  get panel(): vscode.WebviewPanel | undefined {
    return this.panelValue;
  }

  get panelColumn(): vscode.ViewColumn | undefined {
    return this.panelValue?.viewColumn;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.panelValue?.dispose();
    for (const d of this.disposables) d.dispose();
  }

  private attach(
    target: Target,
    onDispose: (l: () => void) => vscode.Disposable,
    onVisible: (l: () => void) => vscode.Disposable,
  ): void {
    this.targets.add(target);
    this.services.activity.note(); // the webview is loading; its first render needs the CPU
    this.prebuild();
    const subs = [
      target.webview.onDidReceiveMessage((m) => void this.receive(m, target.kind, target)),
      onVisible(() => {
        if (!target.visible() || !target.stale) return;
        // not ready: its `ready` brings the state. Unchanged since built: that state, not a rebuild
        // (which would re-render every other webview showing it)
        if (!target.ready || this.building) return;
        if (this.stateValue && !this.dirty) this.show(target, this.stateValue);
        else this.schedule();
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
      webviewOptions(this.services.context.extensionUri),
    );
    this.adoptPanel(panel);
    return panel;
  }

  private adoptPanel(panel: vscode.WebviewPanel): void {
    const extensionUri = this.services.context.extensionUri;
    this.panelValue?.dispose();
    this.panelValue = panel;
    panel.iconPath = vscode.Uri.joinPath(extensionUri, "media", "pi-context.svg");
    panel.webview.options = webviewOptions(extensionUri);
    panel.webview.html = webviewHtml(panel.webview, extensionUri, "panel");
    const target = newTarget("panel", panel.webview, () => panel.visible);
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
    const extensionUri = this.services.context.extensionUri;
    view.webview.options = webviewOptions(extensionUri);
    view.webview.html = webviewHtml(view.webview, extensionUri, "view");
    const target = newTarget("view", view.webview, () => view.visible);
    this.attach(
      target,
      (l) => view.onDidDispose(l),
      (l) => view.onDidChangeVisibility(l),
    );
  }

  private show(target: Target, state: PanelState): void {
    target.stale = false;
    target.shown = state;
    this.posts++;
    this.post(target, { type: "state", state });
  }

  private post(target: Target, message: HostMessage): void {
    void target.webview.postMessage(message).then(undefined, () => undefined);
  }

  /** Build the state while a webview loads, so its `ready` shows it at once. */
  private prebuild(): void {
    if (this.building) return;
    void this.serialUpdate(true, () => this.stateValue !== undefined && !this.dirty).catch((error: unknown) =>
      this.services.log.error(`panel: ${(error as Error).stack ?? error}`),
    );
  }

  private schedule(): void {
    this.dirty = true;
    if (this.timer) return;
    const wait = Math.max(0, this.lastUpdate + UPDATE_THROTTLE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update(false);
    }, wait);
  }

  async update(force = true): Promise<void> {
    await this.serialUpdate(force);
    while (this.detailsRun) await this.detailsRun;
  }

  private async serialUpdate(force: boolean, skip?: () => boolean): Promise<void> {
    while (this.updating) await this.updating;
    if (skip?.()) return;
    this.updating = this.doUpdate(force).finally(() => (this.updating = undefined));
    await this.updating;
  }

  private wantDetails(state: PanelState, current: CurrentSession): void {
    if (!this.detailsWanted) this.detailsSince = Date.now();
    this.detailsWanted = { state, current, at: Date.now() };
    this.detailsRun ??= this.detailsLoop().finally(() => (this.detailsRun = undefined));
  }

  private async detailsLoop(): Promise<void> {
    while (this.detailsWanted) {
      const wanted = this.detailsWanted;
      // the user's pause is not bounded by DETAILS_MAX_WAIT_MS: what they do ends, pi's streaming may not
      const due = Math.max(
        Math.min(wanted.at + DETAILS_QUIET_MS, this.detailsSince + DETAILS_MAX_WAIT_MS),
        Date.now() + this.services.activity.pauseIn(),
      );
      if (Date.now() < due) {
        await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        continue;
      }
      this.detailsWanted = undefined;
      if (this.stateValue === wanted.state) await this.details(wanted.state, wanted.current);
    }
  }

  private async doUpdate(force: boolean): Promise<void> {
    this.lastUpdate = Date.now();
    const ready = [...this.targets].filter((t) => t.ready);
    const visible = ready.filter((t) => t.visible());
    if (!force && visible.length === 0) {
      for (const t of ready) t.stale = true;
      return;
    }
    this.dirty = false;
    this.building = true;
    this.builds++;
    let current = this.services.sessions.current;
    let state: PanelState;
    try {
      // in steps, so the user's next command need not wait; a session refreshed meanwhile is built again
      const mark = current && sessionMark(current.session);
      const built = await stepwise(
        buildStateSteps(this.services, current, { details: false }),
        () => 0,
        () => !current || sessionMark(current.session) === mark,
      );
      if (!built) current = this.services.sessions.current;
      state = built ?? buildState(this.services, current, { details: false });
      state.capabilities = await capabilities(this.services);
      state.locale = vscode.env.language;
      await fillFileFlags(state);
      this.stateValue = state;
      for (const t of this.targets) {
        if (!t.ready) continue;
        if (t.visible()) this.show(t, state);
        else t.stale = true;
      }
    } finally {
      this.building = false;
    }
    if (state.detailsPending && current) this.wantDetails(state, current);
  }

  private async details(state: PanelState, current: CurrentSession): Promise<void> {
    let details: PanelDetails | undefined;
    try {
      details = await stepwise(
        panelDetailSteps(current.session, state),
        () => this.services.activity.pauseIn(),
        () => this.stateValue === state, // a newer state brings its own details
      );
      if (!details) return;
    } catch (error) {
      // a body changed on disk meanwhile: the whole state again (never a wrong number)
      this.services.log.warn(`panel: details of ${current.file}: ${(error as Error).message}`);
      const full = buildState(this.services, this.services.sessions.current);
      full.capabilities = state.capabilities;
      full.locale = state.locale;
      await fillFileFlags(full);
      if (this.stateValue !== state) return; // a newer state came meanwhile
      for (const t of this.targets) if (t.shown === state) this.show(t, full);
      this.stateValue = full;
      return;
    }
    if (this.stateValue !== state || !applyPanelDetails(state, details)) return;
    for (const t of this.targets) if (t.shown === state) this.post(t, { type: "details", details });
  }

  /** Posted only when a flag changed: tab events come in bursts and each post re-renders every webview. */
  async postFileStatus(): Promise<void> {
    const state = this.stateValue;
    if (!state?.files) return;
    const before = JSON.stringify(fileStatusMessage(state).files);
    await fillFileFlags(state);
    const message = fileStatusMessage(state);
    if (JSON.stringify(message.files) === before) return;
    this.fileStatusPosts++;
    for (const t of this.targets) if (t.ready && t.visible()) this.post(t, message);
  }

  async receive(raw: unknown, from: HostKind = "panel", target?: Target): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    this.received.push(parsed.ok ? { message: raw, ok: true } : { message: raw, ok: false, error: parsed.error });
    if (this.received.length > 200) this.received.splice(0, this.received.length - 200);
    if (!parsed.ok) {
      this.services.log.warn(`panel: ignored an invalid message from the webview: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    // not a trim preview: the webview asks one after every state, which would hold the details back forever
    if (message.type !== "previewTrim") this.services.activity.note();
    const sender: Sender = { kind: from, ...(target ? { post: (m: HostMessage) => this.post(target, m) } : {}) };
    try {
      if (message.type === "ready") {
        if (target) {
          target.ready = true;
          target.stale = true;
        }
        // the current state rather than a rebuild, which would wait for its details first
        const state = this.stateValue;
        if (target && this.building) return; // the state being built is posted to it as well
        if (target && state && !this.dirty && target.visible()) this.show(target, state);
        else await this.update();
      } else await handleCommand(this, message, sender);
    } catch (error) {
      this.services.log.error(`panel: ${message.type} failed: ${(error as Error).stack ?? error}`);
      sender.post?.({
        type: "notice",
        level: "error",
        text: vscode.l10n.t("{0} failed: {1}", message.type, (error as Error).message),
      });
    }
  }
}
