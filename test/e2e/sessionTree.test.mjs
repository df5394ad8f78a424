// E2E: the "Pi Session" tree view in a real VS Code workbench (code-server + Chromium) on pi's tree
// fixture: rows (branch point, branch rows, labels, leaf), the context menu's "Switch to Here…"
// with pi's "Summarize branch?" choice, the view following the move, "Switch to Here with
// Summary…" asking before anything is sent (and for the API key after the confirmation); then a
// long session that opens at its leaf and a real session with a failed (HTTP 400) answer, with no
// reveal errors in the log. Screenshots: test-results/e2e/session-tree*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir (tree.agent's settings/models + the session).
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, utimesSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  chooseFromContextMenu,
  hoverRow,
  outputPanelText,
  privateProject,
  repoRoot,
  resultsDir,
  rowTexts,
  runCommand,
  screenshot,
  showView,
  treeRows,
  useWorkbench,
  viewPane,
  waitUntil,
  boxOf,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

function setup(name = "tree") {
  // guardSeconds 0: each test writes the session, and the next one must not see it as "live"
  const fx = privateProject(name, {
    agentFrom: path.join(FIXTURE, "tree.agent"),
    settings: { "piContext.liveSession.guardSeconds": 0, "workbench.colorTheme": "Default Dark Modern" },
  });
  fx.sessionFile = fx.addSession(
    readFileSync(path.join(FIXTURE, "tree.jsonl"), "utf8"),
    "2026-11-30T06-33-35-854Z_01a22b28-ad6d-744a-899e-6fea6fed06f8.jsonl",
  );
  return fx;
}

/** A long linear session (user / assistant pairs) with a session name. */
function longSession(pairs) {
  const ts = "2026-11-30T06:00:00.000Z";
  const lines = [{ type: "session", version: 3, id: "long-e2e", timestamp: ts, cwd: "/w" }];
  let parent = null;
  const add = (e) => {
    lines.push({ ...e, parentId: parent, timestamp: ts });
    parent = e.id;
  };
  add({ type: "session_info", id: "name0001", name: "long scripted session" });
  for (let i = 1; i <= pairs; i++) {
    add({
      type: "message",
      id: `u${String(i).padStart(7, "0")}`,
      message: { role: "user", content: `please do task ${i}`, timestamp: 0 },
    });
    const last = i === pairs;
    add({
      type: "message",
      id: `a${String(i).padStart(7, "0")}`,
      message: {
        role: "assistant",
        content: [{ type: "text", text: last ? "**All tasks** are `complete`." : `Task ${i} done.` }],
        provider: "scripted",
        model: "scripted-small",
        stopReason: "stop",
        usage: { input: 100 + i, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 105 + i },
        timestamp: 0,
      },
    });
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/**
 * A large branched session: a main chain of `pairs` user/assistant pairs, a side branch of 40 pairs
 * off pair 20 (written right after it), and the leaf at the end of the (deepest) main chain.
 */
function largeBranchedSession(pairs) {
  const ts = "2026-11-30T09:00:00.000Z";
  const lines = [{ type: "session", version: 3, id: "large-e2e", timestamp: ts, cwd: "/w" }];
  const pair = (i, parent, tag) => {
    const u = `${tag}u${String(i).padStart(6, "0")}`;
    const a = `${tag}a${String(i).padStart(6, "0")}`;
    const last = tag === "m" && i === pairs;
    lines.push({
      type: "message",
      id: u,
      parentId: parent,
      timestamp: ts,
      message: { role: "user", content: `${tag} step ${i}`, timestamp: 0 },
    });
    lines.push({
      type: "message",
      id: a,
      parentId: u,
      timestamp: ts,
      message: {
        role: "assistant",
        content: [{ type: "text", text: last ? "The large session ends here." : `${tag} step ${i} done.` }],
        provider: "scripted",
        model: "scripted-small",
        stopReason: "stop",
        usage: { input: 100 + i, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 105 + i },
        timestamp: 0,
      },
    });
    return a;
  };
  let parent = null;
  for (let i = 1; i <= pairs; i++) {
    parent = pair(i, parent, "m");
    if (i === 20) {
      // the side branch comes right after its fork, so everything later extends the main chain
      let side = parent;
      for (let j = 1; j <= 40; j++) side = pair(j, side, "s");
    }
  }
  // the side branch's last line is not the file's last line: pi resumes at the main chain's end
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

describe("e2e session tree view", () => {
  const suite = useWorkbench(() => setup(), { width: 1400, height: 1000 });

  it("shows the session's tree with the branch point, branch groups, label and leaf", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await viewPane(page, "Pi Session");
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("delta read on branch C.")),
      30_000,
      "the leaf row",
    ).catch(async (e) => {
      await screenshot(page, "session-tree-failure");
      throw e;
    });
    // a wider side bar (drag its sash) and the Context webview collapsed, so the tree gets the room
    const sidebar = await boxOf(page.locator(".part.sidebar"));
    if (sidebar) {
      const x = sidebar.x + sidebar.width + 1;
      await page.mouse.move(x, sidebar.y + sidebar.height / 2);
      await page.mouse.down();
      await page.mouse.move(x + 300, sidebar.y + sidebar.height / 2, { steps: 8 });
      await page.mouse.up();
    }
    const contextHeader = page.locator(".pane-header", { hasText: "Context" }).first();
    if ((await contextHeader.count()) && (await contextHeader.getAttribute("aria-expanded")) === "true")
      await contextHeader.click();
    // the active path is the top level; open the branch point (its other branches), then branch A
    const branchPoint = (await treeRows(page, "Pi Session")).filter({ hasText: "alpha edited." }).first();
    await branchPoint.click();
    await page.keyboard.press("ArrowRight");
    const branchA = (await treeRows(page, "Pi Session")).filter({ hasText: "[branch-A]" }).first();
    await branchA.waitFor({ timeout: 20_000 });
    await branchA.click();
    await page.keyboard.press("ArrowRight");
    // branch A's rows are rendered (its first task) — then every expected row is checked
    const texts = await waitUntil(
      async () => {
        const t = await rowTexts(page);
        return t.some((r) => r.includes("[task:t1] do t1")) ? t : undefined;
      },
      20_000,
      "branch A expanded",
    );
    assert.ok(
      texts.some((t) => t.includes("[task:t1] do t1")),
      texts.join("\n"),
    );
    assert.ok(
      texts.some((t) => /alpha edited\..*3 branches/.test(t)),
      "branch point row",
    );
    assert.ok(
      texts.some((t) => t.includes("[branch-A] Branch summary")),
      "labelled branch summary",
    );
    assert.ok(
      texts.some((t) => /delta read on branch C\..*● leaf/.test(t)),
      "leaf row",
    );
    await screenshot(page, "session-tree");
    // the side bar down to the last row (the README image)
    const bar = await boxOf(page.locator(".part.sidebar"));
    // (rows are absolutely positioned: the lowest one, not the last in the DOM)
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("gamma edited on branch A.")),
      20_000,
      "branch A's rows",
    );
    const boxes = await (
      await treeRows(page, "Pi Session")
    ).evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().bottom));
    const bottom = Math.max(...boxes);
    if (bar && boxes.length)
      await page.screenshot({
        path: path.join(resultsDir, "session-tree-view.png"),
        clip: { x: bar.x, y: bar.y, width: bar.width, height: Math.min(bar.height, bottom + 16 - bar.y) },
      });
  });

  it("Switch to Here… from the context menu (No summary) moves the leaf; the view follows", async () => {
    const { page } = suite.wb;
    const target = (await treeRows(page, "Pi Session")).filter({ hasText: "gamma edited on branch A." }).first();
    await chooseFromContextMenu(page, target, "Switch to Here…", {
      beforeClick: async () => void (await screenshot(page, "session-tree-context-menu")),
    });
    // pi's "Summarize branch?" quick pick
    const pick = page.locator(".quick-input-widget");
    await pick.waitFor({ state: "visible", timeout: 10_000 });
    await waitUntil(
      async () => (await pick.innerText()).includes("Summarize with custom prompt"),
      10_000,
      "pi's choices",
    );
    assert.match(await pick.innerText(), /Switch to “gamma edited on branch A\.”: summarize the branch you leave\?/);
    await page.waitForTimeout(300); // the quick pick fades in
    await screenshot(page, "session-tree-choices");
    await pick.locator(".monaco-list-row", { hasText: "No summary" }).first().click();
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /gamma edited on branch A\..*● leaf/.test(t)),
      15_000,
      "the leaf to move to the target",
    );
    const lines = readFileSync(suite.fx.sessionFile, "utf8").trimEnd().split("\n");
    const marker = JSON.parse(lines[lines.length - 1]);
    assert.equal(marker.type, "custom");
    assert.equal(marker.customType, "pi-context/leaf");
    assert.equal(marker.parentId, "895e5ef5");
    await page.waitForTimeout(400);
    await screenshot(page, "session-tree-switched");
  });

  it("Switch to Here with Summary… shows what is sent and asks first; the API key box comes after the confirmation; Escape writes nothing", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    const target = (await treeRows(page, "Pi Session")).filter({ hasText: "alpha read." }).first();
    await chooseFromContextMenu(page, target, "Switch to Here with Summary…");
    const pick = page.locator(".quick-input-widget");
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("with a branch summary?"),
      10_000,
      "the confirmation",
    ).catch(async (e) => {
      await screenshot(page, "session-tree-confirm-failure");
      throw e;
    });
    const text = await pick.innerText();
    assert.match(text, /Switch to “alpha read\.” with a branch summary\?/);
    assert.match(text, /Enter the API Key, Then Summarize and Switch/, "OpenAI without a stored key");
    assert.match(text, /Sent to the summarizer: \d+ messages of the \d+ entries you leave/i);
    assert.match(text, /gamma edited on branch A\./, "the messages sent are listed");
    await page.waitForTimeout(300);
    await screenshot(page, "session-tree-with-summary-confirm");
    await page.keyboard.press("Enter"); // the first item: enter the key, then summarize
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("API Key for https://api.openai.com"),
      10_000,
      "the API key box",
    );
    assert.equal(await pick.locator("input[type=password]").count(), 1);
    await screenshot(page, "session-tree-with-summary-key");
    await page.keyboard.press("Escape"); // no key: back to the confirmation
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("with a branch summary?"),
      10_000,
      "the confirmation again",
    );
    await page.keyboard.press("Escape");
    await page.waitForTimeout(500);
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "nothing written");
  });
});

describe("e2e session tree view: opens at the leaf, failed answers show their error", () => {
  const suite = useWorkbench(
    () => {
      const fx = setup("tree2");
      fx.real = fx.addSession(
        readFileSync(path.join(repoRoot, "test", "fixtures", "real-sessions", "getspecstory-real_world.jsonl"), "utf8"),
        "2026-11-30T07-00-00-000Z_getspecstory.jsonl",
        1800_000,
      );
      fx.long = fx.addSession(longSession(90), "2026-11-30T08-00-00-000Z_long.jsonl", 600_000); // the latest: followed on open
      return fx;
    },
    { width: 1400, height: 900 },
  );

  it("the view opens at the leaf of a long session (no reveal command), with the session name as written", async () => {
    const { page } = suite.wb;
    await showView(page, "Pi Session");
    const pane = await viewPane(page, "Pi Session");
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /All tasks are complete\..*● leaf/.test(t)),
      30_000,
      "the leaf row in view",
    ).catch(async (e) => {
      await screenshot(page, "session-tree-leaf-failure");
      throw e;
    });
    const texts = await rowTexts(page);
    assert.ok(!texts.some((t) => t.includes("please do task 1 ")), "scrolled to the end, not the top");
    assert.ok(
      texts.some((t) => /All tasks are complete\./.test(t)),
      "markdown markers stripped",
    );
    assert.ok(
      !texts.some((t) => /Task 8\d done\. .*scripted-small/.test(t)),
      "the model is not repeated on every answer",
    );
    const header = await pane.locator(".pane-header").first().innerText();
    assert.match(header, /long scripted session · 181 entries/);
    await screenshot(page, "session-tree-opens-at-leaf");
  });

  it("a failed answer (HTTP 400) shows its error in the row and its tooltip; no reveal errors in the log", async () => {
    const { page } = suite.wb;
    const now = new Date();
    utimesSync(suite.fx.real, now, now); // the real session becomes the latest: the view follows it
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("Error 400: max_tokens must be greater than")),
      30_000,
      "the error row",
    );
    const texts = await rowTexts(page);
    assert.ok(!texts.some((t) => t.includes("(error)")), texts.join("\n"));
    assert.ok(
      texts.some((t) => /This project — pi-format-demo — is a small/.test(t)),
      "plain text, no markdown markers",
    );
    const row = (await treeRows(page, "Pi Session")).filter({ hasText: "Error 400:" }).first();
    const hover = await hoverRow(page, row, "The request failed");
    assert.match(
      (await hover.innerText()).replace(/\u00a0/g, " "),
      /max_tokens. must be greater than .thinking\.budget_tokens/,
    );
    await screenshot(page, "session-tree-error-row");
    await runCommand(page, "Pi Context: Show Log", { commandId: "piContext.showLog" });
    await page.waitForTimeout(800);
    const log = await outputPanelText(page);
    assert.match(log, /following session/);
    assert.doesNotMatch(log, /Data tree node not found|TreeError|could not reveal/);
  });

  it("session text with `$(icon)` syntax shows as text in a row's tooltip, never as an icon (trial 6)", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    const ts = "2026-11-30T08:30:00.000Z";
    const lines = [
      { type: "session", version: 3, id: "icons-e2e", timestamp: ts, cwd: "/w" },
      {
        type: "message",
        id: "iu1",
        parentId: null,
        timestamp: ts,
        message: { role: "user", content: "icons stay text $(zap) and $(bug) here", timestamp: 0 },
      },
    ];
    suite.fx.addSession(
      lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
      "2026-11-30T08-30-00-000Z_icons.jsonl",
      0,
    );
    const row = (await treeRows(page, "Pi Session")).filter({ hasText: "icons stay text" }).first();
    await waitUntil(async () => (await row.count()) > 0 && row.isVisible(), 30_000, "the row");
    const hover = await hoverRow(page, row, "icons stay text");
    const text = (await hover.innerText()).replace(/\u00a0/g, " ");
    assert.match(text, /icons stay text \$\(zap\) and \$\(bug\) here/, text);
    assert.equal(await hover.locator(".codicon-zap, .codicon-bug").count(), 0, "no icon drawn from the session's text");
    await screenshot(page, "session-tree-icon-text-tooltip");
    await page.mouse.move(5, 5);
  });

  it("a large branched session becomes the latest: the view follows it and shows its leaf (no Reveal Leaf)", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    await showView(page, "Pi Session");
    suite.fx.addSession(largeBranchedSession(6000), "2026-11-30T09-00-00-000Z_large.jsonl", 0);
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /The large session ends here\..*● leaf/.test(t)),
      30_000,
      "the large session's leaf row in view",
    ).catch(async (e) => {
      await screenshot(page, "session-tree-large-switch-failure");
      throw e;
    });
    await screenshot(page, "session-tree-large-switch");
    // a large file that is still being written when the view first reads it (a copy, a fork being
    // written): the view follows its leaf as the rest arrives, not the middle it first saw
    const text = largeBranchedSession(5000);
    const lines = text.trimEnd().split("\n");
    const half = lines.slice(0, 4000).join("\n") + "\n";
    const file = suite.fx.addSession(half, "2026-11-30T09-30-00-000Z_growing.jsonl", 0);
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /m step (19|20)\d\d\b.*● leaf/.test(t)),
      30_000,
      "the growing session's first leaf",
    );
    appendFileSync(file, lines.slice(4000).join("\n") + "\n");
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => /The large session ends here\..*● leaf/.test(t)),
      30_000,
      "the grown session's leaf row in view",
    );
    await screenshot(page, "session-tree-large-grown");
    // the same while the view is hidden (the Explorer in the side bar): shown at the leaf when opened
    await runCommand(page, "View: Show Explorer", { commandId: "workbench.view.explorer" });
    await page.waitForTimeout(500);
    suite.fx.addSession(largeBranchedSession(3000), "2026-11-30T10-00-00-000Z_large2.jsonl", 0);
    await page.waitForTimeout(3000);
    await showView(page, "Pi Session");
    await waitUntil(
      async () =>
        (await rowTexts(page)).some((t) => /The large session ends here\..*● leaf/.test(t)) &&
        (await rowTexts(page)).some((t) => /m step 2999 done/.test(t)),
      30_000,
      "the second large session's leaf row in view",
    );
    await screenshot(page, "session-tree-large-switch-hidden");
  });
});
