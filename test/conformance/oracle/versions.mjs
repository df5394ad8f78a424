// The pi versions installed in the conformance package (the conformance matrix), derived from
// package.json: every dependency named `pi-<version>` is an npm alias of one pi version
// (`"pi-1.5.2": "npm:@earendil-works/pi-coding-agent@1.5.2"`), installed side by side with
// `install-strategy=shallow` (.npmrc: each alias gets its own complete node_modules, so one
// version's `overrides` cannot leak into another's tree). `referencePiVersion` is the version the
// single-version tests, the shared oracle files and the shipped catalog snapshot use. Runs on any
// Node >= 18.
//
//   import { PI_VERSIONS, REFERENCE_PI_VERSION, piPackageDir } from "./versions.mjs";
//
// Add a version with `node test/conformance/oracle/add-version.mjs <version>`.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DIR = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(DIR, "package.json"), "utf-8"));

/** `1.5.2` < `1.6.0`: numeric compare of dotted versions (no pre-releases in the matrix). */
export function compareVersions(a, b) {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Every pi version of the matrix, newest first. */
export const PI_VERSIONS = Object.keys(manifest.dependencies)
  .filter((name) => /^pi-\d+\.\d+\.\d+$/.test(name))
  .map((name) => name.slice(3))
  .sort((a, b) => compareVersions(b, a));

/** The reference pi version (package.json `referencePiVersion`). */
export const REFERENCE_PI_VERSION = manifest.referencePiVersion;
if (!PI_VERSIONS.includes(REFERENCE_PI_VERSION))
  throw new Error(
    `package.json: referencePiVersion ${REFERENCE_PI_VERSION} is not one of the pi-<version> dependencies`,
  );

/** The installed package dir of one pi version of the matrix. @throws for a version not in the matrix. */
export function piPackageDir(version) {
  if (!PI_VERSIONS.includes(version))
    throw new Error(`pi ${version} is not in the conformance matrix (${PI_VERSIONS.join(", ")})`);
  return join(DIR, "node_modules", `pi-${version}`);
}

/** pi-ai as that pi version's library code sees it (its own node_modules; shallow layout). */
export function piAiDir(version) {
  return join(piPackageDir(version), "node_modules", "@earendil-works", "pi-ai");
}

/** pi's CLI bundle of one version (`<pkg>/dist/bundle/cli.js`, the `pi` bin). */
export function piCliPath(version) {
  return join(piPackageDir(version), "dist", "bundle", "cli.js");
}
