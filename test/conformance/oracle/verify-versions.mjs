#!/usr/bin/env node
// Checks the installed conformance matrix: for every pi version (versions.mjs), every
// `@earendil-works/*` package that pi reaches by Node's lookup (walking up node_modules dirs) has
// the intended version (1.0.3's chord is pinned to 0.87.1, the last one on npm), pi's library
// `dist/index.js` imports, and its CLI bundle prints its version (`--version`, in an empty HOME).
// Run with the Node 22 of the package (setup.mjs prints it). Exit 1 on any problem.
//
//   "$(node test/conformance/oracle/setup.mjs)" test/conformance/oracle/verify-versions.mjs

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PI_VERSIONS, piCliPath, piPackageDir } from "./versions.mjs";

const ROOT = dirname(fileURLToPath(import.meta.url));
const readJson = (file) => JSON.parse(readFileSync(file, "utf-8"));

/** Node's lookup of `name` from a package dir: `<dir>/node_modules/<name>`, then each ancestor's. */
function lookup(fromDir, name) {
  for (let d = fromDir; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return realpathSync(p);
    if (d === dirname(d)) return null;
  }
}

/** The version a sibling package of pi `want` must have (chord ends at 0.87.1 on npm). */
const expected = (dep, want) =>
  dep === "@earendil-works/chord" && want.split(".").map(Number)[0] >= 1 ? "0.87.1" : want;

const home = mkdtempSync(join(tmpdir(), "pi-verify-"));
let bad = 0;
try {
  for (const version of PI_VERSIONS) {
    const top = realpathSync(piPackageDir(version));
    const seen = new Set();
    const problems = [];
    const walk = (dir) => {
      const pkg = readJson(join(dir, "package.json"));
      for (const dep of Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith("@earendil-works/"))) {
        const at = lookup(dir, dep);
        if (!at) {
          problems.push(`${pkg.name}@${pkg.version} -> ${dep}: MISSING`);
          continue;
        }
        const v = readJson(join(at, "package.json")).version;
        if (v !== expected(dep, version))
          problems.push(
            `${pkg.name}@${pkg.version} -> ${dep}@${v} (want ${expected(dep, version)}) at ${relative(ROOT, at)}`,
          );
        if (!seen.has(at)) {
          seen.add(at);
          walk(at);
        }
      }
    };
    walk(top);
    let lib = "ok";
    try {
      const mod = await import(pathToFileURL(join(top, "dist", "index.js")).href);
      if (mod.VERSION !== version) lib = `VERSION is ${mod.VERSION}`;
    } catch (error) {
      lib = `FAIL ${String(error?.message ?? error).split("\n")[0]}`;
    }
    let cli;
    try {
      cli = execFileSync(process.execPath, [piCliPath(version), "--version"], {
        env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, "agent"), PI_OFFLINE: "1" },
        stdio: "pipe",
      })
        .toString()
        .trim();
    } catch {
      cli = "FAIL";
    }
    process.stdout.write(
      `pi ${version}: ${seen.size} @earendil-works packages ${problems.length ? `WRONG:\n  ${problems.join("\n  ")}` : "all right"}; library import ${lib}; cli --version ${cli}\n`,
    );
    bad += problems.length + (lib === "ok" ? 0 : 1) + (cli === version ? 0 : 1);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.exitCode = bad ? 1 : 0;
