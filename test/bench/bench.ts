/**
 * `npm run bench`: our session core against the JSON.parse floor and pi 1.6.0 itself, side by side
 * on the same generated files (32 MB and 128 MB, image-heavy and text-heavy).
 *
 * Each figure comes from a fresh process (median of RUNS runs; memory of the last):
 *  - floor: readFileSync + JSON.parse of every line (the cost of reading everything naively);
 *  - ours:  SessionFile.open + analyzeLoaded → the gauge's numbers; then 25 appended entries, one at a time → refresh + re-analysis (median, and the first);
 *  - pi:    SessionManager.open + buildSessionProjection + estimateProjectedContextTokens.
 *  - raw:   the physical limit here — read every byte in 2 MB chunks and find every newline.
 * Every side runs on the same Node: the conformance install's Node 22, the major VS Code's extension
 * host runs (`test/conformance/oracle/setup.mjs` installs it and prints its path).
 * Targets (issues 2, 17, 45): cold open, with full validation, ≤ 1.0× floor and ≤ 0.6× pi on every file;
 * append ≤ 1 % of a cold open; retained heap ≤ 0.5× file size; the extension bundle ≤ 1 MB (production
 * build); the trim list ("Pi Context: Trim Context…", with the planner's savings), the session doctor and the
 * panel's first state ≤ 0.5 s beyond the open (`measure.js views`, one run per file; the panel's
 * details follow in steps and are printed, not a target). Also checks that our tokens equal pi's. The UI figures (tree, Reveal Leaf, panel,
 * extension host memory, activate()) are measured in real VS Code by `npm run bench:ui`.
 *
 * Then the session listing (`listing.ts`): `pi-context sessions` on 3 000 small sessions against pi's
 * own listing, whole processes (≤ 0.25×); 10 000 sessions / ≥ 20 GB, ours cold and warm against
 * pi's `SessionManager.listAll`, first rows and event-loop blocks.
 *
 * Env: PI_CONTEXT_BENCH_SIZES (default "32,128"), PI_CONTEXT_BENCH_RUNS (default 3),
 * PI_CONTEXT_BENCH_LISTING=0 skips the listing bench.
 */

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { generateSession, type Flavour } from "./generate";
import { listingBench, smallListingBench } from "./listing";
import { median } from "./median";
import { REPO_ROOT } from "../support/paths";

const DATA = path.join(REPO_ROOT, "bench-data");
const SIZES = (process.env.PI_CONTEXT_BENCH_SIZES ?? "32,128").split(",").map(Number);
const RUNS = Number(process.env.PI_CONTEXT_BENCH_RUNS ?? 3);
const FLAVOURS: Flavour[] = ["image", "text"];
/** Issue 45: cold open to a computed gauge, with full validation, at most this fraction of pi's. */
const PI_RATIO = 0.6;
/** Trim list, doctor and the panel's first state: at most this long beyond the open (ms). */
const VIEW_MS = 500;
/** Issue 17: the production extension bundle at most this many bytes. */
const BUNDLE_BYTES = 1024 * 1024;

function node22(): string {
  return execFileSync(process.execPath, [path.join(REPO_ROOT, "test/conformance/oracle/setup.mjs")], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop()!;
}

function json(cmd: string, args: string[]): Record<string, number> {
  const out = execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split("\n").pop()!) as Record<string, number>;
}

function main(): void {
  fs.mkdirSync(DATA, { recursive: true });
  const node = node22();
  const measure = path.join(__dirname, "measure.js");
  const rows: string[] = [];
  const failures: string[] = [];
  rows.push(
    "| file | size | entries | raw read + newlines ms | floor ms | ours cold ms (open + gauge) | pi ms (open + tokens) | ours/floor | ours/pi | append → gauge ms, median of 25 (first) | append/cold | heap retained MB (×size) | ours max RSS MB | pi max RSS MB | tokens ours = pi |",
  );
  rows.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const size of SIZES) {
    for (const flavour of FLAVOURS) {
      const file = path.join(DATA, `session-${size}mb-${flavour}.jsonl`);
      if (!fs.existsSync(file)) {
        process.stderr.write(`generating ${path.basename(file)}…\n`);
        generateSession(file, size, flavour);
      }
      const bytes = fs.statSync(file).size;
      const floors: number[] = [];
      const raws: number[] = [];
      const cold: number[] = [];
      const piMs: number[] = [];
      let oursLast: Record<string, number> = {};
      let piLast: Record<string, number> = {};
      for (let i = 0; i < RUNS; i++) {
        floors.push(json(node, ["--expose-gc", measure, "floor", file]).ms!);
        raws.push(json(node, [measure, "raw", file]).ms!);
        oursLast = json(node, ["--expose-gc", measure, "ours", file]);
        cold.push(oursLast.coldMs!);
        piLast = json(node, [path.join(REPO_ROOT, "test/conformance/oracle/bench-pi.mjs"), file]);
        piMs.push(piLast.totalMs!);
      }
      const f = median(floors);
      const c = median(cold);
      const p = median(piMs);
      const heapRatio = (oursLast.heapRetainedMB! * 1024 * 1024) / bytes;
      const appendRatio = oursLast.appendUpdateMs! / c;
      const name = path.basename(file);
      rows.push(
        `| ${name} | ${(bytes / 1024 / 1024).toFixed(1)} MB | ${oursLast.entries} | ${median(raws).toFixed(0)} | ${f.toFixed(0)} | ${c.toFixed(0)} (${oursLast.openMs!.toFixed(0)} + ${oursLast.analyzeMs!.toFixed(1)}) | ${p.toFixed(0)} (${piLast.openMs!.toFixed(0)} + ${(piLast.projectionMs! + piLast.estimateMs!).toFixed(1)}) | ${(c / f).toFixed(2)} | ${(c / p).toFixed(2)} | ${oursLast.appendUpdateMs!.toFixed(2)} (${oursLast.firstAppendMs!.toFixed(2)}) | ${(appendRatio * 100).toFixed(2)} % | ${oursLast.heapRetainedMB} (${heapRatio.toFixed(3)}) | ${oursLast.maxRssMB} | ${piLast.maxRssMB!.toFixed(0)} | ${oursLast.tokens === piLast.tokens ? "yes" : `NO (${oursLast.tokens} vs ${piLast.tokens})`} |`,
      );
      if (c > f) failures.push(`${name}: cold open ${c.toFixed(0)} ms > floor ${f.toFixed(0)} ms`);
      if (c > PI_RATIO * p)
        failures.push(`${name}: cold open ${c.toFixed(0)} ms > ${PI_RATIO} × pi ${p.toFixed(0)} ms`);
      if (appendRatio > 0.01)
        failures.push(`${name}: append → gauge ${(appendRatio * 100).toFixed(2)} % of a cold open`);
      if (heapRatio > 0.5) failures.push(`${name}: retained heap ${heapRatio.toFixed(2)} × file size`);
      if (oursLast.tokens !== piLast.tokens) failures.push(`${name}: tokens ${oursLast.tokens} ≠ pi ${piLast.tokens}`);
    }
  }
  rows.push(
    `| target | | | | | ≤ floor, ≤ ${PI_RATIO} × pi | | ≤ 1.00 | ≤ ${PI_RATIO} | | ≤ 1 % | ≤ 0.5 × size | | | yes |`,
  );
  console.log(rows.join("\n"));
  // The views beyond the open (issue 17: trim list and doctor ≤ 0.5 s; the panel opens with its state)
  const viewRows = [
    "| file | trim list ms | doctor ms | panel state ms (kB) | panel details ms (longest step) | heap held after a GC: open → + views MB (× size) | RSS before that GC MB |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const size of SIZES)
    for (const flavour of FLAVOURS) {
      const file = path.join(DATA, `session-${size}mb-${flavour}.jsonl`);
      const v = json(node, ["--expose-gc", measure, "views", file]);
      const name = path.basename(file);
      const bytes = fs.statSync(file).size;
      const held = (v.heapViewsMB! * 1024 * 1024) / bytes;
      viewRows.push(
        `| ${name} | ${v.trimMs!.toFixed(0)} | ${v.doctorMs!.toFixed(0)} | ${v.panelStateMs!.toFixed(0)} (${v.panelStateKB!.toFixed(0)}) | ${v.panelDetailsMs!.toFixed(0)} (${v.longestStepMs!.toFixed(0)}) | ${v.heapOpenMB} → ${v.heapViewsMB} (${held.toFixed(2)}) | ${v.rssViewsMB} |`,
      );
      if (held > 0.5) failures.push(`${name}: heap held with the views ${held.toFixed(2)} × file size`);
      for (const [what, ms] of [
        ["trim list", v.trimMs!],
        ["doctor", v.doctorMs!],
        ["panel state", v.panelStateMs!],
      ] as const)
        if (ms > VIEW_MS) failures.push(`${name}: ${what} ${ms.toFixed(0)} ms > ${VIEW_MS} ms beyond the open`);
    }
  viewRows.push(
    `| target | ≤ ${VIEW_MS} | ≤ ${VIEW_MS} | ≤ ${VIEW_MS} | (in steps, after the state) | ≤ 0.5 × size | |`,
  );
  console.log(`\n${viewRows.join("\n")}`);
  // Start-up: the production bundle VS Code loads (js-tiktoken's ranks are a separate file).
  execFileSync(process.execPath, [path.join(REPO_ROOT, "esbuild.mjs"), "--production"], { cwd: REPO_ROOT });
  const bundle = fs.statSync(path.join(REPO_ROOT, "dist/extension.js")).size;
  const ranks = fs.statSync(path.join(REPO_ROOT, "dist/tiktoken-o200k_base.js")).size;
  console.log(
    `\ndist/extension.js (production): ${(bundle / 1024).toFixed(0)} kB (target ≤ ${BUNDLE_BYTES / 1024} kB); tiktoken ranks, loaded on first use: ${(ranks / 1024).toFixed(0)} kB`,
  );
  if (bundle > BUNDLE_BYTES) failures.push(`dist/extension.js is ${bundle} bytes > ${BUNDLE_BYTES}`);
  execFileSync(process.execPath, [path.join(REPO_ROOT, "esbuild.mjs")], { cwd: REPO_ROOT });
  if (process.env.PI_CONTEXT_BENCH_LISTING !== "0") {
    const small = smallListingBench(node, Math.max(RUNS, 5));
    console.log(`\n${small.rows.join("\n")}`);
    failures.push(...small.failures);
    const listing = listingBench(node, RUNS);
    console.log(`\n${listing.rows.join("\n")}`);
    failures.push(...listing.failures);
  }
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  console.log(
    `\nmachine: ${process.platform} ${process.arch}, ${os.cpus().length} cores; ours, floor and pi on node ${version} (${node})`,
  );
  console.log(
    `runs per figure: ${RUNS} (median; pi's listing once); load average ${os
      .loadavg()
      .map((l: number) => l.toFixed(1))
      .join(" ")} (compare runs taken in the same minutes)`,
  );
  if (failures.length) {
    console.log(`\ntargets missed:\n${failures.map((f) => `- ${f}`).join("\n")}`);
    process.exitCode = 1;
  } else console.log("\nall targets met");
}

main();
