// E2E (browser only, no workbench): the panel webview's summary cards and summary diff with state the
// host would post, on the real bundle (dist/webview/main.js) in Chromium with `acquireVsCodeApi`
// stubbed (webviewPage.mjs). Trial 6: a summary's bidi override reversed words in its card and
// ESC/BEL were raw; with one compaction and one branch summary the diff said "pick two above" while
// the only pair was already picked, so it could never be shown.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { launchChromium } from "../../scripts/browser.mjs";
import { screenshot } from "./harness.mjs";
import { longPanelState, renderPanel } from "./webviewPage.mjs";

describe("panel webview: summary cards and the summary diff", () => {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  it("one compaction and one branch summary: a note, then Compare Anyway shows their diff; hostile summary text is visible text", async () => {
    const state = await longPanelState();
    const [a, b] = state.summaries.slice(-2);
    const hostile = "Goal: bidi \u202eevil\u202c and ESC \u001b[31mRED\u0007 [x](command:workbench.action.quit)";
    state.summaries = [
      { ...a, type: "branch_summary" },
      { ...b, body: `${hostile}\n\n${b.body}`, text: `${hostile}\n${b.text}` },
    ];
    const { p, ctx, errors } = await renderPanel(browser, state, { viewport: { width: 900, height: 1400 } });
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
