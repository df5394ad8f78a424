// E2E: context surgery in a real VS Code workbench (code-server + Chromium) on the trim fixture
// (test/fixtures/trim/surgery.jsonl): "Pi Context: Trim Context…" — the list (suggestions, largest items),
// two rows checked with the mouse, the action, the preview (tokens now → after, the cache effect),
// "Trim now" — then the edited rows marked in the Pi Session tree (with their notes) and in the
// panel's Context surgery section, and the panel's own preview of a removal with its cascade.
// Screenshots: test-results/e2e/trim-*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir (surgery.agent's settings/models + the session).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  privateProject,
  repoRoot,
  runCommand,
  screenshot,
  treeRows,
  useWorkbench,
  viewPane,
  waitUntil,
  webviewFrame,
  scrollIntoView,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "trim");

function setup() {
  const fx = privateProject("trim", {
    agentFrom: path.join(FIXTURE, "surgery.agent"),
    settings: { "piContext.liveSession.guardSeconds": 0, "workbench.colorTheme": "Default Dark Modern" },
  });
  fx.sessionFile = fx.addSession(
    readFileSync(path.join(FIXTURE, "surgery.jsonl"), "utf8"),
    "2026-12-01T09-00-00-000Z_surgery.jsonl",
  );
  return fx;
}

const edits = (file) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.includes('"type":"context_edit"'))
    .map((l) => JSON.parse(l));

describe("e2e context surgery", () => {
  const suite = useWorkbench(setup, { width: 1400, height: 1000 });

  it("Pi Context: Trim Context…: the list, two rows checked, the preview, Trim now", async () => {
    const { page } = suite.wb;
    const widget = page.locator(".quick-input-widget");
    const rows = widget.locator(".monaco-list-row");
    // the session is found (the gauge shows it) before the command can list its items
    await waitUntil(
      async () => (await page.locator("#workbench\\.parts\\.statusbar .statusbar-item", { hasText: "π" }).count()) > 0,
      30_000,
      "the gauge",
    );
    await runCommand(page, "Pi Context: Trim Context…", { commandId: "piContext.trim" });
    await waitUntil(
      async () => (await widget.locator(".quick-input-title").innerText()).startsWith("Trim the context of"),
      20_000,
      "the trim list",
    ).catch(async (e) => {
      await screenshot(page, "trim-failure");
      throw e;
    });
    await rows.first().waitFor({ state: "visible" });
    const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
    assert.ok(
      texts.some((t) => /older read of files read again later.*saves/.test(t)),
      texts.join("\n"),
    );
    assert.ok(
      texts.some((t) => /bash: npm run test:all.*6,000 tokens/.test(t)),
      texts.join("\n"),
    );
    // check the superseded read and the suite's log with the mouse
    for (const re of [/older read of files/, /npm run test:all/]) {
      const row = rows.filter({ hasText: re }).first();
      await row.locator(".quick-input-list-checkbox, .monaco-custom-toggle, input[type=checkbox]").first().click();
    }
    await waitUntil(
      async () => (await widget.locator(".quick-input-count, .monaco-count-badge").first().innerText()).includes("2"),
      5_000,
      "2 selected",
    ).catch(() => {});
    await screenshot(page, "trim-quickpick");
    // OK (Enter would toggle the focused checkbox)
    await widget.locator(".quick-input-action .monaco-button", { hasText: "OK" }).first().click();

    await waitUntil(
      async () => /what should happen/.test(await widget.locator(".quick-input-title").innerText()),
      10_000,
      "the action question",
    );
    await screenshot(page, "trim-action");
    await page.keyboard.press("Enter"); // Trim (a note for the tool result)

    await waitUntil(
      async () => /^Trim the context of .*\?$/.test(await widget.locator(".quick-input-title").innerText()),
      10_000,
      "the preview",
    );
    const preview = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
    assert.ok(
      preview.some((t) => /Trim now.*Context [\d,]+ → [\d,]+ tokens \(saves/.test(t)),
      preview.join("\n"),
    );
    assert.ok(
      preview.some((t) => /uncached|prompt cache/i.test(t)),
      preview.join("\n"),
    );
    await screenshot(page, "trim-preview");
    await page.keyboard.press("Enter"); // Trim now
    await widget.waitFor({ state: "hidden", timeout: 10_000 });
    await waitUntil(async () => edits(suite.fx.sessionFile).length === 2, 20_000, "two context edits in the file");
    assert.deepEqual(
      edits(suite.fx.sessionFile).map((e) => e.targetId),
      ["r1", "r6"],
    );
  });

  it("marks the edited rows in the Pi Session tree, with their notes", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await viewPane(page, "Pi Session");
    const contextHeader = page.locator(".pane-header", { hasText: "Context" }).first();
    if ((await contextHeader.count()) && (await contextHeader.getAttribute("aria-expanded")) === "true")
      await contextHeader.click();
    // tool results fold under the assistant that called them: open every folded row
    for (let i = 0; i < 20; i++) {
      const twisties = (await treeRows(page, "Pi Session")).locator(".monaco-tl-twistie.collapsible.collapsed");
      if ((await twisties.count()) === 0) break;
      await twisties.first().click();
      await page.waitForTimeout(150);
    }
    const marked = await waitUntil(
      async () => {
        const texts = (await (await treeRows(page, "Pi Session")).allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
        return texts.filter((t) => t.includes("note: [pi-context")).length >= 1 ? texts : undefined;
      },
      20_000,
      "a row marked with its note",
    );
    assert.ok(
      marked.some((t) => /npm run test:all.*note: \[pi-context/.test(t) || /note: \[pi-context.*test:all/.test(t)),
      marked.join("\n"),
    );
    // the tooltip of the row explains the edit
    const row = (await treeRows(page, "Pi Session")).filter({ hasText: "note: [pi-context" }).last();
    await row.hover();
    await page
      .locator(".monaco-hover, .workbench-hover")
      .filter({ hasText: "Replaced in the context" })
      .first()
      .waitFor({ state: "visible", timeout: 10_000 })
      .catch(() => {});
    await screenshot(page, "trim-tree-marked");
    await page.mouse.move(5, 500);
  });

  it("the panel's Context surgery section: edited items marked, a removal previewed with its cascade", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    const frame = webviewFrame(page);
    const section = frame.locator('[data-testid="trim-section"]');
    await section.waitFor({ state: "visible", timeout: 30_000 });
    await waitUntil(
      async () => (await frame.locator(".trim-item.edited").count()) >= 2,
      20_000,
      "two edited items in the panel",
    );
    const r6 = frame.locator('.trim-item[data-entry="r6"]');
    assert.match(await r6.innerText(), /note: \[pi-context/);
    await scrollIntoView(section);
    await screenshot(page, "trim-panel");

    // check the aborted run's assistant (a7): its result r6 is listed as a cascade in the host's preview
    await frame.locator('.trim-item[data-entry="a7"] vscode-checkbox').click();
    const previewBox = frame.locator('[data-testid="trim-preview"]');
    await previewBox.waitFor({ state: "visible", timeout: 20_000 });
    await waitUntil(
      async () => (await previewBox.locator('.trim-edit[data-entry="a7"]').count()) > 0,
      20_000,
      "a7 in the panel's preview",
    );
    const text = await previewBox.innerText();
    assert.match(text, /→/);
    await scrollIntoView(previewBox);
    await screenshot(page, "trim-panel-preview");
  });
});
