// pi 1.6.0's `/resume` listing of one folder (`SessionManager.list(cwd, dir)`), the whole process
// timed by the caller (`test/bench/listing.ts` `smallListingBench`: import, listing, exit). Runs
// under the conformance Node 22:
//   "$(node test/conformance/oracle/setup.mjs)" test/conformance/oracle/bench-pi-list-folder.mjs <dir> <cwd>
// Prints {sessions}. The files are only read.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [dir, cwd] = process.argv.slice(2);
if (!dir || !cwd) {
  console.error("usage: bench-pi-list-folder.mjs <dir> <cwd>");
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), "pi-bench-list-"));
process.env.HOME = tmp;
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = tmp;
const pi = await import("@earendil-works/pi-coding-agent");
const infos = await pi.SessionManager.list(cwd, dir);
rmSync(tmp, { recursive: true, force: true });
console.log(JSON.stringify({ sessions: infos.length }));
