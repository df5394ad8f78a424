/**
 * The session listing at scale (part of `npm run bench`). First, `pi-context sessions` on 3 000 small
 * sessions against pi's own `/resume` listing of the folder, each a whole process ({@link smallListingBench}:
 * target ≤ 0.25× pi's time, issue 44). Then 10 000 sessions, ≥ 20 GB, in one folder,
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

import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../support/paths";
import { assistantMessage, piUsage } from "../support/session-builder";
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
          ...assistantMessage({
            text: `answer ${k} `.repeat(20),
            provider: "openai",
            model: "gpt-5",
            usage: { input: 1000, output: 100 },
          }),
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

/** Small sessions for {@link smallListingBench} (env PI_CONTEXT_BENCH_SMALL_FILES, default 3000). */
const SMALL_FILES = Number(process.env.PI_CONTEXT_BENCH_SMALL_FILES ?? 3000);
const SMALL_ROOT = path.join(REPO_ROOT, "bench-data", "listing-small");
const SMALL_CWD = "/bench/small";
/** Issue 44: `pi-context sessions` (the whole process) at most this fraction of pi's own listing. */
export const SMALL_LISTING_RATIO = 0.25;

/**
 * 3 000 small sessions as pi writes them (header, model and thinking level, 3–7 turns of a user
 * request, a tool call, its result of 0.3–1.2 kB and an answer; a name on every fourth, a label on
 * every seventh), in pi's folder for the cwd `/bench/small` of an agent dir; file times shuffled
 * against the message times (copies, syncs), so the two orders differ. Generated once (a marker
 * names the count). Returns the agent dir.
 */
export function generateSmallListing(): string {
  const agentDir = path.join(SMALL_ROOT, "agent");
  const marker = path.join(SMALL_ROOT, `.complete-${SMALL_FILES}-2`);
  if (fs.existsSync(marker)) return agentDir;
  fs.rmSync(SMALL_ROOT, { recursive: true, force: true });
  const dir = path.join(agentDir, "sessions", "--bench-small--");
  fs.mkdirSync(dir, { recursive: true });
  const base = Date.parse("2026-10-01T00:00:00.000Z");
  const usage = (input: number, output: number) => piUsage({ input, output });
  for (let i = 0; i < SMALL_FILES; i++) {
    const t0 = base + i * 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const id = `${i.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    const lines: object[] = [{ type: "session", version: 3, id, timestamp: iso(t0), cwd: SMALL_CWD }];
    let parent: string | null = null;
    let k = 0;
    const push = (fields: Record<string, unknown>) => {
      const entryId = (++k).toString(16).padStart(8, "0");
      lines.push({ type: fields.type, id: entryId, parentId: parent, timestamp: iso(t0 + k * 1000), ...fields });
      parent = entryId;
    };
    const at = () => t0 + k * 1000;
    push({ type: "model_change", provider: "openai", modelId: "gpt-5" });
    push({ type: "thinking_level_change", thinkingLevel: "off" });
    for (let turn = 0; turn < 3 + (i % 5); turn++) {
      const text = `task ${i}.${turn}: look at module ${i % 97} and fix the bug`;
      push({ type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: at() } });
      const call = { type: "toolCall", id: `call_${turn}`, name: "read", arguments: { path: `src/m${turn}.ts` } };
      // pi's key order: the time after the stop reason, then what pi adds about the response
      const answer = (text: unknown[], stopReason: string, input: number, output: number) => ({
        role: "assistant",
        content: text,
        api: "openai-completions",
        provider: "openai",
        model: "gpt-5",
        usage: usage(input, output),
        stopReason,
        timestamp: at(),
        responseId: `chatcmpl-${i}-${turn}`,
        durationMs: 40 + (i % 50),
        thinkingLevel: "off",
      });
      push({ type: "message", message: answer([{ type: "text", text: "Looking." }, call], "toolUse", 1000, 50) });
      const output = "x".repeat(300 + ((i * 37) % 900));
      push({
        type: "message",
        message: {
          role: "toolResult",
          toolCallId: `call_${turn}`,
          toolName: "read",
          content: [{ type: "text", text: output }],
          isError: false,
          timestamp: at(),
        },
      });
      push({
        type: "message",
        message: answer([{ type: "text", text: `Done: ${"y".repeat(100)}` }], "stop", 1500, 80),
      });
    }
    if (i % 4 === 0) push({ type: "session_info", name: `Session ${i}` });
    if (i % 7 === 0) push({ type: "label", targetId: "00000003", label: "checkpoint" });
    const file = path.join(dir, `${iso(t0).replace(/[:.]/g, "-")}_${id}.jsonl`);
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const when = new Date(base + ((i * 7919) % SMALL_FILES) * 3_600_000);
    fs.utimesSync(file, when, when);
  }
  fs.writeFileSync(marker, "");
  return agentDir;
}

/** Wall time of one process (ms) and its stdout. */
function timedRun(cmd: string, args: string[], env: NodeJS.ProcessEnv): { ms: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 28, env });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: exit ${r.status}: ${r.stderr}`);
  return { ms, out: r.stdout };
}

/**
 * `pi-context sessions --json` (the CLI bundle, a new process: start, listing in pi's `/resume`
 * order with live marks, JSON out) against pi 1.6.0's `SessionManager.list(cwd, dir)` (a new
 * process: import, listing), on the same Node 22, runs interleaved; the median of each. Target:
 * ours ≤ {@link SMALL_LISTING_RATIO} × pi's, and the same sessions.
 */
export function smallListingBench(node22: string, runs: number): { rows: string[]; failures: string[] } {
  process.stderr.write(`listing bench: generating ${SMALL_FILES} small sessions…\n`);
  const agentDir = generateSmallListing();
  const dir = path.join(agentDir, "sessions", "--bench-small--");
  const cli = path.join(REPO_ROOT, "dist", "cli.js");
  const piScript = path.join(REPO_ROOT, "test/conformance/oracle/bench-pi-list-folder.mjs");
  const env = { ...process.env };
  delete env.PI_CONTEXT_GUARD_PROCESSES; // the machine's process table, as a user's run reads it
  const ours: number[] = [];
  const pis: number[] = [];
  let listed = 0;
  let piListed = 0;
  for (let i = 0; i < Math.max(1, runs); i++) {
    process.stderr.write(`listing bench: small sessions, run ${i + 1} of ${runs}…\n`);
    const o = timedRun(node22, [cli, "sessions", "--json", "--cwd", SMALL_CWD, "--agent-dir", agentDir], env);
    ours.push(o.ms);
    listed = (JSON.parse(o.out) as unknown[]).length;
    const p = timedRun(node22, [piScript, dir, SMALL_CWD], env);
    pis.push(p.ms);
    piListed = (JSON.parse(p.out.trim().split("\n").pop()!) as { sessions: number }).sessions;
  }
  const o = median(ours);
  const p = median(pis);
  const rows = [
    "| whole process | sessions | ms (median) | ours/pi |",
    "|---|---|---|---|",
    `| \`pi-context sessions --json\` | ${listed} | ${o.toFixed(0)} | ${(o / p).toFixed(3)} |`,
    `| pi 1.6.0 \`SessionManager.list(cwd, dir)\` | ${piListed} | ${p.toFixed(0)} | 1 |`,
  ];
  const failures: string[] = [];
  if (o > SMALL_LISTING_RATIO * p)
    failures.push(
      `pi-context sessions on ${listed} small sessions ${(o / p).toFixed(2)}× pi's > ${SMALL_LISTING_RATIO}×`,
    );
  if (listed !== piListed) failures.push(`pi-context sessions lists ${listed} small sessions, pi ${piListed}`);
  return { rows, failures };
}
