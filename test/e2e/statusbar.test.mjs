// E2E: the status-bar gauge on the demo session (a real pi 1.6.0 session) in a real VS Code
// workbench: its text, its Markdown tooltip, clicking it (opens the context panel), and
// "Pi Context: Select Session…" / "Pi Context: Follow Latest Session". Screenshots in test-results/e2e/.
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  privateProject,
  repoRoot,
  resultsDir,
  runCommand,
  screenshot,
  statusBarItem,
  useWorkbench,
  waitUntil,
  webviewFrameByTitle,
  boxOf,
} from "./harness.mjs";

const demo = path.join(repoRoot, "media", "demo");
const GAUGE = "piContext.gauge";

describe("e2e status bar gauge", () => {
  let sessionFile;
  const suite = useWorkbench(() => {
    // the demo's pi settings and models (reserveTokens 4,000, keepRecentTokens 3,000, a 16k model)
    const fx = privateProject("statusbar", { agentFrom: path.join(demo, "agent") });
    sessionFile = fx.addSession(
      readFileSync(path.join(repoRoot, "test", "fixtures", "pi-1.6.0", "long.jsonl"), "utf8"),
      "2026-11-30T06-33-33-295Z_demo-long.jsonl",
    );
    return fx;
  });

  it("shows the gauge with pi's numbers and a Markdown tooltip", async () => {
    const { page } = suite.wb;
    const item = statusBarItem(page, GAUGE);
    await waitUntil(async () => (await item.innerText()).includes("π 26.4% · 4.2k/16k"), 30_000, "the gauge text");
    const label = await item.locator("a, .statusbar-item-label").first().getAttribute("aria-label");
    assert.match(label ?? "", /^Pi Context 26.4 percent, 4,227 of 16,000 tokens, 7,773 tokens until auto-compaction/);
    await screenshot(page, "statusbar-workbench");
    await page
      .locator("#workbench\\.parts\\.statusbar")
      .screenshot({ path: path.join(resultsDir, "statusbar-gauge.png") });

    await item.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "reserveTokens" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const text = await hover.innerText();
    for (const want of [
      "long scripted session",
      "4,227",
      "16,000",
      "scripted/scripted-small",
      "models.json",
      "reserveTokens",
      "4,000",
      "global settings",
      "keepRecentTokens",
      "3,000",
      "7,773 tokens to go",
      "Compact…",
      "Open Context Panel",
    ]) {
      assert.ok(text.includes(want), `tooltip lacks ${JSON.stringify(want)}:\n${text}`);
    }
    await screenshot(page, "statusbar-tooltip");
    // a crop of the tooltip and the item (used in the README)
    const hb = await boxOf(hover);
    const ib = await boxOf(item);
    if (hb && ib) {
      const x = Math.max(0, Math.min(hb.x, ib.x) - 8);
      const y = Math.max(0, hb.y - 8);
      const right = Math.max(hb.x + hb.width, ib.x + ib.width) + 8;
      const bottom = ib.y + ib.height + 4;
      await page.screenshot({
        path: path.join(resultsDir, "statusbar-tooltip-crop.png"),
        clip: { x, y, width: right - x, height: bottom - y },
      });
    }
    await page.mouse.move(700, 300);
  });

  it("updates when pi appends, within a fraction of a second", async () => {
    const { page } = suite.wb;
    const item = statusBarItem(page, GAUGE);
    const last = (await import("node:fs")).readFileSync(sessionFile, "utf8").trim().split("\n").pop();
    const parentId = JSON.parse(last).id;
    const now = new Date().toISOString();
    const entry = {
      type: "message",
      id: "e2e00001",
      parentId,
      timestamp: now,
      message: {
        role: "assistant",
        content: [{ type: "text", text: "done" }],
        api: "openai-completions",
        provider: "scripted",
        model: "scripted-small",
        usage: {
          input: 10990,
          output: 10,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 11000,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: Date.now(),
      },
    };
    const t0 = Date.now();
    appendFileSync(sessionFile, JSON.stringify(entry) + "\n");
    await page.waitForFunction(
      (id) => document.getElementById(id)?.textContent?.includes("π 68.8% · 11.0k/16k"),
      "pi-context.pi-context.piContext.gauge",
      { polling: 10, timeout: 10_000 },
    );
    console.log(`append → status bar text in the browser: ${Date.now() - t0} ms`);
    // 11,000 > 12,000 − 3,000: within the (capped) margin of pi's threshold → warning colour
    await waitUntil(
      async () =>
        /warning/.test((await item.getAttribute("class")) ?? "") ||
        (await item.evaluate((el) => getComputedStyle(el).backgroundColor)) !== "rgba(0, 0, 0, 0)",
      5000,
      "warning background",
    );
    await page
      .locator("#workbench\\.parts\\.statusbar")
      .screenshot({ path: path.join(resultsDir, "statusbar-gauge-warning.png") });
    const box = await boxOf(item);
    if (box)
      await page.screenshot({
        path: path.join(resultsDir, "statusbar-gauge-warning-crop.png"),
        clip: { x: 0, y: box.y - 4, width: 360, height: box.height + 8 },
      });
  });

  it("clicking the gauge opens the context panel", async () => {
    const { page } = suite.wb;
    assert.equal(await page.locator(".tabs-container .tab", { hasText: "Pi Context" }).count(), 0);
    await statusBarItem(page, GAUGE).click();
    // piContext.openPanel opens the "Pi Context" webview panel as an editor tab
    await page
      .locator(".tabs-container .tab", { hasText: "Pi Context" })
      .first()
      .waitFor({ state: "visible", timeout: 20_000 });
    await webviewFrameByTitle(page, "Pi Context", 20_000);
    await screenshot(page, "statusbar-click-opens-panel");
  });

  it("Pi Context: Select Session… pins a session; Pi Context: Follow Latest Session unpins", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
    const widget = page.locator(".quick-input-widget");
    const row = widget.locator(".monaco-list-row", { hasText: "long scripted session" }).first();
    try {
      await row.waitFor({ state: "visible", timeout: 20_000 });
    } catch (error) {
      await screenshot(page, "select-session-failed");
      throw error;
    }
    const rowText = await row.innerText();
    assert.match(rowText, /messages/);
    assert.match(rowText, /KB/);
    await screenshot(page, "select-session-quickpick");
    // the focus moving into the panel's webview (it takes it as it loads, late on a loaded machine)
    // leaves the picker open: it closed under the test twice in CI
    const panelFrame = await webviewFrameByTitle(page, "Pi Context", 20_000);
    await panelFrame.locator("body").click({ position: { x: 20, y: 5 } });
    await waitUntil(
      async () => panelFrame.locator("body").evaluate(() => document.hasFocus()),
      5_000,
      "the panel's webview focused",
    );
    // (a pick that does not ignore the focus out starts hiding at once, and is gone within 2 s)
    const closed = await waitUntil(async () => !(await row.isVisible()), 2_000, "").then(
      () => true,
      () => false,
    );
    assert.equal(closed, false, "the Select Session picker stays open when a webview takes the focus");
    await row.click();
    const item = statusBarItem(page, GAUGE);
    await waitUntil(async () => (await item.innerHTML()).includes("codicon-pinned"), 10_000, "pinned marker");
    await runCommand(page, "Pi Context: Follow Latest Session", { commandId: "piContext.followLatest" });
    await waitUntil(async () => !(await item.innerHTML()).includes("codicon-pinned"), 10_000, "unpinned");
  });
});
