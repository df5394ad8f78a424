// Helpers for end-to-end UI tests (node --test + playwright-core) against a real VS Code
// workbench served by code-server. See docs/testing.md.
//
// Under `npm run test:e2e`, scripts/run-e2e.mjs starts ONE code-server and ONE Chromium for all
// test files and passes them in env vars; each test file connects to them. Run a file directly
// (`node --test test/e2e/smoke.test.mjs`, after `npm run build`) and the harness starts its own.
//
//   import { openWorkbench, runCommand, statusBarItem, webviewFrame, screenshot } from "./harness.mjs";
//   const wb = await openWorkbench();         // new browser context + page, workbench loaded
//   await runCommand(wb.page, "Pi Context: Show Log");
//   await screenshot(wb.page, "after-show-log");
//   await wb.close();
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, afterEach, before } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

// session fixtures: installSession(agentDir, "media/demo/sessions/long.jsonl", workspace) etc.
import { sessionDirFor } from "../../scripts/test-fixtures.mjs";
export { encodeSessionDirName, installSession, sessionDirFor } from "../../scripts/test-fixtures.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "..", "..");
export const resultsDir = process.env.PI_CONTEXT_E2E_RESULTS || path.join(repoRoot, "test-results", "e2e");
export const PUBLISHER_NAME = "pi-context.pi-context";

let shared; // { baseUrl, browser, workspace, agentDir, logsDir?, stop() }

/** Workbench windows open now (for the failure capture below). */
const openWindows = new Set();

/**
 * Every failed test of a file that imports this harness leaves evidence: a screenshot of each open
 * workbench window, its browser console (the workbench's log in the web build) and the logs of the
 * extension host(s) that window started, with our output channel, as
 * `test-results/e2e/FAILED-<test>-<n>.{png,console.log,exthostN.log,exthostN.pi.log}`.
 * (A root-level hook of the importing file: `node --test` runs one process per file.) A failed
 * `before` hook runs no afterEach: openWorkbench() captures its own failure, and `useWorkbench()`
 * (or `withEvidence()`) the rest of a before hook.
 */
const underTest = !!process.env.NODE_TEST_CONTEXT || /\.test\.mjs$/.test(process.argv[1] ?? "");
if (underTest) afterEach((t) => (t.passed === false ? captureEvidence(t.name) : undefined));

/**
 * Save the evidence (see above) of every open window as `FAILED-<name>-<n>.*`.
 * @param {string} name the failed test or hook
 */
export async function captureEvidence(name) {
  let n = 0;
  for (const w of openWindows) {
    const base = path.join(resultsDir, `FAILED-${name.replace(/[^\w.-]+/g, "-").slice(0, 80)}-${++n}`);
    try {
      mkdirSync(resultsDir, { recursive: true });
      await w.page.screenshot({ path: `${base}.png` }).catch(() => {});
      writeFileSync(`${base}.console.log`, w.consoleLines.join("\n") + "\n");
      for (const [from, to] of hostLogsOf(w)) copyFileSync(from, `${base}.${to}`);
      console.log(`[e2e] failure evidence: ${base}.*`);
    } catch (error) {
      console.log(`[e2e] could not capture the failure: ${error}`);
    }
  }
}

/**
 * Run `fn` (the work of a `before` hook); if it throws, capture the evidence first, then rethrow.
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withEvidence(name, fn) {
  try {
    return await fn();
  } catch (error) {
    await captureEvidence(name);
    throw error;
  }
}

/** The server's logs root (its user data's `logs/`: one `<time>/` per server start). */
function logsRoot() {
  return process.env.PI_CONTEXT_E2E_LOGS_DIR || shared?.logsDir;
}

/** Every extension-host log folder of the server, `logs/<time>/exthostN` (one per window). */
function hostLogDirs() {
  const root = logsRoot();
  if (!root || !existsSync(root)) return [];
  const out = [];
  for (const run of readdirSync(root)) {
    const dir = path.join(root, run);
    if (!statSync(dir).isDirectory()) continue;
    for (const h of readdirSync(dir)) if (h.startsWith("exthost")) out.push(path.join(dir, h));
  }
  return out;
}

/**
 * The lines of the extension hosts' log files (every window's `exthostN` folder, `.log` files) that contain
 * `text` — e.g. the extension's "activated in N ms" line, which the Output view may have scrolled
 * past (it shows the end of a long log).
 * @param {string} text
 * @returns {string[]}
 */
export function hostLogLines(text) {
  const out = [];
  for (const dir of hostLogDirs())
    for (const name of readdirSync(dir, { recursive: true })) {
      if (!String(name).endsWith(".log")) continue;
      let content = "";
      try {
        content = readFileSync(path.join(dir, String(name)), "utf8");
      } catch {
        continue;
      }
      for (const line of content.split("\n")) if (line.includes(text)) out.push(line);
    }
  return out;
}

/**
 * The logs of the extension host(s) window `w` started (the folders that appeared after it
 * opened; all windows of a run share the server's logs dir): `[from, savedName]` pairs.
 */
function hostLogsOf(w) {
  const out = [];
  for (const dir of hostLogDirs().filter((d) => !w.hostLogsBefore.has(d))) {
    const h = path.basename(dir);
    if (existsSync(path.join(dir, "remoteexthost.log"))) out.push([path.join(dir, "remoteexthost.log"), `${h}.log`]);
    const ours = path.join(dir, PUBLISHER_NAME, "Pi Context.log");
    if (existsSync(ours)) out.push([ours, `${h}.pi.log`]);
  }
  return out;
}

/**
 * The shared server + browser (from run-e2e.mjs's env, or started here on first use):
 * `{ baseUrl, browser, workspace, agentDir, guardProcesses }` — guardProcesses: the file the
 * server's live-session guard reads its pi processes from (PI_CONTEXT_GUARD_PROCESSES; `[]`).
 */
export async function sharedHost() {
  if (shared) return shared;
  const baseUrl = process.env.PI_CONTEXT_E2E_BASE_URL;
  const wsEndpoint = process.env.PI_CONTEXT_E2E_BROWSER_WS;
  if (baseUrl && wsEndpoint) {
    const browser = await chromium.connect(wsEndpoint);
    shared = {
      baseUrl,
      browser,
      workspace: process.env.PI_CONTEXT_TEST_WORKSPACE,
      agentDir: process.env.PI_CONTEXT_TEST_AGENT_DIR,
      guardProcesses: process.env.PI_CONTEXT_GUARD_PROCESSES,
      async stop() {
        await browser.close().catch(() => {}); // disconnects; the runner owns the browser
      },
    };
    return shared;
  }
  // standalone: start our own (slower; fine for running one file while debugging)
  const { startVscodeServer } = await import("../../scripts/vscode-host.mjs");
  const { launchChromium } = await import("../../scripts/browser.mjs");
  const { createTestFixture } = await import("../../scripts/test-fixtures.mjs");
  const fixture = createTestFixture({ prefix: "pi-context-e2e-" });
  const server = await startVscodeServer({
    devExtension: repoRoot,
    smokeTestDriver: true,
    quiet: true,
    env: {
      PI_CODING_AGENT_DIR: fixture.agentDir,
      PI_CONTEXT_TEST_WORKSPACE: fixture.workspace,
      PI_CONTEXT_TEST_AGENT_DIR: fixture.agentDir,
      PI_CONTEXT_GUARD_PROCESSES: fixture.guardProcesses,
    },
  });
  const browser = await launchChromium();
  shared = {
    baseUrl: server.baseUrl,
    logsDir: path.join(server.userDataDir, "logs"),
    browser,
    workspace: fixture.workspace,
    agentDir: fixture.agentDir,
    guardProcesses: fixture.guardProcesses,
    async stop() {
      await browser.close().catch(() => {});
      await server.stop();
      fixture.cleanup();
    },
  };
  return shared;
}

/** Disconnect from (or stop) the shared host. Call in a top-level `after()`. */
export async function closeSharedHost() {
  const s = shared;
  shared = undefined;
  await s?.stop();
}

/**
 * Workbench URL for the shared server with this repo as the development extension.
 * @param {{folder?: string, payload?: [string,string][]}} [opts]
 */
export function workbenchUrl(baseUrl, opts = {}) {
  const authority = new URL(baseUrl).host;
  const q = new URLSearchParams();
  if (opts.folder) q.set("folder", opts.folder);
  else q.set("ew", "true");
  const payload = [
    ["extensionDevelopmentPath", `vscode-remote://${authority}${encodeURI(repoRoot)}`],
    ["skipWelcome", "true"],
    ...(opts.payload ?? []),
  ];
  q.set("payload", JSON.stringify(payload));
  return `${baseUrl}/?${q}`;
}

/**
 * Open a new workbench window (fresh browser context) on the shared server and wait until it
 * has rendered and the extension host is up.
 * @param {{folder?: string, width?: number, height?: number, echoConsole?: boolean, waitForExtension?: boolean}} [opts]
 *   waitForExtension (default true): also wait for our status bar item (the extension is active)
 */
export async function openWorkbench(opts = {}) {
  const host = await sharedHost();
  const context = await host.browser.newContext({
    viewport: { width: opts.width ?? 1400, height: opts.height ?? 900 },
  });
  const page = await context.newPage();
  const consoleLines = [];
  page.on("console", (m) => {
    consoleLines.push(`[${m.type()}] ${m.text()}`);
    if (opts.echoConsole || process.env.PI_CONTEXT_E2E_VERBOSE === "1") console.log(`[browser] ${m.text()}`);
  });
  page.on("pageerror", (e) => consoleLines.push(`[pageerror] ${e.message}`));
  const folder = opts.folder ?? host.workspace;
  const window = {
    page,
    context,
    consoleLines,
    workspace: folder,
    agentDir: host.agentDir,
    hostLogsBefore: new Set(hostLogDirs()),
    async close() {
      openWindows.delete(window);
      await context.close().catch(() => {});
    },
  };
  openWindows.add(window);
  await withEvidence("openWorkbench", async () => {
    await page.goto(workbenchUrl(host.baseUrl, { folder }));
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    // the status bar is rendered once the workbench is restored
    await page.locator("#workbench\\.parts\\.statusbar").waitFor({ state: "visible", timeout: 60_000 });
    // start-up is over once our extension (activated on `onStartupFinished`, i.e. after the layout
    // was restored) shows its gauge: a click before that can be undone by the restore
    if (opts.waitForExtension !== false)
      await statusBarItem(page, "piContext.gauge").waitFor({ state: "attached", timeout: 60_000 });
  });
  return window;
}

/** Our views, by pane title: the id whose `.focus` command opens the container and the view (never toggles). */
const VIEW_IDS = { "Pi Session": "piContext.sessionTree", Context: "piContext.panelView" };

/**
 * Show one of our views (and the Pi Context container) the way a keyboard user does: its
 * "Focus on … View" command, which opens and never toggles (a click on the activity bar icon
 * closes the side bar when the container is already shown).
 * @param {import('playwright-core').Page} page
 * @param {"Pi Session" | "Context"} title
 */
export async function showView(page, title) {
  await runCommand(page, `Focus on ${title} View`, { commandId: `${VIEW_IDS[title]}.focus` });
}

/**
 * Run a command from the command palette by its title as shown there ("Pi Context: Show Log").
 * Retries for up to `timeoutMs`: right after the page loads, the extension's contributions may
 * not be registered yet, and an open palette does not refresh its list.
 * @param {import('playwright-core').Page} page
 * @param {string} title
 * @param {{timeoutMs?: number, commandId?: string}} [opts] commandId: match the row by command id
 *   (e.g. "piContext.showLog") instead of the title; `title` is still what gets typed
 */
export async function runCommand(page, title, opts = {}) {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const widget = page.locator(".quick-input-widget");
  const input = widget.locator("input");
  // an exact title match (not a fuzzy "similar commands" neighbour); the row also carries the
  // command id as data-quick-input-id
  const exact = new RegExp(`^\\s*${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`);
  const row = opts.commandId
    ? widget.locator(`.monaco-list-row:has([data-quick-input-id=${JSON.stringify(opts.commandId)}])`).first()
    : widget
        .locator(".monaco-list-row")
        .filter({ has: page.locator(".label-name", { hasText: exact }) })
        .first();
  let rows = [];
  for (;;) {
    if (!(await input.isVisible().catch(() => false))) {
      await page.keyboard.press("F1");
      await input.waitFor({ state: "visible", timeout: 10_000 });
    }
    try {
      // inside the retry: the palette can close between the visibility check and the fill (a
      // focus change as a session switches); then it is opened again
      await input.fill(`>${title}`, { timeout: 5_000 });
      await row.waitFor({ state: "visible", timeout: 2_000 });
      break;
    } catch {
      rows = await widget
        .locator(".monaco-list-row")
        .allInnerTexts()
        .catch(() => []);
      if (Date.now() > deadline) {
        const shot = await screenshot(page, `runCommand-failed-${title}`).catch(() => "");
        throw new Error(
          `command "${title}" not found in the palette (rows: ${JSON.stringify(rows.slice(0, 10))}; screenshot: ${shot})`,
        );
      }
      await page.keyboard.press("Escape"); // reopen so the list is rebuilt
      await page.waitForTimeout(500);
    }
  }
  await row.click();
  // the palette is done when it closed, or when the command's own quick input took the widget
  // over (its value is no longer the palette's `>…`): waiting for "hidden" then only cost 10 s
  // (the Select Session pick had 20 s left of its 30, which a loaded machine could miss)
  await waitUntil(
    async () =>
      !(await input.isVisible().catch(() => false)) ||
      !(await input.inputValue({ timeout: 500 }).catch(() => ">")).startsWith(">"),
    10_000,
    "the palette to close",
  ).catch(() => {});
}

/**
 * Wait for the quick input (an input box or a pick) whose title contains `title`, and return it.
 * Not just "an input is visible": right after a palette command the palette's own input is still
 * shown for a moment, and keys pressed then go to the palette, not to the box that opens next.
 * Type with `input.fill()`, confirm with `input.press("Enter")` (it focuses the input first).
 * @param {import('playwright-core').Page} page
 * @param {string} title
 */
export async function quickInput(page, title, timeoutMs = 30_000) {
  const widget = page.locator(".quick-input-widget");
  await widget.locator(".quick-input-title", { hasText: title }).waitFor({ state: "visible", timeout: timeoutMs });
  return { widget, input: widget.locator(".quick-input-box input").first() };
}

/**
 * A status bar item contributed by this extension, by the id given to
 * `vscode.window.createStatusBarItem(id, …)`: the DOM id is `pi-context.pi-context.<id>`.
 * @param {import('playwright-core').Page} page
 * @param {string} itemId
 */
export function statusBarItem(page, itemId) {
  return page.locator(`[id="${PUBLISHER_NAME}.${itemId}"]`);
}

/** A status bar item by (part of) its visible text. */
export function statusBarItemByText(page, text) {
  return page.locator("#workbench\\.parts\\.statusbar .statusbar-item", { hasText: text });
}

/**
 * The content frame of the (first) webview: VS Code nests it two iframes deep,
 * `iframe.webview.ready` → `#active-frame`. Use webviewFrameByTitle() when several are open.
 * @param {import('playwright-core').Page} page
 */
export function webviewFrame(page) {
  return page.frameLocator("iframe.webview.ready").first().frameLocator("#active-frame");
}

/**
 * The content frame of the webview whose panel title is `title` (the inner #active-frame carries
 * the title attribute). Waits up to `timeoutMs` for it to appear.
 * @param {import('playwright-core').Page} page
 * @param {string} title
 */
export async function webviewFrameByTitle(page, title, timeoutMs = 20_000) {
  return waitUntil(
    async () => {
      const outers = page.locator("iframe.webview.ready");
      const n = await outers.count();
      for (let i = 0; i < n; i++) {
        const outer = outers.nth(i).contentFrame();
        const inner = outer.locator(`#active-frame[title=${JSON.stringify(title)}]`);
        if ((await inner.count()) > 0) return inner.contentFrame();
      }
      return undefined;
    },
    timeoutMs,
    `a webview titled ${JSON.stringify(title)}`,
  );
}

/**
 * A view pane (e.g. a tree view contributed to a view container) by its title, expanded.
 * Its rows: `(await viewPane(page, "Sessions")).locator(".pane-body .monaco-list-row")`
 * (each row's aria-label is the tree item's accessibility label / label).
 * The view container must be visible first (click its activity bar icon or run its
 * "View: Show …" / "<container>: Focus on … View" command).
 * @param {import('playwright-core').Page} page
 * @param {string} title
 */
export async function viewPane(page, title) {
  const header = page.locator(".pane-header", { hasText: title }).first();
  // one of our views whose container is not shown (or was closed meanwhile): open it, once
  const visible = await header
    .waitFor({ state: "visible", timeout: VIEW_IDS[title] ? 5_000 : 20_000 })
    .then(() => true)
    .catch(() => false);
  if (!visible) {
    if (!VIEW_IDS[title]) throw new Error(`no visible view pane "${title}"`);
    await showView(page, title);
    await header.waitFor({ state: "visible", timeout: 20_000 });
  }
  if ((await header.getAttribute("aria-expanded")) === "false") await header.click();
  return page.locator(".pane", { has: header }).first();
}

/**
 * Open a row's context menu and choose `itemText`, retried: a context menu closes when the tree
 * re-renders under it (a refresh, a hover), which a test cannot schedule around.
 * @param {import('playwright-core').Page} page
 * @param {import('playwright-core').Locator} row
 * @param {string} itemText
 * @param {{beforeClick?: () => Promise<void>}} [opts] e.g. a screenshot of the open menu
 */
export async function chooseFromContextMenu(page, row, itemText, opts = {}) {
  const item = page.locator(".context-view .action-item", { hasText: itemText }).first();
  for (let attempt = 1; ; attempt++) {
    try {
      await row.click({ button: "right" });
      await item.waitFor({ state: "visible", timeout: 5_000 });
      await item.hover();
      await page.waitForTimeout(200);
      await opts.beforeClick?.();
      await item.click({ timeout: 3_000 });
      // a click during the menu's opening can get lost: the highlighted item takes Enter
      if (await item.isVisible().catch(() => false)) await page.keyboard.press("Enter");
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
      await page.keyboard.press("Escape");
      await page.mouse.move(5, 5);
      await page.waitForTimeout(500);
    }
  }
}

/**
 * Hover `row` until its tooltip containing `text` shows (moving away first, so each try is a new
 * hover: a tree row's tooltip is resolved on hover and can come after the first one).
 * @param {import('playwright-core').Page} page
 * @param {import('playwright-core').Locator} row
 * @param {string} text part of the tooltip
 * @returns {Promise<import('playwright-core').Locator>} the hover
 */
export async function hoverRow(page, row, text, timeoutMs = 20_000) {
  const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: text }).first();
  await waitUntil(
    async () => {
      await page.mouse.move(5, 5);
      await row.hover();
      await page.waitForTimeout(1200);
      return hover.isVisible();
    },
    timeoutMs,
    "the row's tooltip",
  );
  return hover;
}

/** The visible rows of the tree in a view pane, by pane title. */
export async function treeRows(page, title) {
  const pane = await viewPane(page, title);
  return pane.locator(".pane-body .monaco-list-row");
}

/**
 * A notification in the notification center, by part of its text, expanded so that its whole
 * message shows (toasts are not rendered under the smoke-test driver; the center keeps them all).
 * @param {import('playwright-core').Page} page
 * @param {string} text
 * @returns {Promise<import('playwright-core').Locator>} the list row (its buttons: `.monaco-button`)
 */
export async function notificationInCenter(page, text) {
  const row = page.locator(".notifications-center .notification-list-item", { hasText: text }).first();
  await waitUntil(
    async () => {
      if (!(await page.locator(".notifications-center.visible").count()))
        await runCommand(page, "Notifications: Show Notifications", { commandId: "notifications.showList" });
      return row.isVisible();
    },
    20_000,
    `a notification with ${JSON.stringify(text)}`,
  );
  const expand = row.locator(".codicon-notifications-expand");
  if (await expand.count()) await expand.first().click();
  return row;
}

/** Visible notification toasts. */
export function notifications(page) {
  return page.locator(".notification-toast");
}

/** The text currently shown in the Output panel's editor. */
export async function outputPanelText(page) {
  const lines = page.locator(".part.panel .monaco-editor .view-lines");
  if ((await lines.count()) === 0) return "";
  return (await lines.first().innerText()).replace(/\u00a0/g, " ");
}

/**
 * Save a PNG screenshot to test-results/e2e/<name>.png and return its path.
 * @param {import('playwright-core').Page} page
 * @param {string} name
 * @param {{clip?: {x: number, y: number, width: number, height: number}}} [opts] a part of the page
 *   (page coordinates; see clipAround())
 */
export async function screenshot(page, name, opts = {}) {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path: file, ...(opts.clip ? { clip: opts.clip } : {}) });
  return file;
}

/**
 * The bounding box of `locator` (page coordinates). Playwright's `boundingBox()` answers null when
 * the element it resolved is replaced before it is measured (a webview re-rendering its section)
 * or is not laid out yet; this retries until a box exists, or throws after `timeoutMs` (ms).
 * @param {import('playwright-core').Locator} locator
 */
export async function boxOf(locator, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const box = await locator.boundingBox({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => null);
    if (box) return box;
    if (Date.now() > deadline) throw new Error(`no bounding box for ${locator} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Scroll a locator's element into view, again when a webview re-render (the state's details
 * arriving, a live update) replaced it mid-action: Playwright then fails with "Element is not
 * attached to the DOM" instead of resolving the locator again (the same race as in boxOf()).
 */
export async function scrollIntoView(locator, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await locator.scrollIntoViewIfNeeded({ timeout: Math.max(1, deadline - Date.now()) });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A clip around a box (page coordinates, e.g. a locator's boundingBox()), clamped to the viewport. */
export function clipAround(page, box, pad = 8) {
  const vp = page.viewportSize();
  const x = Math.max(0, box.x - pad);
  const y = Math.max(0, box.y - pad);
  return {
    x,
    y,
    width: Math.min(vp.width - x, box.width + 2 * pad),
    height: Math.min(vp.height - y, box.height + 2 * pad),
  };
}

/** The smallest box holding all `boxes` (e.g. a hover and the status bar item it belongs to). */
export function unionBox(...boxes) {
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  const right = Math.max(...boxes.map((b) => b.x + b.width));
  const bottom = Math.max(...boxes.map((b) => b.y + b.height));
  return { x, y, width: right - x, height: bottom - y };
}

/**
 * `pi-context inspect <file> --json --agent-dir <agentDir>` (the built CLI, dist/cli.js): the numbers
 * the UI must show for the same file.
 */
export function inspectJson(file, agentDir) {
  const out = execFileSync(
    process.execPath,
    [path.join(repoRoot, "dist", "cli.js"), "inspect", file, "--json", "--agent-dir", agentDir],
    { encoding: "utf8" },
  );
  return JSON.parse(out);
}

/** A message's `usage` as pi writes it: `total` tokens (10 of them output), no cache, no cost. */
export function usageOf(total) {
  return {
    input: total - 10,
    output: 10,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: total,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** The visible rows' texts of a tree view, whitespace collapsed (default: the Pi Session tree). */
export async function rowTexts(page, title = "Pi Session") {
  const rows = await treeRows(page, title);
  return (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
}

/**
 * A private project for one test file, so that it depends on no other file's sessions or settings:
 * `<tmp>/project` (with `.vscode/`) opened as the folder, and `<tmp>/agent`, a pi agent dir the
 * workspace settings point `piContext.agentDir` at.
 * @param {string} name temp dir prefix `pi-context-e2e-<name>-`
 * @param {{agentFrom?: string, files?: Record<string, string>, settings?: Record<string, unknown>}} [opts]
 *   agentFrom: a fixture agent dir whose files (settings.json, models.json) are copied;
 *   files: workspace files (relative path → text); settings: the first workspace settings
 */
export function privateProject(name, opts = {}) {
  const root = mkdtempSync(path.join(os.tmpdir(), `pi-context-e2e-${name}-`));
  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  if (opts.agentFrom)
    for (const f of readdirSync(opts.agentFrom)) copyFileSync(path.join(opts.agentFrom, f), path.join(agentDir, f));
  for (const [rel, text] of Object.entries(opts.files ?? {})) {
    mkdirSync(path.dirname(path.join(workspace, rel)), { recursive: true });
    writeFileSync(path.join(workspace, rel), text);
  }
  const project = {
    root,
    workspace,
    agentDir,
    /** The session dir of the workspace (`<agent>/sessions/--<cwd>--/`). */
    sessionDir: sessionDirFor(agentDir, workspace),
    /**
     * Write a session (JSONL text; its header's `cwd` becomes the workspace) into the workspace's
     * session dir, its mtime `ageMs` back (default an hour: not "live"; 0 leaves it now).
     * @returns {string} the file's path
     */
    addSession(text, fileName, ageMs = 3600_000) {
      const nl = text.indexOf("\n");
      const header = JSON.parse(text.slice(0, nl));
      header.cwd = workspace;
      mkdirSync(project.sessionDir, { recursive: true });
      const file = path.join(project.sessionDir, fileName);
      writeFileSync(file, JSON.stringify(header) + text.slice(nl));
      if (ageMs) {
        const old = new Date(Date.now() - ageMs);
        utimesSync(file, old, old);
      }
      return file;
    },
    /** Replace the workspace settings (`piContext.agentDir` = the private agent dir, always). */
    writeSettings(settings = {}) {
      writeFileAtomic(
        path.join(workspace, ".vscode", "settings.json"),
        JSON.stringify({ "piContext.agentDir": agentDir, ...settings }, null, 2),
      );
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  project.writeSettings(opts.settings);
  return project;
}

/**
 * The usual life of a test file's window, in the current `describe`: before → `make()` (e.g. a
 * privateProject) and openWorkbench on its `workspace`; after → close, disconnect, `cleanup()`.
 * A failing before hook leaves its evidence. Read `suite.fx` / `suite.wb` inside the tests.
 * @template F
 * @param {() => F | Promise<F>} make
 * @param {Parameters<typeof openWorkbench>[0]} [openOpts]
 * @returns {{fx: F, wb: Awaited<ReturnType<typeof openWorkbench>>}}
 */
export function useWorkbench(make, openOpts = {}) {
  const suite = /** @type {any} */ ({ fx: undefined, wb: undefined });
  before((t) =>
    withEvidence(`before ${t?.name ?? ""}`, async () => {
      suite.fx = await make();
      suite.wb = await openWorkbench({ folder: suite.fx.workspace, ...openOpts });
    }),
  );
  after(async () => {
    await suite.wb?.close();
    await closeSharedHost();
    suite.fx?.cleanup?.();
  });
  return suite;
}

/**
 * Replace a file's content at once (a temporary file beside it, then a rename): a reader — VS Code
 * watching `.vscode/settings.json` — sees the old content or the new one, never a half-written or
 * empty file.
 * @param {string} file
 * @param {string} text
 */
export function writeFileAtomic(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * Switch the workbench to a colour theme ("Default Dark Modern", "Default Light Modern") through
 * the workspace settings — `write()` writes settings that name it — and wait until
 * the workbench wears it (its `vs` / `vs-dark` class).
 * VS Code's theme service can miss the configured theme at start-up: in one CI run the extension
 * host had read the workspace settings (its agent dir) while the workbench stayed on the web
 * default (light), and writing the same value again is no change for it. So when the class does
 * not appear within 8 s, the theme is chosen the user's other way, "Preferences: Color Theme",
 * which applies it at once (and says so in the test output).
 * @param {import('playwright-core').Page} page
 * @param {string} name
 * @param {() => void} write
 */
export async function applyTheme(page, name, write) {
  const cls = name.includes("Light") ? ".monaco-workbench.vs" : ".monaco-workbench.vs-dark";
  const wears = async () => (await page.locator(cls).count()) > 0;
  write();
  // PI_CONTEXT_E2E_THEME_PICKER=1: go straight to the picker (to test this fallback itself)
  if (process.env.PI_CONTEXT_E2E_THEME_PICKER !== "1") {
    try {
      await waitUntil(wears, 8_000, `the theme ${name}`);
      return;
    } catch {
      console.log(
        `[e2e] the workbench did not take "${name}" from the settings in 8 s: choosing it in Preferences: Color Theme`,
      );
    }
  }
  await runCommand(page, "Preferences: Color Theme", { commandId: "workbench.action.selectTheme" });
  // the picker lists a theme by its label: "Dark Modern" for the setting value "Default Dark Modern"
  const label = name.replace(/^Default /, "");
  const widget = page.locator(".quick-input-widget");
  await widget.locator("input").fill(label);
  const exact = new RegExp(`^\\s*${label}\\s*$`);
  await widget
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: exact }) })
    .first()
    .click({ timeout: 10_000 });
  await waitUntil(wears, 20_000, `the theme ${name} (chosen in Preferences: Color Theme)`);
}

/** Poll until `fn()` is truthy (or throw after `timeoutMs`), every `intervalMs` (a bench polls finer). */
export async function waitUntil(fn, timeoutMs = 10_000, what = "condition", intervalMs = 200) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
