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

import { existsSync, readFileSync } from "node:fs";
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

/**
 * A pi outside the matrix (`npm run test:pi-next`: the newest pi on npm, installed in a temp dir):
 * `PI_ORACLE_PACKAGE_DIR` names its package dir, and `PI_ORACLE_VERSION` its version.
 */
export const EXTRA_PI_DIR = process.env.PI_ORACLE_PACKAGE_DIR || undefined;
const EXTRA_PI_VERSION = EXTRA_PI_DIR
  ? JSON.parse(readFileSync(join(EXTRA_PI_DIR, "package.json"), "utf-8")).version
  : undefined;

/**
 * The installed package dir of one pi version of the matrix (or of the pi `PI_ORACLE_PACKAGE_DIR`
 * names). @throws for a version not in the matrix.
 */
export function piPackageDir(version) {
  if (EXTRA_PI_DIR && version === EXTRA_PI_VERSION) return EXTRA_PI_DIR;
  if (!PI_VERSIONS.includes(version))
    throw new Error(`pi ${version} is not in the conformance matrix (${PI_VERSIONS.join(", ")})`);
  return join(DIR, "node_modules", `pi-${version}`);
}

/** pi-ai as that pi version's library code sees it (its own node_modules; shallow layout). */
export function piAiDir(version) {
  const nested = join(piPackageDir(version), "node_modules", "@earendil-works", "pi-ai");
  // a pi outside the matrix may have been installed with its siblings hoisted next to it
  if (EXTRA_PI_DIR && version === EXTRA_PI_VERSION && !existsSync(nested)) return join(EXTRA_PI_DIR, "..", "pi-ai");
  return nested;
}

/** pi's CLI bundle of one version (`<pkg>/dist/bundle/cli.js`, the `pi` bin). */
export function piCliPath(version) {
  return join(piPackageDir(version), "dist", "bundle", "cli.js");
}
