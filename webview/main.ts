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

import "@vscode-elements/elements/dist/vscode-badge/index.js";
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-checkbox/index.js";
import "@vscode-elements/elements/dist/vscode-collapsible/index.js";
import "@vscode-elements/elements/dist/vscode-icon/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";
import "@vscode-elements/elements/dist/vscode-textfield/index.js";
import "@vscode-elements/elements/dist/vscode-toolbar-button/index.js";
import type { CategoryEntry, CategoryId, HostMessage, PanelState, WebviewMessage } from "../src/shared/protocol";
import { append } from "./dom";
import { wrapTabFocus } from "./focus";
import { noticeArea, showNotice } from "./notices";
import { layoutAxes } from "./sections/bar";
import { renderEmpty } from "./sections/empty";
import { renderGaugeSection } from "./sections/gauge";
import { renderHeader } from "./sections/header";
import { renderSummariesSection } from "./sections/summaries";
import { renderUsageSection } from "./sections/usage";
import { renderFilesSection } from "./sections/trackedFiles";
import { defaultUi, type UiState, type View } from "./view";

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

function saveUi(): void {
  vscode.setState(ui);
}

function send(message: WebviewMessage): void {
  vscode.postMessage(message);
}

const app = document.getElementById("app")!;
wrapTabFocus(app);

/** Render the whole panel from `state` and `ui`, keeping the focused element (by `data-key`) and the scroll position. */
function render(): void {
  const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
  // a live update must not move the user's place in the panel
  const scrollX = window.scrollX;
  const scrollY = window.scrollY;
  app.replaceChildren();
  app.appendChild(noticeArea);
  if (!state || !state.session || !state.gauge) {
    app.appendChild(renderEmpty(state, send));
    return;
  }
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
  };
  append(app, [
    renderHeader(view),
    renderGaugeSection(view),
    renderUsageSection(view),
    renderSummariesSection(view),
    renderFilesSection(view),
  ]);
  layoutAxes(app);
  if (focusedKey)
    (app.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`) as HTMLElement | null)?.focus({ preventScroll: true });
  window.scrollTo(scrollX, scrollY);
}

new ResizeObserver(() => layoutAxes(app)).observe(app);

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const msg = event.data;
  if (!msg || typeof msg !== "object") return;
  switch (msg.type) {
    case "state":
      if (state?.session?.file !== msg.state.session?.file || state?.session?.leafId !== msg.state.session?.leafId)
        categoryFull.clear();
      state = msg.state;
      render();
      break;
    case "fileStatus":
      if (state?.files) {
        for (const f of [...state.files.readFiles, ...state.files.modifiedFiles])
          Object.assign(f, msg.files[f.absolutePath] ?? {});
        render();
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

render();
send({ type: "ready" });
