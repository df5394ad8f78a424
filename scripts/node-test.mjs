#!/usr/bin/env node
// Run `node --test` on an explicit list of files found under one or more directories.
// Node 20 does not expand globs given to --test, and a directory argument can silently find
// nothing, so we list the files ourselves.
//
// usage: node scripts/node-test.mjs [--suffix .test.js] [--allow-empty] DIR... [-- extra node --test args]
import { spawn } from "node:child_process";
import fs, { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const own = dash === -1 ? argv : argv.slice(0, dash);
const extra = dash === -1 ? [] : argv.slice(dash + 1);
let suffix = ".test.js";
let allowEmpty = false;
const dirs = [];
for (let i = 0; i < own.length; i++) {
  if (own[i] === "--suffix") suffix = own[++i];
  else if (own[i] === "--allow-empty") allowEmpty = true;
  else dirs.push(own[i]);
}
if (dirs.length === 0) {
  console.error("usage: node scripts/node-test.mjs [--suffix .test.js] [--allow-empty] DIR... [-- node --test args]");
  process.exit(2);
}

const files = [];
const walk = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const full = path.join(d, e.name);
    if (e.isDirectory() && e.name !== "node_modules") walk(full);
    else if (e.isFile() && e.name.endsWith(suffix)) files.push(full);
  }
};
for (const d of dirs) if (existsSync(d)) walk(d);
files.sort();

if (files.length === 0) {
  const msg = `no *${suffix} files under ${dirs.join(", ")}`;
  if (allowEmpty) {
    console.log(`${msg} (allowed)\nℹ pass 0\nℹ fail 0`);
    process.exit(0);
  }
  console.error(msg);
  process.exit(1);
}

const seed = path.join(path.dirname(new URL(import.meta.url).pathname), "fc-seed.cjs");
// The live-session guard sees no pi process unless a test gives it one (src/core/proc/guardTable.ts):
// tests that append never depend on the pi processes other people run on this machine. pi-context's
// own-write records (src/core/access/ownWrites.ts) go to a folder of this run, never the user's.
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-test-state-"));
const child = spawn(process.execPath, ["--require", seed, "--test", "--test-reporter=spec", ...extra, ...files], {
  stdio: "inherit",
  env: {
    ...process.env,
    PI_CONTEXT_GUARD_PROCESSES: process.env.PI_CONTEXT_GUARD_PROCESSES ?? "[]",
    PI_CONTEXT_STATE_DIR: process.env.PI_CONTEXT_STATE_DIR ?? stateDir,
  },
});
child.on("exit", (code, signal) => {
  fs.rmSync(stateDir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
