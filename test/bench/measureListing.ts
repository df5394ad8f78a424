/**
 * One listing run for `listing.ts` in a fresh process: `node measureListing.js <dir> <cacheFile>`.
 * Prints `{firstRowsMs, totalMs, pickerFirstRowsMs, pickerTotalMs, rowsMs, maxBlockMs,
 * maxCpuBlockMs, sessions, bytes}`:
 * - `firstRowsMs` / `totalMs`: from a fresh process (the cache file given, or none) to the first
 *   progress report turned into the picker's first rows (`sessionPickRows`, the first
 *   `PICKER_FIRST_ROWS` of the family order, as the picker renders them first), and to the whole listing;
 * - `pickerFirstRowsMs` / `pickerTotalMs`: "Pi Context: Select Session…" opened again in the same process —
 *   the extension's case: the catalog is in memory (loaded at activation) and the files' `stat`s
 *   are the scanner's last look, so the listing starts from them (as `PiSessionSource.listSessions`);
 * - `rowsMs`: building the picker rows of the whole listing once;
 * - `maxBlockMs`: the longest event-loop block (`monitorEventLoopDelay`, 1 ms resolution, and a
 *   5 ms interval timer's lateness), wall clock — on a loaded machine this includes the time the OS
 *   did not run the process at all;
 * - `maxCpuBlockMs`: the same timer's lateness, each capped by the CPU time the process used during
 *   that gap (`process.cpuUsage`, all its threads): how long our own work could have held the loop.
 */

import { monitorEventLoopDelay } from "node:perf_hooks";
import { listSessionFiles, SessionCatalog } from "../../src/core/read/catalog";
import type { SessionInfo } from "../../src/core/read/sessionInfo";
import { PICKER_FIRST_ROWS, sessionPickRows } from "../../src/viewModel/sessionPicker";

/** The picker's rows; `first`: its first render while the listing is read (the first screen, as `selectSession`). */
const rowsOf = (infos: SessionInfo[], first = false) =>
  sessionPickRows(
    infos.filter((i) => i.state === "session"),
    { nowMs: Date.now(), locale: "en-US", ...(first ? { limit: PICKER_FIRST_ROWS } : {}) },
  );

async function main(): Promise<void> {
  const [dir, cacheFile] = process.argv.slice(2);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let late = 0;
  let cpuLate = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const gap = now - last - 5;
    late = Math.max(late, gap);
    cpuLate = Math.max(cpuLate, Math.min(gap, (cpu.user + cpu.system) / 1000));
    last = now;
    lastCpu = process.cpuUsage();
  }, 5);
  const t0 = performance.now();
  const catalog = new SessionCatalog({ cacheFile: cacheFile! });
  await catalog.load();
  const files = await listSessionFiles([dir!]);
  let firstRowsMs = -1;
  const infos = await catalog.list(files, {
    onProgress: (list) => {
      if (firstRowsMs >= 0) return;
      rowsOf(list, true);
      firstRowsMs = performance.now() - t0;
    },
  });
  const totalMs = performance.now() - t0;
  await catalog.save();
  // the picker opened again: catalog in memory, the scanner's stats
  const t1 = performance.now();
  let pickerFirstRowsMs = -1;
  await catalog.list(files, {
    onProgress: (list) => {
      if (pickerFirstRowsMs >= 0) return;
      rowsOf(list, true);
      pickerFirstRowsMs = performance.now() - t1;
    },
  });
  const pickerTotalMs = performance.now() - t1;
  const t2 = performance.now();
  rowsOf(infos);
  const rowsMs = performance.now() - t2;
  clearInterval(timer);
  histogram.disable();
  const maxBlockMs = Math.max(histogram.max / 1e6, late);
  const sessions = infos.filter((i) => i.state === "session").length;
  const bytes = files.reduce((a, f) => a + f.size, 0);
  console.log(
    JSON.stringify({
      firstRowsMs,
      totalMs,
      pickerFirstRowsMs,
      pickerTotalMs,
      rowsMs,
      maxBlockMs,
      maxCpuBlockMs: cpuLate,
      sessions,
      bytes,
    }),
  );
}

void main();
