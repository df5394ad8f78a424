/**
 * Where the repository and its test data are, independent of how deep a compiled test file sits
 * (tests compile to `out/test/…`, mirroring `test/…`).
 */

import * as fs from "node:fs";
import * as path from "node:path";

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, "package.json");
    if (fs.existsSync(pkg) && fs.existsSync(path.join(dir, "src", "extension.ts"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no pi-context repository above ${from}`);
  }
}

/** The repository root (where package.json, src/ and test/ live). */
export const REPO_ROOT = findRepoRoot(__dirname);
/** `test/fixtures/`: pi 1.6.0 sessions (`pi-1.6.0/`), the shared cases (`cases/`), real configs and sessions. */
export const FIXTURES = path.join(REPO_ROOT, "test", "fixtures");
