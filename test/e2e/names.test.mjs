// E2E: one product name in the workbench — "Pi Context" as the command category, the view container,
// the panel's tab and the log — and the command palette lists our commands first while a user types
// "Pi: Select Session" (VS Code's generated "<container>: Focus on <view> View" commands sort by
// label; under another container title than the category they came first, and Enter ran them).
// Screenshot: test-results/e2e/names-palette.png.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { privateProject, runCommand, screenshot, useWorkbench, waitUntil } from "./harness.mjs";

/** The palette's rows once they settled for `text` (the same first rows twice, 300 ms apart). */
async function paletteRows(page, text) {
  const widget = page.locator(".quick-input-widget");
  const input = widget.locator("input");
  if (!(await input.isVisible().catch(() => false))) {
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible", timeout: 10_000 });
  }
  await input.fill(`>${text}`);
  let last = "";
  return waitUntil(
    async () => {
      const rows = (await widget.locator(".monaco-list-row").allInnerTexts()).map((r) => r.replace(/\s+/g, " ").trim());
      const key = JSON.stringify(rows.slice(0, 6));
      const settled = rows.length > 0 && key === last;
      last = key;
      return settled ? rows : undefined;
    },
    10_000,
    `the palette's rows for ${text}`,
    300,
  );
}

describe("e2e product name and palette", () => {
  const suite = useWorkbench(() => privateProject("names"), { width: 1400, height: 900 });

  it("typing Pi: Select Session: our commands come first at every step, Enter runs Select Session", async () => {
    const { page } = suite.wb;
    const query = "Pi: Select Session";
    for (let n = "Pi: S".length; n <= query.length; n++) {
      const rows = await paletteRows(page, query.slice(0, n));
      assert.match(rows[0], /^Pi Context: /, `${query.slice(0, n)} → ${rows.slice(0, 4).join(" | ")}`);
      assert.doesNotMatch(rows[0], /Focus on/, `${query.slice(0, n)} → ${rows.slice(0, 4).join(" | ")}`);
    }
    const rows = await paletteRows(page, query);
    assert.match(rows[0], /^Pi Context: Select Session…/);
    await screenshot(page, "names-palette");
    await page.keyboard.press("Enter");
    await waitUntil(
      async () =>
        (await page.locator(".quick-input-widget input").getAttribute("placeholder")) ===
        "Filter by name, first message, model or date",
      10_000,
      "the Select Session pick",
    );
    await page.keyboard.press("Escape");
  });

  it("the container, the panel's tab and the status item are named Pi Context", async () => {
    const { page } = suite.wb;
    const container = page.locator('.activitybar .action-item [aria-label^="Pi Context"]');
    await container.first().waitFor({ state: "attached", timeout: 10_000 });
    await runCommand(page, "Pi Context: Open Context Panel", { commandId: "piContext.openPanel" });
    await page.locator(".tabs-container .tab", { hasText: "Pi Context" }).first().waitFor({ timeout: 20_000 });
    // VS Code names a status item by its name in the status bar's context menu
    await page.locator('[id="pi-context.pi-context.piContext.gauge"]').click({ button: "right" });
    const menu = page.locator(".monaco-menu .action-label", { hasText: "Pi Context" });
    await menu.first().waitFor({ state: "visible", timeout: 10_000 });
    await page.keyboard.press("Escape");
    assert.equal(await page.locator('.activitybar [aria-label^="pi Context"]').count(), 0);
  });
});
