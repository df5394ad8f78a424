/**
 * The session listing at scale (part of `npm run bench`): 10 000 sessions, ≥ 20 GB, in one folder,
 * listed by our catalog (cold: no cache; warm: the cache file of the cold run; each the median of the
 * bench's runs) and by pi 1.6.0's own `SessionManager.listAll(dir)` (once), each in a fresh process
 * on the same Node 22. Prints the time to the first picker rows, the whole listing, the longest event-loop block (`perf_hooks.monitorEventLoopDelay`;
 * also bounded by the CPU time used, see `measureListing.ts`) and ours/pi; and "Select Session"
 * opened in a running extension (catalog in memory, the scanner's `stat`s). Targets (issue 15): first rows ≤ 200 ms cold and ≤ 50 ms warm, no block > 50 ms,
 * whole listing ≤ 0.5× pi's.
 *
 * The files are sparse (`bench-data/listing/`, gitignored): a real head (header, model change, the
 * first user message, sometimes a name), a hole of ~2 MB (zeros: one line pi and we must read
 * through), a real tail (answers, sometimes a rename). ~80 MB on disk for 20 GB of content.
 * Env: PI_CONTEXT_BENCH_LISTING_FILES (default 10000), PI_CONTEXT_BENCH_LISTING_MB (default 2.1 per file).
 */

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../support/paths";
import { median } from "./median";

const FILES = Number(process.env.PI_CONTEXT_BENCH_LISTING_FILES ?? 10_000);
const MB_PER_FILE = Number(process.env.PI_CONTEXT_BENCH_LISTING_MB ?? 2.1);
const ROOT = path.join(REPO_ROOT, "bench-data", "listing");
const DIR = path.join(ROOT, "--bench-project--");

/** Generate the folder once (a marker names its parameters). */
export function generateListing(): string {
  const marker = path.join(ROOT, `.complete-${FILES}-${MB_PER_FILE}`);
  if (fs.existsSync(marker)) return DIR;
  fs.rmSync(ROOT, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const size = Math.round(MB_PER_FILE * 1024 * 1024);
  const base = Date.parse("2026-11-01T00:00:00.000Z");
  for (let i = 0; i < FILES; i++) {
    const t = new Date(base + i * 60_000).toISOString();
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    const name = `${t.replace(/[:.]/g, "-")}_${id}.jsonl`;
    const line = (o: Record<string, unknown>) => `${JSON.stringify(o)}\n`;
    const header: Record<string, unknown> = { type: "session", version: 3, id, timestamp: t, cwd: "/bench/project" };
    if (i % 10 === 3)
      header.parentSession = path.join(
        DIR,
        `${new Date(base + (i - 1) * 60_000).toISOString().replace(/[:.]/g, "-")}_00000000-0000-4000-8000-${String(i - 1).padStart(12, "0")}.jsonl`,
      );
    let head = line(header);
    head += line({
      type: "model_change",
      id: "m1",
      parentId: null,
      timestamp: t,
      provider: "openai",
      modelId: i % 2 ? "gpt-5" : "gpt-4.1",
    });
    head += line({
      type: "message",
      id: "u1",
      parentId: "m1",
      timestamp: t,
      message: { role: "user", content: `task ${i}: refactor module ${i % 97}\nwith details`, timestamp: base },
    });
    if (i % 3 === 0)
      head += line({ type: "session_info", id: "n1", parentId: "u1", timestamp: t, name: `Session ${i}` });
    let tail = "\n";
    for (let k = 0; k < 8; k++)
      tail += line({
        type: "message",
        id: `a${k}`,
        parentId: "u1",
        timestamp: t,
        message: {
          role: "assistant",
          content: [{ type: "text", text: `answer ${k} `.repeat(20) }],
          api: "openai-completions",
          provider: "openai",
          model: "gpt-5",
          usage: {
            input: 1000,
            output: 100,
            cacheRead: 0,
            cacheWrite: 0,
            totalTokens: 1100,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
          },
          stopReason: "stop",
          timestamp: base + k,
        },
      });
    if (i % 5 === 0)
      tail += line({ type: "session_info", id: "n2", parentId: "a7", timestamp: t, name: `Renamed ${i}` });
    const file = path.join(DIR, name);
    const fd = fs.openSync(file, "w");
    fs.writeSync(fd, head, 0);
    fs.writeSync(fd, tail, size - Buffer.byteLength(tail));
    fs.closeSync(fd);
    const when = new Date(base + i * 60_000 + 30_000);
    fs.utimesSync(file, when, when);
  }
  fs.writeFileSync(marker, "");
  return DIR;
}

function run(cmd: string, args: string[]): Record<string, number> {
  const out = execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 22 });
  return JSON.parse(out.trim().split("\n").pop()!) as Record<string, number>;
}

/** Each figure's median over `n` runs of `once` (figures measured separately, so a row may mix runs). */
function medianRun(n: number, once: () => Record<string, number>): Record<string, number> {
  const all = Array.from({ length: Math.max(1, n) }, once);
  const out: Record<string, number> = {};
  for (const key of Object.keys(all[0]!)) {
    out[key] = median(all.map((r) => r[key]!));
  }
  return out;
}

/** Run the listing bench (`runs` fresh processes per figure of ours); returns the table rows and the failed targets. */
export function listingBench(node22: string, runs: number): { rows: string[]; failures: string[] } {
  process.stderr.write(`listing bench: generating ${FILES} sparse sessions of ${MB_PER_FILE} MB…\n`);
  const dir = generateListing();
  const cache = path.join(ROOT, "catalog-cache.jsonl");
  fs.rmSync(cache, { force: true });
  const measure = path.join(__dirname, "measureListing.js");
  // ours: the median of `runs` fresh processes, figure by figure (one process is at the mercy of
  // the machine's load); pi's listing takes minutes and runs once
  process.stderr.write(`listing bench: ours cold ×${runs}…\n`);
  const cold = medianRun(runs, () => {
    fs.rmSync(cache, { force: true });
    return run(node22, [measure, dir, cache]);
  });
  // the warm runs start from the last cold run's cache file
  process.stderr.write(`listing bench: ours warm ×${runs}…\n`);
  const warm = medianRun(runs, () => run(node22, [measure, dir, cache]));
  process.stderr.write("listing bench: pi 1.6.0 SessionManager.listAll…\n");
  const pi = run(node22, [path.join(REPO_ROOT, "test/conformance/oracle/bench-pi-list.mjs"), dir]);
  const gb = (cold.bytes! / 1024 ** 3).toFixed(1);
  const ms = (v: number | undefined) => (v ?? NaN).toFixed(0);
  const row = (what: string, r: Record<string, number>, first: number, total: number) =>
    `| ${what} | ${r.sessions} | ${gb} | ${ms(first)} | ${ms(total)} | ${(r.maxBlockMs ?? NaN).toFixed(1)} | ${r.maxCpuBlockMs === undefined ? "—" : r.maxCpuBlockMs.toFixed(1)} | ${(total / pi.totalMs!).toFixed(3)} |`;
  const rows = [
    "| listing | sessions | GB | first rows ms | whole listing ms | longest event-loop block ms (wall) | (CPU-bounded) | ours/pi |",
    "|---|---|---|---|---|---|---|---|",
    row("ours, cold: new process, no cache", cold, cold.firstRowsMs!, cold.totalMs!),
    row("ours, warm: new process, cache file", warm, warm.firstRowsMs!, warm.totalMs!),
    row(
      "ours, picker opened (catalog in memory, the scanner's stats)",
      warm,
      warm.pickerFirstRowsMs!,
      warm.pickerTotalMs!,
    ),
    `| pi 1.6.0 SessionManager.listAll(dir) | ${pi.sessions} | ${gb} | ${ms(pi.firstRowsMs)} | ${ms(pi.totalMs)} | ${(pi.maxBlockMs ?? NaN).toFixed(1)} | — | 1 |`,
    "",
    `picker rows for all ${warm.sessions} sessions built in ${ms(warm.rowsMs)} ms (sessionPickRows)`,
  ];
  const failures: string[] = [];
  if (cold.firstRowsMs! > 200) failures.push(`cold first rows ${ms(cold.firstRowsMs)} ms > 200 ms`);
  if (warm.pickerFirstRowsMs! > 50)
    failures.push(`warm first rows (picker opened) ${ms(warm.pickerFirstRowsMs)} ms > 50 ms`);
  for (const [what, r] of [
    ["cold", cold],
    ["warm", warm],
  ] as const)
    if (r.maxCpuBlockMs! > 50)
      failures.push(
        `${what} event-loop block ${r.maxCpuBlockMs!.toFixed(1)} ms of CPU > 50 ms (wall ${r.maxBlockMs!.toFixed(1)} ms)`,
      );
  if (cold.totalMs! > 0.5 * pi.totalMs!)
    failures.push(`cold listing ${(cold.totalMs! / pi.totalMs!).toFixed(2)}× pi's > 0.5×`);
  if (cold.sessions !== pi.sessions) failures.push(`we list ${cold.sessions} sessions, pi ${pi.sessions}`);
  return { rows, failures };
}
