#!/usr/bin/env node
// npm test: every test stage in order, streamed, with a total at the end.
//   1. npm run lint              (only if an eslint config exists)
//   2. npm run typecheck:webview (src/ and test/ are type-checked by the unit stage's compile)
//   3. npm run test:unit
//   4. npm run test:conformance  (only if the script exists)
//   5. npm run test:integration
//   6. npm run test:e2e -- --no-build  (Playwright UI tests; the integration stage built dist/ and out/);
//      skipped with `--no-e2e` or PI_CONTEXT_E2E=0 (e.g. a quick local run)
// Each stage's pass/fail counts are parsed from its output: node:test summaries (`ℹ pass N` /
// `ℹ fail N`, or TAP `# pass N` / `# fail N`) and our mocha runner's `N passed, N failed`.
// A stage that exits non-zero without reporting a failure counts as one failure (lint, build
// errors). All stages run even after a failure (`--bail` stops at the first). Exit code is
// non-zero if any stage failed. The last line printed is always `N passed, N failed` (totals).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bail = process.argv.includes("--bail");
const pkg = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8"));
const scripts = pkg.scripts ?? {};

const ESLINT_CONFIGS = [
  "eslint.config.js",
  "eslint.config.mjs",
  "eslint.config.cjs",
  "eslint.config.ts",
  "eslint.config.mts",
  "eslint.config.cts",
];

/** @type {{script: string, args?: string[]}[]} */
const plan = [];
const notes = [];
if (scripts.lint && ESLINT_CONFIGS.some((f) => existsSync(path.join(repoRoot, f)))) plan.push({ script: "lint" });
else notes.push("lint: skipped (no eslint.config.* in the repo root yet)");
if (scripts["typecheck:webview"]) plan.push({ script: "typecheck:webview" });
plan.push({ script: "test:unit" });
if (scripts["test:conformance"]) plan.push({ script: "test:conformance" });
else notes.push("test:conformance: skipped (no such npm script)");
plan.push({ script: "test:integration" });
// the integration stage's build (esbuild + tsc) is what the e2e files load: no second build
const withE2e = !process.argv.includes("--no-e2e") && process.env.PI_CONTEXT_E2E !== "0";
if (scripts["test:e2e"] && withE2e) plan.push({ script: "test:e2e", args: ["--no-build"] });
else notes.push(`test:e2e: skipped (${scripts["test:e2e"] ? "--no-e2e / PI_CONTEXT_E2E=0" : "no such npm script"})`);

const stripAnsi = (s) => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");

/** Sum every node:test summary and every mocha `N passed, N failed` line in `text`. */
export function parseCounts(text) {
  const t = stripAnsi(text);
  let passed = 0;
  let failed = 0;
  let found = false;
  for (const m of t.matchAll(/^\s*[ℹ#] pass (\d+)\s*$/gm)) {
    passed += Number(m[1]);
    found = true;
  }
  for (const m of t.matchAll(/^\s*[ℹ#] fail (\d+)\s*$/gm)) {
    failed += Number(m[1]);
    found = true;
  }
  for (const m of t.matchAll(/^(\d+) passed, (\d+) failed\s*$/gm)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
    found = true;
  }
  return { passed, failed, found };
}

function runStage(script, args = []) {
  return new Promise((resolve) => {
    const started = Date.now();
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const child = spawn(npm, ["run", "--silent", script, ...(args.length ? ["--", ...args] : [])], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: process.env,
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.stderr.on("data", (d) => {
      out += d;
      process.stderr.write(d);
    });
    child.on("exit", (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), out, seconds: (Date.now() - started) / 1000 }),
    );
    child.on("error", (err) => resolve({ code: 1, out: String(err), seconds: (Date.now() - started) / 1000 }));
  });
}

async function main() {
  for (const n of notes) console.log(`[test-all] ${n}`);
  const results = [];
  for (const { script, args } of plan) {
    console.log(`\n[test-all] ── npm run ${script}${args?.length ? ` -- ${args.join(" ")}` : ""} ──`);
    const r = await runStage(script, args);
    const c = parseCounts(r.out);
    let { passed, failed } = c;
    if (r.code !== 0 && failed === 0) failed = 1; // failed without a countable test failure
    const ok = r.code === 0 && failed === 0;
    results.push({ script, ok, passed, failed, counted: c.found, code: r.code, seconds: r.seconds });
    console.log(
      `[test-all] ${script}: ${ok ? "ok" : `FAILED (exit ${r.code})`}, ${passed} passed, ${failed} failed, ${r.seconds.toFixed(1)} s`,
    );
    if (!ok && bail) break;
  }
  console.log("\n[test-all] summary");
  for (const r of results) {
    console.log(
      `  ${r.ok ? "ok  " : "FAIL"}  ${r.script.padEnd(18)} ${String(r.passed).padStart(4)} passed ${String(r.failed).padStart(3)} failed  ${r.seconds.toFixed(1).padStart(6)} s${r.counted ? "" : "  (no test counts in output)"}`,
    );
  }
  for (const n of notes) console.log(`  skip  ${n}`);
  const passed = results.reduce((a, r) => a + r.passed, 0);
  const failed = results.reduce((a, r) => a + r.failed, 0);
  const anyFailed = results.some((r) => !r.ok);
  console.log(`${passed} passed, ${failed} failed`);
  return anyFailed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      console.log("0 passed, 1 failed");
      process.exit(1);
    },
  );
}
