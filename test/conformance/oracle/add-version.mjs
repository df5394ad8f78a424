#!/usr/bin/env node
// Add a pi version to the conformance matrix in one command:
//
//   node test/conformance/oracle/add-version.mjs 1.7.0 [--pin-siblings] [--no-install]
//
// 1. package.json gets `"pi-<version>": "npm:@earendil-works/pi-coding-agent@<version>"`;
//    --pin-siblings also adds `overrides["pi-<version>"]` pinning every `@earendil-works/*`
//    dependency of that pi to the same version (`@earendil-works/chord` to 0.87.1, the last one on
//    npm) — needed for releases whose `^x.y.z` sibling ranges resolve to newer siblings, or whose
//    siblings are gone from npm (pi 1.0.3, 0.99.1: `ETARGET … chord@^1.0.3`);
// 2. `npm install` in this directory updates package-lock.json (the shallow layout of .npmrc);
// 3. verify-versions.mjs checks that every pi reaches its own siblings, imports and runs.
// Then `npm run test:conformance` runs the new version through the matrix (test/conformance/
// matrix.test.ts): fixtures, cases, random trees, settings/models, its catalog. Where it fails,
// read the release's CHANGELOG, add a switch to src/core/pi/versions.ts and a row to
// docs/notes/pi-versions.md (see docs/testing.md, "Checking a new pi release").
// Runs on any Node >= 18; needs the npm registry (this is the only step that does).

import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DIR = dirname(fileURLToPath(import.meta.url));
const PI_PKG = "@earendil-works/pi-coding-agent";
const argv = process.argv.slice(2);
const version = argv.find((a) => !a.startsWith("--"));
const pinSiblings = argv.includes("--pin-siblings");
const install = !argv.includes("--no-install");

function fail(message) {
  process.stderr.write(`add-version: ${message}\n`);
  process.exit(1);
}

if (!version || !/^\d+\.\d+\.\d+$/.test(version))
  fail("usage: node test/conformance/oracle/add-version.mjs <version> [--pin-siblings] [--no-install]");

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const manifestPath = join(DIR, "package.json");
const manifest = JSON.parse(readFileSync(manifestPath, "utf-8"));
const alias = `pi-${version}`;
if (manifest.dependencies[alias]) process.stderr.write(`add-version: ${alias} is already in package.json\n`);
manifest.dependencies[alias] = `npm:${PI_PKG}@${version}`;
manifest.dependencies = Object.fromEntries(Object.entries(manifest.dependencies).sort(([a], [b]) => (a < b ? -1 : 1)));

if (pinSiblings) {
  const deps = JSON.parse(
    execFileSync(npm, ["view", `${PI_PKG}@${version}`, "dependencies", "--json"], { encoding: "utf-8" }),
  );
  const pins = {};
  for (const name of Object.keys(deps)
    .filter((d) => d.startsWith("@earendil-works/"))
    .sort())
    pins[name] = name === "@earendil-works/chord" ? "0.87.1" : version;
  manifest.overrides = { ...(manifest.overrides ?? {}), [alias]: pins };
  process.stderr.write(`add-version: overrides.${alias} = ${JSON.stringify(pins)}\n`);
}
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
process.stderr.write(`add-version: package.json: ${alias}\n`);

if (install) {
  const started = Date.now();
  const result = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: DIR,
    stdio: "inherit",
    env: { ...process.env, npm_config_engine_strict: "false" },
  });
  if (result.status !== 0)
    fail(
      `npm install failed (exit ${result.status}). A sibling package of pi ${version} may be missing from npm: try --pin-siblings.`,
    );
  process.stderr.write(`add-version: installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const { NODE22_PATH, markInstalled } = await import("./setup.mjs");
  const verify = spawnSync(NODE22_PATH, [join(DIR, "verify-versions.mjs")], { stdio: "inherit" });
  if (verify.status !== 0)
    fail(
      `verify-versions.mjs failed: pi ${version} does not reach its own sibling packages. Try --pin-siblings (and check the lock).`,
    );
  markInstalled(); // the install is fresh: no second `npm ci` on the next test run
}
process.stdout.write(
  `pi ${version} is in the matrix. Next: npm run test:conformance (the matrix runs it), then read pi's CHANGELOG for rule changes.\n`,
);
