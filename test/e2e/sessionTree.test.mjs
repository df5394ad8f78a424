// E2E: the "Pi Session" tree view in a real VS Code workbench (code-server + Chromium) on pi's tree
// fixture: rows (branch point, branch groups, labels, leaf), the context menu's "Switch to Here…"
// with pi's "Summarize branch?" choice, and the view following the move. Screenshots:
// test-results/e2e/session-tree*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir (tree.agent's settings/models + the session).
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { closeSharedHost, openWorkbench, repoRoot, resultsDir, runCommand, screenshot, treeRows, viewPane, waitUntil } from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

function encodeSessionDirName(cwd) {
  return `--${path.resolve(cwd).replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

function setup() {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-context-e2e-tree-"));
  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  for (const f of readdirSync(path.join(FIXTURE, "tree.agent"))) copyFileSync(path.join(FIXTURE, "tree.agent", f), path.join(agentDir, f));
  const text = readFileSync(path.join(FIXTURE, "tree.jsonl"), "utf8");
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl));
  header.cwd = workspace;
  const dir = path.join(agentDir, "sessions", encodeSessionDirName(workspace));
  mkdirSync(dir, { recursive: true });
  const sessionFile = path.join(dir, "2026-11-30T06-33-35-854Z_01a22b28-ad6d-744a-899e-6fea6fed06f8.jsonl");
  writeFileSync(sessionFile, JSON.stringify(header) + text.slice(nl));
  const old = new Date(Date.now() - 3600_000); // not "live"
  utimesSync(sessionFile, old, old);
  writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify({ "piContext.agentDir": agentDir, "workbench.colorTheme": "Default Dark Modern" }, null, 2));
  return { root, workspace, agentDir, sessionFile };
}

async function rowTexts(page) {
  const rows = await treeRows(page, "Pi Session");
  return (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
}

describe("e2e session tree view", () => {
  let fx;
  let wb;

  before(async () => {
    fx = setup();
    wb = await openWorkbench({ folder: fx.workspace, width: 1400, height: 1000 });
  });

  after(async () => {
    await wb?.close();
    await closeSharedHost();
    if (fx) rmSync(fx.root, { recursive: true, force: true });
  });

  it("shows the session's tree with the branch point, branch groups, label and leaf", async () => {
    const { page } = wb;
    await runCommand(page, "Pi: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await viewPane(page, "Pi Session");
    await waitUntil(async () => (await rowTexts(page)).some((t) => t.includes("delta read on branch C.")), 30_000, "the leaf row").catch(async (e) => {
      await screenshot(page, "session-tree-failure");
      throw e;
    });
    // a wider side bar (drag its sash) and the Context webview collapsed, so the tree gets the room
    const sidebar = await page.locator(".part.sidebar").boundingBox();
    if (sidebar) {
      const x = sidebar.x + sidebar.width + 1;
      await page.mouse.move(x, sidebar.y + sidebar.height / 2);
      await page.mouse.down();
      await page.mouse.move(x + 300, sidebar.y + sidebar.height / 2, { steps: 8 });
      await page.mouse.up();
    }
    const contextHeader = page.locator(".pane-header", { hasText: "Context" }).first();
    if ((await contextHeader.count()) && (await contextHeader.getAttribute("aria-expanded")) === "true") await contextHeader.click();
    // expand branch A (collapsed: not on the active path)
    const branchA = (await treeRows(page, "Pi Session")).filter({ hasText: "[branch-A]" }).first();
    await branchA.click();
    await page.keyboard.press("ArrowRight");
    await page.waitForTimeout(500);
    const texts = await rowTexts(page);
    assert.ok(texts.some((t) => t.includes("[task:t1] do t1")), texts.join("\n"));
    assert.ok(texts.some((t) => /alpha edited\..*3 branches/.test(t)), "branch point row");
    assert.ok(texts.some((t) => t.includes("[branch-A] Branch summary")), "labelled branch summary");
    assert.ok(texts.some((t) => /delta read on branch C\..*● leaf/.test(t)), "leaf row");
    await screenshot(page, "session-tree");
    // the side bar down to the last row (the README image)
    const bar = await page.locator(".part.sidebar").boundingBox();
    const lastRow = await (await treeRows(page, "Pi Session")).last().boundingBox();
    if (bar && lastRow) await page.screenshot({ path: path.join(resultsDir, "session-tree-view.png"), clip: { x: bar.x, y: bar.y, width: bar.width, height: Math.min(bar.height, lastRow.y + lastRow.height + 16 - bar.y) } });
  });

  it("Switch to Here… from the context menu (No summary) moves the leaf; the view follows", async () => {
    const { page } = wb;
    const target = (await treeRows(page, "Pi Session")).filter({ hasText: "gamma edited on branch A." }).first();
    await target.click({ button: "right" });
    const item = page.locator(".context-view .action-item", { hasText: "Switch to Here…" }).first();
    await item.waitFor({ state: "visible", timeout: 10_000 });
    await screenshot(page, "session-tree-context-menu");
    await item.click();
    // pi's "Summarize branch?" quick pick
    const pick = page.locator(".quick-input-widget");
    await pick.waitFor({ state: "visible", timeout: 10_000 });
    await waitUntil(async () => (await pick.innerText()).includes("Summarize with custom prompt"), 10_000, "pi's choices");
    await screenshot(page, "session-tree-choices");
    await pick.locator(".monaco-list-row", { hasText: "No summary" }).first().click();
    await waitUntil(async () => (await rowTexts(page)).some((t) => /gamma edited on branch A\..*● leaf/.test(t)), 15_000, "the leaf to move to the target");
    const lines = readFileSync(fx.sessionFile, "utf8").trimEnd().split("\n");
    const marker = JSON.parse(lines[lines.length - 1]);
    assert.equal(marker.type, "custom");
    assert.equal(marker.customType, "pi-context/leaf");
    assert.equal(marker.parentId, "895e5ef5");
    await page.waitForTimeout(400);
    await screenshot(page, "session-tree-switched");
  });
});
