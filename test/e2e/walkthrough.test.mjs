// E2E: the walkthrough covers Trim Context and Session Health (the two things a long-session user
// needs most), and Ctrl+Alt+P T opens Trim Context. Screenshots: test-results/e2e/walkthrough-*.png.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { privateProject, repoRoot, runCommand, screenshot, useWorkbench, waitUntil } from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "trim");

describe("e2e walkthrough and the Trim Context key", () => {
  const suite = useWorkbench(
    () => {
      const fx = privateProject("walkthrough", { agentFrom: path.join(FIXTURE, "surgery.agent") });
      fx.addSession(
        readFileSync(path.join(FIXTURE, "surgery.jsonl"), "utf8"),
        "2026-12-01T09-00-00-000Z_surgery.jsonl",
      );
      return fx;
    },
    { width: 1400, height: 1000 },
  );

  it("Get Started lists trimming and the session's health, each with its page and button", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Get Started", { commandId: "piContext.getStarted" });
    const walkthrough = page.locator(".gettingStartedContainer");
    await walkthrough.waitFor({ state: "visible", timeout: 20_000 });
    const steps = walkthrough.locator(".getting-started-step");
    await waitUntil(async () => (await steps.count()) === 7, 20_000, "seven steps");
    const titles = (await steps.locator(".step-title").allInnerTexts()).map((t) => t.trim());
    assert.deepEqual(titles, [
      "What the gauge measures",
      "Trim what pi no longer needs",
      "Check the session's health",
      "Choose how summaries are made",
      "Install the live bridge",
      "Try a compaction",
      "Fork, clone and resume in pi",
    ]);
    for (const [title, button, media] of [
      ["Trim what pi no longer needs", "Trim Context…", "Pi Context: Trim Context…"],
      ["Check the session's health", "Check Session Health", "Pi Context: Check Session Health"],
    ]) {
      const step = steps.filter({ hasText: title });
      await step.locator(".step-title").click();
      await step.locator(".monaco-button", { hasText: button }).waitFor({ state: "visible", timeout: 10_000 });
      // the step's page (markdown media, a webview)
      await waitUntil(
        async () => {
          for (const frame of page.frames())
            if ((await frame.locator("h1", { hasText: title }).count()) > 0) return true;
          return false;
        },
        20_000,
        `the page of "${title}"`,
      );
      let text = "";
      for (const frame of page.frames())
        if ((await frame.locator("h1", { hasText: title }).count()) > 0) text = await frame.locator("body").innerText();
      assert.ok(text.includes(media), text);
      await page.waitForTimeout(300); // the page's fonts
      await screenshot(page, `walkthrough-${title.split(" ")[0].toLowerCase()}`);
    }
  });

  it("Ctrl+Alt+P T opens Trim Context", async () => {
    const { page } = suite.wb;
    await waitUntil(
      async () => (await page.locator("#workbench\\.parts\\.statusbar .statusbar-item", { hasText: "π" }).count()) > 0,
      30_000,
      "the gauge",
    );
    await page
      .locator(".monaco-workbench")
      .click({ position: { x: 700, y: 500 } })
      .catch(() => {});
    await page.keyboard.press("Control+Alt+KeyP");
    await page.keyboard.press("KeyT");
    const title = page.locator(".quick-input-widget .quick-input-title");
    await waitUntil(
      async () => (await title.innerText().catch(() => "")).startsWith("Trim the context of"),
      20_000,
      "the trim list",
    );
    await page.keyboard.press("Escape");
  });
});
