// E2E: pi's session commands in the real workbench (issue 42) on pi's tree fixture — "Fork Session
// Here" from a user message row's context menu (the toast with Resume in pi / Copy Message / Show
// Message; the tree on the new session), "Pi Context: Fork Session…"'s message pick, Select Session with the
// fork under its parent and each row's "Resume in pi" button, and the terminal that runs the
// user's pi (a stand-in that prints what it got) on the session. Screenshots: test-results/e2e/fork-*.png.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  boxOf,
  chooseFromContextMenu,
  clipAround,
  notificationInCenter,
  privateProject,
  repoRoot,
  rowTexts,
  runCommand,
  screenshot,
  treeRows,
  unionBox,
  useWorkbench,
  viewPane,
  waitUntil,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");
const SOURCE_NAME = "2026-11-30T06-33-35-854Z_01a22b28-ad6d-744a-899e-6fea6fed06f8.jsonl";

/** A stand-in for the user's pi: prints its folder and arguments, records them in `bin/call`, waits. */
function standInPi(root) {
  const pkg = path.join(root, "pi");
  mkdirSync(path.join(pkg, "bin"), { recursive: true });
  writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "1.6.0", bin: { pi: "bin/pi" } }),
  );
  const exe = path.join(pkg, "bin", "pi");
  writeFileSync(
    exe,
    [
      "#!/bin/sh",
      'dir=$(dirname "$0")',
      `{ printf '%s\\0' "$PWD"; for a in "$@"; do printf '%s\\0' "$a"; done; } > "$dir/call.tmp" && mv "$dir/call.tmp" "$dir/call"`,
      `printf '\\n(stand-in for pi) started in %s with:\\n' "$PWD"`,
      `for a in "$@"; do printf '  %s\\n' "$a"; done`,
      "sleep 600",
      "",
    ].join("\n"),
  );
  chmodSync(exe, 0o755);
  return { exe, calls: path.join(pkg, "bin", "call") };
}

describe("e2e fork, clone and resume in pi", () => {
  let pi;
  const suite = useWorkbench(
    () => {
      const fx = privateProject("fork", { agentFrom: path.join(FIXTURE, "tree.agent") });
      pi = standInPi(fx.root);
      fx.writeSettings({ "piContext.pi.path": pi.exe, "workbench.colorTheme": "Default Dark Modern" });
      fx.sessionFile = fx.addSession(readFileSync(path.join(FIXTURE, "tree.jsonl"), "utf8"), SOURCE_NAME);
      return fx;
    },
    { width: 1400, height: 1000 },
  );

  const sessions = () => readdirSync(suite.fx.sessionDir).filter((f) => f.endsWith(".jsonl"));

  it("Fork Session Here on a user message: a new session before it, shown at once; the toast offers Resume in pi and the message", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    await runCommand(page, "Pi Context: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await viewPane(page, "Pi Session");
    const row = (await treeRows(page, "Pi Session")).filter({ hasText: "[task:t6] do t6 on branch C" }).first();
    await row.waitFor({ state: "visible", timeout: 30_000 });
    await chooseFromContextMenu(page, row, "Fork Session Here", {
      beforeClick: async () => {
        await screenshot(page, "fork-context-menu");
        // the README's image: the Pi Session view and the menu
        const header = await boxOf(page.locator(".pane-header", { hasText: "Pi Session" }).first());
        const box = unionBox(await boxOf(page.locator(".part.sidebar")), await boxOf(page.locator(".context-view")));
        const top = header.y - 4;
        await screenshot(page, "fork-context-menu-clip", {
          clip: clipAround(page, { ...box, y: top, height: box.y + box.height - top }, 0),
        });
      },
    });
    await waitUntil(() => sessions().length === 2, 15_000, "the new session file");
    const file = path.join(
      suite.fx.sessionDir,
      sessions().find((f) => f !== SOURCE_NAME),
    );
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "the source is untouched");
    const header = JSON.parse(readFileSync(file, "utf8").split("\n")[0]);
    assert.equal(header.parentSession, suite.fx.sessionFile);
    // the tree shows the fork: it ends at t2's answer (t6 and its answer are not in it), pinned
    await waitUntil(
      async () => {
        const texts = await rowTexts(page);
        return texts.some((t) => /alpha edited\..*● leaf/.test(t)) && !texts.some((t) => t.includes("[task:t6]"));
      },
      20_000,
      "the tree on the fork",
    );
    const row2 = await notificationInCenter(page, "forked");
    const text = (await row2.innerText()).replace(/\s+/g, " ");
    assert.match(
      text,
      /forked “\[task:t1\] do t1” before “\[task:t6\] do t6 on branch C” into a new session of \d+ entries; it is shown now\./,
    );
    assert.match(text, /The message was not sent: send it again in pi to continue\./);
    const buttons = await row2.locator(".monaco-button").allInnerTexts();
    assert.deepEqual(
      buttons.map((b) => b.trim()),
      ["Resume in pi", "Copy Message", "Show Message"],
    );
    await page.mouse.move(10, 10);
    await screenshot(page, "fork-notification");
    await screenshot(page, "fork-notification-clip", { clip: clipAround(page, await boxOf(row2), 6) });
    // Resume in pi from the toast: a terminal runs the user's pi on the new session
    rmSync(pi.calls, { force: true });
    await row2.locator(".monaco-button", { hasText: "Resume in pi" }).click();
    await waitUntil(() => existsSync(pi.calls), 20_000, "the user's pi to run");
    assert.deepEqual(readFileSync(pi.calls, "utf8").split("\0").slice(0, -1), [suite.fx.workspace, "--session", file]);
    const terminal = page.locator(".part.panel .terminal-wrapper, .part.panel .xterm").first();
    await terminal.waitFor({ state: "visible", timeout: 15_000 });
    await page.waitForTimeout(1000); // the shell prints its prompt and the stand-in's lines
    await screenshot(page, "fork-resume-terminal");
  });

  it("Pi Context: Fork Session… offers the session's user messages, as pi's /fork does", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Fork Session…", { commandId: "piContext.forkSession" });
    const widget = page.locator(".quick-input-widget");
    await waitUntil(
      async () => (await widget.innerText().catch(() => "")).includes("from which message?"),
      15_000,
      "the message pick",
    );
    const texts = await widget.locator(".monaco-list-row").allInnerTexts();
    // the fork's own messages, newest first, the current branch's marked
    assert.match(texts[0], /\[task:t2\] do t2/);
    assert.match(texts[0], /on the current branch/);
    await page.waitForTimeout(300);
    await screenshot(page, "fork-message-pick");
    await page.keyboard.press("Escape");
  });

  it("Select Session: the fork under its parent; a row's Resume in pi button opens the session in pi", async () => {
    const { page } = suite.wb;
    await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
    const widget = page.locator(".quick-input-widget");
    const fork = widget.locator(".monaco-list-row", { hasText: "↳ " }).first();
    await fork.waitFor({ state: "visible", timeout: 20_000 });
    const labels = await widget.locator(".monaco-list-row").allInnerTexts();
    const child = labels.findIndex((l) => l.includes("↳ [task:t1] do t1"));
    assert.ok(child > 0 && labels[child - 1].includes("[task:t1] do t1"), labels.join(" | "));
    // the parent row's button
    const parent = widget.locator(".monaco-list-row").nth(child - 1);
    await parent.hover();
    const button = parent.locator(".codicon-terminal").first();
    await button.waitFor({ state: "visible", timeout: 10_000 });
    await button.hover(); // its tooltip names it
    await page
      .locator(".monaco-hover, .workbench-hover", { hasText: "Resume in pi" })
      .first()
      .waitFor({ state: "visible", timeout: 5_000 })
      .catch(() => undefined);
    await page.waitForTimeout(300);
    await screenshot(page, "fork-select-session");
    await screenshot(page, "fork-select-session-clip", { clip: clipAround(page, await boxOf(widget), 4) });
    rmSync(pi.calls, { force: true });
    await button.click();
    await waitUntil(() => existsSync(pi.calls), 20_000, "the user's pi to run");
    assert.deepEqual(readFileSync(pi.calls, "utf8").split("\0").slice(0, -1), [
      suite.fx.workspace,
      "--session",
      suite.fx.sessionFile,
    ]);
    await page.waitForTimeout(1000);
    await screenshot(page, "fork-resume-from-select-session");
  });
});
