// E2E smoke: the workbench loads with our extension; "Pi: Show Log" from the palette shows
// the extension's output channel with its activation line.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeSharedHost, openWorkbench, outputPanelText, runCommand, screenshot, waitUntil } from "./harness.mjs";

describe("e2e smoke", () => {
  let wb;
  before(async () => {
    wb = await openWorkbench();
  });
  after(async () => {
    await wb?.close();
    await closeSharedHost();
  });

  it("shows the activation line after Pi: Show Log", async () => {
    const { page } = wb;
    // loaded with this repo as the development extension
    assert.match(await page.title(), /Extension Development Host/);
    await runCommand(page, "Pi: Show Log");
    const text = await waitUntil(
      async () => {
        const t = await outputPanelText(page);
        return t.includes("pi Context activated") ? t : "";
      },
      20_000,
      "'pi Context activated' in the Output panel",
    );
    assert.match(text, /pi Context activated/);
    // the Output view shows our channel
    const panel = page.locator(".part.panel");
    await panel.waitFor({ state: "visible" });
    await screenshot(page, "smoke-show-log");
  });
});
