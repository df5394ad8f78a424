#!/usr/bin/env node
// npm run demo [-- --screenshot] [--vsix] [--port N] [--no-build] [--session FILE.jsonl]... [--agent DIR]
//
// Starts a real VS Code (code-server) on 127.0.0.1 with pi-context installed, a demo workspace, a
// demo pi agent dir holding a real pi 1.6.0 session, and a local demo summarizer, and prints the
// URL to open.
//   - media/demo/workspace/  → copied to <tmp>/project (the folder VS Code opens)
//   - media/demo/agent/      → copied to <tmp>/agent   (PI_CODING_AGENT_DIR)
//   - media/demo/sessions/*.jsonl → <tmp>/agent/sessions/--<encoded project path>--/, with the
//     session header's `cwd` rewritten to <tmp>/project in the copy (media/demo is never modified);
//     written an hour "ago" so the live-session guard lets you compact right away
//   - scripts/demo-summarizer.mjs on 127.0.0.1: an OpenAI-compatible server that writes a summary
//     from the request without any model; the demo's user settings point
//     piContext.summarizer.openai.baseURL / .model at it (a loopback server needs no API key)
// The extension is installed like a user's (a copy of the built extension in the private
// extensions dir), not as a development extension: no smoke-test driver, so notifications show.
// --screenshot: instead of waiting, drive the workbench (gauge tooltip, panel, session tree,
//   compaction preview and result) and save screenshots to test-results/demo/, then exit.
// --vsix: package the extension (vsce) and install the .vsix instead of copying the build.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { launchChromium, newWorkbenchPage } from "./browser.mjs";
import { startDemoSummarizer } from "./demo-summarizer.mjs";
import { copyAgentConfig, installSession } from "./test-fixtures.mjs";
import { ensureVscodeHost } from "./vscode-host-setup.mjs";
import { repoRoot, startVscodeServer } from "./vscode-host.mjs";
import { runCommand } from "../test/e2e/harness.mjs";

const demoDir = path.join(repoRoot, "media", "demo");

/** vsce's flags for an offline package (README images ship inside it; links stay relative). */
const VSCE_PACKAGE_FLAGS = ["--no-dependencies", "--no-rewrite-relative-links", "--allow-missing-repository"];

function parseArgs(argv) {
  const o = {
    screenshot: false,
    vsix: false,
    port: undefined,
    build: true,
    sessions: [],
    agent: path.join(demoDir, "agent"),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--screenshot") o.screenshot = true;
    else if (a === "--vsix") o.vsix = true;
    else if (a === "--port") o.port = Number(argv[++i]);
    else if (a === "--no-build") o.build = false;
    else if (a === "--session") o.sessions.push(path.resolve(argv[++i]));
    else if (a === "--agent") o.agent = path.resolve(argv[++i]);
    else if (a === "-h" || a === "--help") {
      console.log(
        "usage: npm run demo -- [--screenshot] [--vsix] [--port N] [--no-build] [--session FILE.jsonl]... [--agent DIR]",
      );
      process.exit(0);
    } else {
      console.error(`unknown argument: ${a}`);
      process.exit(2);
    }
  }
  if (o.sessions.length === 0) {
    const dir = path.join(demoDir, "sessions");
    o.sessions = readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .sort()
      .map((f) => path.join(dir, f));
  }
  return o;
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(" ")} failed (${r.status ?? r.signal})`);
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A copy of what the .vsix would hold (package.json, dist/, media/ without the demo, README images,
 * README/CHANGELOG/LICENSE), so a user-style install never points into the repo.
 */
function copyExtension(to) {
  mkdirSync(to, { recursive: true });
  // package.nls*.json: without them the palette and views show raw `%key%` titles
  const nls = readdirSync(repoRoot).filter((f) => /^package\.nls(\.[\w-]+)?\.json$/.test(f));
  for (const f of ["package.json", ...nls, "README.md", "CHANGELOG.md", "LICENSE"])
    cpSync(path.join(repoRoot, f), path.join(to, f));
  cpSync(path.join(repoRoot, "l10n"), path.join(to, "l10n"), { recursive: true });
  cpSync(path.join(repoRoot, "dist"), path.join(to, "dist"), {
    recursive: true,
    filter: (src) => !src.endsWith(".map"),
  });
  cpSync(path.join(repoRoot, "media"), path.join(to, "media"), {
    recursive: true,
    filter: (src) => !src.startsWith(demoDir),
  });
  cpSync(path.join(repoRoot, "docs", "images"), path.join(to, "docs", "images"), { recursive: true });
  return to;
}

/**
 * Drive the workbench like a newcomer and save screenshots: the gauge and its tooltip, the
 * context panel, the session tree, "Pi Context: Compact Session…" (instructions, preview, progress,
 * summary diff + notification), the log.
 * @returns {Promise<string[]>} the files
 */
async function takeScreenshots(url, outDir, sessionFile) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const browser = await launchChromium();
  const shots = [];
  let page;
  const shot = async (name, clip) => {
    const file = path.join(outDir, `${name}.png`);
    await page.screenshot({ path: file, ...(clip ? { clip } : {}) });
    shots.push(file);
  };
  try {
    ({ page } = await newWorkbenchPage(browser, { width: 1400, height: 900 }));
    await page.goto(url);
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    const gauge = page.locator('[id="pi-context.pi-context.piContext.gauge"]');
    await gauge.waitFor({ state: "visible", timeout: 60_000 });
    for (let i = 0; i < 100 && !/%/.test(await gauge.innerText()); i++) await sleep(300);
    await sleep(1500);
    await shot("01-workbench");

    await gauge.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "reserveTokens" }).first();
    await hover.waitFor({ state: "visible", timeout: 15_000 });
    await sleep(500);
    await shot("02-gauge-tooltip");
    await page.mouse.move(700, 400);
    await sleep(300);

    await runCommand(page, "Pi Context: Open Context Panel");
    await page.locator("iframe.webview.ready").first().waitFor({ state: "attached", timeout: 20_000 });
    await sleep(2500);
    await shot("03-context-panel");

    // the sidebar: the pi view container (Context view + session tree), tree revealed at the leaf
    await page.locator('.activitybar [aria-label^="pi context" i]').first().click();
    await sleep(1000);
    await runCommand(page, "Pi Context: Reveal Leaf in Session Tree", { commandId: "piContext.tree.revealLeaf" });
    await sleep(2000);
    await shot("04-session-tree");

    // compaction end to end with the demo summarizer
    const widget = page.locator(".quick-input-widget");
    await runCommand(page, "Pi Context: Compact Session…", { commandId: "piContext.compact" });
    await widget.locator("input").waitFor({ state: "visible", timeout: 20_000 });
    await widget.locator("input").fill("keep the task list");
    await page.mouse.move(20, 600); // no hover tooltip over the quick input
    await sleep(300);
    await shot("05-compact-instructions");
    await page.keyboard.press("Enter");
    const go = widget.locator(".monaco-list-row", { hasText: "Compact now" });
    await go.waitFor({ state: "visible", timeout: 30_000 });
    await sleep(500);
    await shot("06-compact-preview");
    const before = readFileSync(sessionFile, "utf8").length;
    await go.click();
    await page
      .locator(".notification-toast", { hasText: /Compacting|summarizing|receiving/i })
      .first()
      .waitFor({ state: "visible", timeout: 15_000 })
      .catch(() => {});
    await sleep(600);
    await shot("07-compact-progress");
    // when the new summary lost paths, commands, identifiers or numbers, it is reviewed before it is written
    const write = widget.locator(".monaco-list-row", { hasText: "Write this summary" });
    const diff = page.locator(".monaco-diff-editor").first();
    const next = await Promise.race([
      write.waitFor({ state: "visible", timeout: 60_000 }).then(() => "review"),
      diff.waitFor({ state: "visible", timeout: 60_000 }).then(() => "diff"),
    ]);
    if (next === "review") {
      await sleep(500);
      await shot("07b-compact-review");
      await write.click();
    }
    await diff.waitFor({ state: "visible", timeout: 60_000 });
    await page
      .locator(".notification-toast", { hasText: "compacted" })
      .first()
      .waitFor({ state: "visible", timeout: 15_000 })
      .catch(() => {});
    await sleep(2500);
    await shot("08-compact-result");
    const after = readFileSync(sessionFile, "utf8");
    const last = JSON.parse(after.trimEnd().split("\n").pop());
    if (after.length <= before || last.type !== "compaction") throw new Error("the demo compaction wrote nothing");
    console.log(`[demo] compaction ${last.id} written (tokensBefore ${last.tokensBefore.toLocaleString("en-US")})`);

    await runCommand(page, "Pi Context: Show Log");
    await sleep(1500);
    await shot("09-log");

    // the installed extension's details page: icon, README with its images (shipped in the package)
    await runCommand(page, "Extensions: Show Installed Extensions");
    await page.locator(".extensions-viewlet .monaco-list-row", { hasText: "Pi Context" }).first().click();
    const readme = page.frameLocator("iframe.webview.ready").last().frameLocator("#active-frame");
    await readme.locator("img").first().waitFor({ state: "attached", timeout: 20_000 });
    await sleep(2000);
    const images = await readme
      .locator("img")
      .evaluateAll((imgs) => imgs.map((i) => ({ src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0 })));
    // VS Code (1.139) renders only https: images on this page: relative (and data:) image sources
    // of an installed extension's README are dropped by its sanitizer, so they show as alt text
    const shown = images.filter((i) => i.ok).length;
    console.log(
      `[demo] extension details page: icon shown; ${shown} of ${images.length} README images shown (VS Code shows only https: images there)`,
    );
    await shot("10-extension-details");
    return shots;
  } catch (error) {
    if (page) await shot("failure").catch(() => {});
    throw error;
  } finally {
    await browser.close().catch(() => {});
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  ensureVscodeHost();
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-context-demo-"));
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  let install;
  if (o.vsix) {
    const vsix = path.join(root, "pi-context.vsix");
    run(process.execPath, [
      path.join(repoRoot, "node_modules", "@vscode", "vsce", "vsce"),
      "package",
      ...VSCE_PACKAGE_FLAGS,
      "-o",
      vsix,
    ]);
    install = { vsix };
  } else {
    if (o.build) run(process.execPath, [path.join(repoRoot, "esbuild.mjs")]);
    install = { linkExtension: copyExtension(path.join(root, "extension")) };
  }

  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  cpSync(path.join(demoDir, "workspace"), workspace, { recursive: true });
  copyAgentConfig(o.agent, agentDir);
  const anHourAgo = new Date(Date.now() - 3600_000);
  const installed = o.sessions.map((s) => {
    const file = installSession(agentDir, s, workspace);
    utimesSync(file, anHourAgo, anHourAgo); // not "live": the guard lets you compact at once
    return file;
  });

  const summarizer = await startDemoSummarizer({ log: (line) => console.log(`[demo-summarizer] ${line}`) });
  process.on("exit", () => void summarizer.close());
  const server = await startVscodeServer({
    ...install,
    folder: workspace,
    port: o.port,
    env: { PI_CODING_AGENT_DIR: agentDir },
    settings: {
      "piContext.summarizer.provider": "openai",
      "piContext.summarizer.openai.baseURL": summarizer.baseURL,
      "piContext.summarizer.openai.model": summarizer.model,
      "piContext.summarizer.openai.contextWindow": 128000,
    },
    logFile: path.join(root, "server.log"),
  });
  const url = server.workbenchUrl({ folder: workspace });
  console.log(`\n[demo] workspace: ${workspace}`);
  console.log(`[demo] PI_CODING_AGENT_DIR: ${agentDir}`);
  for (const s of installed) console.log(`[demo] session: ${path.relative(agentDir, s)}`);
  console.log(`[demo] summarizer: ${summarizer.baseURL} (model ${summarizer.model}, no API key needed)`);

  if (o.screenshot) {
    try {
      const shots = await takeScreenshots(
        url,
        path.join(repoRoot, "test-results", "demo"),
        installed[installed.length - 1],
      );
      for (const s of shots) console.log(`[demo] screenshot: ${path.relative(repoRoot, s)}`);
    } finally {
      await server.stop();
      await summarizer.close();
    }
    return 0;
  }
  console.log(`\n  Open VS Code: ${url}\n`);
  console.log(
    "  Try: hover the π gauge in the status bar · click it (context panel) · the pi icon in the activity bar",
  );
  console.log(
    '  (session tree) · F1 → "Pi Context: Compact Session…" (preview, then the demo summarizer writes a compaction).',
  );
  console.log(`\n  (server log: ${server.logFile}; Ctrl-C to stop)`);
  await new Promise(() => setInterval(() => {}, 1 << 30)); // until Ctrl-C; exit handlers clean up
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("[demo] ERROR:", err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
