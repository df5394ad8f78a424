/**
 * The Pi Context panel (webview side). Renders the host's `PanelState` (src/protocol.ts) and
 * sends commands back; everything it shows comes from the host except the summary diff, which it
 * computes with the same pure function the tests check (`src/viewModel/summaryDiff.ts`).
 *
 * UI components: @vscode-elements/elements; colours: VS Code theme variables (panel.css).
 * Keyboard: file rows are a listbox (↑/↓/Home/End move, Space/click = preview, Enter/double-click =
 * keep open, Ctrl/Cmd+Enter = to the side, Ctrl/Cmd+C = copy path); breakdown rows are buttons.
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
import type {
  CategoryEntry,
  CategoryId,
  CategoryModel,
  GaugeModel,
  HistoryModel,
  HostMessage,
  PanelState,
  ProblemModel,
  SummaryModel,
  TrackedFileModel,
  WebviewMessage,
} from "../src/shared/protocol";
import {
  AUTO_COMPACTS_WHEN,
  COMPACT_ICON,
  formatDateTime,
  formatGaugeTokens,
  formatWindowTokens,
  plural,
} from "../src/shared/format";
import { diffSummaries, type DiffLine } from "../src/shared/summaryDiff";
import { placeAxisLabels, type AxisLabel } from "../src/shared/axis";
import { append, h, icon, s } from "./dom";
import { renderMarkdown } from "./markdown";

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): UiState | undefined;
  setState(state: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** UI state kept across reloads (the webview is not retained when hidden). */
interface UiState {
  filter: string;
  diffFrom?: string;
  diffTo?: string;
  showUnchanged: boolean;
  openSections: Record<string, boolean>;
  expandedCategory?: CategoryId;
  expandedSummaries: string[];
  /** The problems list shows all problems (else the first few). */
  allProblems?: boolean;
}

const vscode = acquireVsCodeApi();
const ui: UiState = {
  filter: "",
  showUnchanged: false,
  openSections: { summaries: true, diff: true, files: true },
  expandedSummaries: [],
  ...(vscode.getState() ?? {}),
};
let state: PanelState | undefined;
const categoryFull = new Map<CategoryId, CategoryEntry[]>();

function saveUi(): void {
  vscode.setState(ui);
}

function send(message: WebviewMessage): void {
  vscode.postMessage(message);
}

// ------------------------------------------------------------------------------------ format

const nf = new Intl.NumberFormat("en-US");
/** `12,345`. */
function num(n: number): string {
  return nf.format(Math.round(n));
}
/** Short tokens as the status bar shows them: `950`, `4.2k`, `12.5k`, `124k`, `1.2M` (sign kept). */
function short(n: number): string {
  return `${n < 0 ? "−" : ""}${formatGaugeTokens(Math.abs(n))}`;
}
function pct(part: number, whole: number): string {
  if (!whole) return "";
  const p = (part / whole) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p)}%`;
}
/** A time as everywhere in pi Context (the UI language the host sent; `formatDateTime`). */
function time(when: string | number): string {
  return formatDateTime(when, state?.locale);
}
function sourceLabel(g: GaugeModel): string {
  switch (g.reserveSource) {
    case "default":
      return "pi default";
    case "global":
      return "global settings";
    case "project":
      return "project settings";
    case "override":
      return "modelOverrides";
  }
}

// ------------------------------------------------------------------------------------ render

const app = document.getElementById("app")!;
const notices = h("div", { class: "notices", role: "status", "aria-live": "polite" });

function render(): void {
  const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
  // a live update must not move the user's place in the panel
  const scrollX = window.scrollX;
  const scrollY = window.scrollY;
  app.replaceChildren();
  app.appendChild(notices);
  if (!state || !state.session || !state.gauge) {
    app.appendChild(renderEmpty(state));
    return;
  }
  append(app, [
    renderHeader(state),
    renderGaugeSection(state),
    renderSummariesSection(state),
    renderFilesSection(state),
  ]);
  layoutAxes();
  if (focusedKey)
    (app.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`) as HTMLElement | null)?.focus({ preventScroll: true });
  window.scrollTo(scrollX, scrollY);
}

function actionButton(
  id: string,
  iconName: string,
  label: string,
  message: WebviewMessage,
  enabled: boolean,
  title?: string,
): HTMLElement {
  const b = h(
    "vscode-button",
    {
      secondary: true,
      icon: iconName,
      "data-action": id,
      "data-key": `action-${id}`,
      title: title ?? label,
      "aria-label": title ?? label,
      disabled: !enabled,
    },
    label,
  );
  b.addEventListener("click", () => send(message));
  return b;
}

type Action = [id: string, icon: string, label: string, message: WebviewMessage, enabled: boolean, title: string];

/**
 * The session actions as labelled buttons (they wrap in a narrow sidebar; never icon-only).
 * In the sidebar view the view's title bar already has Refresh, so it is left out there.
 */
function renderToolbar(st: PanelState): HTMLElement {
  const caps = st.capabilities;
  const compactTitle = st.session?.compactionUnavailable
    ? `Compact… — ${st.session.compactionUnavailable}`
    : "Summarize the older part of the context now (Pi: Compact Session…)";
  const actions: Action[] = [
    ["compact", COMPACT_ICON, "Compact…", { type: "compact" }, caps.compact, compactTitle],
    [
      "focusTree",
      "list-tree",
      "Switch Branch",
      { type: "focusTree" },
      caps.focusTree,
      "Switch branch in the Pi Session tree",
    ],
    [
      "selectSession",
      "list-selection",
      "Select Session…",
      { type: "selectSession" },
      caps.selectSession,
      "Pick the session to show (Pi: Select Session…)",
    ],
  ];
  if (document.body.dataset.host !== "view")
    actions.push(["refresh", "refresh", "Refresh", { type: "refresh" }, true, "Re-read the session"]);
  return h(
    "div",
    { class: "actions", role: "toolbar", "aria-label": "Session actions" },
    ...actions.map(([id, ic, label, msg, on, title]) => actionButton(id, ic, label, msg, on, title)),
  );
}

/** The empty state: the shared explanation and only the actions that make sense without a session. */
function renderEmpty(st: PanelState | undefined): HTMLElement {
  const actions: HTMLElement[] = [];
  if (st?.emptyReason === "no-folder")
    actions.push(
      actionButton(
        "openFolder",
        "folder-opened",
        "Open Folder…",
        { type: "openFolder" },
        true,
        "Open the folder pi ran in",
      ),
    );
  if (st && st.emptyReason !== "starting" && st.capabilities.selectSession)
    actions.push(
      actionButton(
        "selectSession",
        "list-selection",
        "Select Session…",
        { type: "selectSession" },
        true,
        "Pick any pi session to show (Pi: Select Session…)",
      ),
    );
  if (st?.emptyReason === "error")
    actions.push(actionButton("refresh", "refresh", "Refresh", { type: "refresh" }, true, "Re-read the session"));
  return h(
    "div",
    { class: "empty", "data-reason": st?.emptyReason ?? "loading" },
    icon(st?.emptyReason === "no-folder" ? "folder" : "pulse", { size: "32" }),
    h("p", { "data-testid": "empty-message" }, st?.emptyMessage ?? "Loading…"),
    actions.length ? h("div", { class: "actions", role: "toolbar", "aria-label": "Actions" }, ...actions) : null,
  );
}

/** One fact of the header's sub-line: an icon and a text (no `·` separators, so wrapping stays clean). */
function metaItem(iconName: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
  return h(
    "span",
    { class: "meta-item", ...attrs },
    icon(iconName, { size: "14", "aria-hidden": "true" }),
    h("span", null, text),
  );
}

function renderHeader(st: PanelState): HTMLElement {
  const session = st.session!;
  const g = st.gauge!;
  const name = session.name ?? session.file.split(/[\\/]/).pop() ?? session.file;
  const meta = h(
    "div",
    { class: "session-meta" },
    h("span", { class: "session-name", title: session.file }, name),
    session.pinned
      ? h("vscode-badge", { title: "Pinned with Pi: Select Session… (not following the latest)" }, "pinned")
      : null,
  );
  const sub = h(
    "div",
    { class: "session-sub muted", "data-testid": "session-sub" },
    metaItem(
      "hubot",
      `${g.model ?? "no model"}${g.thinkingLevel && g.thinkingLevel !== "off" ? `, thinking ${g.thinkingLevel}` : ""}`,
    ),
    metaItem("list-flat", plural(session.entryCount, "entry", "entries")),
    session.leafId
      ? metaItem("git-commit", `leaf ${session.leafId}`, {
          class: "meta-item mono",
          title: "The leaf: the last entry of the current path",
        })
      : null,
    session.modifiedAt > 0
      ? metaItem("history", `updated ${time(session.modifiedAt)}`, {
          title: `The session file was last written ${time(session.modifiedAt)}; pi Context read it ${time(session.readAt)}.`,
          "data-testid": "session-updated",
        })
      : null,
    session.pinned
      ? null
      : metaItem("arrow-up", "following latest", { title: "Shows the most recently written session of the workspace" }),
  );
  return h(
    "header",
    { class: "header" },
    h("div", { class: "header-main" }, meta, sub),
    renderToolbar(st),
    renderProblems(st),
  );
}

const SEVERITY_ICON: Record<ProblemModel["severity"], string> = { error: "error", warning: "warning", info: "info" };
/** Problems shown before "Show all N". */
const PROBLEMS_SHOWN = 5;

/**
 * The problems reading the session or settings: readable text, each row a button that opens the
 * file at the line (or reveals the entry in the tree).
 */
function renderProblems(st: PanelState): HTMLElement | null {
  const problems = st.session!.problems;
  if (problems.length === 0) return null;
  const counts = (["error", "warning", "info"] as const)
    .map((sev) => [sev, problems.filter((p) => p.severity === sev).length] as const)
    .filter(([, n]) => n > 0)
    .map(([sev, n]) => plural(n, sev === "info" ? "note" : sev))
    .join(", ");
  const worst = problems[0]!.severity;
  const box = h("section", { class: `problems sev-${worst}`, "aria-label": "Problems", "data-testid": "problems" });
  box.appendChild(
    h(
      "div",
      { class: "problems-head" },
      icon(SEVERITY_ICON[worst], { size: "14" }),
      h("strong", null, `${plural(problems.length, "problem")} reading the session or pi's settings`),
      h("span", { class: "muted" }, ` (${counts})`),
    ),
  );
  const list = h("ul", { class: "problem-list" });
  const shown = ui.allProblems ? problems : problems.slice(0, PROBLEMS_SHOWN);
  for (const p of shown) {
    const where =
      p.line !== undefined
        ? `line ${p.line}`
        : p.source === "settings" && p.file
          ? (p.file.split(/[\\/]/).pop() ?? p.file)
          : p.entryId
            ? `entry ${p.entryId}`
            : "";
    const target = p.file
      ? `${p.file}${p.line !== undefined ? `:${p.line}` : ""}`
      : p.entryId
        ? `entry ${p.entryId} in the Pi Session tree`
        : "";
    const clickable = Boolean(p.file || (p.entryId && st.capabilities.revealEntry));
    const row = h(
      clickable ? "button" : "div",
      {
        class: `problem sev-${p.severity}`,
        "data-problem": p.id,
        "data-code": p.code,
        "data-key": `problem-${p.id}`,
        title: clickable ? `Open ${target}` : undefined,
      },
      icon(SEVERITY_ICON[p.severity], { size: "14", class: "problem-icon" }),
      h("span", { class: "problem-title" }, p.title),
      where ? h("span", { class: "problem-where mono" }, where) : null,
      h("span", { class: "problem-message" }, p.message),
    );
    if (clickable) row.addEventListener("click", () => send({ type: "openProblem", id: p.id }));
    list.appendChild(h("li", null, row));
  }
  box.appendChild(list);
  if (problems.length > PROBLEMS_SHOWN) {
    const more = h(
      "button",
      { class: "link", "data-key": "problems-more" },
      ui.allProblems ? "Show fewer" : `Show all ${problems.length}`,
    );
    more.addEventListener("click", () => {
      ui.allProblems = !ui.allProblems;
      saveUi();
      render();
    });
    box.appendChild(more);
  }
  return box;
}

// --- gauge

const CATEGORY_CLASS: Record<CategoryId, string> = {
  system: "c-system",
  summaries: "c-summaries",
  user: "c-user",
  assistantText: "c-assistant",
  thinking: "c-thinking",
  toolCalls: "c-toolcalls",
  toolResults: "c-toolresults",
  other: "c-other",
  free: "c-free",
  reserve: "c-reserve",
};

function renderGaugeSection(st: PanelState): HTMLElement {
  const g = st.gauge!;
  const b = st.breakdown!;
  const section = h("section", { class: "gauge", "aria-label": "Context window" });

  const headline = h("div", { class: "headline" });
  const used = h("span", { class: "used", "data-testid": "gauge-used", "data-value": String(g.used) }, num(g.used));
  const windowText =
    g.window !== null
      ? h(
          "span",
          { class: "window" },
          " / ",
          h("span", { "data-testid": "gauge-window", "data-value": String(g.window) }, num(g.window)),
          " tokens",
        )
      : h("span", { class: "window" }, " tokens (window unknown)");
  append(headline, [used, windowText]);
  if (g.percent !== null)
    headline.appendChild(
      h("span", { class: `percent level-${g.level}`, "data-testid": "gauge-percent" }, `${g.percent.toFixed(1)}%`),
    );
  if (!g.usageKnown) {
    headline.appendChild(
      h(
        "vscode-badge",
        {
          class: "estimate-badge",
          "data-testid": "gauge-estimate",
          title:
            "Right after a compaction pi's footer shows “?” until the next answer reports usage. This number is pi's own estimate (chars/4) of the compacted context.",
        },
        "estimate · pi shows ?",
      ),
    );
  }
  section.appendChild(headline);

  // until auto-compaction
  const until = h("div", { class: "until", "data-testid": "gauge-until" });
  if (g.tokensUntilCompaction !== null && g.threshold !== null) {
    if (!g.autoCompaction)
      until.append(
        icon("circle-slash", { size: "14" }),
        ` Auto-compaction is off (threshold would be ${num(g.threshold)}).`,
      );
    else if (g.tokensUntilCompaction >= 0) {
      until.append(
        icon("arrow-right", { size: "14" }),
        " ",
        h("strong", { "data-value": String(g.tokensUntilCompaction) }, `${short(g.tokensUntilCompaction)} tokens`),
        ` until auto-compaction (at ${num(g.threshold)})`,
      );
    } else {
      until.classList.add("over");
      until.append(
        icon("warning", { size: "14" }),
        " ",
        h(
          "strong",
          { "data-value": String(g.tokensUntilCompaction) },
          `${short(-g.tokensUntilCompaction)} tokens over`,
        ),
        ` the auto-compaction threshold (${num(g.threshold)}): ${AUTO_COMPACTS_WHEN}.`,
      );
    }
  } else until.append("Context window or reserve unknown: no threshold.");
  section.appendChild(until);

  section.appendChild(renderBar(g, b.categories));

  const facts = h("dl", { class: "facts" });
  const fact = (dt: string, dd: Node | string, title?: string) =>
    append(facts, [h("dt", null, dt), h("dd", title ? { title } : null, dd)]);
  fact("Model", g.model ?? "—");
  fact(
    "Context window",
    g.window !== null ? `${num(g.window)} — ${g.windowSourceText}` : `unknown — ${g.windowSourceText}`,
    g.windowFile ?? g.windowDetail,
  );
  fact(
    "reserveTokens",
    g.reserveTokens !== null ? `${num(g.reserveTokens)} · ${sourceLabel(g)}` : "invalid",
    [g.reserveKey, g.reserveFile].filter(Boolean).join(" — "),
  );
  if (g.keepRecentTokens !== null) fact("keepRecentTokens", num(g.keepRecentTokens));
  fact(
    "Counted as",
    g.method === "usage+estimate"
      ? `provider usage ${num(g.usageTokens)} + estimate ${num(g.trailingTokens)}`
      : "pi's estimate (no usable provider usage)",
    b.method === "scaled"
      ? `Breakdown: the messages covered by the last provider usage are scaled ×${b.scale.toFixed(3)} so they add up to it.`
      : undefined,
  );
  fact("pi's footer", h("span", { class: "mono" }, g.footer));
  section.appendChild(facts);

  section.appendChild(renderBreakdown(st));
  if (st.history && st.history.points.length > 0) section.appendChild(renderHistory(st.history, g));
  return section;
}

function renderBar(g: GaugeModel, categories: CategoryModel[]): HTMLElement {
  const total = Math.max(g.window ?? 0, g.used);
  const bar = h("div", {
    class: "bar",
    role: "img",
    "aria-label": `${num(g.used)} of ${g.window !== null ? num(g.window) : "?"} tokens used`,
  });
  const track = h("div", { class: "bar-track" });
  if (total > 0) {
    for (const c of categories) {
      if (c.tokens <= 0 || c.id === "free") continue;
      const seg = h("div", { class: `seg ${CATEGORY_CLASS[c.id]}`, title: `${c.label}: ${num(c.tokens)} tokens` });
      seg.style.width = `${(c.tokens / total) * 100}%`;
      track.appendChild(seg);
    }
    if (g.threshold !== null && g.window !== null) {
      const marker = h("div", {
        class: `threshold ${g.tokensUntilCompaction !== null && g.tokensUntilCompaction < 0 ? "crossed" : ""}`,
        title: `auto-compaction threshold: window − reserveTokens = ${num(g.threshold)}`,
      });
      marker.style.left = `${(g.threshold / total) * 100}%`;
      track.appendChild(marker);
      const band = h("div", { class: "reserve-band", title: `reserve: ${num(g.window - g.threshold)} tokens` });
      band.style.left = `${(g.threshold / total) * 100}%`;
      band.style.width = `${((g.window - g.threshold) / total) * 100}%`;
      track.appendChild(band);
    }
  }
  bar.appendChild(track);
  if (g.window !== null && total > 0) {
    // labels are placed after layout (measured text, see axis.ts): never overlapping
    const scale = h("div", { class: "bar-scale", "data-testid": "bar-scale" });
    scale.appendChild(
      h("span", { class: "tick start", "data-tick": "start", "data-at": "0", "data-align": "start" }, "0"),
    );
    if (g.threshold !== null) {
      scale.appendChild(
        h(
          "span",
          {
            class: "tick threshold-label",
            "data-tick": "threshold",
            "data-at": String(g.threshold / total),
            "data-align": "center",
            title: `auto-compaction threshold: window − reserveTokens = ${num(g.threshold)}`,
          },
          `${g.autoCompaction ? "auto-compact" : "threshold (auto off)"} ${formatWindowTokens(g.threshold)}`,
        ),
      );
    }
    scale.appendChild(
      h(
        "span",
        {
          class: "tick end",
          "data-tick": "end",
          "data-at": String(g.window / total),
          "data-align": "end",
          title: `context window: ${num(g.window)}`,
        },
        formatWindowTokens(g.window),
      ),
    );
    bar.appendChild(scale);
  }
  return bar;
}

/** Gap between two axis labels (px). */
const AXIS_GAP = 8;
/** Height of one row of axis labels (px). */
const AXIS_ROW = 16;

/** Place the labels of every bar scale by their measured widths (after each render and resize). */
function layoutAxes(): void {
  for (const scale of app.querySelectorAll<HTMLElement>(".bar-scale")) {
    const width = scale.clientWidth;
    if (width <= 0) continue;
    const els = [...scale.querySelectorAll<HTMLElement>(".tick")];
    const labels: AxisLabel[] = els.map((el) => ({
      id: el.dataset.tick ?? "",
      at: Number(el.dataset.at ?? "0") * width,
      width: el.getBoundingClientRect().width,
      align: (el.dataset.align as AxisLabel["align"]) ?? "center",
      priority: el.dataset.tick === "threshold" ? 2 : el.dataset.tick === "end" ? 1 : 0,
    }));
    const placed = placeAxisLabels(labels, width, AXIS_GAP);
    let rows = 1;
    els.forEach((el, i) => {
      const p = placed[i]!;
      el.hidden = p.hidden;
      el.style.left = `${p.left}px`;
      el.style.top = `${p.row * AXIS_ROW + 1}px`;
      el.dataset.row = String(p.row);
      if (!p.hidden) rows = Math.max(rows, p.row + 1);
    });
    scale.style.height = `${rows * AXIS_ROW}px`;
  }
}

new ResizeObserver(() => layoutAxes()).observe(app);

function renderBreakdown(st: PanelState): HTMLElement {
  const b = st.breakdown!;
  const g = st.gauge!;
  const window = g.window ?? b.total;
  const list = h("div", {
    class: "breakdown",
    role: "list",
    "aria-label": "Breakdown by category",
    "data-testid": "breakdown",
  });
  for (const c of b.categories) {
    const expandable = c.top.length > 0;
    const expanded = ui.expandedCategory === c.id && expandable;
    const row = h(
      expandable ? "button" : "div",
      {
        class: `cat-row ${expanded ? "expanded" : ""} ${c.tokens === 0 ? "zero" : ""}`,
        role: expandable ? undefined : "listitem",
        "data-category": c.id,
        "data-tokens": String(c.tokens),
        "data-key": `cat-${c.id}`,
        "aria-expanded": expandable ? String(expanded) : undefined,
        title: expandable ? `${c.label}: show the largest entries` : c.label,
      },
      h(
        "span",
        { class: "chev" },
        expandable ? icon(expanded ? "chevron-down" : "chevron-right", { size: "14" }) : null,
      ),
      h("span", { class: `swatch ${CATEGORY_CLASS[c.id]}` }),
      h("span", { class: "cat-label" }, c.label),
      h("span", { class: "cat-count muted" }, c.entryCount ? `${c.entryCount}` : ""),
      h("span", { class: "cat-tokens" }, num(c.tokens)),
      h("span", { class: "cat-pct muted" }, pct(c.tokens, window)),
    );
    if (expandable) {
      row.addEventListener("click", () => {
        ui.expandedCategory = expanded ? undefined : c.id;
        saveUi();
        render();
      });
    }
    list.appendChild(row);
    if (expanded) list.appendChild(renderCategoryEntries(c, st));
  }
  const note = h(
    "p",
    { class: "note muted" },
    b.method === "scaled"
      ? `Counted with pi's estimator (chars/4) per message; messages up to the last provider usage scaled ×${b.scale.toFixed(2)} to it, so the parts add up to ${num(b.total)}.`
      : `Counted with pi's estimator (chars/4) per message; the parts add up to ${num(b.total)}.`,
  );
  return h("div", { class: "breakdown-wrap" }, list, note);
}

function renderCategoryEntries(c: CategoryModel, st: PanelState): HTMLElement {
  const entries = categoryFull.get(c.id) ?? c.top;
  const box = h("div", { class: "cat-entries", role: "list", "aria-label": `Largest entries: ${c.label}` });
  for (const e of entries) {
    const label = [e.kind, e.tool].filter(Boolean).join(" · ");
    const row = h(
      "button",
      {
        class: "entry-row",
        role: "listitem",
        "data-entry": e.entryId,
        "data-key": `entry-${c.id}-${e.entryId}`,
        title: st.capabilities.revealEntry ? "Reveal in the Pi Session tree" : "Show the Pi Session tree",
      },
      h("span", { class: "mono entry-id" }, e.entryId),
      h("span", { class: "entry-kind muted" }, label),
      h("span", { class: "entry-preview" }, e.preview ?? ""),
      h("span", { class: "entry-tokens" }, num(e.tokens)),
    );
    row.addEventListener("click", () => send({ type: "revealEntry", entryId: e.entryId }));
    box.appendChild(row);
  }
  if (!categoryFull.has(c.id) && c.entryCount > c.top.length) {
    const more = h("vscode-button", { secondary: true, class: "more" }, `Show all ${c.entryCount}`);
    more.addEventListener("click", () => send({ type: "requestCategory", category: c.id }));
    box.appendChild(more);
  }
  return box;
}

function renderHistory(history: HistoryModel, g: GaugeModel): HTMLElement {
  const W = 600;
  const H = 64;
  const pad = 4;
  const points = history.points;
  const max = Math.max(
    g.window ?? 0,
    ...points.map((p) => p.tokens),
    ...history.compactions.map((c) => c.tokensBefore ?? 0),
    1,
  );
  const x = (i: number) => (points.length <= 1 ? W / 2 : pad + (i * (W - 2 * pad)) / (points.length - 1));
  const y = (t: number) => H - pad - (t / max) * (H - 2 * pad);
  const svg = s("svg", {
    viewBox: `0 0 ${W} ${H}`,
    preserveAspectRatio: "none",
    class: "spark",
    role: "img",
    "aria-label": `Context tokens per turn, ${points.length} turns, ${history.compactions.length} compactions`,
  });
  if (g.threshold !== null)
    svg.appendChild(s("line", { x1: 0, x2: W, y1: y(g.threshold), y2: y(g.threshold), class: "spark-threshold" }));
  for (const c of history.compactions) {
    const cx = c.atPoint <= 0 ? pad : c.atPoint >= points.length ? W - pad : (x(c.atPoint - 1) + x(c.atPoint)) / 2;
    const line = s("line", { x1: cx, x2: cx, y1: 0, y2: H, class: "spark-compaction" });
    const title = s("title");
    title.textContent = `compaction ${c.entryId}${c.tokensBefore !== null ? ` — tokensBefore ${num(c.tokensBefore)}` : ""}`;
    line.appendChild(title);
    svg.appendChild(line);
  }
  const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(" ");
  svg.appendChild(
    s("path", { d: `${d} L${x(points.length - 1).toFixed(1)},${H} L${x(0).toFixed(1)},${H} Z`, class: "spark-area" }),
  );
  svg.appendChild(s("path", { d, class: "spark-line" }));
  const last = points[points.length - 1]!;
  svg.appendChild(s("circle", { cx: x(points.length - 1), cy: y(last.tokens), r: 2.5, class: "spark-dot" }));
  const caption = h(
    "div",
    { class: "spark-caption muted" },
    h("span", null, `Context per turn · ${points.length} turn${points.length === 1 ? "" : "s"}`),
    h(
      "span",
      { class: "legend" },
      h("span", { class: "legend-compaction" }),
      `${history.compactions.length} compaction${history.compactions.length === 1 ? "" : "s"}`,
    ),
    g.threshold !== null ? h("span", { class: "legend" }, h("span", { class: "legend-threshold" }), "threshold") : null,
  );
  return h("div", { class: "history", "data-testid": "history" }, svg, caption);
}

// --- summaries

function collapsible(key: string, heading: string, description: string, body: Node[], actions?: Node[]): HTMLElement {
  const c = h("vscode-collapsible", { heading, description, "data-section": key });
  if (ui.openSections[key] !== false) c.setAttribute("open", "");
  c.addEventListener("vsc-collapsible-toggle", (ev) => {
    ui.openSections[key] = (ev as CustomEvent<{ open: boolean }>).detail.open;
    saveUi();
  });
  if (actions)
    for (const a of actions) {
      (a as HTMLElement).setAttribute("slot", "actions");
      c.appendChild(a);
    }
  append(c, body);
  return c;
}

function summaryTitle(sm: SummaryModel): string {
  return sm.type === "compaction" ? "Compaction" : "Branch summary";
}

function renderSummariesSection(st: PanelState): HTMLElement {
  const summaries = st.summaries;
  if (summaries.length === 0) {
    return collapsible("summaries", "Summaries", "none on this path", [
      h("p", { class: "muted pad" }, "No compaction or branch summary on the current path yet."),
    ]);
  }
  const list = h("div", { class: "summaries" });
  summaries.forEach((sm, i) => {
    const expanded =
      ui.expandedSummaries.includes(sm.entryId) || (ui.expandedSummaries.length === 0 && i === summaries.length - 1);
    const card = h("article", {
      class: `summary ${sm.inContext ? "in-context" : "stale"}`,
      "data-summary": sm.entryId,
    });
    const head = h(
      "button",
      { class: "summary-head", "aria-expanded": String(expanded), "data-key": `summary-${sm.entryId}` },
      icon(expanded ? "chevron-down" : "chevron-right", { size: "14" }),
      icon(sm.type === "compaction" ? COMPACT_ICON : "git-branch", { size: "14" }),
      h("span", { class: "summary-title" }, `${summaryTitle(sm)} ${i + 1}`),
      h("span", { class: "muted" }, time(sm.timestamp)),
      sm.tokensBefore !== null
        ? h(
            "span",
            { class: "chip", title: "tokensBefore: context tokens when pi compacted" },
            `${short(sm.tokensBefore)} before`,
          )
        : null,
      h("span", { class: "chip", title: "Estimated tokens of the summary itself" }, `${short(sm.tokens)} summary`),
      sm.inContext
        ? h("vscode-badge", { title: "Part of the current context" }, "in context")
        : h("span", { class: "muted small", title: "A later compaction summarised it again" }, "superseded"),
    );
    head.addEventListener("click", () => {
      const set = new Set(
        ui.expandedSummaries.length === 0 ? [summaries[summaries.length - 1]!.entryId] : ui.expandedSummaries,
      );
      if (set.has(sm.entryId)) set.delete(sm.entryId);
      else set.add(sm.entryId);
      ui.expandedSummaries = [...set];
      if (ui.expandedSummaries.length === 0) ui.expandedSummaries = ["-"];
      saveUi();
      render();
    });
    card.appendChild(head);
    if (expanded) {
      const meta = h("div", { class: "summary-meta muted" });
      meta.append(h("span", { class: "mono" }, `id ${sm.entryId}`));
      if (sm.firstKeptEntryId) {
        const kept = h(
          "button",
          { class: "link mono", title: "Reveal the first kept entry in the tree" },
          `firstKeptEntryId ${sm.firstKeptEntryId}`,
        );
        kept.addEventListener("click", () => send({ type: "revealEntry", entryId: sm.firstKeptEntryId! }));
        meta.append(kept);
      }
      if (sm.fromId) meta.append(h("span", { class: "mono" }, `from ${sm.fromId}`));
      if (sm.fromHook)
        meta.append(h("span", { title: "Written by an extension/hook: pi ignores its file details" }, "fromHook"));
      const body = h("div", { class: "markdown" });
      body.appendChild(renderMarkdown(sm.body));
      card.append(meta, body);
      if (sm.readFiles.length || sm.modifiedFiles.length) {
        card.appendChild(
          h(
            "div",
            { class: "summary-files muted" },
            sm.modifiedFiles.length
              ? h("span", null, icon("edit", { size: "12" }), ` ${sm.modifiedFiles.length} modified`)
              : null,
            sm.readFiles.length ? h("span", null, icon("eye", { size: "12" }), ` ${sm.readFiles.length} read`) : null,
          ),
        );
      }
    }
    list.appendChild(card);
  });
  const sections: HTMLElement[] = [collapsible("summaries", "Summaries", `${summaries.length} on this path`, [list])];
  if (summaries.length >= 2) sections.push(renderDiffSection(st));
  return h("div", null, ...sections);
}

function renderDiffSection(st: PanelState): HTMLElement {
  const summaries = st.summaries;
  const ids = summaries.map((x) => x.entryId);
  let toId = ui.diffTo && ids.includes(ui.diffTo) ? ui.diffTo : ids[ids.length - 1]!;
  let toIndex = ids.indexOf(toId);
  if (toIndex === 0) {
    toIndex = 1;
    toId = ids[1]!;
  }
  let fromId =
    ui.diffFrom && ids.indexOf(ui.diffFrom) >= 0 && ids.indexOf(ui.diffFrom) < toIndex
      ? ui.diffFrom
      : ids[toIndex - 1]!;
  const older = summaries.find((x) => x.entryId === fromId)!;
  const newer = summaries[toIndex]!;
  fromId = older.entryId;

  const select = (id: string, value: string, choices: SummaryModel[], onChange: (v: string) => void) => {
    const sel = h("vscode-single-select", {
      "data-testid": id,
      "aria-label": id === "diff-from" ? "Older summary" : "Newer summary",
    });
    for (const c of choices) {
      const i = summaries.indexOf(c);
      const opt = h(
        "vscode-option",
        { value: c.entryId, selected: c.entryId === value },
        `${summaryTitle(c)} ${i + 1} · ${c.entryId}`,
      );
      sel.appendChild(opt);
    }
    sel.addEventListener("change", () => onChange((sel as unknown as { value: string }).value));
    return sel;
  };
  const fromSel = select("diff-from", fromId, summaries.slice(0, toIndex), (v) => {
    ui.diffFrom = v;
    saveUi();
    render();
  });
  const toSel = select("diff-to", newer.entryId, summaries.slice(1), (v) => {
    ui.diffTo = v;
    if (ui.diffFrom && ids.indexOf(ui.diffFrom) >= ids.indexOf(v)) ui.diffFrom = undefined;
    saveUi();
    render();
  });
  const diff = diffSummaries(older.text, newer.text);
  const st2 = diff.stats;
  const stats = h(
    "div",
    { class: "diff-stats", "data-testid": "diff-stats" },
    h(
      "span",
      { class: `stat removed ${st2.linesRemoved ? "has" : ""}`, title: "Lines of the older summary that are gone" },
      icon("remove", { size: "12" }),
      ` ${st2.linesRemoved} line${st2.linesRemoved === 1 ? "" : "s"} disappeared`,
    ),
    h("span", { class: "stat changed" }, icon("diff-modified", { size: "12" }), ` ${st2.linesChanged} changed`),
    h("span", { class: "stat added" }, icon("add", { size: "12" }), ` ${st2.linesAdded} added`),
    h("span", { class: "muted" }, `(${st2.wordsRemoved} words removed, ${st2.wordsAdded} added)`),
  );
  const openBtn = h(
    "vscode-button",
    { secondary: true, icon: "diff", "data-testid": "open-diff-editor", "data-key": "open-diff-editor" },
    "Open in Diff Editor",
  );
  openBtn.addEventListener("click", () => send({ type: "openDiff", fromId: older.entryId, toId: newer.entryId }));
  const unchanged = h("vscode-checkbox", {
    label: "Show unchanged lines",
    checked: ui.showUnchanged,
    "data-testid": "show-unchanged",
  });
  unchanged.addEventListener("change", () => {
    ui.showUnchanged = (unchanged as unknown as { checked: boolean }).checked;
    saveUi();
    render();
  });
  const controls = h(
    "div",
    { class: "diff-controls" },
    h("label", { class: "muted" }, "From"),
    fromSel,
    h("label", { class: "muted" }, "to"),
    toSel,
  );
  const body = [
    controls,
    h("div", { class: "diff-toolbar" }, stats, h("span", { class: "spacer" }), unchanged, openBtn),
    renderDiffLines(diff.lines, diff.identical),
  ];
  return collapsible(
    "diff",
    "Summary diff",
    `${summaryTitle(older)} ${ids.indexOf(older.entryId) + 1} → ${summaryTitle(newer)} ${toIndex + 1}`,
    body,
  );
}

function renderDiffLines(lines: DiffLine[], identical: boolean): HTMLElement {
  const box = h("div", { class: "diff", role: "table", "aria-label": "Summary diff", "data-testid": "summary-diff" });
  if (identical) {
    box.appendChild(h("p", { class: "muted pad" }, "The two summaries are identical."));
    return box;
  }
  const CONTEXT = 1;
  const keep = lines.map((l) => l.kind !== "same");
  if (!ui.showUnchanged) {
    lines.forEach((l, i) => {
      if (l.kind === "same") return;
      for (let j = Math.max(0, i - CONTEXT); j <= Math.min(lines.length - 1, i + CONTEXT); j++) keep[j] = true;
    });
  }
  let skipped = 0;
  const flush = () => {
    if (skipped > 0)
      box.appendChild(
        h("div", { class: "diff-skip muted", role: "row" }, `⋯ ${skipped} unchanged line${skipped === 1 ? "" : "s"}`),
      );
    skipped = 0;
  };
  lines.forEach((l, i) => {
    if (!ui.showUnchanged && !keep[i]) {
      skipped++;
      return;
    }
    flush();
    const gutter = l.kind === "removed" ? "−" : l.kind === "added" ? "+" : l.kind === "changed" ? "~" : " ";
    const text = h("span", { class: "diff-text" });
    for (const seg of l.segments) {
      if (seg.op === "same") text.appendChild(document.createTextNode(seg.text));
      else text.appendChild(h(seg.op === "removed" ? "del" : "ins", { class: `w-${seg.op}` }, seg.text));
    }
    if (l.segments.every((x) => x.text.length === 0)) text.appendChild(document.createTextNode("\u00a0"));
    box.appendChild(
      h(
        "div",
        {
          class: `diff-line ${l.kind}`,
          role: "row",
          "data-kind": l.kind,
          "aria-label": l.kind === "same" ? undefined : `${l.kind} line`,
        },
        h("span", { class: "ln muted" }, l.oldLine !== undefined ? String(l.oldLine) : ""),
        h("span", { class: "ln muted" }, l.newLine !== undefined ? String(l.newLine) : ""),
        h("span", { class: "gutter" }, gutter),
        text,
      ),
    );
  });
  flush();
  return box;
}

// --- tracked files

function relativePath(f: TrackedFileModel, cwd: string | null): string {
  if (cwd && (f.absolutePath === cwd || f.absolutePath.startsWith(cwd.endsWith("/") ? cwd : `${cwd}/`)))
    return f.absolutePath.slice(cwd.length).replace(/^[\\/]/, "");
  return f.path;
}

function sourceText(f: TrackedFileModel): string {
  return f.sources
    .map((src) =>
      src.kind === "compaction"
        ? `compaction ${src.ordinal} (${src.entryId}): ${src.op}`
        : `turn ${src.ordinal} (${src.entryId}): ${src.op}`,
    )
    .join("\n");
}

function renderFilesSection(st: PanelState): HTMLElement {
  const files = st.files!;
  const total = files.readFiles.length + files.modifiedFiles.length;
  const filter = h("vscode-textfield", {
    placeholder: "Filter files",
    value: ui.filter,
    "data-testid": "file-filter",
    "data-key": "file-filter",
    "aria-label": "Filter tracked files",
  });
  filter.appendChild(icon("filter", { slot: "content-before", size: "14" }));
  const listsBox = h("div", { class: "file-lists" });
  const renderLists = () => {
    listsBox.replaceChildren(
      renderFileList("Modified", "modified", files.modifiedFiles, st),
      renderFileList("Read", "read", files.readFiles, st),
    );
  };
  filter.addEventListener("input", () => {
    ui.filter = (filter as unknown as { value: string }).value;
    saveUi();
    renderLists();
  });
  renderLists();
  const seeded = files.seededFrom
    ? h(
        "p",
        { class: "note muted" },
        `As pi's next compaction would list them: compaction ${files.seededFrom}'s details plus tool calls since. Paths resolved against ${files.cwd ?? "the session cwd"}.`,
      )
    : h(
        "p",
        { class: "note muted" },
        `As pi's next compaction would list them (tool calls in the current context). Paths resolved against ${files.cwd ?? "the session cwd"}.`,
      );
  return collapsible(
    "files",
    "Tracked files",
    `${files.modifiedFiles.length} modified · ${files.readFiles.length} read`,
    total
      ? [h("div", { class: "filter-row" }, filter), listsBox, seeded]
      : [h("p", { class: "muted pad" }, "No file was read, written or edited in the current context.")],
  );
}

function renderFileList(
  title: string,
  kind: "modified" | "read",
  files: TrackedFileModel[],
  st: PanelState,
): HTMLElement {
  const q = ui.filter.trim().toLowerCase();
  const shown = q
    ? files.filter((f) => f.path.toLowerCase().includes(q) || f.absolutePath.toLowerCase().includes(q))
    : files;
  const wrap = h("div", { class: "file-group" });
  wrap.appendChild(
    h(
      "h3",
      null,
      icon(kind === "modified" ? "edit" : "eye", { size: "14" }),
      ` ${title} `,
      h("span", { class: "muted" }, q ? `${shown.length} of ${files.length}` : String(files.length)),
    ),
  );
  if (shown.length === 0) {
    wrap.appendChild(h("p", { class: "muted pad" }, files.length ? "No match." : "None."));
    return wrap;
  }
  const list = h("div", {
    class: "files",
    role: "listbox",
    "aria-label": `${title} files`,
    "data-testid": `files-${kind}`,
  });
  shown.forEach((f, i) => list.appendChild(renderFileRow(f, st, i === 0)));
  list.addEventListener("keydown", (ev) => onListKey(ev as KeyboardEvent, list));
  wrap.appendChild(list);
  return wrap;
}

function fileBasename(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

function renderFileRow(f: TrackedFileModel, st: PanelState, first: boolean): HTMLElement {
  const rel = relativePath(f, st.files?.cwd ?? null);
  const dir = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
  const missing = f.exists === false;
  const row = h("div", {
    class: `file ${missing ? "missing" : ""} ${f.openInTab ? "open" : ""} ${f.outsideWorkspace ? "outside" : ""}`,
    role: "option",
    tabindex: first ? "0" : "-1",
    "aria-selected": "false",
    "data-path": f.absolutePath,
    "data-key": `file-${f.list}-${f.absolutePath}`,
    title: `${f.absolutePath}${missing ? "\n(missing on disk)" : ""}${f.outsideWorkspace ? "\n(outside the workspace)" : ""}\n\n${sourceText(f)}\n\nClick: preview · Double-click/Enter: keep open · Ctrl+Enter: to the side · Ctrl+C: copy path`,
  });
  const last = f.sources[f.sources.length - 1];
  const origin = last ? (last.kind === "compaction" ? `compaction ${last.ordinal}` : `turn ${last.ordinal}`) : "";
  append(row, [
    icon(missing ? "circle-slash" : f.list === "modified" ? "diff-modified" : "file", {
      size: "14",
      class: "file-icon",
    }),
    h("span", { class: "file-name" }, fileBasename(rel)),
    h("span", { class: "file-dir muted" }, dir),
    h(
      "span",
      { class: "file-flags" },
      missing ? h("span", { class: "flag flag-missing", "data-flag": "missing" }, "missing") : null,
      f.outsideWorkspace
        ? h(
            "span",
            { class: "flag flag-outside", "data-flag": "outside", title: "Outside the workspace folders" },
            "outside",
          )
        : null,
      f.openInTab
        ? h(
            "span",
            { class: "flag flag-open", "data-flag": "open", title: "Open in an editor tab" },
            icon("circle-filled", { size: "8" }),
          )
        : null,
      h("span", { class: "file-origin muted", title: sourceText(f) }, origin),
    ),
  ]);
  const actions = h("span", { class: "file-actions" });
  if (f.list === "modified" && f.inGitRepo && !missing && st.capabilities.git) {
    const gd = h("vscode-toolbar-button", {
      icon: "git-compare",
      label: "Diff against HEAD",
      title: "Open diff against git HEAD",
      "data-action": "git-diff",
    });
    gd.addEventListener("click", (ev) => {
      ev.stopPropagation();
      send({ type: "openGitDiff", path: f.absolutePath });
    });
    actions.appendChild(gd);
  }
  const cp = h("vscode-toolbar-button", {
    icon: "copy",
    label: "Copy path",
    title: "Copy path",
    "data-action": "copy-path",
  });
  cp.addEventListener("click", (ev) => {
    ev.stopPropagation();
    send({ type: "copyPath", path: f.absolutePath });
  });
  actions.appendChild(cp);
  row.appendChild(actions);
  const open = (preview: boolean, toSide = false) => {
    if (missing) {
      showNotice("warning", `${f.path} does not exist on disk.`);
      return;
    }
    send({ type: "openFile", path: f.absolutePath, preview, ...(toSide ? { toSide } : {}) });
  };
  row.addEventListener("click", (ev) => {
    select(row);
    if ((ev as MouseEvent).detail <= 1) open(true, (ev as MouseEvent).ctrlKey || (ev as MouseEvent).metaKey);
  });
  row.addEventListener("dblclick", () => open(false));
  row.addEventListener("keydown", (ev) => {
    const k = ev as KeyboardEvent;
    if (k.key === "Enter") {
      k.preventDefault();
      open(false, k.ctrlKey || k.metaKey);
    } else if (k.key === " ") {
      k.preventDefault();
      open(true);
    } else if ((k.key === "c" || k.key === "C") && (k.ctrlKey || k.metaKey)) {
      k.preventDefault();
      send({ type: "copyPath", path: f.absolutePath });
    }
  });
  return row;
}

function select(row: HTMLElement): void {
  const list = row.parentElement;
  list?.querySelectorAll('[role="option"]').forEach((el) => {
    el.setAttribute("tabindex", "-1");
    el.setAttribute("aria-selected", "false");
  });
  row.setAttribute("tabindex", "0");
  row.setAttribute("aria-selected", "true");
}

function onListKey(ev: KeyboardEvent, list: HTMLElement): void {
  const rows = [...list.querySelectorAll<HTMLElement>('[role="option"]')];
  const i = rows.indexOf(document.activeElement as HTMLElement);
  let next = -1;
  if (ev.key === "ArrowDown") next = Math.min(rows.length - 1, i + 1);
  else if (ev.key === "ArrowUp") next = Math.max(0, i - 1);
  else if (ev.key === "Home") next = 0;
  else if (ev.key === "End") next = rows.length - 1;
  if (next < 0) return;
  ev.preventDefault();
  const row = rows[next]!;
  select(row);
  row.focus();
}

// ------------------------------------------------------------------------------------ notices

function showNotice(level: "info" | "warning" | "error", text: string): void {
  const n = h(
    "div",
    { class: `notice ${level}` },
    icon(level === "info" ? "info" : level === "warning" ? "warning" : "error", { size: "14" }),
    h("span", null, text),
  );
  notices.appendChild(n);
  setTimeout(() => n.remove(), 4000);
}

// ------------------------------------------------------------------------------------ messages

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
