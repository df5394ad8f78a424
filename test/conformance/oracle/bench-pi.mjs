// pi 1.6.0's own cost of opening a session and computing the projected context tokens its footer
// and threshold use (phase timings of pi's functions). Runs under the conformance Node 22:
//   "$(node test/conformance/oracle/setup.mjs)" test/conformance/oracle/bench-pi.mjs <session.jsonl>
// Prints one JSON object: {openMs, projectionMs, estimateMs, totalMs, tokens, maxRssMB}. The file is
// opened read-only in effect: pi only writes v1/v2 files (migration) or files without a final "\n",
// and the benchmark files are v3 and newline-terminated (checked before and after).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const file = process.argv[2];
if (!file) {
  console.error("usage: bench-pi.mjs <session.jsonl>");
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), "pi-bench-"));
process.env.HOME = tmp;
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = tmp;
const before = statSync(file);
const { piPackageDir, REFERENCE_PI_VERSION } = await import("./versions.mjs");
const PI_INDEX = pathToFileURL(join(piPackageDir(REFERENCE_PI_VERSION), "dist", "index.js")).href;
const pi = await import(PI_INDEX);
const compaction = await import(new URL("core/compaction/compaction.js", PI_INDEX).href);
const t0 = performance.now();
const sm = pi.SessionManager.open(file);
const t1 = performance.now();
const projection = sm.buildSessionProjection();
const branch = sm.getBranch();
const t2 = performance.now();
const estimate = compaction.estimateProjectedContextTokens(projection, branch);
const t3 = performance.now();
const after = statSync(file);
rmSync(tmp, { recursive: true, force: true });
if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
  console.error("pi modified the benchmark file");
  process.exit(1);
}
console.log(
  JSON.stringify({
    openMs: t1 - t0,
    projectionMs: t2 - t1,
    estimateMs: t3 - t2,
    totalMs: t3 - t0,
    tokens: estimate.tokens,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  }),
);
