// E2E: context economics in the real workbench (code-server + Chromium), dark and light: the panel's
// "Usage & cost" section (pi's footer totals, equal to `pi-context inspect --json`), the forecast
// beside the tokens until auto-compaction, the history chart's prompt-cache strip with cold turns,
// what each compaction lost (in its card and beside the summary diff), the gauge tooltip's usage
// rows, and the compaction preview with its price. Screenshots in test-results/e2e/econ-*.png.
//
// Isolation: its own workspace whose .vscode/settings.json points `piContext.agentDir` at a private
// agent dir (long.agent's settings/models + long.jsonl up to line 147: two compactions, ≈8 turns
// until auto-compaction, compactable).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  applyTheme,
  inspectJson,
  privateProject,
  quickInput,
  repoRoot,
  runCommand,
  screenshot,
  statusBarItem,
  useWorkbench,
  viewPane,
  waitUntil,
  webviewFrame,
  scrollIntoView,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");
const CUT = 147;

/** Workspace settings: the theme, and OpenAI's server (gpt-4o-mini's catalog prices); no key is stored and nothing is ever sent. */
const settings = (theme) => ({
  "workbench.colorTheme": theme,
  "piContext.summarizer.openai.baseURL": "https://api.openai.com/v1",
  "piContext.summarizer.openai.model": "gpt-4o-mini",
});

function setup() {
  const fx = privateProject("econ", {
    agentFrom: path.join(FIXTURE, "long.agent"),
    settings: settings("Default Dark Modern"),
  });
  const lines = readFileSync(path.join(FIXTURE, "long.jsonl"), "utf8").split("\n").slice(0, CUT);
  // an hour old: not live, the compaction preview is allowed
  fx.sessionFile = fx.addSession(lines.join("\n") + "\n", "2026-11-30T06-33-33-295Z_e2e-econ.jsonl");
  return fx;
}

describe("e2e context economics", () => {
  const suite = useWorkbench(setup, { width: 1500, height: 1000 });
  // (openWorkbench waits for the gauge: the extension is active before the first command)

  async function panelShots(theme) {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    const frame = webviewFrame(page);
    const usage = frame.locator('[data-testid="usage"]');
    await usage.waitFor({ state: "visible", timeout: 30_000 });
    const cli = inspectJson(suite.fx.sessionFile, suite.fx.agentDir);
    assert.equal(await frame.locator('[data-testid="usage-footer"]').innerText(), cli.usage.footer);
    assert.match(await frame.locator('[data-testid="usage-cost"]').innerText(), /^\$0\.\d{3}/);
    const forecast = frame.locator('[data-testid="gauge-forecast"]');
    assert.equal(Number(await forecast.getAttribute("data-value")), cli.forecast.turns);
    assert.match(await forecast.innerText(), /^≈ \d+ turns until auto-compaction$/);
    assert.match(await forecast.getAttribute("title"), /tokens left at \+[\d,]+ per turn/);
    const strip = frame.locator('[data-testid="history-cache"]');
    await strip.waitFor({ state: "visible" });
    assert.ok((await strip.locator("rect.cold").count()) > 0, "cold turns marked");
    assert.match(await frame.locator('[data-testid="history-cold"]').innerText(), /\d+ cold turns · \$0\.\d+/);
    await page.waitForTimeout(600);
    await screenshot(page, `econ-${theme}-usage`);
    await scrollIntoView(strip);
    await page.waitForTimeout(300);
    await screenshot(page, `econ-${theme}-history`);
    // the latest compaction's card is expanded: what it lost, chips that reveal their entries
    const lost = frame.locator('.summary [data-testid^="lost-"]').first();
    await scrollIntoView(lost);
    assert.match(await lost.innerText(), /Not in the summary or the kept part/);
    assert.ok((await lost.locator(".lost-chip").count()) > 0);
    await page.waitForTimeout(300);
    await screenshot(page, `econ-${theme}-lost`);
    if (theme === "dark") await revealFromChip(lost);
    const diffLost = frame.locator('[data-section="diff"] [data-testid^="lost-"]');
    await scrollIntoView(diffLost);
    await page.waitForTimeout(300);
    await screenshot(page, `econ-${theme}-diff-lost`);
  }

  /** A lost item's chip reveals the entry it came from in the Pi Session tree (selected). */
  async function revealFromChip(lost) {
    const { page } = suite.wb;
    const chip = lost.locator(".lost-chip").first();
    const title = await chip.getAttribute("title");
    const entryId = /first in entry (\S+)/.exec(title ?? "")?.[1];
    assert.ok(entryId, `the chip names its entry: ${title}`);
    await chip.click();
    const pane = await viewPane(page, "Pi Session");
    // the reveal selects the row (read at once: the tree may re-render and drop the selection)
    let selectedText = "";
    await waitUntil(
      async () => {
        const texts = await pane
          .locator(".pane-body .monaco-list-row.selected")
          .allInnerTexts()
          .catch(() => []);
        if (texts.length === 1) selectedText = texts[0];
        return texts.length === 1;
      },
      20_000,
      "a selected row in the Pi Session tree",
    );
    // the entry the item came from has the command in a tool call; the selected row is that call
    const entry = readFileSync(suite.fx.sessionFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.id === entryId);
    const itemText = title.split("\n")[0];
    const call = (entry?.message?.content ?? []).find(
      (c) =>
        c.type === "toolCall" &&
        Object.values(c.arguments ?? {}).some(
          (v) => typeof v === "string" && v.replace(/\s+/g, " ").includes(itemText),
        ),
    );
    assert.ok(call, `${entryId} calls a tool with ${itemText}`);
    assert.ok(selectedText.includes(call.name), `selected row "${selectedText}" is the ${call.name} call`);
    await page.waitForTimeout(300);
    await screenshot(page, "econ-dark-lost-revealed");
    // still in view: the tree did not scroll back to the leaf when it was first shown
    assert.equal(
      await pane.locator(".pane-body .monaco-list-row.selected").count(),
      1,
      "the revealed row stays in view",
    );
    await runCommand(page, "View: Focus Active Editor Group");
  }

  async function tooltipShot(theme) {
    const { page } = suite.wb;
    const item = statusBarItem(page, "piContext.gauge");
    await item.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "pi's footer" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const text = await hover.innerText();
    for (const want of ["Usage", "Tokens", "Cost", "Prices", "Cache", "Forecast", "Compact At…"])
      assert.ok(text.includes(want), `tooltip lacks ${want}:\n${text}`);
    await page.waitForTimeout(300);
    await screenshot(page, `econ-${theme}-tooltip`);
    await page.mouse.move(700, 500);
  }

  async function previewShot(theme) {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Compact Session…");
    const { widget, input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter"); // no instructions
    const price = widget.locator(".monaco-list-row", { hasText: "break-even" });
    await price.waitFor({ state: "visible", timeout: 20_000 });
    assert.match(await price.innerText(), /≈\$[\d.]+ now · break-even /);
    assert.match(await price.innerText(), /saves ≈[\d,]+ tokens \(\$[\d.]+\) on every later request/);
    await page.mouse.move(20, 900);
    await page.waitForTimeout(500);
    await screenshot(page, `econ-${theme}-compact-preview`);
    await widget.locator(".monaco-list-row", { hasText: "Show details" }).click();
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).waitFor({ state: "visible", timeout: 20_000 });
    await page.keyboard.press("Escape");
    await page
      .locator(".tab", { hasText: "Compaction preview" })
      .first()
      .waitFor({ state: "visible", timeout: 20_000 });
    await page.waitForTimeout(2500);
    await screenshot(page, `econ-${theme}-compact-details`);
    // the document is a markdown preview (a webview): its "## Cost" section is in the screenshot
    await runCommand(page, "View: Close All Editors");
  }

  it("dark: usage & cost, forecast, cache strip, lost items, tooltip, priced preview", async () => {
    await panelShots("dark");
    await tooltipShot("dark");
    await previewShot("dark");
  });

  it("light: the same", async () => {
    const { page } = suite.wb;
    await applyTheme(page, "Default Light Modern", () => suite.fx.writeSettings(settings("Default Light Modern")));
    await panelShots("light");
    await tooltipShot("light");
    await previewShot("light");
  });
});
