// E2E: session health in a real VS Code workbench (code-server + Chromium) on a session with an
// orphaned tool result and a tool result separated from its call by an extension's message: the
// gauge's error mark and the tooltip's health badge, the panel's Session health section, the
// Pi Session tree's decorated rows, then "Pi Context: Check Session Health" → Repair → the preview of every
// appended line → Append: two context edits after the old bytes, and every surface without errors.
// Screenshots: test-results/e2e/health-*.png.
//
// Isolation: its own workspace folder whose .vscode/settings.json points `piContext.agentDir` at a
// private agent dir (a models.json with the session's model, so "unknown window" is no finding).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  clipAround,
  privateProject,
  rowTexts,
  runCommand,
  screenshot,
  statusBarItem,
  treeRows,
  unionBox,
  usageOf,
  useWorkbench,
  viewPane,
  waitUntil,
  webviewFrameByTitle,
  boxOf,
} from "./harness.mjs";

const PANEL_TITLE = "Pi Context";
const ts = (s) => new Date(Date.UTC(2026, 11, 1, 9, 0, s)).toISOString();

/** user → assistant with call c1 → custom message → result of c1 → answer → result of a lost call → answer. */
function brokenSession(cwd) {
  const assistant = (content, total, stopReason = "stop") => ({
    role: "assistant",
    content,
    api: "openai-completions",
    provider: "scripted",
    model: "health-100k",
    usage: usageOf(total),
    stopReason,
    timestamp: 1,
  });
  const result = (toolCallId, text) => ({
    role: "toolResult",
    toolCallId,
    toolName: "read",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 1,
  });
  const entries = [
    [
      "u1",
      {
        type: "message",
        message: { role: "user", content: [{ type: "text", text: "Please read src/a.ts." }], timestamp: 1 },
      },
    ],
    [
      "a1",
      {
        type: "message",
        message: assistant(
          [
            { type: "text", text: "Reading it." },
            { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts" } },
          ],
          1200,
          "toolUse",
        ),
      },
    ],
    ["cm", { type: "custom_message", customType: "note", content: "an extension's note", display: true }],
    ["t1", { type: "message", message: result("c1", "export const a = 1;") }],
    ["a2", { type: "message", message: assistant([{ type: "text", text: "src/a.ts exports a." }], 1400) }],
    ["t9", { type: "message", message: result("zz", "a result whose call was lost") }],
    ["a3", { type: "message", message: assistant([{ type: "text", text: "All done." }], 1600) }],
  ];
  const lines = [
    { type: "session", version: 3, id: "e2e-health", timestamp: ts(0), cwd },
    { type: "model_change", id: "m1", parentId: null, timestamp: ts(1), provider: "scripted", modelId: "health-100k" },
  ];
  let parent = "m1";
  entries.forEach(([id, e], i) => {
    lines.push({ ...e, id, parentId: parent, timestamp: ts(2 + i) });
    parent = id;
  });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

const MODELS = {
  providers: {
    scripted: {
      baseUrl: "http://127.0.0.1:1/v1",
      api: "openai-completions",
      apiKey: "none",
      models: [{ id: "health-100k", contextWindow: 100000 }],
    },
  },
};

function setup() {
  const fx = privateProject("health", {
    settings: { "piContext.liveSession.guardSeconds": 0, "workbench.colorTheme": "Default Dark Modern" },
  });
  writeFileSync(path.join(fx.agentDir, "models.json"), JSON.stringify(MODELS));
  fx.sessionFile = fx.addSession(brokenSession(fx.workspace), "2026-12-01T09-00-00-000Z_e2e-health.jsonl");
  return fx;
}

const clipShot = (page, name, clip) => screenshot(page, name, { clip });
const around = clipAround;

const gauge = (page) => statusBarItem(page, "piContext.gauge").first();

describe("e2e session health", () => {
  const suite = useWorkbench(setup, { width: 1400, height: 950 });

  it("the gauge shows the error mark; its tooltip the health badge with the findings", async () => {
    const { page } = suite.wb;
    const item = gauge(page);
    await waitUntil(
      async () => (await item.locator(".codicon-error").count()) > 0 && /1\.6k\/100k/.test(await item.innerText()),
      30_000,
      "the gauge with its error mark",
    ).catch(async (e) => {
      await screenshot(page, "health-failure-gauge");
      throw e;
    });
    await item.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Session health" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const text = await hover.innerText();
    for (const want of ["Session health:", "2 errors", "2 repairable", "Check Session Health…"])
      assert.ok(text.includes(want), `tooltip lacks ${JSON.stringify(want)}:\n${text}`);
    const hb = await boxOf(hover);
    const gb = await boxOf(item);
    await clipShot(page, "health-tooltip", around(page, unionBox(hb, gb)));
    await page.mouse.move(700, 300);
  });

  it("the panel's Session health section counts the findings and marks the repairable ones", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    const frame = await webviewFrameByTitle(page, PANEL_TITLE, 30_000);
    const problems = frame.locator('[data-testid="problems"]');
    await problems.waitFor({ state: "visible", timeout: 20_000 });
    const head = await problems.locator(".problems-head").innerText();
    assert.match(head, /Session health: \d+ problems?/);
    assert.match(await frame.locator('[data-testid="problem-counts"]').innerText(), /2 errors.*2 repairable/);
    const rows = await problems.locator("[data-problem]").allInnerTexts();
    const all = rows.join("\n");
    assert.match(all, /Orphaned tool result/);
    assert.match(all, /separated from its call/i);
    assert.match(all, /entry t9/);
    await clipShot(page, "health-panel", around(page, await boxOf(problems), 10));
    // a click on the orphaned result reveals it in the Pi Session tree
    await frame.locator('[data-code="orphan-result"]').first().click();
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("a result whose call was lost")),
      20_000,
      "the orphaned result revealed in the tree",
    );
  });

  it("tree rows of the affected entries carry the findings", async () => {
    const { page } = suite.wb;
    await runCommand(page, "View: Close All Editors");
    await runCommand(page, "Pi Context: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await viewPane(page, "Pi Session");
    await waitUntil(
      async () => (await rowTexts(page)).some((t) => t.includes("✖ Orphaned tool result")),
      20_000,
      "the decorated row",
    ).catch(async (e) => {
      await screenshot(page, "health-failure-tree");
      throw e;
    });
    const texts = await rowTexts(page);
    assert.ok(
      texts.some((t) => t.includes("✖ Orphaned tool result · a result whose call was lost")),
      texts.join("\n"),
    );
    assert.ok(
      texts.some((t) => t.includes("✖ Tool result separated from its call · export const a = 1;")),
      texts.join("\n"),
    );
    const bar = await boxOf(page.locator(".part.sidebar"));
    const last = await boxOf((await treeRows(page, "Pi Session")).last());
    await clipShot(page, "health-tree", {
      x: bar.x,
      y: bar.y,
      width: bar.width,
      height: Math.min(bar.height, last.y + last.height + 16 - bar.y),
    });
  });

  it("Pi Context: Check Session Health → Repair → preview → Append: two context edits appended, no error left", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    await runCommand(page, "Pi Context: Check Session Health", { commandId: "piContext.checkHealth" });
    const pick = page.locator(".quick-input-widget");
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("Repair: append 2 entries"),
      20_000,
      "the findings quick pick",
    );
    const findings = await pick.innerText();
    assert.match(findings, /Session health of .*2 errors/);
    assert.match(findings, /Orphaned tool result/);
    await page.waitForTimeout(300); // the quick pick fades in
    await screenshot(page, "health-check");
    await pick.locator(".monaco-list-row", { hasText: "Repair: append 2 entries" }).first().click();
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("What is appended"),
      20_000,
      "the repair preview",
    );
    const preview = await pick.innerText();
    // the targets by their text as the tree shows them, the ids after
    assert.match(preview, /context_edit: omit “[^”]+” \(t1\)/);
    assert.match(preview, /context_edit: omit “[^”]+” \(t9\)/);
    assert.match(preview, /no error remains/);
    await page.waitForTimeout(300);
    await screenshot(page, "health-preview");
    await pick.locator(".monaco-list-row", { hasText: "Append 2 entries" }).first().click();
    await waitUntil(() => readFileSync(suite.fx.sessionFile).length > before.length, 20_000, "the append");
    const bytes = readFileSync(suite.fx.sessionFile);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    const added = bytes
      .subarray(before.length)
      .toString()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      added.map((e) => [e.type, e.targetId, e.replacement]),
      [
        ["context_edit", "t1", null],
        ["context_edit", "t9", null],
      ],
    );
    await waitUntil(
      async () => (await gauge(page).locator(".codicon-error").count()) === 0,
      20_000,
      "the gauge without errors",
    );
    await waitUntil(
      async () => !(await rowTexts(page)).some((t) => t.includes("✖")),
      20_000,
      "tree rows without errors",
    );
    await page.waitForTimeout(300);
    await screenshot(page, "health-repaired");
  });
});

describe("e2e session health: a last line without its newline", () => {
  const FRAGMENT = '{"type":"message","id":"x1","parentId":"a3","timestamp":"2026';
  const suite = useWorkbench(
    () => {
      const fx = privateProject("health-torn", {
        settings: { "piContext.liveSession.guardSeconds": 0, "workbench.colorTheme": "Default Dark Modern" },
      });
      writeFileSync(path.join(fx.agentDir, "models.json"), JSON.stringify(MODELS));
      fx.sessionFile = fx.addSession(brokenSession(fx.workspace) + FRAGMENT, "2026-12-01T09-00-00-000Z_e2e-torn.jsonl");
      return fx;
    },
    { width: 1400, height: 950 },
  );

  it("Check Session Health offers pi's own fix (asked first), then the repair; the skipped fragment can be acknowledged and is a note", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    await runCommand(page, "Pi Context: Check Session Health", { commandId: "piContext.checkHealth" });
    const pick = page.locator(".quick-input-widget");
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("End the last line as pi does"),
      20_000,
      "the end-the-line row",
    );
    const rows = await pick.innerText();
    assert.match(rows, new RegExp(`The last line \\(${FRAGMENT.length} bytes\\) has no newline`));
    assert.match(rows, /After the last line is ended \(above\)/, "the repair says what it waits for");
    assert.doesNotMatch(rows, /Not possible now/);
    await page.waitForTimeout(300);
    await screenshot(page, "health-torn-check");
    await pick.locator(".monaco-list-row", { hasText: "End the last line as pi does" }).first().click();
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("Append a newline"),
      20_000,
      "the question",
    );
    await page.waitForTimeout(300);
    await screenshot(page, "health-torn-confirm");
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "nothing written before the answer");
    await pick.locator(".monaco-list-row", { hasText: "Append a newline" }).first().click();
    // then the repair's preview, as always
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("What is appended"),
      20_000,
      "the repair preview",
    );
    assert.equal(readFileSync(suite.fx.sessionFile).length, before.length + 1, "the newline, before the repair");
    await pick.locator(".monaco-list-row", { hasText: "Append 2 entries" }).first().click();
    await waitUntil(() => readFileSync(suite.fx.sessionFile).length > before.length + 1, 20_000, "the repair");
    const bytes = readFileSync(suite.fx.sessionFile);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    assert.equal(bytes[before.length], 0x0a);
    // the fragment is now a line pi skips: a warning, until acknowledged
    await waitUntil(
      async () => (await gauge(page).locator(".codicon-error").count()) === 0,
      20_000,
      "the gauge without errors",
    );
    await runCommand(page, "Pi Context: Check Session Health", { commandId: "piContext.checkHealth" });
    await waitUntil(
      async () => /Acknowledge line \d+ as harmless/.test(await pick.innerText().catch(() => "")),
      20_000,
      "the acknowledge row",
    );
    await page.waitForTimeout(300);
    await screenshot(page, "health-torn-acknowledge");
    await pick.locator(".monaco-list-row", { hasText: "as harmless" }).first().click();
    await waitUntil(
      async () => (await gauge(page).locator(".codicon-warning").count()) === 0,
      20_000,
      "the gauge without a warning",
    );
    assert.ok(readFileSync(suite.fx.sessionFile).equals(bytes), "the acknowledgement is not in the session");
    await gauge(page).hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Session health" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const tooltip = await hover.innerText();
    assert.match(tooltip, /Malformed line — Acknowledged as harmless/);
    assert.doesNotMatch(tooltip, /\d+ warnings?/);
    await page.waitForTimeout(300);
    await screenshot(page, "health-torn-note");
  });
});
