// E2E (browser only, no workbench): the panel webview's words follow the bundle the host writes into
// its document. The real bundle (dist/webview/main.js, panel.css) runs in Chromium on a page shaped
// like src/panel/html.ts's document — the l10n JSON data block first, then the module script — with
// `acquireVsCodeApi` stubbed; the state of long.jsonl (built by the view model, as the host does) is
// posted like the host posts it. With a German bundle the translated texts show, the numbers are
// the same as in English, strings the bundle lacks stay English, and a `</script>` inside a
// translation does not end the data block. Screenshot: test-results/e2e/l10n-panel-de.png.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { launchChromium } from "../../scripts/browser.mjs";
import { screenshot } from "./harness.mjs";
import { longPanelState, renderPanel } from "./webviewPage.mjs";

const GERMAN = {
  "Context window": "Kontextfenster",
  "{0} of {1} tokens used": "{0} von {1} Token verwendet",
  "Tracked files": "Verfolgte Dateien",
  Refresh: "Aktualisieren",
  "Usage & cost": "Nutzung & Kosten",
  Summaries: "Zusammenfassungen",
  // a hostile translation: must stay text inside the data block
  Model: "Modell</script><script>window.__pwned = true</script>",
};

describe("panel webview: localised by the bundle in its document", () => {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  async function render(bundle) {
    // English state: the host's words are not what is tested
    const state = await longPanelState({ pinned: true });
    return { ...(await renderPanel(browser, state, { bundle, lang: "de" })), state };
  }

  it("German texts where the bundle has them, English elsewhere, the same numbers", async () => {
    const de = await render(GERMAN);
    const en = await render(undefined);
    try {
      const gaugeLabel = (pg) => pg.locator("[aria-label*='tokens used'], [aria-label*='Token verwendet']").first();
      const deLabel = await gaugeLabel(de.p).getAttribute("aria-label");
      const enLabel = await gaugeLabel(en.p).getAttribute("aria-label");
      assert.match(deLabel, /^[\d,]+ von [\d,]+ Token verwendet$/, deLabel);
      assert.match(enLabel, /^[\d,]+ of [\d,]+ tokens used$/, enLabel);
      assert.deepEqual(deLabel.match(/[\d,]+/g), enLabel.match(/[\d,]+/g), "the same numbers");
      const deText = await de.p.locator("#app").innerText();
      const enText = await en.p.locator("#app").innerText();
      assert.ok(deText.includes("Kontextfenster") && !deText.includes("Context window"), deText.slice(0, 1500));
      assert.ok(deText.includes("Aktualisieren") && enText.includes("Refresh"));
      // the sections' headings (an attribute of <vscode-collapsible>)
      const headings = (pg) =>
        pg.$$eval("vscode-collapsible", (els) => els.map((e) => e.getAttribute("heading")).sort());
      const deHeadings = await headings(de.p);
      for (const word of ["Verfolgte Dateien", "Nutzung & Kosten", "Zusammenfassungen"])
        assert.ok(deHeadings.includes(word), `${word} in ${deHeadings.join(", ")}`);
      assert.ok((await headings(en.p)).includes("Tracked files"));
      assert.equal(deHeadings.length, (await headings(en.p)).length);
      assert.ok(deText.includes("Counted as") && enText.includes("Counted as"), "not in the bundle: English");
      // every number of the English panel is in the German one, in the same order
      const nums = (t) => t.match(/\d[\d,.]*/g) ?? [];
      assert.deepEqual(nums(deText), nums(enText));
      // the hostile translation is text: shown as written, nothing ran
      assert.equal(await de.p.evaluate(() => window.__pwned), undefined);
      assert.ok(deText.includes("Modell</script><script>window.__pwned = true</script>"), "shown as text");
      assert.deepEqual(de.errors, []);
      assert.deepEqual(en.errors, []);
      await screenshot(de.p, "l10n-panel-de");
    } finally {
      await de.ctx.close();
      await en.ctx.close();
    }
  });
});
