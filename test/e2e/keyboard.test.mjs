// E2E: the context panel from the keyboard. Tab walks every interactive element in document order,
// each one shows that it has the focus (an outline or a ring, also inside vscode-elements' shadow
// DOM), and no Tab stop is something that cannot be seen (the page body, a scroll box without a
// ring). Dark and light themes; a sheet of every Tab stop with its focus ring, in order:
// test-results/e2e/keyboard-focus-{dark,light}-<page>.png.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  applyTheme,
  clipAround,
  privateProject,
  repoRoot,
  resultsDir,
  runCommand,
  screenshot,
  useWorkbench,
  webviewFrame,
  boxOf,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

const theme = (name) => ({ "workbench.colorTheme": name });

function setup() {
  const fx = privateProject("keys", {
    agentFrom: path.join(FIXTURE, "long.agent"),
    files: { "src/alpha.ts": "export const alpha = 1;\n" },
    settings: theme("Default Dark Modern"),
  });
  fx.addSession(readFileSync(path.join(FIXTURE, "long.jsonl"), "utf8"), "2026-11-30T06-33-33-295Z_keys.jsonl");
  return fx;
}

/**
 * What has the focus in the panel document, and whether it shows it: the deepest active element
 * (through shadow roots), its description, and its focus indicator (outline or box-shadow on it or
 * its shadow host).
 */
function focusProbe() {
  let el = document.activeElement;
  const chain = [];
  while (el) {
    chain.push(el);
    if (el.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    else break;
  }
  // the theme's focus colour as the browser writes colours (rgb…)
  const probe = document.createElement("span");
  probe.style.color = getComputedStyle(document.documentElement).getPropertyValue("--vscode-focusBorder").trim();
  document.body.appendChild(probe);
  const focusColor = getComputedStyle(probe).color;
  probe.remove();
  const shows = (e) => {
    const cs = getComputedStyle(e);
    const outline = cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0;
    const ring = cs.boxShadow && cs.boxShadow !== "none";
    // vscode-elements mark focus with a focusBorder-coloured border
    const border = ["Top", "Right", "Bottom", "Left"].some(
      (side) =>
        cs[`border${side}Style`] !== "none" &&
        parseFloat(cs[`border${side}Width`]) > 0 &&
        cs[`border${side}Color`] === focusColor,
    );
    return outline || !!ring || border;
  };
  const describe = (e) =>
    `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className && typeof e.className === "string" ? `.${e.className.trim().split(/\s+/).join(".")}` : ""}${e.getAttribute?.("aria-label") ? `[${e.getAttribute("aria-label")}]` : ""}${e.textContent ? ` "${e.textContent.trim().slice(0, 30)}"` : ""}`;
  const r = (chain[0] ?? document.body).getBoundingClientRect();
  // mark the focused light-DOM element, so the test can find its box for the focus sheet
  for (const e of document.querySelectorAll("[data-e2e-focus]")) e.removeAttribute("data-e2e-focus");
  chain[0]?.setAttribute?.("data-e2e-focus", "");
  // the focused element and its ancestors up to the light-DOM element that holds the focus
  // (through shadow roots: a vscode-element draws its ring on an inner wrapper)
  const ancestors = [];
  for (let e = chain[chain.length - 1]; e && e !== chain[0]?.parentElement;) {
    ancestors.push(e);
    e = e.parentElement ?? e.getRootNode()?.host;
  }
  return {
    what: chain.map(describe).join(" > "),
    body: !chain[0] || chain[0] === document.body || chain[0] === document.documentElement,
    visible: ancestors.some(shows),
    top: r.top + window.scrollY,
    key: chain[0]?.getAttribute?.("data-key") ?? null,
  };
}

/** Tab stops per sheet page (a page stays readable at the size an image viewer shows it). */
const PER_SHEET = 24;

/**
 * Pictures of every Tab stop in order, PER_SHEET a page: each crop (the focused element with its
 * ring) under its number and description, on the theme's background →
 * test-results/e2e/keyboard-focus-<tag>-<page>.png. Returns the files.
 */
async function focusSheets(context, crops, tag) {
  const esc = (t) => t.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const dark = tag === "dark";
  const files = [];
  const page = await context.newPage();
  try {
    await page.setViewportSize({ width: 1400, height: 800 });
    for (let from = 0; from < crops.length; from += PER_SHEET) {
      const part = crops.slice(from, from + PER_SHEET);
      const cells = part
        .map(
          (c) =>
            `<figure><figcaption>Tab ${c.n}: ${esc(c.what.slice(0, 80))}</figcaption><img src="data:image/png;base64,${c.png.toString("base64")}"></figure>`,
        )
        .join("");
      await page.setContent(
        `<!doctype html><style>body{margin:12px;font:13px sans-serif;background:${dark ? "#1f1f1f" : "#f8f8f8"};color:${dark ? "#ccc" : "#333"};display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}figure{margin:0;padding:6px;border:1px dashed ${dark ? "#555" : "#bbb"};max-width:1360px}figcaption{margin-bottom:4px;max-width:420px;overflow-wrap:anywhere}img{display:block;max-width:1340px}</style><h3 style="width:100%;margin:0">Panel focus, ${tag} theme: Tab stops ${from + 1}–${from + part.length} of ${crops.length}, in order</h3>${cells}`,
      );
      await page.waitForFunction(() => [...document.images].every((i) => i.complete));
      mkdirSync(resultsDir, { recursive: true });
      const file = path.join(resultsDir, `keyboard-focus-${tag}-${files.length + 1}.png`);
      await page.screenshot({ path: file, fullPage: true });
      files.push(file);
    }
    return files;
  } finally {
    await page.close();
  }
}

describe("e2e panel keyboard", () => {
  const suite = useWorkbench(setup, { width: 1400, height: 1000 });

  for (const themeName of ["Default Dark Modern", "Default Light Modern"]) {
    const tag = themeName.includes("Light") ? "light" : "dark";
    it(`Tab reaches every interactive element in order, each shows its focus, never the bare body (${tag})`, async () => {
      const { page } = suite.wb;
      await applyTheme(page, themeName, () => suite.fx.writeSettings(theme(themeName)));
      await runCommand(page, "Pi Context: Open Context Panel");
      const frame = webviewFrame(page, { title: "Pi Context" });
      await frame.locator('[data-testid="gauge-used"]').waitFor({ state: "visible", timeout: 30_000 });
      await frame.locator(".file").first().waitFor({ state: "visible", timeout: 20_000 });
      // the details re-render the panel once more when they come (the focus survives that, but the
      // focus marker this test sets on the element would not): Tab after them
      await frame.locator('#app[data-details="in"]').waitFor({ state: "attached", timeout: 20_000 });
      // every interactive element of the document, in tab order (what Tab must reach)
      const expected = await frame.locator("body").evaluate(() => {
        const all = [
          ...document.querySelectorAll(
            "button, a[href], input, select, textarea, [tabindex], vscode-button, vscode-textfield, vscode-checkbox, details > summary",
          ),
        ];
        return all.filter((e) => e.tabIndex >= 0 && !e.closest("[hidden]") && e.getClientRects().length > 0).length;
      });
      const probe = frame.locator("body");
      // start at the top of the panel document: a click on its heading (not interactive)
      await frame.locator(".session-name").first().click();
      const seen = [];
      let wrapped = false;
      const crops = [];
      let fileShot = false;
      for (let i = 0; i < 400; i++) {
        await page.keyboard.press("Tab");
        const f = await probe.evaluate(focusProbe);
        // never the bare body of the panel, nor out of the panel onto the workbench's body
        assert.ok(!f.body, `Tab ${i + 1} landed on the page body with no visible focus (after ${seen.at(-1)?.what})`);
        assert.ok(f.visible, `Tab ${i + 1}: ${f.what} has the focus but does not show it`);
        if (seen.length > 0 && f.what === seen[0].what && f.top === seen[0].top) {
          wrapped = true; // back at the first stop: Tab cycles within the panel
          break;
        }
        seen.push(f);
        // what the user sees at this Tab stop: the element with its focus ring (and its surroundings)
        // (of a whole section that has the focus, e.g. a collapsible: its header, where the ring is;
        // of a small one, e.g. a checkbox: its label too)
        const box = await boxOf(frame.locator("[data-e2e-focus]").first());
        if (box) {
          const clip = clipAround(
            page,
            { ...box, width: Math.max(box.width, 240), height: Math.min(box.height, 40) },
            10,
          );
          crops.push({ n: i + 1, what: f.what, png: await page.screenshot({ clip }) });
        }
        if (!fileShot && /file/.test(f.what)) {
          fileShot = true;
          await screenshot(page, `keyboard-${tag}-file-focused`);
        }
      }
      const sheets = await focusSheets(suite.wb.context, crops, tag);
      console.log(`[keyboard ${tag}] focus sheets: ${sheets.map((f) => path.basename(f)).join(", ")}`);
      // in document order: top to bottom (a listbox or a toolbar counts once)
      for (let i = 1; i < seen.length; i++)
        assert.ok(seen[i].top >= seen[i - 1].top - 1, `out of order: ${seen[i - 1].what} → ${seen[i].what}`);
      assert.ok(seen.length >= Math.min(expected, 10), `reached ${seen.length} of ${expected} interactive elements`);
      console.log(`[keyboard ${tag}] ${seen.length} Tab stops, ${expected} interactive elements`);
      if (process.env.PI_CONTEXT_E2E_VERBOSE === "1") for (const f of seen) console.log(`  ${f.what}`);
      assert.ok(wrapped, "after the last element Tab comes back to the first one (not the page body)");
      // and Shift+Tab from the first goes to the last
      await page.keyboard.press("Shift+Tab");
      const back = await probe.evaluate(focusProbe);
      assert.equal(back.what, seen.at(-1).what, "Shift+Tab from the first element: the last one");
      // a row of chips (what a compaction lost) is one Tab stop; the arrow keys move within it
      const groups = frame.locator(".lost-chips[role=group]");
      const sizes = await groups.evaluateAll((gs) => gs.map((g) => g.querySelectorAll("button.lost-chip").length));
      const at = sizes.findIndex((n) => n >= 2);
      assert.ok(at >= 0, `a row of at least two lost-item chips is shown (rows: ${JSON.stringify(sizes)})`);
      const chips = groups.nth(at).locator("button.lost-chip");
      const tabbable = await chips.evaluateAll((cs) => cs.filter((c) => c.tabIndex >= 0).length);
      assert.equal(tabbable, 1, "one Tab stop per row of chips");
      const chipAt = () => chips.evaluateAll((cs) => cs.findIndex((c) => c === c.ownerDocument.activeElement));
      await chips.first().focus();
      await page.keyboard.press("ArrowRight");
      assert.equal(await chipAt(), 1, "ArrowRight: the next chip");
      assert.ok((await probe.evaluate(focusProbe)).visible, "the chip shows its focus");
      await page.keyboard.press("End");
      assert.equal(await chipAt(), sizes[at] - 1, "End: the last chip");
      await page.keyboard.press("ArrowRight");
      assert.equal(await chipAt(), 0, "ArrowRight on the last: back to the first");
      await page.keyboard.press("ArrowLeft");
      assert.equal(await chipAt(), sizes[at] - 1, "ArrowLeft on the first: the last");
      await page.keyboard.press("Home");
      assert.equal(await chipAt(), 0, "Home: the first chip");
    });
  }
});
