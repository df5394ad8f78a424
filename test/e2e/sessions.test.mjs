// E2E: many sessions in one folder, in the real workbench. Two pi processes writing their sessions at
// the same time (pi-like: pi's process title, folder and header — the access model ties each to its
// session): the gauge stays on one and says "2 live", its tooltip offers the switch; "Pi Context: Select Session…"
// lists pi's labels with a fork under its parent, and every one of 265 sessions (more than its first
// render builds); its rows are in pi's /resume order (the latest message, not the file's time) and say
// which session a pi has open. Screenshots in test-results/e2e/sessions-*.png.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  privateProject,
  runCommand,
  screenshot,
  sharedHost,
  statusBarItem,
  useWorkbench,
  waitUntil,
} from "./harness.mjs";

const line = (o) => `${JSON.stringify(o)}\n`;
let n = 0;
const id = () => `e2e${String(++n).padStart(5, "0")}`;

/** A session with its header and first user message, written by no pi. */
function writeSession(dir, name, cwd, first, extra = {}) {
  writeFileSync(
    path.join(dir, name),
    line({ type: "session", version: 3, id: `${name}-id`, timestamp: new Date().toISOString(), cwd, ...extra }) +
      line({
        type: "message",
        id: id(),
        parentId: null,
        timestamp: new Date().toISOString(),
        message: { role: "user", content: first, timestamp: Date.now() },
      }),
  );
}

const PI_LIKE = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "pi-like", "pi-like.js");

/** A pi-like process writing a new session every 400 ms; resolves once its file exists. */
async function startPiLike(file, cwd, first, startTokens) {
  const child = spawn(process.execPath, [PI_LIKE, file, cwd, "400", first, String(startTokens)], { stdio: "ignore" });
  await waitUntil(async () => existsSync(file), 10_000, `${path.basename(file)} to be written`);
  return child;
}

describe("e2e many sessions", () => {
  const writers = [];
  // registered first: after hooks run in order, and the writers must stop before the folder goes
  after(() => {
    for (const w of writers) w.kill();
  });
  const suite = useWorkbench(async () => {
    const fx = privateProject("sessions");
    const dir = fx.sessionDir;
    mkdirSync(dir, { recursive: true });
    // far apart in tokens (1.6 % vs 39 % of gpt-4o-mini's 128k): a flap would show in the gauge
    const aFile = path.join(dir, "2026-12-01T09-00-00-000Z_aaaa.jsonl");
    writers.push(await startPiLike(aFile, fx.workspace, "Refactor the parser\nand its tests", 2000));
    await new Promise((r) => setTimeout(r, 1500)); // the second pi starts later: each owns the session it started
    writers.push(
      await startPiLike(
        path.join(dir, "2026-12-01T09-05-00-000Z_bbbb.jsonl"),
        fx.workspace,
        "Write the release notes",
        50_000,
      ),
    );
    writeSession(dir, "2026-12-01T09-06-00-000Z_fork.jsonl", fx.workspace, "Refactor the parser (forked)", {
      parentSession: aFile,
    });
    // session text that VS Code would draw as codicons in a quick pick (written an hour ago: not live)
    // every timestamp an hour old: not live by any rule
    const hourAgo = new Date(Date.now() - 3600_000);
    const hostileFile = path.join(dir, "2026-12-01T08-00-00-000Z_icon.jsonl");
    writeFileSync(
      hostileFile,
      line({ type: "session", version: 3, id: "icon-id", timestamp: hourAgo.toISOString(), cwd: fx.workspace }) +
        line({
          type: "message",
          id: id(),
          parentId: null,
          timestamp: hourAgo.toISOString(),
          message: { role: "user", content: "Hostile $(bug) name $(sync~spin) here", timestamp: hourAgo.getTime() },
        }),
    );
    utimesSync(hostileFile, hourAgo, hourAgo);
    // copied (or synced) two minutes ago, its last message a day and a half old: pi's /resume lists
    // it by that message, below the hostile one an hour old and above the old ones (two days and more)
    const dayAndHalf = new Date(Date.now() - 36 * 3600_000);
    const copy = path.join(dir, "2026-11-30T08-00-00-000Z_copy.jsonl");
    writeFileSync(
      copy,
      line({ type: "session", version: 3, id: "copy-id", timestamp: dayAndHalf.toISOString(), cwd: fx.workspace }) +
        line({
          type: "message",
          id: id(),
          parentId: null,
          timestamp: dayAndHalf.toISOString(),
          message: { role: "user", content: "Copied task from the laptop", timestamp: dayAndHalf.getTime() },
        }),
    );
    const copied = new Date(Date.now() - 120_000);
    utimesSync(copy, copied, copied);
    // more sessions than the picker's first render builds (PICKER_FIRST_ROWS = 50), days old:
    // the oldest is found by the filter once every row followed
    for (let i = 0; i < 260; i++) {
      const when = new Date(Date.now() - (2 + i) * 86_400_000);
      const old = path.join(dir, `2026-10-01T00-00-00-000Z_old${String(i).padStart(3, "0")}.jsonl`);
      writeFileSync(
        old,
        line({ type: "session", version: 3, id: `old-${i}`, timestamp: when.toISOString(), cwd: fx.workspace }) +
          line({
            type: "message",
            id: id(),
            parentId: null,
            timestamp: when.toISOString(),
            message: { role: "user", content: `Old task number ${i}`, timestamp: when.getTime() },
          }),
      );
      utimesSync(old, when, when);
    }
    return fx;
  });

  it("two sessions written at the same time: the gauge says 2 live and stays; the tooltip offers the switch", async () => {
    const { page } = suite.wb;
    const item = statusBarItem(page, "piContext.gauge");
    await waitUntil(async () => (await item.innerText()).includes("live"), 30_000, "the gauge to say live");
    // both files are written every 400 ms: sample the gauge's percentage for 3 s; it stays on one
    const percents = [];
    for (let i = 0; i < 10; i++) {
      const aria = (await item.getAttribute("aria-label")) ?? "";
      const m = /([\d.]+) percent/.exec(aria);
      assert.ok(m, aria);
      percents.push(Number(m[1]));
      await page.waitForTimeout(300);
    }
    assert.ok(percents.every((p) => p < 10) || percents.every((p) => p > 30), `flapped: ${percents.join(", ")}`);
    // the fork was written just now too, by no pi: not live
    assert.match(await item.innerText(), /2 live/);
    await item.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "live sessions" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const text = await hover.innerText();
    assert.match(text, /Switch to /, text);
    await screenshot(page, "sessions-gauge-live-tooltip");
    await page.mouse.move(700, 300);
  });

  it("Select Session: pi's labels, the fork under its parent", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
    const widget = page.locator(".quick-input-widget");
    const fork = widget.locator(".monaco-list-row", { hasText: "↳ Refactor the parser (forked)" }).first();
    await fork.waitFor({ state: "visible", timeout: 20_000 });
    const labels = await widget.locator(".monaco-list-row").allInnerTexts();
    const parent = labels.findIndex((l) => l.includes("Refactor the parser and its tests"));
    const child = labels.findIndex((l) => l.includes("↳ Refactor the parser (forked)"));
    assert.ok(parent >= 0 && child === parent + 1, labels.join(" | "));
    await screenshot(page, "sessions-select-session");
    await page.keyboard.type("release");
    await waitUntil(
      async () => (await widget.locator(".monaco-list-row").allInnerTexts()).length === 1,
      10_000,
      "the filter to leave one row",
    );
    assert.match((await widget.locator(".monaco-list-row").allInnerTexts())[0], /Write the release notes/);
    await screenshot(page, "sessions-select-session-filtered");
    // session text is text: `$(bug)` in a first message shows as written, not as a codicon
    await page.keyboard.press("Control+A");
    await page.keyboard.type("Hostile");
    const row = widget.locator(".monaco-list-row", { hasText: "Hostile" }).first();
    await row.waitFor({ state: "visible", timeout: 10_000 });
    assert.match(await row.innerText(), /Hostile \$\(bug\) name \$\(sync~spin\) here/);
    assert.equal(await row.locator(".codicon-bug, .codicon-sync").count(), 0, "no codicon drawn from session text");
    await screenshot(page, "sessions-select-session-icon-text");
    // the oldest of 265 sessions is past the first render's 50 rows: listed once all rows followed
    await page.keyboard.press("Control+A");
    await page.keyboard.type("Old task number 259");
    const oldest = widget.locator(".monaco-list-row", { hasText: "Old task number 259" }).first();
    await oldest.waitFor({ state: "visible", timeout: 10_000 });
    await screenshot(page, "sessions-select-session-oldest");
    await page.keyboard.press("Escape");
  });
  it("Select Session: pi's /resume order (the last message, not the file's time) and which pi has a session open", async () => {
    const { page } = suite.wb;
    const { guardProcesses } = await sharedHost();
    // a pi started with the release-notes session, without the live bridge (the process table)
    const pi = {
      pid: 424243,
      ppid: 1,
      argv: ["pi"],
      command: "pi",
      cwd: suite.fx.workspace,
      sessionArg: path.join(suite.fx.sessionDir, "2026-12-01T09-05-00-000Z_bbbb.jsonl"),
    };
    writeFileSync(guardProcesses, JSON.stringify([pi]));
    try {
      await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
      const widget = page.locator(".quick-input-widget");
      const rows = widget.locator(".monaco-list-row");
      const live = rows.filter({ hasText: "Write the release notes" }).first();
      await waitUntil(
        async () => /live in pi \(pid 424243, no live bridge\)/.test(await live.innerText().catch(() => "")),
        20_000,
        "the release notes row to say which pi has it open",
      );
      assert.equal(await live.locator(".codicon-pulse").count(), 1, "the live row's icon");
      const texts = await rows.allInnerTexts();
      const at = (text) => texts.findIndex((t) => t.includes(text));
      assert.ok(at("Hostile") >= 0 && at("Copied task from the laptop") > at("Hostile"), texts.join(" | "));
      assert.ok(at("Old task number 0") > at("Copied task from the laptop"), texts.join(" | "));
      // only the pi's session is marked: the other rows say nothing of a pi
      assert.equal(texts.filter((t) => t.includes("live in pi")).length, 1, texts.join(" | "));
      await page.mouse.move(10, 10);
      await screenshot(page, "sessions-select-session-live-order");
      await page.keyboard.press("Escape");
    } finally {
      writeFileSync(guardProcesses, "[]\n");
    }
  });
});
