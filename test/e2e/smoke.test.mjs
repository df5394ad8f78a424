// E2E smoke: the workbench loads with our extension; "Pi Context: Show Log" from the palette shows
// the extension's output channel with its activation line.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  closeSharedHost,
  hostLogLines,
  openWorkbench,
  outputPanelText,
  runCommand,
  screenshot,
  waitUntil,
} from "./harness.mjs";

describe("e2e smoke", () => {
  let wb;
  before(async () => {
    wb = await openWorkbench();
  });
  after(async () => {
    await wb?.close();
    await closeSharedHost();
  });

  it("shows the activation line after Pi Context: Show Log", async () => {
    const { page } = wb;
    // loaded with this repo as the development extension
    assert.match(await page.title(), /Extension Development Host/);
    await runCommand(page, "Pi Context: Show Log");
    // the Output view shows our channel's lines (its end: a long log may have scrolled past activation)
    const text = await waitUntil(
      async () => {
        const t = await outputPanelText(page);
        return /\[(info|warning)\]/.test(t) ? t : "";
      },
      20_000,
      "the Pi Context log in the Output panel",
    );
    assert.ok(text.length > 0);
    // the activation line is in the channel's log file
    const activated = await waitUntil(
      async () => hostLogLines("Pi Context activated in").length > 0,
      20_000,
      "'Pi Context activated in N ms' in the extension host's log",
    );
    assert.ok(activated);
    // the Output view shows our channel
    const panel = page.locator(".part.panel");
    await panel.waitFor({ state: "visible" });
    await screenshot(page, "smoke-show-log");
  });
});
