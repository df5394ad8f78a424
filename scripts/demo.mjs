#!/usr/bin/env node
// npm run demo [-- --screenshot] [--vsix] [--port N] [--no-build] [--session FILE.jsonl] [--agent DIR]
//
// Starts a real VS Code (code-server) on 127.0.0.1 with pi-context loaded, a demo workspace and a
// demo pi agent dir holding a real pi 1.6.0 session, and prints the URL to open.
//   - media/demo/workspace/  → copied to <tmp>/project (the folder VS Code opens)
//   - media/demo/agent/      → copied to <tmp>/agent   (PI_CODING_AGENT_DIR)
//   - media/demo/sessions/*.jsonl → <tmp>/agent/sessions/--<encoded project path>--/, with the
//     session header's `cwd` rewritten to <tmp>/project in the copy (media/demo is never modified)
// --screenshot: instead of waiting, save workbench screenshots to test-results/demo/ and exit.
// --vsix: package the extension (vsce) and install the .vsix instead of a development extension.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { launchChromium, newWorkbenchPage } from "./browser.mjs";
import { copyAgentConfig, installSession } from "./test-fixtures.mjs";
import { ensureVscodeHost } from "./vscode-host-setup.mjs";
import { repoRoot, startVscodeServer } from "./vscode-host.mjs";
import { runCommand } from "../test/e2e/harness.mjs";

const demoDir = path.join(repoRoot, "media", "demo");

function parseArgs(argv) {
  const o = { screenshot: false, vsix: false, port: undefined, build: true, sessions: [], agent: path.join(demoDir, "agent") };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--screenshot") o.screenshot = true;
    else if (a === "--vsix") o.vsix = true;
    else if (a === "--port") o.port = Number(argv[++i]);
    else if (a === "--no-build") o.build = false;
    else if (a === "--session") o.sessions.push(path.resolve(argv[++i]));
    else if (a === "--agent") o.agent = path.resolve(argv[++i]);
    else if (a === "-h" || a === "--help") {
      console.log("usage: npm run demo -- [--screenshot] [--vsix] [--port N] [--no-build] [--session FILE.jsonl]... [--agent DIR]");
      process.exit(0);
    } else {
      console.error(`unknown argument: ${a}`);
      process.exit(2);
    }
  }
  if (o.sessions.length === 0) {
    const dir = path.join(demoDir, "sessions");
    o.sessions = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort().map((f) => path.join(dir, f));
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

async function takeScreenshots(url, outDir) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const browser = await launchChromium();
  try {
    const { page } = await newWorkbenchPage(browser, { width: 1400, height: 900 });
    await page.goto(url);
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    await page.locator("#workbench\\.parts\\.statusbar").waitFor({ state: "visible", timeout: 60_000 });
    await sleep(4000); // let extensions activate and views settle
    const shots = [];
    const shot = async (name) => {
      const file = path.join(outDir, `${name}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
    };
    await shot("01-workbench");
    // the extension's log, opened from the command palette
    await runCommand(page, "Pi: Show Log");
    await sleep(1500);
    await shot("02-show-log");
    return shots;
  } finally {
    await browser.close().catch(() => {});
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  ensureVscodeHost();
  let vsixPath;
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-context-demo-"));
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  if (o.vsix) {
    vsixPath = path.join(root, "pi-context.vsix");
    run(process.execPath, [path.join(repoRoot, "node_modules", "@vscode", "vsce", "vsce"), "package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", vsixPath]);
  } else if (o.build) {
    run(process.execPath, [path.join(repoRoot, "esbuild.mjs")]);
  }

  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  cpSync(path.join(demoDir, "workspace"), workspace, { recursive: true });
  copyAgentConfig(o.agent, agentDir);
  const installed = o.sessions.map((s) => installSession(agentDir, s, workspace));

  const server = await startVscodeServer({
    ...(vsixPath ? { vsix: vsixPath } : { devExtension: repoRoot, smokeTestDriver: true }),
    folder: workspace,
    port: o.port,
    env: { PI_CODING_AGENT_DIR: agentDir },
    logFile: path.join(root, "server.log"),
  });
  const url = server.workbenchUrl({ folder: workspace });
  console.log(`\n[demo] workspace: ${workspace}`);
  console.log(`[demo] PI_CODING_AGENT_DIR: ${agentDir}`);
  for (const s of installed) console.log(`[demo] session: ${path.relative(agentDir, s)}`);

  if (o.screenshot) {
    try {
      const shots = await takeScreenshots(url, path.join(repoRoot, "test-results", "demo"));
      for (const s of shots) console.log(`[demo] screenshot: ${path.relative(repoRoot, s)}`);
    } finally {
      await server.stop();
    }
    return 0;
  }
  console.log(`\n  Open VS Code: ${url}\n\n  (server log: ${server.logFile}; Ctrl-C to stop)`);
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
