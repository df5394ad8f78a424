// E2E: the live bridge in the real workbench UI with a real pi 1.6.0 (RPC mode, Node 22) running on
// the opened folder against a scripted OpenAI-compatible server: "Pi Context: Install Live Bridge" asks in a
// modal dialog, the gauge shows the running pi's numbers with the live badge (and says so in its
// tooltip), "Pi Context: Compact Session…" from the palette makes that pi compact (the summary diff is
// titled with the session's name), Select Session says which pi has the session open, a switch in
// that pi names where it went, pi's own failed auto-compaction is reported with Compact with another
// summarizer (pi then appends ours), "Pi Context: Remove Live Bridge" asks again. Screenshots in
// test-results/e2e/live-bridge-*.png.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  closeSharedHost,
  openWorkbench,
  quickInput,
  repoRoot,
  resultsDir,
  runCommand,
  chooseFromContextMenu,
  notificationInCenter,
  screenshot,
  showView,
  treeRows,
  sharedHost,
  statusBarItem,
  waitUntil,
  boxOf,
} from "./harness.mjs";

const GAUGE = "piContext.gauge";
const PI_CLI = path.join(repoRoot, "test/conformance/oracle/node_modules/pi-1.6.0/dist/bundle/cli.js");
/** The bridge version this build installs (`BRIDGE_VERSION` in src/bridge/protocol.ts). */
const BRIDGE_VERSION = /BRIDGE_VERSION = "([^"]+)"/.exec(
  readFileSync(path.join(repoRoot, "src/bridge/protocol.ts"), "utf8"),
)[1];

/**
 * A tiny OpenAI-compatible server: every chat completion streams `answer()` with a usage.
 * `next.promptTokens` makes the next answer report that many prompt tokens; `next.failSummaries`
 * answers that many summary requests of pi's model with `finish_reason: "length"` (pi #9512).
 * Requests for the model `our-summarizer` are pi-context's configured summarizer.
 */
async function startModel() {
  const requests = [];
  const next = { promptTokens: 0, failSummaries: 0 };
  let n = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const parsed = JSON.parse(body || "{}");
    requests.push(parsed);
    n++;
    const summary = JSON.stringify(parsed.messages ?? []).includes("summar");
    const ours = parsed.model === "our-summarizer";
    const cut = summary && !ours && next.failSummaries > 0;
    if (cut) next.failSummaries--;
    const text = ours
      ? "## Goal\nRefactor the parser (summary written by pi-context's summarizer).\n\n## Progress\n- all steps done"
      : cut
        ? "## Goal\nRefactor the par"
        : summary
          ? "## Goal\nRefactor the parser (summary written by pi's own model).\n\n## Progress\n- steps 1–4 done"
          : `Answer ${n}: done.\n\n${"Details of the work. ".repeat(80)}`;
    let prompt = Math.ceil(JSON.stringify(parsed.messages ?? []).length / 4);
    if (!summary && next.promptTokens) {
      prompt = next.promptTokens;
      next.promptTokens = 0;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    send({
      id: `c${n}`,
      object: "chat.completion.chunk",
      created: 1,
      model: parsed.model,
      choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }],
    });
    send({
      id: `c${n}`,
      object: "chat.completion.chunk",
      created: 1,
      model: parsed.model,
      choices: [{ index: 0, delta: {}, finish_reason: cut ? "length" : "stop" }],
    });
    send({
      id: `c${n}`,
      object: "chat.completion.chunk",
      created: 1,
      model: parsed.model,
      choices: [],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: Math.ceil(text.length / 4),
        total_tokens: prompt + Math.ceil(text.length / 4),
      },
    });
    res.end("data: [DONE]\n\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    baseURL: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    next,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** pi --mode rpc with JSON lines on stdin/stdout. */
async function startPi({ cwd, agentDir, home }) {
  const { ensureConformanceInstall } = await import(
    pathToFileURL(path.join(repoRoot, "test/conformance/oracle/setup.mjs")).href
  );
  const node = ensureConformanceInstall().node22Path;
  const child = spawn(node, [PI_CLI, "--mode", "rpc"], {
    cwd,
    env: { PATH: process.env.PATH, HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const events = [];
  const waiters = [];
  let buffer = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buffer += d;
    let i;
    while ((i = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      events.push(m);
      for (const w of [...waiters]) {
        if (!w.match(m)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const waitFor = (match) => new Promise((resolve) => waiters.push({ match, resolve }));
  let id = 0;
  const command = async (c) => {
    const key = `e${++id}`;
    const p = waitFor((m) => m.type === "response" && m.id === key);
    child.stdin.write(JSON.stringify({ ...c, id: key }) + "\n");
    return p;
  };
  return {
    child,
    command,
    async prompt(message) {
      const settled = waitFor((m) => m.type === "agent_settled");
      await command({ type: "prompt", message });
      await settled;
    },
    async kill() {
      if (child.exitCode === null) {
        child.kill("SIGKILL");
        await new Promise((r) => child.once("exit", r));
      }
    },
  };
}

describe("e2e live bridge", () => {
  let wb;
  let model;
  let pi;
  let agentDir;
  const tmp = mkdtempSync(path.join(os.tmpdir(), "pi-context-e2e-bridge-"));
  const folder = path.join(tmp, "parser-project");
  const home = path.join(tmp, "home");
  const saved = new Map();

  before(async () => {
    const host = await sharedHost();
    agentDir = host.agentDir;
    mkdirSync(folder, { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(folder, "README.md"), "# parser project\n");
    model = await startModel();
    for (const f of ["models.json", "settings.json"]) {
      const p = path.join(agentDir, f);
      saved.set(p, existsSync(p) ? readFileSync(p) : undefined);
    }
    writeFileSync(
      path.join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          scripted: {
            baseUrl: model.baseURL,
            api: "openai-completions",
            apiKey: "scripted-dummy-key",
            compat: {
              supportsStore: false,
              supportsDeveloperRole: false,
              supportsReasoningEffort: false,
              maxTokensField: "max_tokens",
            },
            models: [
              {
                id: "scripted-small",
                name: "scripted-small",
                contextWindow: 16000,
                maxTokens: 2048,
                input: ["text"],
                reasoning: false,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              },
            ],
          },
        },
      }),
    );
    writeFileSync(
      path.join(agentDir, "settings.json"),
      JSON.stringify({
        defaultProvider: "scripted",
        defaultModel: "scripted-small",
        cacheWarming: "off",
        enableInstallTelemetry: false,
        retry: { enabled: false },
        compaction: { reserveTokens: 4000, keepRecentTokens: 1000 },
      }),
    );
    // pi-context's own summarizer: the same loopback server, another model name (no API key needed)
    mkdirSync(path.join(folder, ".vscode"), { recursive: true });
    writeFileSync(
      path.join(folder, ".vscode", "settings.json"),
      JSON.stringify({
        "piContext.summarizer.provider": "openai",
        "piContext.summarizer.openai.baseURL": model.baseURL,
        "piContext.summarizer.openai.model": "our-summarizer",
        "piContext.summarizer.openai.contextWindow": 128000,
      }),
    );
    wb = await openWorkbench({ folder });
  });

  after(async () => {
    await pi?.kill();
    await wb?.close();
    await model?.close();
    for (const [p, content] of saved) {
      if (content === undefined) rmSync(p, { force: true });
      else writeFileSync(p, content);
    }
    rmSync(path.join(agentDir, "extensions", "pi-context-bridge.js"), { force: true });
    rmSync(path.join(agentDir, "pi-context"), { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
    await closeSharedHost();
  });

  it('"Pi Context: Install Live Bridge" asks in a modal dialog, then installs', async () => {
    const { page } = wb;
    await runCommand(page, "Pi Context: Install Live Bridge", { commandId: "piContext.installBridge" });
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.waitFor({ state: "visible", timeout: 10_000 });
    const text = await dialog.innerText();
    for (const want of [
      "Install the pi-context live bridge?",
      "extensions/pi-context-bridge.js",
      "tested with pi 1.6.x",
      "local socket",
      "never opens a network port",
      "Pi Context: Remove Live Bridge",
    ])
      assert.ok(text.includes(want), `dialog lacks ${JSON.stringify(want)}:\n${text}`);
    await screenshot(page, "live-bridge-install-dialog");
    await dialog.getByRole("button", { name: "Install", exact: true }).click();
    const file = path.join(agentDir, "extensions", "pi-context-bridge.js");
    await waitUntil(() => existsSync(file), 10_000, "the installed bridge");
    assert.ok(
      readFileSync(file, "utf8")
        .split("\n")[0]
        .startsWith(`// pi-context-bridge-install {"version":"${BRIDGE_VERSION}","protocol":2,"pi":"1.6.x"`),
      readFileSync(file, "utf8").split("\n")[0],
    );
  });

  it("shows the running pi's numbers with a live badge", async () => {
    const { page } = wb;
    pi = await startPi({ cwd: folder, agentDir, home });
    for (let i = 1; i <= 5; i++)
      await pi.prompt(`step ${i} of the parser refactoring\n${"Context line for the task. ".repeat(40)}`);
    const stats = (await pi.command({ type: "get_session_stats" })).data.contextUsage;
    const item = statusBarItem(page, GAUGE);
    const expected = `π ${stats.percent.toFixed(1)}% · ${(stats.tokens / 1000).toFixed(1)}k/16k · live`;
    await waitUntil(async () => (await item.innerText()).includes(expected), 30_000, `the gauge text ${expected}`);
    await page
      .locator("#workbench\\.parts\\.statusbar")
      .screenshot({ path: path.join(resultsDir, "live-bridge-gauge.png") });
    await item.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "the running pi" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    const tooltip = await hover.innerText();
    for (const want of [
      "live from pi 1.6.0",
      `pid ${pi.child.pid}`,
      "reports these numbers",
      "Compact and Switch run in that pi",
      "16,000 — the running pi",
    ])
      assert.ok(tooltip.includes(want), `tooltip lacks ${JSON.stringify(want)}:\n${tooltip}`);
    const hb = await boxOf(hover);
    const ib = await boxOf(item);
    if (hb && ib) {
      const x = Math.max(0, Math.min(hb.x, ib.x) - 8);
      const y = Math.max(0, hb.y - 8);
      await page.screenshot({
        path: path.join(resultsDir, "live-bridge-tooltip.png"),
        clip: { x, y, width: Math.max(hb.x + hb.width, ib.x + ib.width) + 8 - x, height: ib.y + ib.height + 4 - y },
      });
    }
    await page.mouse.move(700, 300);
  });

  it('"Pi Context: Compact Session…" from the palette makes the running pi compact', async () => {
    const { page } = wb;
    const file = (await pi.command({ type: "get_state" })).data.sessionFile;
    const before = readFileSync(file, "utf8").trim().split("\n").length;
    const requests = model.requests.length;
    await runCommand(page, "Pi Context: Compact Session…", { commandId: "piContext.compact" });
    const { widget, input } = await quickInput(page, "Custom Instructions");
    await input.fill("keep the parser details");
    await input.press("Enter");
    const go = widget.locator(".monaco-list-row", { hasText: "Compact now in pi" }).first();
    await go.waitFor({ state: "visible", timeout: 10_000 });
    await screenshot(page, "live-bridge-compact-confirm");
    // every text the gauge shows from now on (a MutationObserver in the page: a flash of 0.3 s counts)
    const item = statusBarItem(page, GAUGE);
    const oldText = (await item.innerText()).trim();
    const oldSize = /· ([\d.]+k)\/16k · live$/.exec(oldText)?.[1];
    assert.ok(oldSize, oldText);
    await item.evaluate((el) => {
      const seen = (window.__gaugeTexts = [el.innerText.trim()]);
      new window.MutationObserver(() => seen.push(el.innerText.trim())).observe(el, {
        subtree: true,
        childList: true,
        characterData: true,
      });
    });
    await go.click();
    await waitUntil(
      () => readFileSync(file, "utf8").trim().split("\n").length > before,
      30_000,
      "pi's compaction entry",
    );
    const last = JSON.parse(readFileSync(file, "utf8").trim().split("\n").pop());
    assert.equal(last.type, "compaction");
    assert.match(last.summary, /summary written by pi's own model/);
    // pi's summary request(s) (two for a split turn), nothing else
    const sent = model.requests.slice(requests);
    assert.ok(
      sent.length >= 1 && sent.every((r) => JSON.stringify(r.messages).includes("summar")),
      JSON.stringify(sent.map((r) => JSON.stringify(r.messages).slice(0, 200))),
    );
    assert.match(JSON.stringify(sent.map((r) => r.messages)), /keep the parser details/);
    await waitUntil(
      async () => /^π \? · ≈.* · live$/.test((await item.innerText()).trim()),
      15_000,
      "the ? state after the compaction, still live",
    );
    // never the old size as the estimate after the compaction (pi's "?" over the file not read yet)
    const texts = await item.evaluate(() => window.__gaugeTexts);
    assert.ok(!texts.includes(`π ? · ≈${oldSize}/16k · live`), JSON.stringify(texts));
    // the summary diff opens as after our own compaction (notification toasts are not rendered in
    // this headless code-server; the integration suite checks the command's outcome)
    await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 30_000 });
    // its tab names the session as every surface does, not by its file name
    const tab = await page.locator(".tabs-container .tab.active").first().innerText();
    assert.match(tab, /New Summary — "step 1 of the parser refactoring/, tab);
    assert.doesNotMatch(tab, /\.jsonl/, tab);
    await page.waitForTimeout(1000);
    await screenshot(page, "live-bridge-after-compact");
  });

  it("Select Session says which pi has the session open, with its live bridge", async () => {
    const { page } = wb;
    await runCommand(page, "View: Close All Editors").catch(() => {});
    await runCommand(page, "Pi Context: Select Session…", { commandId: "piContext.selectSession" });
    const widget = page.locator(".quick-input-widget");
    const row = widget.locator(".monaco-list-row", { hasText: "step 1 of the parser refactoring" }).first();
    const want = `live in pi 1.6.0 (pid ${pi.child.pid}, live bridge)`;
    await waitUntil(async () => (await row.innerText().catch(() => "")).includes(want), 20_000, want);
    await page.waitForTimeout(300);
    await screenshot(page, "live-bridge-select-session");
    await page.keyboard.press("Escape");
  });

  it("a switch in the running pi names where pi went, not its id", async () => {
    const { page } = wb;
    await showView(page, "Pi Session");
    const target = (await treeRows(page, "Pi Session")).filter({ hasText: "step 5 of the parser refactoring" }).first();
    await target.waitFor({ state: "visible", timeout: 20_000 });
    await chooseFromContextMenu(page, target, "Switch to Here…");
    const pick = page.locator(".quick-input-widget");
    await waitUntil(
      async () => (await pick.innerText().catch(() => "")).includes("No summary"),
      15_000,
      "pi's choices",
    );
    await pick.locator(".monaco-list-row", { hasText: "No summary" }).first().click();
    const row = await notificationInCenter(page, "pi switched to");
    const text = (await row.innerText()).replace(/\s+/g, " ");
    assert.match(text, /pi switched to “Answer \d+: done\./, text);
    assert.doesNotMatch(text, /switched to [0-9a-f]{8}\b/, text);
    await screenshot(page, "live-bridge-switch-named");
    await runCommand(page, "Notifications: Clear All Notifications", { commandId: "notifications.clearAll" }).catch(
      () => {},
    );
  });

  it("pi's own auto-compaction fails (summary cut at the output limit): reported with pi's reason; Compact with another summarizer → pi appends ours", async () => {
    const { page } = wb;
    const file = (await pi.command({ type: "get_state" })).data.sessionFile;
    const before = readFileSync(file, "utf8").trim().split("\n").length;
    // the next answer reports more than pi's threshold (16,000 − 4,000); pi's summary is cut off
    model.next.promptTokens = 12_500;
    model.next.failSummaries = 2;
    await pi.prompt(`step 6: finish the parser\n${"Context line for the task. ".repeat(40)}`);
    const row = await notificationInCenter(page, "could not compact");
    const text = (await row.innerText()).replace(/\s+/g, " ");
    assert.match(
      text,
      new RegExp(`pi 1\\.6\\.0 \\(pid ${pi.child.pid}\\) could not compact "step 1 of the parser refactoring`),
      text,
    );
    assert.match(text, /its auto-compaction at the threshold/, text);
    assert.match(text, /Auto-compaction failed: Summarization failed: generation hit the token cap/, text);
    const buttons = (await row.locator(".monaco-button").allInnerTexts()).map((t) => t.trim()).filter(Boolean);
    assert.equal(buttons.length, 2, buttons.join(" | "));
    assert.match(buttons[0], /^Compact with .*our-summarizer.*…$/);
    assert.equal(buttons[1], "Compact with Instructions…");
    assert.ok(
      readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .slice(before)
        .every((l) => JSON.parse(l).type !== "compaction"),
      "pi wrote no compaction",
    );
    await page.mouse.move(10, 10);
    await screenshot(page, "live-bridge-compaction-failed");
    await row.locator(".monaco-button").first().click();
    // our flow: instructions, the preview, then the running pi appends our summary
    const { input } = await quickInput(page, "Custom Instructions");
    await input.press("Enter");
    const go = page.locator(".quick-input-widget .monaco-list-row", { hasText: "Compact now" }).first();
    await go.waitFor({ state: "visible", timeout: 30_000 });
    await screenshot(page, "live-bridge-compact-ours-preview");
    await go.click();
    // the summary may lose items of what it summarized: then its review asks first (write it)
    const write = page.locator(".quick-input-widget .monaco-list-row", { hasText: "Write this summary" }).first();
    await waitUntil(
      async () => {
        if (await write.isVisible().catch(() => false)) await write.click().catch(() => {});
        return JSON.parse(readFileSync(file, "utf8").trim().split("\n").pop()).type === "compaction";
      },
      30_000,
      "pi's compaction entry with our summary",
    );
    const last = JSON.parse(readFileSync(file, "utf8").trim().split("\n").pop());
    assert.match(last.summary, /summary written by pi-context's summarizer/);
    assert.equal(last.fromHook, true, "pi appended it as a summary an extension gave it");
    assert.equal(
      model.requests.filter((r) => r.model === "our-summarizer").length >= 1,
      true,
      "our summarizer was asked",
    );
    await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 30_000 });
    await page.waitForTimeout(800);
    await screenshot(page, "live-bridge-compact-ours-done");
  });

  it('"Pi Context: Remove Live Bridge" asks, then removes only its file', async () => {
    const { page } = wb;
    await runCommand(page, "Pi Context: Remove Live Bridge", { commandId: "piContext.removeBridge" });
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.waitFor({ state: "visible", timeout: 10_000 });
    assert.match(await dialog.innerText(), /Remove the pi-context live bridge\?/);
    await dialog.getByRole("button", { name: "Remove", exact: true }).click();
    await waitUntil(
      () => !existsSync(path.join(agentDir, "extensions", "pi-context-bridge.js")),
      10_000,
      "the bridge file to go",
    );
  });
});
