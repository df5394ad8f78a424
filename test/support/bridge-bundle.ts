/**
 * The live bridge bundle as shipped (`dist/bridge/pi-context-bridge.js`, built by `esbuild.mjs`),
 * for tests that install it into a temporary pi agent dir. Rebuilt when a `src/bridge/` source is
 * newer than the bundle (the conformance tests run after `tsc` only).
 */

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "./pi-rpc";

export const BRIDGE_BUNDLE = path.join(REPO_ROOT, "dist", "bridge", "pi-context-bridge.js");

/** The shipped bridge bundle's text (building it first when it is missing or stale). */
export function ensureBridgeBundle(): string {
  const srcDir = path.join(REPO_ROOT, "src", "bridge");
  const newestSource = Math.max(...fs.readdirSync(srcDir).map((n) => fs.statSync(path.join(srcDir, n)).mtimeMs));
  let built = 0;
  try {
    built = fs.statSync(BRIDGE_BUNDLE).mtimeMs;
  } catch {
    built = 0;
  }
  if (built < newestSource) execFileSync(process.execPath, ["esbuild.mjs"], { cwd: REPO_ROOT, stdio: "inherit" });
  return fs.readFileSync(BRIDGE_BUNDLE, "utf8");
}
