#!/usr/bin/env node
// npm run test:integration [-- --grep <regexp>] [--timeout <s>] [--no-build] [--allow-type-errors] [--keep] [--verbose]
//
// Runs the mocha suites in out/test/integration/**/*.test.js inside the real Node extension host
// of code-server (the real VS Code server), with this repo loaded as a development extension:
//   build (esbuild + tsc) → temp workspace + temp pi agent dir → code-server with
//   --vscode-option enable-smoke-test-driver → headless Chromium opens the workbench with the
//   `payload` (extensionDevelopmentPath, extensionTestsPath) → VS Code calls
//   window.codeAutomationExit(code) when the suites finish → we print the report and exit with it.
// Logs: test-results/integration/{report.txt,server.log,browser-console.log,failure.png}
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { launchChromium, newWorkbenchPage } from "./browser.mjs";
import { buildForTests } from "./build-tests.mjs";
import { createTestFixture } from "./test-fixtures.mjs";
import { ensureVscodeHost } from "./vscode-host-setup.mjs";
import { repoRoot, startVscodeServer } from "./vscode-host.mjs";

function parseArgs(argv) {
  const o = { grep: process.env.PI_CONTEXT_TEST_GREP || "", timeoutS: 300, build: true, keep: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--grep" || a === "-g") o.grep = argv[++i] ?? "";
    else if (a.startsWith("--grep=")) o.grep = a.slice(7);
    else if (a === "--timeout") o.timeoutS = Number(argv[++i]);
    else if (a === "--no-build") o.build = false;
    else if (a === "--allow-type-errors") o.allowTypeErrors = true;
    else if (a === "--keep") o.keep = true;
    else if (a === "--verbose" || a === "-v") o.verbose = true;
    else if (a === "-h" || a === "--help") {
      console.log(
        "usage: npm run test:integration -- [--grep RE] [--timeout SECONDS] [--no-build] [--allow-type-errors] [--keep] [--verbose]",
      );
      process.exit(0);
    } else {
      console.error(`unknown argument: ${a}`);
      process.exit(2);
    }
  }
  if (!(o.timeoutS > 0)) o.timeoutS = 300;
  return o;
}

export function build({ allowTypeErrors = false } = {}) {
  buildForTests({ allowTypeErrors, wipe: [path.join("out", "test", "integration")], label: "integration" });
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const resultsDir = path.join(repoRoot, "test-results", "integration");
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });
  const reportFile = path.join(resultsDir, "report.txt");
  const consoleFile = path.join(resultsDir, "browser-console.log");
  const serverLog = path.join(resultsDir, "server.log");

  ensureVscodeHost();
  if (opts.build) build({ allowTypeErrors: opts.allowTypeErrors });
  const testsEntry = path.join(repoRoot, "out", "test", "integration", "index.js");
  if (!existsSync(testsEntry)) throw new Error(`${testsEntry} missing: build first (tsc -p tsconfig.json)`);

  const fixture = createTestFixture({ prefix: "pi-context-it-" });
  let server;
  let browser;
  const consoleLines = [];
  let exitCode = 1;
  let timer;
  try {
    server = await startVscodeServer({
      devExtension: repoRoot,
      smokeTestDriver: true,
      logFile: serverLog,
      keepTemp: opts.keep,
      env: {
        PI_CODING_AGENT_DIR: fixture.agentDir,
        PI_CONTEXT_TEST_WORKSPACE: fixture.workspace,
        PI_CONTEXT_TEST_AGENT_DIR: fixture.agentDir,
        PI_CONTEXT_GUARD_PROCESSES: fixture.guardProcesses,
        PI_CONTEXT_TEST_REPORT: reportFile,
        PI_CONTEXT_TEST_GREP: opts.grep || undefined,
        PI_CONTEXT_TEST_TIMEOUT: process.env.PI_CONTEXT_TEST_TIMEOUT,
        PI_CONTEXT_TEST_HOST: "code-server",
      },
    });
    browser = await launchChromium();
    const { page } = await newWorkbenchPage(browser, { echo: opts.verbose, lines: consoleLines });
    const done = new Promise((resolve) => {
      page
        .exposeFunction("codeAutomationExit", (code) => resolve({ kind: "exit", code: Number(code) }))
        .catch(() => {});
      page.on("crash", () => resolve({ kind: "crash" }));
      timer = setTimeout(() => resolve({ kind: "timeout" }), opts.timeoutS * 1000);
    });
    const url = server.workbenchUrl({ folder: fixture.workspace, extensionTestsPath: testsEntry });
    console.log(
      `[integration] running suites${opts.grep ? ` matching /${opts.grep}/` : ""} in ${server.baseUrl} (timeout ${opts.timeoutS} s)`,
    );
    await page.goto(url);
    const result = await done;
    if (result.kind === "exit") {
      exitCode = result.code === 0 ? 0 : 1;
    } else {
      exitCode = 1;
      console.error(
        `[integration] ${result.kind === "timeout" ? `TIMEOUT after ${opts.timeoutS} s` : "the page crashed"}`,
      );
      await page.screenshot({ path: path.join(resultsDir, "failure.png") }).catch(() => {});
    }
  } finally {
    clearTimeout(timer);
    writeFileSync(consoleFile, consoleLines.join("\n") + "\n");
    await browser?.close().catch(() => {});
    await server?.stop({ saveLogsTo: path.join(resultsDir, "vscode-logs") });
    if (!opts.keep) fixture.cleanup();
    else console.log(`[integration] kept fixture ${fixture.root}`);
  }

  const report = existsSync(reportFile) ? readFileSync(reportFile, "utf8") : "";
  if (report.trim()) {
    console.log("\n" + report.trimEnd());
  } else {
    console.log("[integration] no report was written; last browser console lines:");
    console.log(consoleLines.slice(-40).join("\n"));
  }
  if (!/^\d+ passed, \d+ failed\s*$/m.test(report.trim().split("\n").pop() ?? "")) {
    // the suites never finished (load error, timeout): make the failure countable
    console.log("0 passed, 1 failed");
  }
  console.log(
    `[integration] ${exitCode === 0 ? "OK" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s — logs in ${path.relative(repoRoot, resultsDir)}/`,
  );
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("[integration] ERROR:", err instanceof Error ? err.stack : err);
    console.log("0 passed, 1 failed");
    process.exit(1);
  },
);
