// The build both real-VS-Code runners need: `node esbuild.mjs` (dist/extension.js, dist/cli.js,
// the webview) and `tsc -p tsconfig.json` (out/: the integration suites, and test/support/*
// that e2e tests load, e.g. out/test/support/scripted-openai.js). Used by run-integration.mjs
// and run-e2e.mjs.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./vscode-host-setup.mjs";

/**
 * esbuild, then tsc; throws on a failed step (a type error is a failure unless `allowTypeErrors`).
 * @param {{allowTypeErrors?: boolean, wipe?: string[], label?: string}} [opts]
 *   wipe: folders under the repo removed first (compiled suites of deleted sources would still run)
 */
export function buildForTests({ allowTypeErrors = false, wipe = [], label = "build" } = {}) {
  const t0 = Date.now();
  for (const dir of wipe) rmSync(path.join(repoRoot, dir), { recursive: true, force: true });
  const steps = [
    [process.execPath, [path.join(repoRoot, "esbuild.mjs")]],
    [
      process.execPath,
      [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(repoRoot, "tsconfig.json")],
    ],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: "inherit" });
    const isTsc = args[0].endsWith(`${path.sep}tsc`);
    if (r.status !== 0 && isTsc && allowTypeErrors && r.status === 2) {
      console.warn(`[${label}] WARNING: type errors (above); running anyway because of --allow-type-errors`);
      continue;
    }
    if (r.status !== 0)
      throw new Error(
        `build step failed: ${path.basename(args[0])} ${args.slice(1).join(" ")} (exit ${r.status ?? r.signal})`,
      );
  }
  console.log(`[${label}] built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
