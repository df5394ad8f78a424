// E2E: a compaction that cannot go ahead says why and leads somewhere (issue 18, items 2 and 5), in
// the real workbench (code-server + Chromium):
// - the refusal because pi may have the session open (the access model, core/access/): a session
//   written seconds ago by another program → the warning with "Compact Anyway", "Install Live
//   Bridge" and "Show Details", the whole text in the notification center and in the details
//   document; a pi the process table ties to the session: named, with the same ways out;
// - a summary request that does not fit the summarizer's window: the preview still shows what
//   would be summarized, the numbers and what to change (raise keepRecentTokens / reserveTokens),
//   and nothing is sent or written.
// Screenshots: test-results/e2e/refusal-*.png, fit-problem-*.png.
//
// Isolation: its own workspace and agent dir (long.agent's settings/models + long.jsonl up to
// pi's second compaction: compactable); the shared guard file is set back to `[]` after the suite.
import assert from "node:assert/strict";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, beforeEach, describe, it } from "node:test";
import {
  notificationInCenter,
  privateProject,
  quickInput,
  repoRoot,
  runCommand,
  screenshot,
  sharedHost,
  useWorkbench,
  waitUntil,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

/** long.jsonl up to the line before pi's second compaction (our compaction updates summary #1). */
function longPrefix() {
  const lines = readFileSync(path.join(FIXTURE, "long.jsonl"), "utf8").split("\n");
  const second = lines.map((l, i) => (l.includes('"type":"compaction"') ? i : -1)).filter((i) => i >= 0)[1];
  return lines.slice(0, second).join("\n") + "\n";
}

function setup(settings) {
  const fx = privateProject("refusals", { agentFrom: path.join(FIXTURE, "long.agent"), settings });
  fx.sessionFile = fx.addSession(longPrefix(), "2026-11-30T07-00-00-000Z_e2e-refusals.jsonl");
  return fx;
}

/** The text of the first frame (a webview document, e.g. a markdown preview) that contains `text`. */
async function documentWith(page, text, timeoutMs = 20_000) {
  return waitUntil(
    async () => {
      for (const frame of page.frames()) {
        const body = await frame
          .locator("body")
          .innerText({ timeout: 1_000 })
          .catch(() => "");
        if (body.includes(text)) return body;
      }
      return undefined;
    },
    timeoutMs,
    `a document showing ${JSON.stringify(text)}`,
  );
}

/** The buttons of a notification-center row, by their text. */
async function buttonsOf(row) {
  return (await row.locator(".monaco-button").allInnerTexts()).map((t) => t.trim()).filter(Boolean);
}

describe("e2e live-session refusal", () => {
  // the default guard (30 s): a session written just now is refused
  const suite = useWorkbench(() => setup({ "workbench.colorTheme": "Default Dark Modern" }), {
    width: 1400,
    height: 950,
  });

  // cleared before each test, not after: a failed test's evidence shows what it left on screen
  beforeEach(async () => {
    await runCommand(suite.wb.page, "Notifications: Clear All Notifications", {
      commandId: "notifications.clearAll",
    }).catch(() => {});
    await runCommand(suite.wb.page, "View: Close All Editors").catch(() => {});
  });
  after(async () => writeFileSync((await sharedHost()).guardProcesses, "[]\n"));

  it("a session written seconds ago: the warning offers Compact Anyway, Install Live Bridge and Show Details, and keeps its whole text", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    const now = new Date();
    utimesSync(suite.fx.sessionFile, now, now); // "written 0 s ago", inside the 30 s guard
    await runCommand(page, "Pi Context: Compact Session…");
    const row = await notificationInCenter(page, "Refusing to compact");
    const text = (await row.innerText()).replace(/\s+/g, " ");
    assert.match(
      text,
      /Refusing to compact this session while pi may have it open: the session file was written \d+ s ago by another program \(less than the 30 s guard; setting piContext\.liveSession\.guardSeconds\)/,
    );
    assert.match(text, /Quit pi \(or run \/compact inside pi\)/);
    assert.match(text, /"Compact Anyway" goes ahead\. Nothing was written\./, "the whole message, not cut off");
    assert.deepEqual(await buttonsOf(row), ["Compact Anyway", "Install Live Bridge", "Show Details"]);
    await page.mouse.move(10, 10);
    await screenshot(page, "refusal-live-notification");

    await row.locator(".monaco-button", { hasText: "Show Details" }).click();
    const doc = await documentWith(page, "Refused: pi may have this session open");
    assert.match(doc, /The session file was written \d+ s ago by another program — less than the 30 s guard/);
    assert.match(doc, /Install the live bridge \("Pi Context: Install Live Bridge"\)/);
    assert.match(doc, /"Compact Anyway" goes ahead/);
    assert.ok(doc.includes(suite.fx.sessionFile), "the details name the session file");
    await page.waitForTimeout(500); // the preview's fonts
    await screenshot(page, "refusal-live-details");
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "nothing written");
  });

  it("a pi started with this session (the process table): named, with Compact Anyway, Install Live Bridge and Show Details", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    const old = new Date(Date.now() - 3600_000); // no recent write: only the process refuses
    utimesSync(suite.fx.sessionFile, old, old);
    const pi = {
      pid: 424242,
      ppid: 1,
      argv: ["pi"],
      command: "pi",
      cwd: suite.fx.workspace,
      sessionArg: suite.fx.sessionFile,
    };
    writeFileSync((await sharedHost()).guardProcesses, JSON.stringify([pi])); // set back in after()
    await runCommand(page, "Pi Context: Compact Session…");
    const row = await notificationInCenter(page, "Refusing to compact");
    const text = (await row.innerText()).replace(/\s+/g, " ");
    assert.match(text, /pi is running on it \(process 424242 “pi”, started with this session\)/);
    // the process table is not proof (a pi that resumed another session looks the same): Anyway is
    // offered; it never is against a pi whose live bridge says it has the session
    assert.deepEqual(await buttonsOf(row), ["Compact Anyway", "Install Live Bridge", "Show Details"]);
    await page.mouse.move(10, 10);
    await screenshot(page, "refusal-live-pi-running");
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "nothing written");
  });
});

describe("e2e summary request that does not fit the summarizer", () => {
  // a summarizer whose window (4,000 tokens) cannot hold what this compaction summarizes; nothing
  // listens on its port: a request would fail loudly, and none must be sent
  const suite = useWorkbench(
    () =>
      setup({
        "workbench.colorTheme": "Default Dark Modern",
        "piContext.summarizer.provider": "openai",
        "piContext.summarizer.openai.baseURL": "http://127.0.0.1:9/v1",
        "piContext.summarizer.openai.model": "tiny-summarizer",
        "piContext.summarizer.openai.contextWindow": 4000,
      }),
    { width: 1400, height: 950 },
  );

  it("the preview shows what would be summarized, the numbers and what to change; Close sends and writes nothing", async () => {
    const { page } = suite.wb;
    const before = readFileSync(suite.fx.sessionFile);
    await runCommand(page, "Pi Context: Compact Session…");
    const { widget, input } = await quickInput(page, "Custom Instructions");
    await input.fill("keep the parser notes");
    await input.press("Enter");
    const problem = widget.locator(".monaco-list-row", { hasText: "Does not fit" });
    await problem.waitFor({ state: "visible", timeout: 30_000 });
    const pick = (await widget.innerText()).replace(/\s+/g, " ");
    assert.match(pick, /Compact "long scripted session"\? The request does not fit the summarizer/);
    assert.match(pick, /Does not fit tiny-summarizer's window/);
    assert.match(pick, /request ≈[\d,]+ tokens, window 4,000/);
    assert.match(pick, /Would summarize \d+ entries \(≈[\d,]+ tokens\); focus: keep the parser notes\./);
    assert.match(pick, /Show details/);
    assert.match(pick, /Open Summarizer Settings/);
    assert.doesNotMatch(pick, /Compact now/, "no way to send a request that cannot fit");
    await page.mouse.move(10, 900);
    await screenshot(page, "fit-problem-preview");

    // the row that starts with it (the problem row's detail also says "Show details")
    await widget.locator(".monaco-list-row", { hasText: /^\s*Show details/ }).click();
    const doc = await documentWith(page, "The summary request does not fit the summarizer");
    assert.match(doc, /Compaction preview — "long scripted session"/);
    assert.match(doc, /raise keepRecentTokens in pi's settings from [\d,]+ to about [\d,]+/);
    assert.doesNotMatch(doc, /lower keepRecentTokens|lower reserveTokens/i, "no backwards advice");
    assert.match(doc, /Summarized: \d+ entries/, "what would be summarized, even though it does not fit");
    assert.match(doc, /Custom instructions: keep the parser notes/);
    // the pick comes back over the document: close it (nothing is sent)
    await widget.locator(".monaco-list-row", { hasText: "Does not fit" }).waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    await widget.waitFor({ state: "hidden", timeout: 10_000 });
    await page.waitForTimeout(500);
    await screenshot(page, "fit-problem-details");
    assert.ok(readFileSync(suite.fx.sessionFile).equals(before), "nothing written");
  });
});
