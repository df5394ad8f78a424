#!/usr/bin/env node
// npm run test:pi-next [-- --version X.Y.Z] [--no-build] [--keep] [--files <regexp>]
//
// What the next pi changes: installs the newest pi published on npm (`dist-tags.latest` of
// @earendil-works/pi-coding-agent, or --version) into a temp dir — never into the conformance
// package, whose lock keeps `npm test` deterministic —, then runs against it, as if it were the
// reference pi:
//   1. test/conformance/oracle/check-shared-oracles.mjs: pi's own answers on the shared cases and
//      fixtures vs the saved pi 1.6.0 answers (what pi itself now answers differently);
//   2. the conformance suite (out/test/conformance, without the version matrix and the user's-pi
//      suites, which run the installed matrix): pi-context's rules for 1.6.0 vs the new pi.
// and prints what differs from 1.6.0. The oracle loads that pi through PI_ORACLE_PACKAGE_DIR +
// PI_ORACLE_VERSION (test/conformance/oracle/versions.mjs); tests that run pi's CLI use it too
// (test/support/pi-rpc.ts PI_CLI).
//
// Exit code: 0 nothing differs, 1 something differs (or the install failed), 2 usage.
// Not part of `npm test` (it needs the npm registry and its answer changes with every release).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ORACLE_DIR = join(ROOT, "test", "conformance", "oracle");
const PI_PKG = "@earendil-works/pi-coding-agent";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
/** Suites that iterate the installed matrix (their own pi versions), not the reference pi. */
const MATRIX_SUITES = new Set(["matrix.test.js", "user-pi.test.js"]);

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const value = argv[i + 1];
  if (!value || value.startsWith("--")) usage(`${name} needs a value`);
  return value;
};
function usage(message) {
  process.stderr.write(
    `test:pi-next: ${message}\nusage: npm run test:pi-next [-- --version X.Y.Z] [--no-build] [--keep] [--files <regexp>]\n`,
  );
  process.exit(2);
}
for (const a of argv)
  if (a.startsWith("--") && !["--version", "--no-build", "--keep", "--files"].includes(a)) usage(`unknown flag ${a}`);
const say = (line = "") => process.stdout.write(`${line}\n`);

const reference = JSON.parse(readFileSync(join(ORACLE_DIR, "package.json"), "utf-8")).referencePiVersion;
let version = flag("--version");
if (version !== undefined && !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) usage(`not a version: ${version}`);
if (!version) {
  const view = spawnSync(npm, ["view", PI_PKG, "dist-tags", "--json"], { encoding: "utf-8" });
  if (view.status !== 0) {
    say(`test:pi-next: could not ask npm for ${PI_PKG}'s newest version:\n${view.stderr.trim()}`);
    process.exit(1);
  }
  version = JSON.parse(view.stdout).latest;
}
say(
  `test:pi-next: pi ${version} (${flag("--version") ? "--version" : "newest on npm"}) against pi-context's rules for pi ${reference}`,
);
if (version === reference) say(`  pi ${version} is the reference itself: a control run (nothing should differ).`);

// 1. install it into a temp dir (shallow: pi keeps its own sibling packages, as in the matrix)
const tmp = mkdtempSync(join(tmpdir(), "pi-next-"));
const keep = argv.includes("--keep");
process.on("exit", () => {
  if (!keep) rmSync(tmp, { recursive: true, force: true });
});
writeFileSync(
  join(tmp, "package.json"),
  JSON.stringify({ name: "pi-next", private: true, dependencies: { [PI_PKG]: version } }, null, 2),
);
const started = Date.now();
const install = spawnSync(
  npm,
  ["install", "--install-strategy=shallow", "--no-audit", "--no-fund", "--loglevel=error"],
  { cwd: tmp, encoding: "utf-8", env: { ...process.env, npm_config_engine_strict: "false" } },
);
if (install.status !== 0) {
  say(`  npm install of ${PI_PKG}@${version} failed:\n${install.stderr.trim()}`);
  process.exit(1);
}
const piDir = join(tmp, "node_modules", ...PI_PKG.split("/"));
const installed = JSON.parse(readFileSync(join(piDir, "package.json"), "utf-8"));
say(`  installed in ${((Date.now() - started) / 1000).toFixed(1)} s: ${piDir}${keep ? " (kept)" : ""}`);
if (installed.engines?.node)
  say(`  pi ${version} wants Node ${installed.engines.node}; the oracle runs Node 22 from the conformance package`);

const { ensureConformanceInstall } = await import(join(ORACLE_DIR, "setup.mjs"));
ensureConformanceInstall(); // Node 22 and the reference pi (the conformance package, as npm test installs it)
const env = {
  ...process.env,
  PI_ORACLE_VERSION: version,
  PI_ORACLE_PACKAGE_DIR: piDir,
  PI_CONTEXT_GUARD_PROCESSES: process.env.PI_CONTEXT_GUARD_PROCESSES ?? "[]",
};

// the oracle must load it at all (a release whose sibling packages npm resolves to other versions does not)
{
  const { OracleClient } = await import(join(ORACLE_DIR, "oracle-client.mjs"));
  let problem;
  try {
    const client = await OracleClient.start({ env });
    try {
      await client.catalog({});
    } finally {
      await client.close();
    }
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  if (problem) {
    say(`  the oracle cannot load pi ${version}: ${problem.trim().split("\n").slice(-6).join("\n    ")}`);
    say(
      "  Its sibling packages (@earendil-works/*) may have resolved to other versions: add it to the matrix with pinned siblings instead (node test/conformance/oracle/add-version.mjs <version> --pin-siblings).",
    );
    process.exit(1);
  }
}

// 2. pi's own answers vs the saved 1.6.0 ones
say("");
say(`1. pi ${version}'s own answers on the shared cases and fixtures vs the saved pi ${reference} answers`);
const shared = spawnSync(process.execPath, [join(ORACLE_DIR, "check-shared-oracles.mjs"), "--skip-large"], {
  cwd: ROOT,
  encoding: "utf-8",
  env,
});
// each check that differs with its first details (a catalog difference lists every model), then the count
const sharedLines = `${shared.stdout}${shared.stderr}`.trim().split("\n");
let details = 0;
for (const line of sharedLines) {
  if (/^FAIL /.test(line)) {
    say(`   ${line}`);
    details = 0;
  } else if (/^ {7}- /.test(line) && details >= 0) {
    if (details++ < 6) say(`   ${line}`);
    else if (details === 7) say("          …");
  } else if (/^(ok|SKIP) /.test(line)) details = -1;
}
say(`   ${sharedLines[sharedLines.length - 1]}`);
const sharedDiffers = shared.status !== 0;

// 3. the conformance suite against it
if (!argv.includes("--no-build")) {
  say("");
  say("   npm run compile …");
  const compile = spawnSync(npm, ["run", "compile", "--silent"], { cwd: ROOT, encoding: "utf-8" });
  if (compile.status !== 0) {
    say(`   compile failed:\n${compile.stdout}${compile.stderr}`);
    process.exit(1);
  }
}
const only = flag("--files") ? new RegExp(flag("--files")) : undefined;
const suiteDir = join(ROOT, "out", "test", "conformance");
const files = readdirSync(suiteDir)
  .filter((f) => f.endsWith(".test.js") && !MATRIX_SUITES.has(f) && (!only || only.test(f)))
  .sort()
  .map((f) => join(suiteDir, f));
say("");
say(`2. the conformance suite (${files.length} files) against pi ${version}`);
const output = await new Promise((resolve) => {
  let text = "";
  const child = spawn(
    process.execPath,
    ["--require", join(ROOT, "scripts", "fc-seed.cjs"), "--test", "--test-reporter=spec", ...files],
    { cwd: ROOT, env },
  );
  for (const stream of [child.stdout, child.stderr])
    stream.on("data", (chunk) => {
      text += chunk;
    });
  child.on("exit", (code) => resolve({ text, code }));
});
const lines = output.text.split("\n");
const count = (what) => Number(lines.find((l) => l.startsWith(`ℹ ${what} `))?.slice(what.length + 3) ?? 0);
const passed = count("pass");
const failed = count("fail");
// the spec reporter lists the failing tests (and their first error line) after "failing tests:"
const failing = [];
const at = lines.findIndex((l) => l.includes("failing tests:"));
if (at >= 0)
  for (let i = at + 1; i < lines.length; i++) {
    const m = /^✖ (.*) \(\d/.exec(lines[i]);
    if (!m) continue;
    const detail = lines
      .slice(i + 1, i + 4)
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith("at "));
    failing.push({ name: m[1], detail });
  }

say("");
say(`test:pi-next: pi ${version} vs pi ${reference} (${((Date.now() - started) / 60000).toFixed(1)} min)`);
say(`  pi's own answers (shared cases and fixtures): ${sharedDiffers ? "differ (see 1.)" : "the same"}`);
say(
  `  conformance: ${passed} passed, ${failed} failed${failed ? " — where pi-context's 1.6.0 rules and this pi differ:" : ""}`,
);
for (const f of failing) say(`    ✖ ${f.name}${f.detail ? `\n        ${f.detail.slice(0, 300)}` : ""}`);
if (failed === 0 && !sharedDiffers) say(`  nothing differs: pi-context's numbers hold for pi ${version}.`);
else
  say(
    "  Next: read the release's CHANGELOG, add it to the matrix (node test/conformance/oracle/add-version.mjs <version>), and put each rule change behind a switch in src/core/pi/versions.ts (docs/testing.md).",
  );
if (existsSync(join(tmp, "node_modules")) && keep) say(`  the install is kept in ${tmp}`);
process.exit(failed === 0 && !sharedDiffers ? 0 : 1);
