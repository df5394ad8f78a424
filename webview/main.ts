/**
 * The Pi Context panel (webview side): the message loop. It keeps the host's `PanelState`
 * (`src/shared/protocol.ts`) and the UI state, renders the sections (`sections/*.ts`) on every
 * `state`, and posts the sections' commands back. Everything it shows comes from the host except
 * the summary diff, which it computes with the same pure function the tests check
 * (`src/shared/summaryDiff.ts`).
 *
 * UI components: @vscode-elements/elements; colours: VS Code theme variables (panel.css and the
 * sections' stylesheets). Keyboard: file rows are a listbox (see `sections/trackedFiles.ts`);
 * breakdown rows are buttons; Tab cycles within the panel (`focus.ts`).
 */

// first: the bundle is configured before any section module runs
import "./l10n";
import "@vscode-elements/elements/dist/vscode-badge/index.js";
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-checkbox/index.js";
import "@vscode-elements/elements/dist/vscode-collapsible/index.js";
import "@vscode-elements/elements/dist/vscode-icon/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";
import "@vscode-elements/elements/dist/vscode-textfield/index.js";
import "@vscode-elements/elements/dist/vscode-toolbar-button/index.js";
import {
  applyPanelDetails,
  type CategoryEntry,
  type CategoryId,
  type HostMessage,
  type PanelState,
  type WebviewMessage,
} from "../src/shared/protocol";
import { append } from "./dom";
import { tabStops, wrapTabFocus } from "./focus";
import { noticeArea, showNotice } from "./notices";
import { layoutAxes } from "./sections/bar";
import { renderEmpty } from "./sections/empty";
import { renderGaugeHistory, renderGaugeSection } from "./sections/gauge";
import { renderHeader } from "./sections/header";
import { renderSummariesSection, renderSummaryDiff } from "./sections/summaries";
import { renderUsageSection } from "./sections/usage";
import { renderFilesSection } from "./sections/trackedFiles";
import { renderTrimSection } from "./sections/trim";
import { defaultUi, type TrimPreviewState, type UiState, type View } from "./view";

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): UiState | undefined;
  setState(state: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const ui: UiState = { ...defaultUi(), ...(vscode.getState() ?? {}) };
let state: PanelState | undefined;
/** Full entry lists the host sent for breakdown categories (cleared when the session or leaf changes). */
const categoryFull = new Map<CategoryId, CategoryEntry[]>();
/** The trim preview of the selection (asked again after every state: the numbers move with the session). */
let trimPreview: TrimPreviewState | undefined;
let trimRequestId = 0;
let trimTimer: ReturnType<typeof setTimeout> | undefined;

/** Ask the host for the preview of the selection (debounced), or forget it when nothing is selected. */
function requestTrimPreview(): void {
  saveUi();
  clearTimeout(trimTimer);
  if (ui.trimSelection.length === 0) {
    trimPreview = undefined;
    render();
    return;
  }
  const requestId = ++trimRequestId;
  trimPreview = { requestId };
  render();
  trimTimer = setTimeout(() => send({ type: "previewTrim", requestId, items: ui.trimSelection }), 120);
}

function saveUi(): void {
  vscode.setState(ui);
}

function send(message: WebviewMessage): void {
  vscode.postMessage(message);
}

const app = document.getElementById("app")!;
wrapTabFocus(app);

/**
 * The panel's parts in order, each appending its nodes: first what a glance needs (header, gauge,
 * breakdown, usage), then the history chart (into the gauge section), the trim list, the
 * summaries, their diff (after them) and the tracked files.
 */
function panelParts(view: View): (() => void)[] {
  let gauge: HTMLElement | undefined;
  let summaries: HTMLElement | undefined;
  return [
    () => {
      gauge = renderGaugeSection(view);
      append(app, [renderHeader(view), gauge, renderUsageSection(view)]);
    },
    () => append(gauge!, [renderGaugeHistory(view)]),
    () => append(app, [renderTrimSection(view)]),
    () => {
      summaries = renderSummariesSection(view);
      append(app, [summaries]);
    },
    () => append(summaries!, [renderSummaryDiff(view)]),
    () => append(app, [renderFilesSection(view)]),
  ];
}

/**
 * The longest a later part of a first showing waits for the renderer to be idle (ms): the parts
 * come in idle time, and never later than this after the one before.
 */
const PART_IDLE_TIMEOUT_MS = 300;

/** Counts the renders: the later parts of a progressive render stop once a newer render began. */
let renderCount = 0;
/** The panel shows a session's sections (not "Loading…" or the empty state). */
let showsSession = false;

/**
 * Render the whole panel from `state` and `ui`, keeping the focused element (by `data-key`, else
 * its place among the Tab stops) and the scroll position.
 *
 * A session's first showing (a webview just started, or it showed no session) is progressive:
 * the first of {@link panelParts} at once, each later one in its own task when the renderer is idle
 * (`requestIdleCallback`, at most {@link PART_IDLE_TIMEOUT_MS} after the one before). A webview
 * shares the workbench's renderer thread: on a large session one task for the whole panel holds
 * back what the user does meanwhile (Reveal Leaf right after opening the container). `#app[data-details]` stays
 * "pending" until the last part is in. Later renders (live updates, details) replace everything
 * at once: they keep the focus and the scroll position, which a half-built panel would lose.
 */
function render(): void {
  const run = ++renderCount;
  const progressive = !showsSession;
  // only while the webview has the keyboard: the document keeps its activeElement after a quick
  // pick or an editor took the focus, and focusing it again would pull the keyboard back in here
  const active = document.hasFocus() ? (document.activeElement as HTMLElement | null) : null;
  const focusedKey = active?.dataset?.key;
  // an element without a key: its place among the Tab stops (the same element after a re-render
  // of the same sections, e.g. when the state's details arrive while the user tabs through)
  const focusedStop = active && !focusedKey ? { index: tabStops(app).indexOf(active), tag: active.tagName } : undefined;
  // a live update must not move the user's place in the panel
  const scrollX = window.scrollX;
  const scrollY = window.scrollY;
  // the vscode-elements render their shadow DOM in a microtask after they are attached: until then
  // a collapsible shows none of its content and the page is short, so the scroll position put back
  // below would be clamped (a click in the trim list jumped to the top) — the old height holds
  // until they have rendered
  if (!progressive) app.style.minHeight = `${app.offsetHeight}px`;
  app.replaceChildren();
  app.appendChild(noticeArea);
  // "pending" until the state's details came (they re-render the panel once more; tests wait for it)
  const details = state?.detailsPending ? "pending" : "in";
  app.dataset.details = details;
  if (!state || !state.session || !state.gauge) {
    showsSession = false;
    app.style.minHeight = "";
    app.appendChild(renderEmpty(state, send));
    return;
  }
  showsSession = true;
  const view: View = {
    state,
    ui,
    categoryFull,
    send,
    saveUi,
    saveAndRender: () => {
      saveUi();
      render();
    },
    notice: showNotice,
    trimPreview,
    requestTrimPreview,
  };
  const parts = panelParts(view);
  if (progressive) {
    app.dataset.details = "pending";
    parts.shift()!();
    layoutAxes(app);
    const next = () => {
      if (run !== renderCount) return; // a newer render replaced the panel
      const part = parts.shift();
      if (part) {
        part();
        requestIdleCallback(next, { timeout: PART_IDLE_TIMEOUT_MS });
        return;
      }
      layoutAxes(app);
      app.dataset.details = details;
    };
    requestIdleCallback(next, { timeout: PART_IDLE_TIMEOUT_MS });
    return;
  }
  for (const part of parts) part();
  layoutAxes(app);
  if (focusedKey || focusedStop) {
    // the vscode-elements render their inner controls in a microtask after they are attached (only
    // then can they take the focus): the focus goes back once they did, unless it moved meanwhile
    const restore = (byPlaceToo: boolean) => {
      // not when the keyboard left meanwhile (a quick pick opened between the render and the
      // timeout): focusing an element here would pull it back and close that pick
      if (!document.hasFocus() || (document.activeElement && document.activeElement !== document.body)) return;
      const byKey = focusedKey
        ? (app.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`) as HTMLElement | null)
        : undefined;
      const byPlace =
        byPlaceToo && focusedStop && focusedStop.index >= 0 ? tabStops(app)[focusedStop.index] : undefined;
      (byKey ?? (byPlace?.tagName === focusedStop?.tag ? byPlace : undefined))?.focus({ preventScroll: true });
    };
    restore(false); // plain elements at once (the Tab stops are complete only after that microtask)
    setTimeout(() => restore(true), 0);
  }
  window.scrollTo(scrollX, scrollY);
  setTimeout(() => {
    if (run === renderCount) app.style.minHeight = "";
  }, 0);
}

new ResizeObserver(() => layoutAxes(app)).observe(app);

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const msg = event.data;
  if (!msg || typeof msg !== "object") return;
  switch (msg.type) {
    case "state": {
      const sessionChanged = state?.session?.file !== msg.state.session?.file;
      const leafChanged = state?.session?.leafId !== msg.state.session?.leafId;
      if (sessionChanged || leafChanged) categoryFull.clear();
      state = msg.state;
      if (sessionChanged) ui.trimSelection = [];
      // the session moved on (a trim was written, pi answered): keep what is still listed, preview again
      const listed = new Set([
        ...(state.trim?.items ?? []).map((i) => i.entryId),
        ...(state.trim?.suggestions ?? []).flatMap((s) => s.actions.map((a) => a.entryId)),
      ]);
      if (leafChanged) ui.trimSelection = ui.trimSelection.filter((i) => listed.has(i.entryId) && !isApplied(i));
      if (leafChanged || sessionChanged) requestTrimPreview();
      else render();
      break;
    }
    case "details":
      // what the compactions lost and what the suggestions save, after the state
      if (state && applyPanelDetails(state, msg.details)) render();
      break;
    case "trimPreview":
      if (msg.requestId !== trimRequestId) break; // an older answer
      trimPreview = { requestId: msg.requestId, preview: msg.preview, ...(msg.error ? { error: msg.error } : {}) };
      render();
      break;
    case "fileStatus":
      // a whole render only when a flag changed (the state is large on a long session)
      if (state?.files) {
        let changed = false;
        for (const f of [...state.files.readFiles, ...state.files.modifiedFiles]) {
          const flags = msg.files[f.absolutePath];
          if (!flags) continue;
          for (const [k, v] of Object.entries(flags))
            if ((f as unknown as Record<string, unknown>)[k] !== v) {
              (f as unknown as Record<string, unknown>)[k] = v;
              changed = true;
            }
        }
        if (changed) render();
      }
      break;
    case "category":
      categoryFull.set(msg.category, msg.entries);
      ui.expandedCategory = msg.category;
      render();
      break;
    case "notice":
      showNotice(msg.level, msg.text);
      break;
  }
});

/** A planned item the shown state already has as asked (written since it was planned). */
function isApplied(item: { entryId: string; choice: string }): boolean {
  const listed = state?.trim?.items.find((i) => i.entryId === item.entryId);
  if (!listed) return false;
  if (item.choice === "restore") return !listed.edit;
  // a note replaced by a removal is a change of an edited item: applied once it shows removed
  if (item.choice === "remove" && listed.kind !== "toolResult") return listed.edit?.kind === "removed";
  return listed.edit !== undefined;
}

render();
send({ type: "ready" });
