// E2E: "Pi Context: Compact Session…" driven through the real workbench UI (Chromium + code-server):
// the instructions box, the preview quick pick, the streaming progress
// notification, the summary diff editor, "Pi Context: Cancel Compaction", and the API key typed into the
// password box when the server answers 401 (the compaction continues). Screenshots in
// test-results/e2e/compact-*.png.
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  privateProject,
  quickInput,
  repoRoot,
  runCommand,
  screenshot,
  showView,
  useWorkbench,
  waitUntil,
  webviewFrameByTitle,
} from "./harness.mjs";

const require = createRequire(import.meta.url);
const { startScriptedServer } = require(path.join(repoRoot, "out", "test", "support", "scripted-openai.js"));
const fixtureDir = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");

/** The long fixture up to the leaf where pi compacted the 2nd time (our compaction updates summary #1). */
function longPrefix() {
  const lines = readFileSync(path.join(fixtureDir, "long.jsonl"), "utf8").split("\n");
  const second = lines.map((l, i) => (l.includes('"type":"compaction"') ? i : -1)).filter((i) => i >= 0)[1];
  return lines.slice(0, second).join("\n") + "\n";
}

describe("e2e compaction", () => {
  let server;
  let sessionFile;
  let initial;
  const suite = useWorkbench(async () => {
    server = await startScriptedServer();
    const fx = privateProject("compact", {
      agentFrom: path.join(fixtureDir, "long.agent"),
      settings: {
        "piContext.summarizer.provider": "openai",
        "piContext.summarizer.openai.baseURL": server.baseURL,
        "piContext.summarizer.openai.model": "scripted-summarizer",
        "piContext.summarizer.openai.contextWindow": 128000,
        "piContext.liveSession.guardSeconds": 0,
      },
    });
    sessionFile = fx.addSession(longPrefix(), "2026-11-30T07-00-00-000Z_e2e-compact.jsonl");
    initial = readFileSync(sessionFile);
    return fx;
  });

  after(async () => {
    await server?.close();
  });

  it("instructions, preview, streaming progress, append, summary diff", async () => {
    const { page } = suite.wb;
    const widget = page.locator(".quick-input-widget");
    // keyless local server (the key path through SecretStorage is covered by the integration suite)
    const before = readFileSync(sessionFile);
    server.script({
      chunks: [
        "## Goal\n",
        "Refactor the ",
        "scripted modules.\n\n",
        "## Constraints & Preferences\n- (none)\n\n",
        "## Progress\n### Done\n- [x] t1–t17\n",
      ],
      chunkDelayMs: 700,
    });
    await runCommand(page, "Pi Context: Compact Session…");
    const { input } = await quickInput(page, "Custom Instructions");
    await input.fill("focus on the parser");
    await screenshot(page, "compact-instructions");
    await input.press("Enter");
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).waitFor({ state: "visible", timeout: 20_000 });
    const pickText = await widget.innerText();
    assert.match(pickText, /Compact now/);
    assert.match(pickText, /→ ≈[\d,]+–[\d,]+ tokens/, "the after-estimate as a range");
    assert.match(
      pickText,
      /keeps \d+ entries from (your message|the answer) "/,
      "the first kept entry in words, not an id",
    );
    assert.match(pickText, /Compact "long scripted session"\?/);
    // the price: the summary request, the tokens saved on every later request, the break-even
    assert.match(pickText, /(now|request price unknown) · break-even /);
    assert.match(pickText, /saves ≈[\d,]+ tokens .*on every later request/);
    await screenshot(page, "compact-preview");
    // details document, then back to the pick
    await widget.locator(".monaco-list-row", { hasText: "Show details" }).click();
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).waitFor({ state: "visible", timeout: 20_000 });
    await page.waitForTimeout(1500);
    await screenshot(page, "compact-preview-details");
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).click();

    await page.waitForTimeout(1500);
    await screenshot(page, "compact-progress");
    // the new summary lost commands of what it summarized: the review before anything is written
    const write = widget.locator(".monaco-list-row", { hasText: "Write this summary" });
    await write.waitFor({ state: "visible", timeout: 30_000 });
    const reviewText = await widget.innerText();
    assert.match(reviewText, /The new summary lost \d+ items? of what it summarized/);
    assert.match(reviewText, /Summarize again, asking to keep them/);
    await page.waitForTimeout(500);
    await screenshot(page, "compact-review");
    await write.click();
    // (notification toasts are not rendered in this headless code-server, so progress and result
    // messages are checked through the log and the integration suite's command outcomes)

    const diff = page.locator(".monaco-diff-editor");
    await diff.first().waitFor({ state: "visible", timeout: 30_000 });
    await page.waitForTimeout(1500);
    await screenshot(page, "compact-diff");
    await runCommand(page, "Pi Context: Show Log");
    await page.waitForTimeout(1500);
    await screenshot(page, "compact-result-log");

    const after = readFileSync(sessionFile);
    assert.ok(after.subarray(0, before.length).equals(before));
    const entry = JSON.parse(after.subarray(before.length).toString("utf8"));
    assert.equal(entry.type, "compaction");
    assert.ok(entry.summary.startsWith("## Goal\nRefactor the scripted modules."));
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0].authorization, undefined, "no key configured for this server");
    assert.ok(server.requests[0].body.messages[1].content.endsWith("Additional focus: focus on the parser"));
  });

  it("Compact… from the sidebar view: the instructions box and the preview take the keyboard (type, Enter, Escape)", async () => {
    const { page } = suite.wb;
    const widget = page.locator(".quick-input-widget");
    // the session as installed (the tests before compacted it: "Already compacted" asks nothing)
    writeFileSync(sessionFile, initial);
    await showView(page, "Context");
    const view = await webviewFrameByTitle(page, "Context", 30_000);
    const button = view.locator('[data-action="compact"]');
    await button.waitFor({ state: "visible", timeout: 30_000 });
    await button.click();
    const input = widget.locator("input");
    await input.waitFor({ state: "visible" });
    // the session grows while the box is open (pi writes): the panel re-renders behind it, and
    // its focus restore must not pull the keyboard back into the webview
    const lines = readFileSync(sessionFile, "utf8").trimEnd().split("\n");
    const leaf = JSON.parse(lines[lines.length - 1]).id;
    appendFileSync(
      sessionFile,
      `${JSON.stringify({ type: "custom", customType: "e2e/probe", data: {}, id: "e2eprobe1", parentId: leaf, timestamp: new Date().toISOString() })}\n`,
    );
    await page.waitForTimeout(2500); // the panel's throttled rebuild (no signal to wait for from outside the webview)
    // typed keys go to the box, not to the webview that was clicked
    await page.keyboard.type("keep the parser");
    await waitUntil(async () => (await input.inputValue()) === "keep the parser", 5000, "the typed text in the box");
    await page.keyboard.press("Enter");
    const row = widget.locator(".monaco-list-row", { hasText: "Compact now" });
    await row.waitFor({ state: "visible", timeout: 20_000 });
    await waitUntil(
      async () => page.evaluate(() => !!document.activeElement?.closest(".quick-input-widget")),
      5000,
      "the preview to have the keyboard focus",
    );
    await screenshot(page, "compact-from-sidebar-preview");
    await page.keyboard.press("Escape");
    await widget.waitFor({ state: "hidden", timeout: 5000 });
    assert.doesNotMatch(
      readFileSync(sessionFile, "utf8").split("e2eprobe1")[1],
      /"type":"compaction"/,
      "nothing written",
    );
  });

  it("Pi Context: Cancel Compaction (palette) cancels a streaming summary and writes nothing", async () => {
    const { page } = suite.wb;
    // one more exchange after our compaction, so there is something to compact again
    const last = JSON.parse(readFileSync(sessionFile, "utf8").trimEnd().split("\n").pop());
    const u = {
      type: "message",
      id: "e2ec0001",
      parentId: last.id,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: [{ type: "text", text: "x ".repeat(6000) }], timestamp: Date.now() },
    };
    const a = {
      type: "message",
      id: "e2ec0002",
      parentId: "e2ec0001",
      timestamp: new Date().toISOString(),
      message: {
        role: "assistant",
        content: [{ type: "text", text: "y ".repeat(6000) }],
        api: "openai-completions",
        provider: "scripted",
        model: "scripted-small",
        usage: {
          input: 9000,
          output: 3000,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 12000,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: Date.now(),
      },
    };
    writeFileSync(sessionFile, readFileSync(sessionFile, "utf8") + JSON.stringify(u) + "\n" + JSON.stringify(a) + "\n");
    const later = new Date(Date.now() + 180_000);
    utimesSync(sessionFile, later, later);
    const before = readFileSync(sessionFile);
    await page.keyboard.press("Escape");
    server.reset();
    server.script({ chunks: ["## Goal\n", "never finishes"], hang: true });
    await runCommand(page, "Pi Context: Compact Session…");
    const { widget, input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter"); // no instructions
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).waitFor({ state: "visible", timeout: 20_000 });
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).click();
    await waitUntil(() => server.requests.length >= 1, 20_000, "the summary request");
    // (runCommand retries until the palette lists it: it is there only while piContext.compacting)
    await runCommand(page, "Pi Context: Cancel Compaction");
    await waitUntil(() => server.disconnects >= 1, 5_000, "the HTTP request to be aborted");
    await page.waitForTimeout(1000);
    await screenshot(page, "compact-cancelled");
    assert.ok(readFileSync(sessionFile).equals(before), "file byte-identical");
  });

  it("a server that wants a key (HTTP 401): the password box appears mid-compaction, the typed key is stored, the same compaction continues", async () => {
    const { page } = suite.wb;
    await page.keyboard.press("Escape");
    const before = readFileSync(sessionFile);
    server.reset();
    server.script(
      { status: 401, errorMessage: "missing API key" },
      { chunks: ["## Goal\n", "Summarized after the key was entered."] },
    );
    await runCommand(page, "Pi Context: Compact Session…");
    const { widget, input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter"); // no instructions
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).waitFor({ state: "visible", timeout: 20_000 });
    await widget.locator(".monaco-list-row", { hasText: "Compact now" }).click();
    const password = widget.locator('input[type="password"]');
    await password.waitFor({ state: "visible", timeout: 20_000 });
    assert.match(await widget.innerText(), /refused the request \(HTTP 401\)/);
    await password.fill("sk-e2e-typed-7");
    await screenshot(page, "compact-api-key-box");
    await page.keyboard.press("Enter");
    const write = widget.locator(".monaco-list-row", { hasText: "Write this summary" });
    await write.waitFor({ state: "visible", timeout: 30_000 });
    await write.click();
    await waitUntil(() => readFileSync(sessionFile).length > before.length, 30_000, "the compaction to be written");
    const auth = server.requests.map((r) => r.authorization);
    assert.equal(auth[0], undefined, "the first request had no key (401)");
    assert.ok(
      auth.length >= 2 && auth.slice(1).every((a) => a === "Bearer sk-e2e-typed-7"),
      `then the same compaction with the typed key: ${JSON.stringify(auth)}`,
    );
    assert.equal(
      server.requests[1].body.messages[1].content,
      server.requests[0].body.messages[1].content,
      "the refused request was retried as it was",
    );
    const entry = JSON.parse(readFileSync(sessionFile).subarray(before.length).toString("utf8"));
    assert.equal(entry.type, "compaction");
    assert.ok(entry.summary.startsWith("## Goal\nSummarized after the key was entered."));
    await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 30_000 });
    await screenshot(page, "compact-after-key");
  });
});
