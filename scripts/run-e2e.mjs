#!/usr/bin/env node
// npm run test:e2e [-- --grep <name pattern>] [--timeout <s>] [--no-build] [--keep] [--verbose] [files…]
//
// Runs test/e2e/*.test.mjs with `node --test` (explicit file list: a directory argument finds no
// files on Node 20 and exits 0). One code-server and one Chromium (a Playwright browser server)
// are started here and shared by every test file through env vars (see test/e2e/harness.mjs).
// Every run starts from nothing: a new code-server user-data dir and extensions dir (temp), a new
// browser context per window, a fresh workspace + agent dir. The build is esbuild + tsc (tests load
// out/test/support/*). Output: test-results/e2e/ (emptied first): *.png, server.log, vscode-logs/,
// FAILED-<test>-<n>.{png,console.log,exthostN.log,exthostN.pi.log} for every failed test or hook.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./browser.mjs";
import { buildForTests } from "./build-tests.mjs";
import { ensureConformanceInstall } from "../test/conformance/oracle/setup.mjs";
import { createTestFixture } from "./test-fixtures.mjs";
import { ensureVscodeHost } from "./vscode-host-setup.mjs";
import { repoRoot, startVscodeServer } from "./vscode-host.mjs";

function parseArgs(argv) {
  const o = { grep: "", timeoutS: 1800, build: true, keep: false, verbose: false, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--grep" || a === "-g") o.grep = argv[++i] ?? "";
    else if (a.startsWith("--grep=")) o.grep = a.slice(7);
    else if (a === "--timeout") o.timeoutS = Number(argv[++i]);
    else if (a === "--no-build") o.build = false;
    else if (a === "--keep") o.keep = true;
    else if (a === "--verbose" || a === "-v") o.verbose = true;
    else if (a === "-h" || a === "--help") {
      console.log(
        "usage: npm run test:e2e -- [--grep NAME_RE] [--timeout SECONDS] [--no-build] [--keep] [--verbose] [test/e2e/x.test.mjs …]",
      );
      process.exit(0);
    } else if (a.endsWith(".test.mjs")) o.files.push(path.resolve(a));
    else {
      console.error(`unknown argument: ${a}`);
      process.exit(2);
    }
  }
  if (!(o.timeoutS > 0)) o.timeoutS = 1800;
  return o;
}

function e2eFiles() {
  const dir = path.join(repoRoot, "test", "e2e");
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith(".test.mjs")) out.push(full);
    }
  };
  walk(dir);
  return out.sort();
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const resultsDir = path.join(repoRoot, "test-results", "e2e");
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });

  ensureVscodeHost();
  // the live-bridge file runs the real pi 1.6.0 (the conformance package; idempotent, ≈0.1 s when installed)
  ensureConformanceInstall();
  // esbuild + tsc: tests load out/test/support/* (a fresh clone has no out/)
  if (opts.build) buildForTests({ label: "e2e" });
  for (const f of [path.join("dist", "extension.js"), path.join("out", "test", "support", "scripted-openai.js")])
    if (!existsSync(path.join(repoRoot, f))) throw new Error(`${f} missing: run without --no-build`);
  const files = opts.files.length ? opts.files : e2eFiles();
  if (files.length === 0) throw new Error("no test/e2e/**/*.test.mjs files");

  const fixture = createTestFixture({ prefix: "pi-context-e2e-" });
  let server;
  let browserServer;
  let child;
  let timer;
  let code = 1;
  try {
    server = await startVscodeServer({
      devExtension: repoRoot,
      smokeTestDriver: true,
      logFile: path.join(resultsDir, "server.log"),
      keepTemp: opts.keep,
      env: {
        PI_CODING_AGENT_DIR: fixture.agentDir,
        PI_CONTEXT_TEST_WORKSPACE: fixture.workspace,
        PI_CONTEXT_TEST_AGENT_DIR: fixture.agentDir,
        PI_CONTEXT_GUARD_PROCESSES: fixture.guardProcesses,
      },
    });
    browserServer = await chromium.launchServer({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      host: "127.0.0.1",
    });
    const args = [
      "--test",
      "--test-reporter=spec",
      "--test-concurrency=1",
      ...(opts.grep ? [`--test-name-pattern=${opts.grep}`] : []),
      ...files,
    ];
    console.log(`[e2e] ${files.length} file(s) against ${server.baseUrl}`);
    child = spawn(process.execPath, args, {
      cwd: repoRoot,
      stdio: "inherit",
      env: {
        ...process.env,
        PI_CONTEXT_E2E_BASE_URL: server.baseUrl,
        PI_CONTEXT_E2E_BROWSER_WS: browserServer.wsEndpoint(),
        PI_CONTEXT_E2E_RESULTS: resultsDir,
        PI_CONTEXT_E2E_LOGS_DIR: path.join(server.userDataDir, "logs"),
        PI_CONTEXT_E2E_VERBOSE: opts.verbose ? "1" : "",
        PI_CONTEXT_TEST_WORKSPACE: fixture.workspace,
        PI_CONTEXT_TEST_AGENT_DIR: fixture.agentDir,
        // the guard's process table the server reads (a test that wants a refusal lists its pi here)
        PI_CONTEXT_GUARD_PROCESSES: fixture.guardProcesses,
      },
    });
    code = await new Promise((resolve) => {
      timer = setTimeout(() => {
        console.error(`[e2e] TIMEOUT after ${opts.timeoutS} s`);
        child.kill("SIGKILL");
        resolve(1);
      }, opts.timeoutS * 1000);
      child.on("exit", (c, sig) => resolve(c ?? (sig ? 1 : 0)));
    });
  } finally {
    clearTimeout(timer);
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await browserServer?.close().catch(() => {});
    await server?.stop({ saveLogsTo: path.join(resultsDir, "vscode-logs") });
    if (!opts.keep) fixture.cleanup();
  }
  console.log(
    `[e2e] ${code === 0 ? "OK" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s — screenshots and logs in ${path.relative(repoRoot, resultsDir)}/`,
  );
  return code;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("[e2e] ERROR:", err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
