// E2E: context surgery in a real VS Code workbench (code-server + Chromium) on the trim fixture
// (test/fixtures/trim/surgery.jsonl): "Pi Context: Trim Context…" — the list (suggestions, largest items),
// two rows checked with the mouse, the action, the preview (tokens now → after, the cache effect),
// "Trim now" — then the edited rows marked in the Pi Session tree (with their notes); the panel's
// Context surgery section: a row's own action plans it (the page does not move), the plan with its
// cascade, the dock's "Trim 1 item", the toast's Undo (preview, leaf marker), and Restore original
// asked first in the dock with the tokens it adds.
// Screenshots: test-results/e2e/trim-*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir (surgery.agent's settings/models + the session).
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  boxOf,
  notificationInCenter,
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
    // tool results fold under the assistant that called them: a collapsed answer says its results were edited
    const parents = await waitUntil(
      async () => {
        const texts = (await (await treeRows(page, "Pi Session")).allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
        return texts.filter((t) => /1 tool result edited/.test(t)).length >= 2 ? texts : undefined;
      },
      20_000,
      "the calling answers marked",
    );
    assert.ok(
      parents.some((t) => /^→ bash.*1 tool result edited/.test(t)),
      parents.join("\n"),
    );
    await screenshot(page, "trim-tree-parent-marked");
    // open every folded row
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

  it("the panel: a row's own action plans it without moving the page; the plan and the dock say what happens; Trim; the toast's Undo takes it back", async () => {
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
    await waitUntil(async () => (await frame.locator("#app").getAttribute("data-details")) === "in", 30_000, "details");
    const r6 = frame.locator('.trim-item[data-entry="r6"]');
    assert.match(await r6.innerText(), /note: \[pi-context/);
    // nothing is planned by itself: no plan, no dock; an edited row offers Restore, an unedited one its trims
    assert.equal(await frame.locator('[data-testid="trim-dock"]').count(), 0);
    assert.deepEqual(await r6.locator(".trim-act").evaluateAll((bs) => bs.map((b) => b.dataset.choice)), ["restore"]);
    const a7 = frame.locator('.trim-item[data-entry="a7"]');
    assert.deepEqual(await a7.locator(".trim-act").evaluateAll((bs) => bs.map((b) => b.dataset.choice)), [
      "remove",
      "note",
    ]);
    await scrollIntoView(frame.locator('.trim-item[data-entry="a7"]'));
    const scrollY = () => frame.locator("html").evaluate(() => window.scrollY);
    const before = await scrollY();
    assert.ok(before > 100, `the list is below the fold (scrollY ${before})`);
    await screenshot(page, "trim-panel");

    // remove the aborted run's assistant (a7): the host's plan lists its result r6 as a cascade
    await a7.locator('.trim-act[data-choice="remove"]').click();
    const dock = frame.locator('[data-testid="trim-dock"]');
    await waitUntil(async () => /saves/.test(await dock.innerText().catch(() => "")), 20_000, "the dock's numbers");
    assert.equal(await scrollY(), before, "a row action does not move the page");
    assert.equal(await a7.getAttribute("data-planned"), "remove");
    const plan = frame.locator('[data-testid="trim-plan"]');
    assert.match(await plan.locator('.trim-plan-row[data-entry="a7"]').innerText(), /remove/);
    await waitUntil(
      async () => (await plan.locator('.trim-edit.cascade[data-entry="r6"]').count()) > 0,
      20_000,
      "r6 in the plan as a cascade",
    );
    const apply = dock.locator('[data-action="trim-apply"]');
    assert.equal((await apply.innerText()).trim(), "Trim 1 item");
    // the dock stays at the bottom of the view while the list is on screen
    const dockBox = await boxOf(dock);
    const frameHeight = await frame.locator("html").evaluate(() => window.innerHeight);
    assert.ok(dockBox.y + dockBox.height <= frameHeight + 120, "the dock is in view");
    await screenshot(page, "trim-panel-plan");

    const [, , after] = /([\d,]+) → ([\d,]+) tokens/.exec(await dock.innerText());
    const edits0 = edits(suite.fx.sessionFile).length;
    await apply.click();
    await waitUntil(async () => edits(suite.fx.sessionFile).length > edits0, 20_000, "the removal written");
    assert.deepEqual(
      edits(suite.fx.sessionFile)
        .slice(edits0)
        .map((e) => [e.targetId, e.replacement]),
      // pairing-safe order (core/rules/batchOrder.ts): the tool result hidden before its call
      [
        ["r6", null],
        ["a7", null],
      ],
    );
    const toast = await notificationInCenter(page, `→ ${after} tokens`);
    assert.match(await toast.innerText(), /Trimmed "/);
    await screenshot(page, "trim-panel-toast");
    await toast.locator(".monaco-button", { hasText: "Undo" }).first().click();
    const widget = page.locator(".quick-input-widget");
    await waitUntil(
      async () => /^Undo the last context edit of /.test(await widget.locator(".quick-input-title").innerText()),
      20_000,
      "the undo preview",
    );
    const rows = (await widget.locator(".monaco-list-row").allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
    assert.ok(
      rows.some((t) => /Undo now.*Moves the session's leaf back before the edit: appends 1 line \(\d+ bytes\)/.test(t)),
      rows.join("\n"),
    );
    await page.waitForTimeout(300); // the quick input's fade-in
    await screenshot(page, "trim-undo-preview");
    const size = statSync(suite.fx.sessionFile).size;
    await page.keyboard.press("Enter");
    await waitUntil(() => statSync(suite.fx.sessionFile).size > size, 20_000, "the undo written");
    const last = JSON.parse(readFileSync(suite.fx.sessionFile, "utf8").trim().split("\n").pop());
    assert.equal(last.customType, "pi-context/leaf");
    await page.keyboard.press("Escape");
  });

  it("the panel: Restore original is the row's own action; the dock asks first, with the tokens it adds; the toast says restored", async () => {
    const { page } = suite.wb;
    const frame = webviewFrame(page);
    const r6 = frame.locator('.trim-item[data-entry="r6"]');
    await waitUntil(
      async () => /note: \[pi-context/.test(await r6.innerText().catch(() => "")),
      20_000,
      "r6 a note again",
    );
    await scrollIntoView(r6);
    await r6.locator('.trim-act[data-choice="restore"]').click();
    const dock = frame.locator('[data-testid="trim-dock"]');
    await waitUntil(async () => /adds/.test(await dock.innerText().catch(() => "")), 20_000, "the dock's numbers");
    const apply = dock.locator('[data-action="trim-apply"]');
    assert.equal((await apply.innerText()).trim(), "Restore 1 item…");
    const size = statSync(suite.fx.sessionFile).size;
    await apply.click();
    const confirm = frame.locator('[data-testid="trim-confirm"]');
    await confirm.waitFor({ state: "visible", timeout: 10_000 });
    assert.match(
      await confirm.innerText(),
      /This makes the context larger: [\d,]+ more tokens in every request from now on \([\d,]+ → [\d,]+ by pi's estimate\), and [\d,]+ bytes appended to the session file\. Apply it\?/,
    );
    assert.equal(statSync(suite.fx.sessionFile).size, size, "nothing written by the first click");
    await scrollIntoView(dock);
    await screenshot(page, "trim-panel-restore-confirm");
    await dock.locator('[data-action="trim-confirm"]').click();
    await waitUntil(() => statSync(suite.fx.sessionFile).size > size, 20_000, "the restore written");
    const last = edits(suite.fx.sessionFile).pop();
    assert.equal(last.targetId, "r6");
    assert.notEqual(last.replacement, null);
    await notificationInCenter(page, "Restored items in");
    await page.keyboard.press("Escape");
  });
});
