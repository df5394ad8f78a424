/**
 * The Node that runs the user's pi: in a terminal `#!/usr/bin/env node` picks the first `node` on the
 * PATH, and pi dies at once on a Node older than its `engines.node`. The first candidate whose
 * `node --version` satisfies it wins (running `--version` runs no user code).
 */

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { findOnPath, type PiInstall } from "./locate";
import { satisfiesEngine } from "./versions";
import * as l10n from "@vscode/l10n";

/** pi's own minimum when its package.json names none (pi 0.87 … 1.6). */
export const PI_DEFAULT_ENGINES = ">=22.19.0";

export interface PiRuntime {
  install: PiInstall;
  node: string;
  nodeVersion: string;
}

/** No usable Node: a full sentence for the user. */
export class NoNodeForPiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoNodeForPiError";
  }
}

const versions = new Map<string, { stamp: string; version: string | undefined }>();

/** `node --version` (cached by path + stamp); undefined when it does not run. */
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

/**
 * Node binaries to try, in order: an absolute shebang's, the PATH pi was found on, next to pi's
 * executable (the one pi was installed with), this process's PATH, the login shell's.
 */
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

/** The first candidate satisfying pi's `engines.node`. @throws {NoNodeForPiError} naming every Node tried. */
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
