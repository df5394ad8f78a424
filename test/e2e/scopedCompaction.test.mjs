// E2E: "Summarize These Messages…" and "Compact Up to Here…" (issue 41) in a real VS Code workbench
// (code-server + Chromium) on the trim fixture (test/fixtures/trim/surgery.jsonl), with the scripted
// OpenAI-compatible server as the summarizer: two rows of the Pi Session tree selected (click,
// shift-click), the row menu, the instructions box, the preview (what is summarized, tokens, cache,
// price), "Summarize now", the note's row in the tree; then a row's "Compact Up to Here…", its
// preview, "Compact now", the row the compaction keeps from; the panel's summary card of the span.
// Screenshots: test-results/e2e/scoped-*.png.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  boxOf,
  chooseFromContextMenu,
  clipAround,
  unionBox,
  privateProject,
  quickInput,
  repoRoot,
  rowTexts,
  screenshot,
  showView,
  treeRows,
  useWorkbench,
  waitUntil,
  webviewFrameByTitle,
} from "./harness.mjs";

const require = createRequire(import.meta.url);
const { startScriptedServer } = require(path.join(repoRoot, "out", "test", "support", "scripted-openai.js"));
const FIXTURE = path.join(repoRoot, "test", "fixtures", "trim");

const lines = (file) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("e2e scoped compaction", () => {
  let server;
  let sessionFile;
  const suite = useWorkbench(
    async () => {
      server = await startScriptedServer();
      const fx = privateProject("scoped", {
        agentFrom: path.join(FIXTURE, "surgery.agent"),
        settings: {
          "piContext.summarizer.provider": "openai",
          "piContext.summarizer.openai.baseURL": server.baseURL,
          "piContext.summarizer.openai.model": "scripted-summarizer",
          "piContext.summarizer.openai.contextWindow": 128000,
          "piContext.liveSession.guardSeconds": 0,
          "workbench.colorTheme": "Default Dark Modern",
        },
      });
      sessionFile = fx.addSession(
        readFileSync(path.join(FIXTURE, "surgery.jsonl"), "utf8"),
        "2026-12-01T09-00-00-000Z_scoped.jsonl",
      );
      return fx;
    },
    { width: 1500, height: 1000 },
  );

  after(async () => {
    await server?.close();
  });

  /** The Pi Session tree with room: a wider side bar, the Context view collapsed. */
  async function openTree(page) {
    await showView(page, "Pi Session");
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("Fix the failing parser test")),
      30_000,
      "the tree's rows",
    ).catch(async (e) => {
      await screenshot(page, "scoped-failure-tree");
      throw e;
    });
    const sidebar = await boxOf(page.locator(".part.sidebar"));
    const x = sidebar.x + sidebar.width + 1;
    await page.mouse.move(x, sidebar.y + sidebar.height / 2);
    await page.mouse.down();
    await page.mouse.move(x + 380, sidebar.y + sidebar.height / 2, { steps: 8 });
    await page.mouse.up();
    const contextHeader = page.locator(".pane-header", { hasText: "Context" }).first();
    if ((await contextHeader.count()) && (await contextHeader.getAttribute("aria-expanded")) === "true")
      await contextHeader.click();
  }

  it("Summarize These Messages…: two rows selected, the preview, the note's row in the tree", async () => {
    const { page } = suite.wb;
    const widget = page.locator(".quick-input-widget");
    await openTree(page);
    const rows = await treeRows(page, "Pi Session");
    const first = rows.filter({ hasText: "Fix the failing parser test" }).first();
    const last = rows.filter({ hasText: "Fixed: the loop now includes the last token." }).first();
    await first.click();
    await last.click({ modifiers: ["Shift"] });
    server.script({
      text: "## Goal\nFix the failing parser test.\n\n## Progress\n### Done\n- [x] The tokenizer's loop in src/parser.ts now includes the last token.",
    });
    await chooseFromContextMenu(page, last, "Summarize These Messages…", {
      beforeClick: () => screenshot(page, "scoped-summarize-menu"),
    });
    const { input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter");
    const go = widget.locator(".monaco-list-row", { hasText: "Summarize now" });
    await go.waitFor({ state: "visible", timeout: 20_000 });
    const text = await widget.innerText();
    assert.match(text, /Summarize \d+ messages \(u1 … a4\)\?/);
    assert.match(text, /→ ≈[\d,]+–[\d,]+ tokens/);
    assert.match(text, /break-even/);
    await page.mouse.move(5, 5); // no row tooltip over the rows
    await page.waitForTimeout(1200);
    await screenshot(page, "scoped-summarize-preview");
    // the README's image: the tree's rows and the preview
    const rowsBox = await boxOf((await treeRows(page, "Pi Session")).last());
    const readme = unionBox(
      await boxOf(widget),
      await boxOf(page.locator(".part.sidebar .pane-header", { hasText: "Pi Session" })),
      rowsBox,
    );
    await screenshot(page, "scoped-readme-summarize", { clip: clipAround(page, readme) });
    await go.click();
    await waitUntil(
      () => lines(sessionFile).filter((e) => e.type === "context_edit").length > 0,
      30_000,
      "the context edits",
    );
    const edits = lines(sessionFile).filter((e) => e.type === "context_edit");
    assert.equal(edits[0].targetId, "u1");
    assert.match(
      edits[0].replacement.content,
      /^\[pi-context: summary of \d+ messages, [\d,]+ tokens, entries u1…a4\]/,
    );
    assert.ok(edits.slice(1).every((e) => e.replacement === null));
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /✎ summary of \d+ messages \(u1 … a4\)/.test(t)),
      20_000,
      "the note's row",
    );
    await page.waitForTimeout(800);
    await screenshot(page, "scoped-summarize-tree");
  });

  it("Compact Up to Here…: a row's menu, the preview, the row the compaction keeps from", async () => {
    const { page } = suite.wb;
    const widget = page.locator(".quick-input-widget");
    const row = (await treeRows(page, "Pi Session")).filter({ hasText: "Run the whole test suite" }).first();
    server.script({
      text: "## Goal\nFix the parser; look at the demo page.\n\n## Progress\n### Done\n- [x] parser fixed",
    });
    await chooseFromContextMenu(page, row, "Compact Up to Here…", {
      beforeClick: () => screenshot(page, "scoped-up-to-here-menu"),
    });
    const { input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter");
    const go = widget.locator(".monaco-list-row", { hasText: "Compact now" });
    await go.waitFor({ state: "visible", timeout: 20_000 });
    const text = await widget.innerText();
    assert.match(text, /Compact "[^"]+" up to your message "Run the whole test suite"\?/);
    await page.waitForTimeout(800);
    await screenshot(page, "scoped-up-to-here-preview");
    await go.click();
    // the review of what the summary lost may come first: write it
    const write = widget.locator(".monaco-list-row", { hasText: "Write this summary" });
    await waitUntil(
      async () =>
        lines(sessionFile).some((e) => e.type === "compaction") ||
        ((await write.isVisible().catch(() => false)) && (await write.click().then(() => false))),
      30_000,
      "the compaction",
    );
    const compaction = lines(sessionFile).find((e) => e.type === "compaction");
    assert.equal(compaction.firstKeptEntryId, "u3");
    await runCloseDiff(page);
    await waitUntil(
      async () =>
        (await rowTexts(page)).some((t) => /Run the whole test suite.*✂ compaction \S+ keeps from here/.test(t)),
      20_000,
      "the kept row marked",
    );
    await page.waitForTimeout(800);
    await screenshot(page, "scoped-up-to-here-tree");
    const pane = await boxOf(page.locator(".part.sidebar .pane-header", { hasText: "Pi Session" }));
    const lastRow = await boxOf((await treeRows(page, "Pi Session")).filter({ hasText: "Compaction:" }).first());
    await screenshot(page, "scoped-readme-up-to-here", { clip: clipAround(page, unionBox(pane, lastRow)) });
  });

  it("the panel lists the span's summary with what it replaces", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    await showView(page, "Context");
    const contextHeader = page.locator(".pane-header", { hasText: "Context" }).first();
    if ((await contextHeader.getAttribute("aria-expanded")) === "false") await contextHeader.click();
    const view = await webviewFrameByTitle(page, "Context", 30_000);
    const card = view.locator("[data-summary]", { hasText: "Summary of messages" }).first();
    await card.waitFor({ state: "visible", timeout: 30_000 });
    await card.locator(".summary-head").click();
    await view.locator("text=replaces").first().waitFor({ state: "visible", timeout: 10_000 });
    await card.scrollIntoViewIfNeeded();
    await page.waitForTimeout(800);
    await screenshot(page, "scoped-panel-summary");
  });
});

/** Close the summary diff the compaction opened (the tree stays in the side bar). */
async function runCloseDiff(page) {
  await page.waitForTimeout(1000);
  await page.keyboard.press("Escape");
}
