// E2E: the status-bar gauge, its tooltip and the Pi Context panel after the new-user trial fixes,
// in a real VS Code workbench (code-server + Chromium), dark and light themes:
// - the gauge moves at once when piContext.statusBar.alignment / priority change (no reload);
// - the tooltip lists every problem of the session (torn final line, malformed line, unknown type…);
// - the panel lists the problems readably and a click opens the session file at the line;
// - the bar's axis labels never overlap (threshold near the window, a 1M window, a small window),
//   in the editor panel and the narrow sidebar view;
// - the header wraps without a leading "·"; the sidebar actions are labelled; the Compact icon;
// - no folder open: gauge and panel say the same, the tree opens alike and speaks of the tree; Select Session shows each project folder.
// Screenshots in test-results/e2e/status-panel-*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir; the no-folder window uses the shared agent dir (PI_CODING_AGENT_DIR).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  applyTheme,
  clipAround,
  captureEvidence,
  closeSharedHost,
  encodeSessionDirName,
  installSession,
  openWorkbench,
  runCommand,
  screenshot,
  sharedHost,
  unionBox,
  usageOf,
  waitUntil,
  webviewFrameByTitle,
  writeFileAtomic,
  boxOf,
} from "./harness.mjs";

const PANEL_TITLE = "Pi Context";

/** test-results/e2e/status-panel-<name>.png (the whole page, or `clip`). */
const shot = (page, name, clip) => screenshot(page, `status-panel-${name}`, clip ? { clip } : {});

const around = (box, pad = 8, page) => clipAround(page, box, pad);

const ts = (s) => new Date(Date.UTC(2026, 10, 30, 9, 0, s)).toISOString();
const usage = usageOf;

/** A small session on `model` whose last answer reports `tokens`; `extra` raw lines appended. */
function sessionText(cwd, model, tokens, name, extra = "") {
  const lines = [
    { type: "session", version: 3, id: `e2e-${model}`, timestamp: ts(0), cwd },
    { type: "model_change", id: "m0000001", parentId: null, timestamp: ts(1), provider: "scripted", modelId: model },
    { type: "session_info", id: "n0000001", parentId: "m0000001", timestamp: ts(1), name },
    {
      type: "message",
      id: "u0000001",
      parentId: "n0000001",
      timestamp: ts(2),
      message: { role: "user", content: [{ type: "text", text: "Please look at the project." }], timestamp: 1 },
    },
    {
      type: "message",
      id: "a0000001",
      parentId: "u0000001",
      timestamp: ts(3),
      message: {
        role: "assistant",
        content: [{ type: "text", text: "Done." }],
        api: "openai-completions",
        provider: "scripted",
        model,
        usage: usage(tokens),
        stopReason: "stop",
        timestamp: 2,
      },
    },
  ];
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n" + extra;
}

/** Problems: a malformed line, an entry whose parent is missing, an unknown type, a torn final line. */
const PROBLEM_LINES =
  "{ this line is broken\n" +
  JSON.stringify({
    type: "message",
    id: "x0000001",
    parentId: "gone0001",
    timestamp: ts(4),
    message: { role: "user", content: [{ type: "text", text: "orphan" }], timestamp: 3 },
  }) +
  "\n" +
  JSON.stringify({ type: "future_kind", id: "f0000001", parentId: "a0000001", timestamp: ts(5) }) +
  "\n" +
  '{"type":"message","id":"torn0001","parentId":"a0000001","timest';

function setup() {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-context-e2e-status-panel-"));
  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(path.join(workspace, "README.md"), "# project\n");
  // keepRecentTokens below the 16k model's threshold (12k): pi's default 20k would be a finding of its own
  writeFileSync(
    path.join(agentDir, "settings.json"),
    JSON.stringify({ compaction: { reserveTokens: 4000, keepRecentTokens: 8000 } }),
  );
  writeFileSync(
    path.join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: "http://127.0.0.1:1/v1",
          api: "openai-completions",
          apiKey: "none",
          models: [
            { id: "small-16k", contextWindow: 16000 },
            { id: "big-200k", contextWindow: 200000 },
            { id: "huge-1m", contextWindow: 1000000 },
          ],
        },
      },
    }),
  );
  const dir = path.join(agentDir, "sessions", encodeSessionDirName(workspace));
  mkdirSync(dir, { recursive: true });
  const sessionFile = path.join(dir, "2026-11-30T09-00-00-000Z_e2e-status-panel.jsonl");
  return { root, workspace, agentDir, sessionFile };
}

function writeSettings(fx, extra = {}) {
  writeFileAtomic(
    path.join(fx.workspace, ".vscode", "settings.json"),
    JSON.stringify(
      { "piContext.agentDir": fx.agentDir, "workbench.editor.enablePreview": true, ...fx.settings, ...extra },
      null,
      2,
    ),
  );
  fx.settings = { ...fx.settings, ...extra };
}

/** Show the Pi Context view container (clicking its activity-bar icon again would hide it). */
async function showContainer(page) {
  const item = page.locator('.activitybar .action-item:has([aria-label^="Pi Context"])').first();
  if (!/\bchecked\b/.test((await item.getAttribute("class")) ?? ""))
    await item.locator('[aria-label^="Pi Context"]').first().click();
  await waitUntil(
    async () => /\bchecked\b/.test((await item.getAttribute("class")) ?? ""),
    10_000,
    "the Pi Context container",
  );
}

const gauge = (page) => page.locator('[id^="pi-context.pi-context.piContext.gauge"]');

async function gaugeText(page) {
  return (
    await gauge(page)
      .first()
      .innerText()
      .catch(() => "")
  )
    .replace(/\s+/g, " ")
    .trim();
}

/** Visible axis labels of the first bar in a frame, with their boxes; asserts none overlap. */
async function assertAxisLabelsApart(frame, what) {
  const boxes = await frame.locator(".bar-scale .tick").evaluateAll((els) =>
    els
      .filter((e) => !e.hidden && e.offsetParent !== null)
      .map((e) => {
        const r = e.getBoundingClientRect();
        const bar = e.closest(".bar").getBoundingClientRect();
        return {
          id: e.dataset.tick,
          text: e.textContent,
          left: r.left,
          right: r.right,
          top: r.top,
          barLeft: bar.left,
          barRight: bar.right,
        };
      }),
  );
  assert.ok(
    boxes.some((b) => b.id === "end"),
    `${what}: the window label is shown (${JSON.stringify(boxes)})`,
  );
  for (const b of boxes) {
    assert.ok(
      b.left >= b.barLeft - 0.5 && b.right <= b.barRight + 0.5,
      `${what}: ${b.text} inside the bar (${JSON.stringify(b)})`,
    );
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const c = boxes[j];
      if (Math.abs(a.top - c.top) > 2) continue;
      assert.ok(
        a.right + 4 <= c.left || c.right + 4 <= a.left,
        `${what}: "${a.text}" [${a.left.toFixed(1)}, ${a.right.toFixed(1)}] overlaps "${c.text}" [${c.left.toFixed(1)}, ${c.right.toFixed(1)}]`,
      );
    }
  }
  return boxes;
}

describe("e2e status bar + panel (new-user fixes)", () => {
  let fx;
  let wb;
  let frame;

  before(async () => {
    fx = setup();
    fx.settings = {};
    writeFileSync(fx.sessionFile, sessionText(fx.workspace, "small-16k", 10500, "problems demo", PROBLEM_LINES));
    writeSettings(fx, { "workbench.colorTheme": "Default Dark Modern" });
    wb = await openWorkbench({ folder: fx.workspace, width: 1400, height: 900 });
  });

  after(async () => {
    await wb?.close();
    await closeSharedHost();
    if (fx) rmSync(fx.root, { recursive: true, force: true });
  });

  it("the tooltip lists every problem of the session (torn final line included), precise numbers", async () => {
    const { page } = wb;
    await waitUntil(async () => (await gaugeText(page)).includes("π 65.6% · 10.5k/16k"), 30_000, "the gauge text");
    await gauge(page).first().hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Problems" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const text = await hover.innerText();
    for (const want of [
      "Pi Context — problems demo",
      "Problems (4;",
      "Malformed line",
      "Missing parent",
      "Unknown entry type",
      "Incomplete last line",
      "Window",
      "models.json: providers.scripted, model small-16k",
      "Updated",
      "(last written)",
      "6 entries",
    ]) {
      assert.ok(text.includes(want), `tooltip lacks ${JSON.stringify(want)}:\n${text}`);
    }
    const hb = await boxOf(hover);
    const gb = await boxOf(gauge(page).first());
    await shot(page, "tooltip-problems-dark", around(unionBox(hb, gb), 6, page));
    await page.mouse.move(700, 300);
  });

  it("the panel lists the problems readably; a click opens the session file at the line", async () => {
    const { page } = wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    frame = await webviewFrameByTitle(page, PANEL_TITLE, 30_000);
    const problems = frame.locator('[data-testid="problems"]');
    await problems.waitFor({ state: "visible", timeout: 20_000 });
    const rows = problems.locator("[data-problem]");
    assert.equal(await rows.count(), 4);
    const texts = await rows.allInnerTexts();
    assert.match(texts.join("\n"), /Malformed line\s+line 6/);
    assert.match(texts.join("\n"), /Incomplete last line\s+line 9/);
    // the header: no "·" separators that could start a wrapped line
    const sub = await frame.locator('[data-testid="session-sub"]').innerText();
    assert.ok(!sub.includes("·"), sub);
    assert.match(sub, /6 entries/);
    assert.match(sub, /updated /);
    // the Compact button's icon is not the ✕-like fold
    assert.equal(await frame.locator('vscode-button[data-action="compact"]').getAttribute("icon"), "archive");
    const header = await boxOf(frame.locator("header.header"));
    await shot(page, "panel-problems-dark", around(header, 10, page));

    await frame.locator('[data-code="malformed-line"]').click();
    const tab = page.locator(".tabs-container .tab", { hasText: path.basename(fx.sessionFile) });
    await tab.first().waitFor({ state: "visible", timeout: 15_000 });
    // the cursor is on the malformed line (status bar "Ln 6, Col 1")
    await waitUntil(
      async () => /Ln 6, Col 1/.test(await page.locator("#workbench\\.parts\\.statusbar").innerText()),
      10_000,
      "the cursor on line 6",
    );
    await shot(page, "panel-problem-opened-dark");
    await runCommand(page, "View: Close All Editors");
  });

  it("the gauge moves at once when alignment / priority change (no reload)", async () => {
    const { page } = wb;
    const width = page.viewportSize().width;
    const statusbar = page.locator("#workbench\\.parts\\.statusbar");
    await waitUntil(
      async () => (await gauge(page).first().boundingBox())?.x < width / 2,
      10_000,
      "the gauge on the left",
    );
    const sb = await boxOf(statusbar);
    await shot(page, "statusbar-alignment-left-dark", { x: 0, y: sb.y - 2, width, height: sb.height + 4 });
    writeSettings(fx, { "piContext.statusBar.alignment": "right" });
    const t0 = Date.now();
    await waitUntil(
      async () => {
        const n = await gauge(page).count();
        const box = n === 1 ? await boxOf(gauge(page).first()) : null;
        return box && box.x > width / 2;
      },
      10_000,
      "the gauge on the right",
    );
    console.log(`[status-panel] alignment change → gauge on the right in ${Date.now() - t0} ms`);
    assert.equal(await gauge(page).first().getAttribute("id"), "pi-context.pi-context.piContext.gauge.right.100");
    assert.ok((await gaugeText(page)).includes("10.5k/16k"));
    await shot(page, "statusbar-alignment-right-dark", { x: 0, y: sb.y - 2, width, height: sb.height + 4 });
    // priority: 1000 puts it leftmost among the right-hand items
    writeSettings(fx, { "piContext.statusBar.priority": 100000 });
    await waitUntil(
      async () =>
        (await gauge(page).first().getAttribute("id")) === "pi-context.pi-context.piContext.gauge.right.100000",
      10_000,
      "the new priority",
    );
    // higher priority = further left: the leftmost of the right-hand items
    const right = await page.locator("#workbench\\.parts\\.statusbar .right-items .statusbar-item").evaluateAll((els) =>
      els
        .filter((e) => e.offsetParent !== null)
        .map((e) => ({ id: e.id, x: e.getBoundingClientRect().left }))
        .sort((a, b) => a.x - b.x)
        .map((e) => e.id),
    );
    assert.equal(
      right[0],
      "pi-context.pi-context.piContext.gauge.right.100000",
      `right-hand items, left to right: ${right.join(", ")}`,
    );
    await shot(page, "statusbar-priority-right-dark", { x: 0, y: sb.y - 2, width, height: sb.height + 4 });
    writeSettings(fx, { "piContext.statusBar.alignment": "left", "piContext.statusBar.priority": 100 });
    await waitUntil(
      async () =>
        (await gauge(page).first().getAttribute("id")) === "pi-context.pi-context.piContext.gauge" &&
        (await gauge(page).first().boundingBox())?.x < width / 2,
      10_000,
      "back on the left",
    );
  });

  const windows = [
    { key: "small", model: "small-16k", tokens: 10500, text: "10.5k/16k", labels: ["0", "auto-compact 12k", "16k"] },
    {
      key: "near-window",
      model: "big-200k",
      tokens: 150000,
      text: "150k/200k",
      labels: ["0", "auto-compact 196k", "200k"],
    },
    { key: "1m", model: "huge-1m", tokens: 400000, text: "400k/1M", labels: ["0", "auto-compact 996k", "1M"] },
  ];

  for (const theme of ["dark", "light"]) {
    it(`axis labels never overlap (${theme}): threshold near the window, a 1M window, a small window — panel and sidebar`, async () => {
      const { page } = wb;
      const themeName = theme === "dark" ? "Default Dark Modern" : "Default Light Modern";
      await applyTheme(page, themeName, () => writeSettings(fx, { "workbench.colorTheme": themeName }));
      await runCommand(page, "Pi Context: Open Context Panel");
      frame = await webviewFrameByTitle(page, PANEL_TITLE, 30_000);
      for (const w of windows) {
        writeFileSync(fx.sessionFile, sessionText(fx.workspace, w.model, w.tokens, `axis ${w.key}`));
        await waitUntil(async () => (await gaugeText(page)).includes(w.text), 15_000, `gauge ${w.text}`);
        await waitUntil(
          async () => (await frame.locator(".session-name").innerText()) === `axis ${w.key}`,
          15_000,
          "the panel to follow",
        );
        await page.waitForTimeout(200);
        const boxes = await assertAxisLabelsApart(frame, `panel ${w.key}`);
        assert.deepEqual(boxes.map((b) => b.text).sort(), [...w.labels].sort());
        const bar = await boxOf(frame.locator("section.gauge .bar").first());
        const headline = await boxOf(frame.locator("section.gauge .headline"));
        await shot(
          page,
          `axis-${w.key}-panel-${theme}`,
          around({ x: bar.x, y: headline.y, width: bar.width, height: bar.y + bar.height - headline.y }, 10, page),
        );
      }
      // the narrow sidebar view
      await runCommand(page, "View: Close All Editors");
      await showContainer(page);
      const view = await webviewFrameByTitle(page, "Context", 30_000);
      await view.locator('[data-testid="gauge-used"]').waitFor({ state: "visible", timeout: 20_000 });
      for (const w of windows) {
        writeFileSync(fx.sessionFile, sessionText(fx.workspace, w.model, w.tokens, `axis ${w.key}`));
        await waitUntil(
          async () => (await view.locator(".session-name").innerText()) === `axis ${w.key}`,
          15_000,
          "the view to follow",
        );
        await page.waitForTimeout(200);
        await assertAxisLabelsApart(view, `sidebar ${w.key}`);
        if (w.key !== "small") {
          const bar = await boxOf(view.locator("section.gauge .bar").first());
          const headline = await boxOf(view.locator("section.gauge .headline"));
          await shot(
            page,
            `axis-${w.key}-sidebar-${theme}`,
            around({ x: bar.x, y: headline.y, width: bar.width, height: bar.y + bar.height - headline.y }, 10, page),
          );
        }
      }
      // sidebar actions: labelled (no icon-only buttons), no Refresh (the view's title bar has it)
      const labels = await view.locator("header .actions vscode-button").allInnerTexts();
      assert.deepEqual(
        labels.map((l) => l.trim()),
        ["Compact…", "Up to Here…", "Switch Branch", "Select Session…"],
      );
      assert.equal(
        (await view.locator("vscode-toolbar-button").count()) -
          (await view.locator(".file-actions vscode-toolbar-button").count()),
        0,
        "no icon-only toolbar buttons in the header",
      );
      await shot(page, `sidebar-view-${theme}`);
    });
  }

  it("light theme: the problems in the tooltip and in the panel", async () => {
    const { page } = wb;
    writeFileSync(fx.sessionFile, sessionText(fx.workspace, "small-16k", 10500, "problems demo", PROBLEM_LINES));
    await waitUntil(async () => (await gaugeText(page)).includes("10.5k/16k"), 15_000, "the problems session");
    await runCommand(page, "Pi Context: Open Context Panel");
    const pf = await webviewFrameByTitle(page, PANEL_TITLE, 30_000);
    await waitUntil(
      async () => (await pf.locator('[data-testid="problems"] [data-problem]').count()) === 4,
      15_000,
      "4 problems in the panel",
    );
    await shot(page, "panel-problems-light", around(await boxOf(pf.locator("header.header")), 10, page));
    await gauge(page).first().hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Problems" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const hb = await boxOf(hover);
    const gb = await boxOf(gauge(page).first());
    await shot(page, "tooltip-problems-light", around(unionBox(hb, gb), 6, page));
    await page.mouse.move(700, 300);
    await runCommand(page, "View: Close All Editors");
  });

  it("no folder open: gauge and panel say the same, the tree opens alike and speaks of the tree; Select Session shows each project folder", async () => {
    const host = await sharedHost();
    // a session of some project in the shared agent dir (PI_CODING_AGENT_DIR of the server)
    const project = mkdtempSync(path.join(os.tmpdir(), "pi-context-e2e-elsewhere-"));
    const src = path.join(fx.root, "elsewhere.jsonl");
    writeFileSync(src, sessionText(project, "small-16k", 3000, "a session of another project"));
    installSession(host.agentDir, src, project, { fileName: "2026-11-30T09-10-00-000Z_elsewhere.jsonl" });
    const empty = await openWorkbench({ folder: "", width: 1400, height: 900 });
    try {
      const { page } = empty;
      await waitUntil(async () => (await gaugeText(page)).includes("π no folder"), 30_000, "the no-folder gauge");
      await runCommand(page, "Pi Context: Open Context Panel");
      const pf = await webviewFrameByTitle(page, PANEL_TITLE, 30_000);
      const msg = pf.locator('[data-testid="empty-message"]');
      await waitUntil(
        async () => /^No folder is open\./.test(await msg.innerText()),
        20_000,
        "the panel's no-folder message",
      );
      const buttons = (await pf.locator(".empty vscode-button").allInnerTexts()).map((t) => t.trim());
      assert.deepEqual(buttons, ["Open Folder…", "Select Session…"]);
      const panelMessage = await msg.innerText();
      // the tree opens with the same sentence and goes on about the tree, as its welcome content
      // (package.json viewsWelcome) with command links
      await showContainer(page);
      const welcome = page
        .locator(".pane", { has: page.locator(".pane-header", { hasText: "Pi Session" }) })
        .locator(".welcome-view-content");
      const norm = (t) => t.replace(/\s+/g, " ").trim();
      const opening = norm(panelMessage).split(". ")[0];
      let treeText = "";
      await waitUntil(
        async () => {
          treeText = norm(
            await welcome
              .locator("p")
              .first()
              .innerText()
              .catch(() => ""),
          );
          return treeText.startsWith(`${opening}.`);
        },
        20_000,
        "the tree's welcome text opening like the panel's message",
      );
      assert.match(treeText, /session tree/);
      assert.notEqual(treeText, norm(panelMessage));
      const welcomeButtons = (await welcome.locator(".monaco-button").allInnerTexts()).map((t) => t.trim());
      for (const b of ["Open Folder…", "Select Session…", "Get Started"])
        assert.ok(welcomeButtons.includes(b), `${b} in ${JSON.stringify(welcomeButtons)}`);
      assert.equal(await welcome.locator(".monaco-button").first().innerText(), "Open Folder…");
      // the sidebar view says the same
      const vf = await webviewFrameByTitle(page, "Context", 30_000);
      await waitUntil(
        async () =>
          (await vf
            .locator('[data-testid="empty-message"]')
            .innerText()
            .catch(() => "")) === panelMessage,
        20_000,
        "the view's message = the panel's",
      );
      // no "Open Context Panel" in the Context view's title bar without a session (Refresh stays)
      const contextPane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Context" }) }).first();
      await waitUntil(
        async () => (await contextPane.locator('.pane-header .actions [aria-label^="Refresh"]').count()) > 0,
        10_000,
        "the view's Refresh action",
      );
      assert.equal(await contextPane.locator('.pane-header .actions [aria-label^="Open Context Panel"]').count(), 0);
      await shot(page, "no-folder-views");
      await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
      const widget = page.locator(".quick-input-widget");
      await waitUntil(
        async () => /No folder open: no session to follow/.test(await widget.innerText().catch(() => "")),
        60_000, // every project's sessions are listed: slow after the other e2e files' big sessions, under load
        "the picker's no-folder row",
      );
      await shot(page, "no-folder-select-session");
      // the row among every listed session (the list only draws the rows in view): filtered, as a user would
      await widget.locator("input").fill("a session of another project");
      const row = widget.locator(".monaco-list-row", { hasText: "a session of another project" }).first();
      await row.waitFor({ state: "visible", timeout: 60_000 });
      const rowText = await row.innerText();
      assert.ok(rowText.includes(project.replace(os.homedir(), "~")), `the project folder in the row:\n${rowText}`);
      await page.keyboard.press("Escape");
    } catch (error) {
      await captureEvidence("no-folder window"); // afterEach would see it closed
      throw error;
    } finally {
      await empty.close();
      rmSync(project, { recursive: true, force: true });
    }
  });
});
