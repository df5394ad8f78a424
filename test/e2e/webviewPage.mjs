// Browser-only webview tests (no workbench): the real panel bundle (dist/webview/main.js, panel.css)
// in Chromium on a page shaped like src/panel/html.ts's document — an optional l10n JSON data block,
// then the module script — with `acquireVsCodeApi` stubbed (what the webview posts is kept in
// `window.__sent`), and a state posted the way the host posts it. Used by l10nPanel.test.mjs and
// panelSummaries.test.mjs.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { repoRoot } from "./harness.mjs";

const require = createRequire(import.meta.url);
/** A compiled module of `out/src/` (the host's own code builds the states). */
const out = (p) => require(path.join(repoRoot, "out", "src", p));
const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");
const ORIGIN = "http://panel.test";

/** The panel state of long.jsonl (four compactions), as the host builds it. */
export async function longPanelState({ pinned = false } = {}) {
  const { SessionFile } = out("core/read/session.js");
  const { analyzeLoaded } = out("core/rules/analyze.js");
  const { buildPanelState } = out("viewModel/panelState.js");
  const file = path.join(FIXTURE, "long.jsonl");
  const session = await SessionFile.open(file);
  const analysis = analyzeLoaded(session, { agentDir: path.join(FIXTURE, "long.agent"), projectSettings: "never" });
  return buildPanelState({ file, session, analysis, pinned, updatedAt: Date.now() });
}

/** The document of src/panel/html.ts without the CSP (the page is served by route, not the webview scheme). */
function panelDocument(bundle, lang) {
  const block = bundle
    ? `<script type="application/json" id="pi-context-l10n">${JSON.stringify(bundle).replace(/</g, "\\u003c")}</script>\n`
    : "";
  return `<!DOCTYPE html>
<html lang="${lang}"><head><meta charset="UTF-8">
<link rel="stylesheet" href="${ORIGIN}/dist/webview/codicon.css" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${ORIGIN}/dist/webview/panel.css">
</head><body data-host="panel">
<div id="app" role="main"><p class="loading">Loading…</p></div>
${block}<script>
window.__sent = [];
window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__sent.push(m), getState: () => undefined, setState: () => {} });
</script>
<script type="module" src="${ORIGIN}/dist/webview/main.js"></script>
</body></html>`;
}

/**
 * Open the panel in a new browser context of `browser`, wait for its `ready`, post `state`, wait
 * for the gauge. `bundle`: the l10n bundle written into the document (none: English).
 * @returns the page, its context (close it) and the page errors seen.
 */
export async function renderPanel(
  browser,
  state,
  { bundle, lang = "en", viewport = { width: 900, height: 1100 } } = {},
) {
  const ctx = await browser.newContext({ viewport });
  const p = await ctx.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  await p.route(`${ORIGIN}/**`, (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === "/") return route.fulfill({ contentType: "text/html", body: panelDocument(bundle, lang) });
    const file = path.join(repoRoot, decodeURIComponent(url.pathname));
    const type = file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : undefined;
    return route.fulfill({ body: readFileSync(file), ...(type ? { contentType: type } : {}) });
  });
  await p.goto(`${ORIGIN}/`);
  await p.waitForFunction(() => window.__sent.some((m) => m.type === "ready"));
  await p.evaluate((s) => window.postMessage({ type: "state", state: s }, "*"), state);
  // the last part of a first showing (it renders progressively: webview/main.ts)
  await p.waitForSelector('[data-section="files"]', { state: "attached" });
  return { p, ctx, errors };
}
