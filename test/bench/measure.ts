/**
 * One measurement in a fresh process (so memory figures are not polluted by other runs):
 *
 *   node --expose-gc out/test/bench/measure.js floor <file>   read + JSON.parse of every line
 *   node --expose-gc out/test/bench/measure.js raw <file>     read every byte + find every newline
 *   node --expose-gc out/test/bench/measure.js ours <file>    cold open → computed gauge; then 25
 *                                                             appended entries → updated gauge (on a copy)
 *   node --expose-gc out/test/bench/measure.js views <file>   after the open: the trim list, the
 *                                                             session doctor, the panel's state and its
 *                                                             details; the heap they hold after a GC
 * Prints one JSON object.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { analyzeLoaded } from "../../src/core/rules/analyze";
import { SessionFile } from "../../src/core/read/session";
import { checkHealth } from "../../src/core/health/doctor";
import { buildTrimList } from "../../src/viewModel/trimList";
import { buildPanelState, panelDetailSteps, TRIM_PANEL_LIMIT } from "../../src/viewModel/panelState";

declare const gc: (() => void) | undefined;

/** What a measurement keeps alive through its last GC. */
export let held: unknown;

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

async function floor(file: string): Promise<object> {
  const t0 = performance.now();
  const text = fs.readFileSync(file, "utf8");
  let n = 0;
  for (const line of text.split("\n")) {
    if (!line) continue;
    JSON.parse(line);
    n++;
  }
  const ms = performance.now() - t0;
  return { ms, lines: n, maxRssMB: mb(process.resourceUsage().maxRSS * 1024) };
}

/** The physical limit here: read every byte (2 MB chunks, as we do) and find every newline. */
async function raw(file: string): Promise<object> {
  const t0 = performance.now();
  const handle = await fs.promises.open(file, "r");
  const buf = Buffer.allocUnsafe(2 * 1024 * 1024);
  let position = 0;
  let lines = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    for (let at = buf.indexOf(10); at >= 0 && at < bytesRead; at = buf.indexOf(10, at + 1)) lines++;
  }
  await handle.close();
  return { ms: performance.now() - t0, lines };
}

/** Appends measured after the cold open, one entry each (the median is reported). */
const APPENDS = 25;

async function ours(file: string): Promise<object> {
  const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bench-agent-"));
  if (typeof gc === "function") gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const session = await SessionFile.open(file);
  const t1 = performance.now();
  const analysis = analyzeLoaded(session, { agentDir, projectSettings: "never" });
  const t2 = performance.now();
  if (typeof gc === "function") gc();
  const heapRetained = process.memoryUsage().heapUsed - heapBefore;
  const external = process.memoryUsage().external;

  // One appended entry → updated gauge, on a copy (the benchmark file stays untouched).
  const copy = path.join(os.tmpdir(), `pi-context-bench-${process.pid}.jsonl`);
  fs.copyFileSync(file, copy);
  const tail = await SessionFile.open(copy);
  analyzeLoaded(tail, { agentDir, projectSettings: "never" });
  const leaf = tail.leafId;
  const entry = {
    type: "message",
    id: "bench0001",
    parentId: leaf,
    timestamp: new Date().toISOString(),
    message: {
      role: "user",
      content: [{ type: "text", text: "one more question about the checkout flow" }],
      timestamp: Date.now(),
    },
  };
  fs.appendFileSync(copy, `${JSON.stringify(entry)}\n`);
  // A running extension host updates the gauge on every append; the first few after an open also
  // pay for compiling the refresh path. The median of 25 is the steady figure; the first is kept too.
  const samples: number[] = [];
  let tokensAfter = 0;
  for (let i = 0; i < APPENDS; i++) {
    const a0 = performance.now();
    await tail.refresh();
    const updated = analyzeLoaded(tail, { agentDir, projectSettings: "never" });
    samples.push(performance.now() - a0);
    tokensAfter = updated.inspect.contextTokens;
    if (i < APPENDS - 1) {
      // Append the next entry for the next sample.
      const next = { ...entry, id: `bench${String(i + 2).padStart(4, "0")}`, parentId: tail.leafId };
      fs.appendFileSync(copy, `${JSON.stringify(next)}\n`);
    }
  }
  fs.rmSync(copy, { force: true });
  fs.rmSync(agentDir, { recursive: true, force: true });
  const firstAppendMs = samples[0];
  samples.sort((a, b) => a - b);
  return {
    openMs: t1 - t0,
    analyzeMs: t2 - t1,
    coldMs: t2 - t0,
    appendUpdateMs: samples[APPENDS >> 1],
    firstAppendMs,
    tokens: analysis.inspect.contextTokens,
    tokensAfterAppend: tokensAfter,
    entries: session.records.length,
    heapRetainedMB: mb(heapRetained),
    externalMB: mb(external),
    maxRssMB: mb(process.resourceUsage().maxRSS * 1024),
  };
}

/**
 * What the views cost beyond the open (cold, in this process, after `SessionFile.open` + the gauge):
 * "Pi Context: Trim Context…"'s list (with the planner's savings), the session doctor, the panel's state
 * (what it opens with) and its details (lost items, savings) — all in ms.
 */
async function views(file: string): Promise<object> {
  const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bench-agent-"));
  if (typeof gc === "function") gc();
  const heapStart = process.memoryUsage().heapUsed;
  const session = await SessionFile.open(file);
  const analysis = analyzeLoaded(session, { agentDir, projectSettings: "never" });
  if (typeof gc === "function") gc();
  const heapOpen = process.memoryUsage().heapUsed;
  const time = <T>(f: () => T): [T, number] => {
    const t0 = performance.now();
    const r = f();
    return [r, performance.now() - t0];
  };
  const [, trimMs] = time(() => buildTrimList(session, { limit: TRIM_PANEL_LIMIT }));
  const [, doctorMs] = time(() => checkHealth(analysis));
  const input = { file, session, analysis, pinned: false, updatedAt: Date.now() };
  const [state, panelStateMs] = time(() => buildPanelState(input, { details: false }));
  let longestStepMs = 0;
  const [, panelDetailsMs] = time(() => {
    const steps = panelDetailSteps(session, state);
    for (;;) {
      const t0 = performance.now();
      const step = steps.next();
      longestStepMs = Math.max(longestStepMs, performance.now() - t0);
      if (step.done) return step.value;
    }
  });
  const rssViews = process.memoryUsage().rss;
  held = [session, analysis, state]; // alive through the GC below
  if (typeof gc === "function") gc();
  const memory = process.memoryUsage();
  fs.rmSync(agentDir, { recursive: true, force: true });
  return {
    // what the session and its views hold after a GC (the open's records, the memoised trim plans,
    // lost items and panel state), and the RSS before that GC (the garbage of the bodies read)
    heapOpenMB: mb(heapOpen - heapStart),
    heapViewsMB: mb(memory.heapUsed - heapStart),
    rssViewsMB: mb(rssViews),
    trimMs,
    doctorMs,
    panelStateMs,
    panelStateKB: JSON.stringify(state).length / 1024,
    panelDetailsMs,
    longestStepMs,
  };
}

const [mode, file] = process.argv.slice(2);
const modes: Record<string, (file: string) => Promise<object>> = { floor, raw, ours, views };
if (!file || !mode || !modes[mode]) {
  console.error("usage: measure.js floor|raw|ours|views <file>");
  process.exit(2);
}
modes[mode]!(file).then(
  (r) => console.log(JSON.stringify(r)),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
