// E2E (browser only, no workbench): the panel webview's summary cards and summary diff with state the
// host would post, on the real bundle (dist/webview/main.js) in Chromium with `acquireVsCodeApi`
// stubbed, like l10nPanel.test.mjs. Trial 6: a summary's bidi override reversed words in its card and
// ESC/BEL were raw; with one compaction and one branch summary the diff said "pick two above" while
// the only pair was already picked, so it could never be shown.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { launchChromium } from "../../scripts/browser.mjs";
import { repoRoot, screenshot } from "./harness.mjs";

const require = createRequire(import.meta.url);
const out = (p) => require(path.join(repoRoot, "out", "src", p));
const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");
const ORIGIN = "http://panel.test";

/** The panel state of long.jsonl (four compactions), as the host builds it. */
async function panelState() {
  const { SessionFile } = out("core/read/session.js");
  const { analyzeLoaded } = out("core/rules/analyze.js");
  const { buildPanelState } = out("viewModel/panelState.js");
  const file = path.join(FIXTURE, "long.jsonl");
  const session = await SessionFile.open(file);
  const analysis = analyzeLoaded(session, { agentDir: path.join(FIXTURE, "long.agent"), projectSettings: "never" });
  return buildPanelState({ file, session, analysis, pinned: false, updatedAt: Date.now() });
}

const PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<link rel="stylesheet" href="${ORIGIN}/dist/webview/codicon.css" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${ORIGIN}/dist/webview/panel.css">
</head><body data-host="panel">
<div id="app" role="main"><p class="loading">Loading…</p></div>
<script>
window.__sent = [];
window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__sent.push(m), getState: () => undefined, setState: () => {} });
</script>
<script type="module" src="${ORIGIN}/dist/webview/main.js"></script>
</body></html>`;

describe("panel webview: summary cards and the summary diff", () => {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  async function render(state) {
    const ctx = await browser.newContext({ viewport: { width: 900, height: 1400 } });
    const p = await ctx.newPage();
    const errors = [];
    p.on("pageerror", (e) => errors.push(String(e)));
    await p.route(`${ORIGIN}/**`, (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === "/") return route.fulfill({ contentType: "text/html", body: PAGE });
      const file = path.join(repoRoot, decodeURIComponent(url.pathname));
      const type = file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : undefined;
      return route.fulfill({ body: readFileSync(file), ...(type ? { contentType: type } : {}) });
    });
    await p.goto(`${ORIGIN}/`);
    await p.waitForFunction(() => window.__sent.some((m) => m.type === "ready"));
    await p.evaluate((s) => window.postMessage({ type: "state", state: s }, "*"), state);
    await p.waitForSelector(".gauge");
    return { p, ctx, errors };
  }

  it("one compaction and one branch summary: a note, then Compare Anyway shows their diff; hostile summary text is visible text", async () => {
    const state = await panelState();
    const [a, b] = state.summaries.slice(-2);
    const hostile = "Goal: bidi \u202eevil\u202c and ESC \u001b[31mRED\u0007 [x](command:workbench.action.quit)";
    state.summaries = [
      { ...a, type: "branch_summary" },
      { ...b, body: `${hostile}\n\n${b.body}`, text: `${hostile}\n${b.text}` },
    ];
    const { p, ctx, errors } = await render(state);
    try {
      const text = await p.locator("#app").innerText();
      assert.ok(text.includes("bidi \\u202eevil\\u202c and ESC \\u001b[31mRED\\u0007"), text.slice(0, 3000));
      assert.ok(!/[\u202e\u001b\u0007]/.test(text), "no raw control or bidi character shown");
      assert.equal(await p.locator('a[href^="command:"]').count(), 0);
      const note = p.locator('[data-testid="diff-note"]');
      await note.waitFor();
      assert.match(await note.innerText(), /no two summaries of one kind to compare/);
      assert.equal(await p.locator('[data-testid="diff-stats"]').count(), 0, "no diff before it is asked for");
      await p.locator('[data-testid="diff-anyway"]').click();
      await p.locator('[data-testid="diff-stats"]').waitFor();
      assert.equal(await note.count(), 0);
      await screenshot(p, "panel-summaries-compare-anyway");
      assert.deepEqual(errors, []);
    } finally {
      await ctx.close();
    }
  });
});
