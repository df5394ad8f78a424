// pi 1.6.0's own session listing (`SessionManager.listAll(dir)`: buildSessionInfo per file, 10 at
// a time) on one folder, for `test/bench/listing.ts`. Runs under the conformance Node 22:
//   "$(node test/conformance/oracle/setup.mjs)" test/conformance/oracle/bench-pi-list.mjs <dir>
// Prints {firstRowsMs, totalMs, maxBlockMs, sessions}: first partial list pi publishes, the whole
// listing, the longest event-loop block. The files are only read.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: bench-pi-list.mjs <dir>");
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), "pi-bench-list-"));
process.env.HOME = tmp;
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = tmp;
const pi = await import("@earendil-works/pi-coding-agent");
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const t0 = performance.now();
let firstRowsMs = -1;
const infos = await pi.SessionManager.listAll(dir, (_loaded, _total, partial) => {
  if (partial && firstRowsMs < 0) firstRowsMs = performance.now() - t0;
});
const totalMs = performance.now() - t0;
histogram.disable();
rmSync(tmp, { recursive: true, force: true });
console.log(JSON.stringify({ firstRowsMs, totalMs, maxBlockMs: histogram.max / 1e6, sessions: infos.length }));
