/**
 * The Node that runs the user's pi. pi's bin starts with `#!/usr/bin/env node`, so in a terminal
 * it runs with the first `node` on that terminal's PATH; pi needs Node ≥ 22.19 (`engines.node`),
 * and with an older Node it dies at once (`SyntaxError … enableCompileCache`).
 *
 * Candidates, in order (duplicates dropped): the interpreter of an absolute shebang; the first
 * `node` on the PATH pi was found on; the `node` next to the pi executable (nvm / global-prefix
 * installs: `<prefix>/bin/node` is the Node pi was installed with); the first `node` on this
 * process's PATH and on the login shell's PATH. The first whose `node --version` satisfies pi's
 * `engines.node` is used (running `node --version` runs no user code). Versions are cached by the
 * binary's path and stamp.
 */

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { findOnPath, type PiInstall } from "./locate";
import { satisfiesEngine } from "./versions";
import * as l10n from "@vscode/l10n";

/** pi's own minimum when its package.json names none (pi 0.87 … 1.6: `>=22.19.0`). */
export const PI_DEFAULT_ENGINES = ">=22.19.0";

/** The user's pi with the Node to run it. */
export interface PiRuntime {
  install: PiInstall;
  /** Absolute path of the Node binary. */
  node: string;
  /** Its version, e.g. `v22.23.5`. */
  nodeVersion: string;
}

/** No usable Node: what was found, in words (a full sentence for the user). */
export class NoNodeForPiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoNodeForPiError";
  }
}

const versions = new Map<string, { stamp: string; version: string | undefined }>();

/** `node --version` of a binary (cached by path + stamp); undefined when it does not run. */
export async function nodeVersionOf(node: string, timeoutMs = 5000): Promise<string | undefined> {
  let stamp: string;
  try {
    const st = fs.statSync(node);
    stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return undefined;
  }
  const hit = versions.get(node);
  if (hit && hit.stamp === stamp) return hit.version;
  const version = await new Promise<string | undefined>((resolve) => {
    execFile(node, ["--version"], { timeout: timeoutMs, windowsHide: true }, (error, stdout) => {
      const v = String(stdout).trim();
      resolve(!error && /^v\d+\.\d+\.\d+/.test(v) ? v : undefined);
    });
  });
  versions.set(node, { stamp, version });
  return version;
}

/** The interpreter of an absolute shebang (`#!/opt/node22/bin/node`), if the script has one. */
function shebangNode(script: string): string | undefined {
  let head: string;
  try {
    const fd = fs.openSync(script, "r");
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, fs.readSync(fd, buf, 0, 256, 0)).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const m = /^#!\s*(\S+)/.exec(head);
  if (!m || /\/env$/.test(m[1]!)) return undefined;
  return path.isAbsolute(m[1]!) && path.basename(m[1]!).startsWith("node") ? m[1] : undefined;
}

/** The Node binaries to try for `install`, in order (see the module comment). */
export function nodeCandidates(
  install: PiInstall,
  env: NodeJS.ProcessEnv = process.env,
  loginShellPath?: string,
  platform: NodeJS.Platform = process.platform,
): string[] {
  const found: (string | undefined)[] = [shebangNode(install.cliPath)];
  if (install.searchPath !== undefined) found.push(findOnPath("node", install.searchPath, env, platform));
  if (install.executable) {
    const exe = platform === "win32" ? "node.exe" : "node";
    found.push(path.join(path.dirname(install.executable), exe));
  }
  found.push(findOnPath("node", env.PATH, env, platform));
  if (loginShellPath !== undefined) found.push(findOnPath("node", loginShellPath, env, platform));
  const out: string[] = [];
  for (const f of found) if (f && !out.includes(f) && fs.existsSync(f)) out.push(f);
  return out;
}

/**
 * The Node to run `install` with: the first candidate whose version satisfies pi's `engines.node`.
 * @throws {NoNodeForPiError} naming every Node looked at and its version.
 */
export async function nodeForPi(
  install: PiInstall,
  options: { env?: NodeJS.ProcessEnv; loginShellPath?: string; platform?: NodeJS.Platform } = {},
): Promise<PiRuntime> {
  const engines = install.engines ?? PI_DEFAULT_ENGINES;
  const seen: string[] = [];
  for (const node of nodeCandidates(install, options.env, options.loginShellPath, options.platform)) {
    const version = await nodeVersionOf(node);
    if (version && satisfiesEngine(version, engines)) return { install, node, nodeVersion: version };
    seen.push(`${node} (${version ?? l10n.t("does not run")})`);
  }
  throw new NoNodeForPiError(
    l10n.t(
      "pi {0} needs Node {1}, and no such Node was found{2}. Install Node 22.19 or newer (or put it first on the PATH) so that pi starts.",
      install.version,
      engines,
      seen.length ? `: ${seen.join(", ")}` : l10n.t(" (no node on the PATH)"),
    ),
  );
}
