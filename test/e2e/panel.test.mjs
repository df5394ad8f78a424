// E2E: the Pi Context panel in a real VS Code workbench (code-server + Chromium) on the shared
// fixture long.jsonl (pi 1.6.0): the gauge numbers equal `pi-context inspect --json` for the same
// file, the breakdown adds up, clicking a tracked file opens its editor tab, the summary diff
// renders and opens the native diff editor; screenshots (test-results/e2e/panel-*.png, view-*.png)
// in a dark and a light theme.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at
// a private agent dir (long.agent's settings/models + the session), so the shared agent dir of
// the other e2e files is not touched.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  applyTheme,
  clipAround,
  inspectJson,
  notificationInCenter,
  privateProject,
  repoRoot,
  runCommand,
  screenshot,
  showView,
  useWorkbench,
  waitUntil,
  webviewFrame,
  scrollIntoView,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

const settings = (theme) => ({ "workbench.colorTheme": theme, "workbench.editor.enablePreview": true });

function setup() {
  const fx = privateProject("panel", {
    agentFrom: path.join(FIXTURE, "long.agent"),
    // some of the tracked files exist (the others show as missing)
    files: {
      "src/alpha.ts": "export const alpha = 1;\n",
      "src/epsilon.ts": "export const epsilon = 5;\n",
      "src/beta.ts": "export const beta = 2;\n",
      "notes.txt": "notes for the long scripted session\n",
    },
    settings: settings("Default Dark Modern"),
  });
  fx.sessionFile = fx.addSession(
    readFileSync(path.join(FIXTURE, "long.jsonl"), "utf8"),
    "2026-11-30T06-33-33-295Z_01a22b28-a36d-71bd-af8b-8fab3842755e.jsonl",
  );
  return fx;
}

async function dataValue(locator) {
  return Number(await locator.getAttribute("data-value"));
}

describe("e2e context panel", () => {
  let frame;
  const suite = useWorkbench(setup, { width: 1500, height: 1000 });

  it("opens with pi's numbers: the gauge equals `pi-context inspect --json` for the same file", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    frame = webviewFrame(page, { title: "Pi Context" });
    const used = frame.locator('[data-testid="gauge-used"]');
    await used.waitFor({ state: "visible", timeout: 30_000 });
    await waitUntil(
      async () => (await frame.locator(".session-name").innerText()) === "long scripted session",
      20_000,
      "the session name",
    );

    const cli = inspectJson(suite.fx.sessionFile, suite.fx.agentDir);
    assert.equal(await dataValue(used), cli.contextTokens);
    assert.equal(await dataValue(frame.locator('[data-testid="gauge-window"]')), cli.contextWindow.value);
    assert.equal(await dataValue(frame.locator('[data-testid="gauge-until"] strong')), cli.tokensUntilCompaction);
    assert.equal(await frame.locator('[data-testid="gauge-percent"]').innerText(), `${cli.percent.toFixed(1)}%`);
    const facts = await frame.locator('[data-testid="gauge-facts"]').innerText();
    assert.ok(facts.includes(cli.footer), `footer ${cli.footer} in:\n${facts}`);
    assert.ok(facts.includes("4,000 · global settings"), facts);
    assert.ok(facts.includes("scripted/scripted-small"), facts);

    // breakdown: the in-context categories add up to the headline, free + reserve complete the window
    const rows = frame.locator('[data-testid="breakdown"] [data-category]');
    const parts = await rows.evaluateAll((els) =>
      els.map((e) => [e.getAttribute("data-category"), Number(e.getAttribute("data-tokens"))]),
    );
    const inContext = parts.filter(([id]) => id !== "free" && id !== "reserve").reduce((s, [, t]) => s + t, 0);
    assert.equal(inContext, cli.contextTokens);
    assert.equal(
      parts.reduce((s, [, t]) => s + t, 0),
      cli.contextWindow.value,
    );
    assert.deepEqual(
      parts.map(([id]) => id),
      ["system", "summaries", "user", "assistantText", "thinking", "toolCalls", "toolResults", "free", "reserve"],
    );
    await frame.locator('[data-testid="history"] svg.spark').waitFor({ state: "visible" });
    // the per-turn chart has its values: the top of the scale (the window), 0, the threshold, the turns
    const history = frame.locator('[data-testid="history"]');
    assert.equal(await history.locator('[data-testid="history-y-max"]').innerText(), "16k");
    assert.equal(await history.locator('[data-testid="history-y-zero"]').innerText(), "0");
    assert.equal(
      await history.locator('[data-testid="history-y-threshold"]').innerText(),
      `auto-compact ${cli.contextWindow.value - 4000 === 12000 ? "12k" : "?"}`,
    );
    const turns = /(\d+) turns/.exec(await history.locator("svg.spark").getAttribute("aria-label"))[1];
    assert.equal(await history.locator('[data-testid="history-x-first"]').innerText(), "turn 1");
    assert.equal(await history.locator('[data-testid="history-x-last"]').innerText(), `turn ${turns}`);
    // both measured in one render (a live re-render replaces the chart: a box of a replaced element is null)
    let thresholdLine = null;
    let thresholdLabel = null;
    await waitUntil(
      async () => {
        thresholdLine = await history.locator(".spark-threshold").boundingBox();
        thresholdLabel = await history.locator('[data-testid="history-y-threshold"]').boundingBox();
        return thresholdLine !== null && thresholdLabel !== null;
      },
      10_000,
      "the threshold line and its value on screen",
    );
    assert.ok(
      Math.abs(thresholdLabel.y + thresholdLabel.height - thresholdLine.y) < 6,
      `the threshold's value sits on its line (${JSON.stringify({ thresholdLabel, thresholdLine })})`,
    );
    await scrollIntoView(history);
    await screenshot(page, "panel-dark-history", { clip: clipAround(page, await history.boundingBox(), 12) });
    const colours = await frame
      .locator("body")
      .evaluate((b) =>
        ["--vscode-charts-orange", "--vscode-charts-purple", "--vscode-terminal-ansiMagenta", "--vscode-charts-yellow"]
          .map((v) => `${v}=${getComputedStyle(b).getPropertyValue(v)}`)
          .join(" "),
      );
    console.log(`[panel] theme colours: ${colours}`);
    await screenshot(page, "panel-dark");
  });

  it("expands a category to its largest entries", async () => {
    const { page } = suite.wb;
    await frame.locator('button[data-category="toolResults"]').click();
    const entries = frame.locator(".cat-entries .entry-row");
    await entries.first().waitFor({ state: "visible" });
    assert.ok((await entries.count()) >= 1);
    await screenshot(page, "panel-dark-category");
    await frame.locator('button[data-category="toolResults"]').click();
  });

  it("clicking a tracked file opens its editor tab (preview); missing files are marked", async () => {
    const { page } = suite.wb;
    const alpha = frame.locator(`.file[data-path="${path.join(suite.fx.workspace, "src", "alpha.ts")}"]`);
    await alpha.waitFor({ state: "visible", timeout: 10_000 });
    const missing = frame.locator(`.file[data-path="${path.join(suite.fx.workspace, "docs", "eta-6.md")}"]`);
    await missing.locator('[data-flag="missing"]').waitFor({ state: "visible", timeout: 10_000 });
    await alpha.click();
    const tab = page.locator(".tabs-container .tab", { hasText: "alpha.ts" });
    await tab.waitFor({ state: "visible", timeout: 15_000 });
    // VS Code renders a preview editor's tab label in italics
    assert.match(
      (await tab.locator(".monaco-icon-label").first().getAttribute("class")) ?? "",
      /\bitalic\b/,
      "opened as a preview tab",
    );
    // like a click in the Explorer: a preview tab in the panel's group, no second editor group
    assert.equal(await page.locator(".editor-group-container").count(), 1, "no editor group beside the panel");
    await screenshot(page, "panel-dark-file-opened");
    await page.locator(".tabs-container .tab", { hasText: "Pi Context" }).first().click();
    // the panel marks it as open in a tab
    await alpha.locator('[data-flag="open"]').waitFor({ state: "visible", timeout: 10_000 });
    // keyboard: ↓ then Enter opens the next file pinned
    await alpha.focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await waitUntil(
      async () => (await page.locator(".tabs-container .tab").count()) >= 3,
      10_000,
      "a second file tab (pinned) next to the preview",
    );
    await page.locator(".tabs-container .tab", { hasText: "Pi Context" }).first().click();
    await alpha.waitFor({ state: "visible", timeout: 10_000 });
  });

  it("clicking a missing tracked file says so, with Reveal Folder and Copy Path; the badges line up", async () => {
    const { page } = suite.wb;
    const missing = frame.locator(`.file[data-path="${path.join(suite.fx.workspace, "docs", "eta-6.md")}"]`);
    await missing.locator('[data-flag="missing"]').waitFor({ state: "visible", timeout: 10_000 });
    // every missing badge at the same x (the origin column has one width)
    const xs = await frame
      .locator('[data-flag="missing"]')
      .evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().right)));
    assert.ok(xs.length >= 2, `several missing files (${xs.length})`);
    assert.equal(new Set(xs).size, 1, `missing badges aligned: ${xs.join(", ")}`);
    await scrollIntoView(missing);
    await screenshot(page, "panel-dark-files-missing");
    await missing.click();
    await frame
      .locator(".notice", { hasText: "does not exist on disk" })
      .waitFor({ state: "visible", timeout: 10_000 });
    // the notification stays (the notification center: toasts are off under the smoke-test driver)
    const row = await notificationInCenter(page, "eta-6.md does not exist on disk");
    const text = await row.innerText();
    assert.match(text, /Reveal Folder/);
    assert.match(text, /Copy Path/);
    await screenshot(page, "panel-dark-missing-file-notification");
    await row.locator(".monaco-button", { hasText: "Copy Path" }).click();
    await page.keyboard.press("Escape");
  });

  it("shows the summary diff with disappeared lines and opens it in the diff editor", async () => {
    const { page } = suite.wb;
    const diff = frame.locator('[data-testid="summary-diff"]');
    await scrollIntoView(diff);
    await diff.waitFor({ state: "visible" });
    // default pair: the latest two (compaction 3 → 4: the manual split-turn compaction appends)
    let stats = await frame.locator('[data-testid="diff-stats"]').innerText();
    assert.match(stats, /0 lines disappeared/);
    assert.ok((await diff.locator('.diff-line[data-kind="added"]').count()) > 0);
    // pick compaction 1 → 2 in the "to" select: lines disappear there
    await frame.locator('[data-testid="diff-to"]').click();
    await frame.locator('[data-testid="diff-to"] li[role="option"]', { hasText: "Compaction 2" }).click();
    await waitUntil(
      async () =>
        /Compaction 1 → Compaction 2/.test(
          await frame.locator('vscode-collapsible[data-section="diff"]').getAttribute("description"),
        ),
      10_000,
      "the 1 → 2 diff",
    );
    stats = await frame.locator('[data-testid="diff-stats"]').innerText();
    const gone = Number(/(\d+) lines? disappeared/.exec(stats)?.[1]);
    assert.ok(gone > 0, stats);
    const removedLines = frame.locator(
      '[data-testid="summary-diff"] .diff-line[data-kind="removed"], [data-testid="summary-diff"] .diff-line[data-kind="changed"]',
    );
    assert.ok((await removedLines.count()) > 0);
    await scrollIntoView(frame.locator('[data-testid="summary-diff"]'));
    await screenshot(page, "panel-dark-diff");
    await frame.locator('[data-testid="open-diff-editor"]').click();
    await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 15_000 });
    const tab = page.locator(".tabs-container .tab", { hasText: "↔" });
    await tab.first().waitFor({ state: "visible", timeout: 10_000 });
    // the summaries rendered in the diff editor (pi-context-summary: documents)
    await waitUntil(
      async () =>
        (await page.locator(".monaco-diff-editor").first().innerText())
          .replace(/\u00a0/g, " ")
          .includes("Scripted session goals"),
      15_000,
      "the summary text in the diff editor",
    );
    await page.waitForTimeout(500);
    await screenshot(page, "panel-dark-diff-editor");
  });

  it("light theme: same panel, screenshots", async () => {
    const { page } = suite.wb;
    // close the editors opened above and bring the panel back
    await runCommand(page, "View: Close All Editors");
    await runCommand(page, "Pi Context: Open Context Panel");
    await applyTheme(page, "Default Light Modern", () => suite.fx.writeSettings(settings("Default Light Modern")));
    frame = webviewFrame(page, { title: "Pi Context" });
    await frame.locator('[data-testid="gauge-used"]').waitFor({ state: "visible", timeout: 20_000 });
    await page.waitForTimeout(500);
    await screenshot(page, "panel-light");
    await scrollIntoView(frame.locator('[data-testid="summary-diff"]'));
    await screenshot(page, "panel-light-diff");
  });

  it("the same UI as a view in the Pi container (both themes)", async () => {
    const { page } = suite.wb;
    await runCommand(page, "View: Close All Editors");
    await showView(page, "Context");
    const view = webviewFrame(page, { title: "Context" });
    await view.locator('[data-testid="gauge-used"]').waitFor({ state: "visible", timeout: 20_000 });
    await page.waitForTimeout(300);
    await screenshot(page, "view-light");
    await applyTheme(page, "Default Dark Modern", () => suite.fx.writeSettings(settings("Default Dark Modern")));
    await page.waitForTimeout(500);
    await screenshot(page, "view-dark");
  });
});
