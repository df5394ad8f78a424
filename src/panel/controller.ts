/**
 * The Pi Context panel host: "Pi Context: Open Context Panel" (`piContext.openPanel`, a `WebviewPanel` in
 * the editor area) and the same UI as the `piContext.panelView` `WebviewView` in the Pi view
 * container. Both render `webview/main.ts` (bundled to `dist/webview/`, document in `html.ts`),
 * talk through `src/shared/protocol.ts`, and show the state of `state.ts` for
 * `services.sessions.current`.
 *
 * - Live: `sessions.onDidChange` and `liveBridge.onDidChange` (pi's live numbers, see `state.ts`) →
 *   one throttled rebuild ({@link UPDATE_THROTTLE_MS}) shared by every visible webview; hidden
 *   webviews are refreshed when they become visible again.
 * - The state is posted first; its details (what each compaction lost, what each trim suggestion
 *   saves: 0.5–1.8 s of the extension host on a 128 MB session) follow once the states have been
 *   quiet for {@link DETAILS_QUIET_MS}, or at the latest {@link DETAILS_MAX_WAIT_MS} after they were
 *   first wanted, and once the user has paused (`services.activity`, `ui/activity.ts`: a view
 *   shown, a tree row selected or expanded, a webview started or sent a message). Opening the Pi
 *   container renders the tree and both views at once; on a 2-core machine details computed right
 *   then held back the user's next commands (Reveal Leaf by ≈ 0.5 s, the editor panel by ≈ 0.7 s in
 *   `npm run bench:ui`), and a state replaced while pi streams is never detailed. A computation
 *   under way pauses between its steps while the user is active: opening the editor panel then is
 *   its first render alone.
 * - `retainContextWhenHidden` is not used: the whole state is re-sent on `ready`/visibility, and the
 *   webview keeps its UI state (open sections, filter, selected diff pair) in `vscode.setState`.
 * - Every message from a webview goes through `parseWebviewMessage`; invalid ones are logged and
 *   dropped; the commands are carried out by `messages.ts`. File commands only accept absolute
 *   paths the host itself sent as tracked files (`files.ts`).
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

/** Minimum time between two rebuilds of the view model (ms). */
export const UPDATE_THROTTLE_MS = 250;
/** The details of a state are computed once no newer state came for this long (ms)… */
export const DETAILS_QUIET_MS = 600;
/** …or at the latest this long after details were first wanted, while states keep coming (ms). */
export const DETAILS_MAX_WAIT_MS = 2000;
/** `WebviewPanel` view type and the `WebviewView` id (package.json). */
export const PANEL_VIEW_TYPE = "piContext.panel";
export const VIEW_ID = "piContext.panelView";

/**
 * Run a step generator to its end, giving the event loop a turn between steps (the extension host
 * stays responsive). Before each step, `hold()` is how long to wait first (ms, ≤ 0 for none) and
 * `alive()` whether the result is still wanted; when it is not, resolves to `undefined` unfinished.
 */
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

/** What changes when a session file is refreshed in place (entries appended, the file rewritten). */
function sessionMark(session: CurrentSession["session"]): string {
  return `${session.records.length}:${session.size}:${session.mtimeMs}:${session.duplicateIds}`;
}

/** A webview we render into (the editor panel or the sidebar view). */
interface Target {
  readonly kind: HostKind;
  readonly webview: vscode.Webview;
  visible(): boolean;
  /** Set when a state was skipped while hidden. */
  stale: boolean;
  ready: boolean;
  /** The state last posted to it (its `details` follow when they are ready). */
  shown?: PanelState;
}

/** A webview target that has not rendered yet (stale, not ready). */
function newTarget(kind: Target["kind"], webview: vscode.Webview, visible: () => boolean): Target {
  return { kind, webview, visible, stale: true, ready: false };
}

/** What the extension exposes for tests (`panelController()` in the integration suites). */
export interface PanelControllerApi {
  readonly state: PanelState | undefined;
  readonly panel: vscode.WebviewPanel | undefined;
  /** Messages received from webviews, in order, with the validator's verdict (for tests). */
  readonly received: { message: unknown; ok: boolean; error?: string }[];
  /** Handle a message as if a webview had posted it (runs the same validator). */
  receive(message: unknown, from?: HostKind): Promise<void>;
  /** Rebuild now (skips the throttle; builds even when no webview is visible); resolves once its details are in too. */
  update(force?: boolean): Promise<void>;
  /** How many states were built so far (for tests: showing a panel again must not rebuild). */
  readonly builds: number;
  /** How many states were posted to a webview so far (for tests). */
  readonly posts: number;
  /** How many times changed file flags were posted (`fileStatus`; for tests: a tab change that changes none posts nothing). */
  readonly fileStatusPosts: number;
  /** Post the tracked files' flags when one changed (what a tab change does). */
  postFileStatus(): Promise<void>;
}

let controller: PanelController | undefined;

/** The live controller (undefined before `registerPanel`). For integration tests. */
export function panelController(): PanelControllerApi | undefined {
  return controller;
}

/** Register `piContext.openPanel`, the sidebar view provider and the panel serializer. */
export function registerPanel(services: Services): void {
  const c = new PanelController(services);
  controller = c;
  services.context.subscriptions.push(c);
}

class PanelController implements vscode.Disposable, PanelControllerApi, PanelHost {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly targets = new Set<Target>();
  private panelValue: vscode.WebviewPanel | undefined;
  private stateValue: PanelState | undefined;
  private lastUpdate = 0;
  private timer: NodeJS.Timeout | undefined;
  private updating: Promise<void> | undefined;
  /** Something changed since the last build started (a rebuild is scheduled). */
  private dirty = true;
  /** A state is being built and not yet posted. */
  private building = false;
  /** The newest state whose details are wanted, when it was asked for (ms). */
  private detailsWanted: { state: PanelState; current: CurrentSession; at: number } | undefined;
  /** When details were first wanted since the last ones were computed (ms). */
  private detailsSince = 0;
  /** The loop computing wanted details, while it runs. */
  private detailsRun: Promise<void> | undefined;
  readonly received: { message: unknown; ok: boolean; error?: string }[] = [];
  builds = 0;
  posts = 0;
  fileStatusPosts = 0;

  constructor(readonly services: Services) {
    services.commands.add({
      "piContext.openPanel": () => this.openPanel(),
      // Not contributed (not in the palette): the controller for integration tests.
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
    if (controller === this) controller = undefined;
  }

  // ------------------------------------------------------------------ webviews

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
        // not ready yet: its `ready` message brings the state; a state being built is posted to it
        // when done. Nothing changed since the state was built (a panel shown again, a view
        // expanded): that state, not a rebuild — on a 128 MB session a rebuild is ≈ 0.2 s of the
        // extension host and re-renders every other webview showing it
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

  /** Post a state to a webview and note it (its details go to every webview showing it). */
  private show(target: Target, state: PanelState): void {
    target.stale = false;
    target.shown = state;
    this.posts++;
    this.post(target, { type: "state", state });
  }

  private post(target: Target, message: HostMessage): void {
    void target.webview.postMessage(message).then(undefined, () => undefined);
  }

  // ------------------------------------------------------------------ state

  /**
   * A webview starts: build the state while it loads (0.4–0.9 s in `npm run bench:ui`), so that its
   * `ready` shows it at once. Built on `ready`, the state took the extension host (≈ 0.2–0.4 s on a
   * 128 MB session) just when the user gave the next command after opening the Pi container.
   * Nothing when a state is being built or the current one is still valid.
   */
  private prebuild(): void {
    if (this.building) return;
    void this.serialUpdate(true, () => this.stateValue !== undefined && !this.dirty).catch((error: unknown) =>
      this.services.log.error(`panel: ${(error as Error).stack ?? error}`),
    );
  }

  /** Throttled rebuild: at most one per {@link UPDATE_THROTTLE_MS}, always a trailing one. */
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

  /** {@link doUpdate} once any running one is done (one at a time); nothing when `skip()` holds by then. */
  private async serialUpdate(force: boolean, skip?: () => boolean): Promise<void> {
    while (this.updating) await this.updating;
    if (skip?.()) return;
    this.updating = this.doUpdate(force).finally(() => (this.updating = undefined));
    await this.updating;
  }

  /** Ask for the details of `state` (the newest asked for wins; see {@link DETAILS_QUIET_MS}). */
  private wantDetails(state: PanelState, current: CurrentSession): void {
    if (!this.detailsWanted) this.detailsSince = Date.now();
    this.detailsWanted = { state, current, at: Date.now() };
    this.detailsRun ??= this.detailsLoop().finally(() => (this.detailsRun = undefined));
  }

  /** Compute the wanted details when they are due, until none are wanted. */
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
      // nothing shows it: build when a webview becomes visible again
      for (const t of ready) t.stale = true;
      return;
    }
    this.dirty = false;
    this.building = true;
    this.builds++;
    let current = this.services.sessions.current;
    // the panel opens with the state; what each compaction lost and what each trim suggestion
    // saves (≈ 1 s on a 128 MB session) follow in a `details` message
    let state: PanelState;
    try {
      // in steps (≈ 130–250 ms in all on a 128 MB session, cold): the Context view starts when the
      // Pi container opens, and the user's next command (Reveal Leaf) must not wait for all of it.
      // The session is refreshed in place as pi appends: when it changed meanwhile, the state of
      // it again at once, from the session as it is now
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
      // every ready webview now, also one that became ready while this state was built
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

  /** Compute and post the details of `state` (the current state), in steps. */
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
      // a body changed on disk meanwhile: the whole state again, as before the split (never a wrong number)
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
    // every webview showing this state, also one that became ready meanwhile
    for (const t of this.targets) if (t.shown === state) this.post(t, { type: "details", details });
  }

  /**
   * After a tab change: the tracked files' flags again (open in a tab, exists, …), posted only when
   * one changed — opening the panel or moving the focus fires several tab events, and every
   * `fileStatus` re-renders each webview (≈ 60 ms for a 128 MB session's state, on the thread the
   * starting panel needs).
   */
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

  // ------------------------------------------------------------------ messages

  async receive(raw: unknown, from: HostKind = "panel", target?: Target): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    this.received.push(parsed.ok ? { message: raw, ok: true } : { message: raw, ok: false, error: parsed.error });
    if (this.received.length > 200) this.received.splice(0, this.received.length - 200);
    if (!parsed.ok) {
      this.services.log.warn(`panel: ignored an invalid message from the webview: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    // the webview started, or the user did something in it; not a trim preview, which the webview
    // also asks again after every state (pi streaming would hold the details back without end)
    if (message.type !== "previewTrim") this.services.activity.note();
    const sender: Sender = { kind: from, ...(target ? { post: (m: HostMessage) => this.post(target, m) } : {}) };
    try {
      if (message.type === "ready") {
        if (target) {
          target.ready = true;
          target.stale = true;
        }
        // the current state (nothing changed since it was built; its details follow when still
        // being computed) instead of a rebuild, which would wait for those details first
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
