/**
 * One listing run for `listing.ts` in a fresh process: `node measureListing.js <dir> <cacheFile>`.
 * Prints `{firstRowsMs, totalMs, memoryFirstRowsMs, memoryTotalMs, maxBlockMs, sessions, bytes}`:
 * the time to the first progress report (the picker's first rows) and to the whole listing (from
 * the cache file given, or none), the same for a second listing in the same process (the
 * extension's catalog stays in memory), and the longest event-loop block
 * (`monitorEventLoopDelay`, 1 ms resolution, plus a 5 ms interval timer's lateness).
 */

import { monitorEventLoopDelay } from "node:perf_hooks";
import { listSessionFiles, SessionCatalog } from "../../src/core/read/catalog";

async function main(): Promise<void> {
  const [dir, cacheFile] = process.argv.slice(2);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let late = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    late = Math.max(late, now - last - 5);
    last = now;
  }, 5);
  const t0 = performance.now();
  const catalog = new SessionCatalog({ cacheFile: cacheFile! });
  await catalog.load();
  const files = await listSessionFiles([dir!]);
  let firstRowsMs = -1;
  const infos = await catalog.list(files, {
    onProgress: () => {
      if (firstRowsMs < 0) firstRowsMs = performance.now() - t0;
    },
  });
  const totalMs = performance.now() - t0;
  await catalog.save();
  // again in the same process: the extension's case (the cache is loaded at start), the picker opened again
  const t1 = performance.now();
  let memoryFirstRowsMs = -1;
  await catalog.list(await listSessionFiles([dir!]), {
    onProgress: () => {
      if (memoryFirstRowsMs < 0) memoryFirstRowsMs = performance.now() - t1;
    },
  });
  const memoryTotalMs = performance.now() - t1;
  clearInterval(timer);
  histogram.disable();
  const maxBlockMs = Math.max(histogram.max / 1e6, late);
  const sessions = infos.filter((i) => i.state === "session").length;
  const bytes = files.reduce((a, f) => a + f.size, 0);
  console.log(JSON.stringify({ firstRowsMs, totalMs, memoryFirstRowsMs, memoryTotalMs, maxBlockMs, sessions, bytes }));
}

void main();
