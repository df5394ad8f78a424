#!/usr/bin/env node
// Proof that our pi 1.6.0 oracle is right: re-runs it on every shared case and fixture with the
// flags recorded in each expected.md / index.md and compares the result with the saved outputs
// (cases/*/oracle*.json, pi-open*.json, pi-listing.json, fixtures/pi-1.6.0/*.oracle.json), and
// checks that src/core/data/model-catalog.json equals what pi's model registry resolves.
// Runs with the default Node (20); pi itself runs in one Node 22 batch process (oracle-client.mjs).
//
//   node test/conformance/oracle/check-shared-oracles.mjs [--shared DIR] [--skip-large] [--verbose]
//
// --shared defaults to $PI_CONTEXT_SHARED_DIR or /work/shared. --skip-large skips case 18
// (generates 32 MB + 128 MB sessions in a temp dir, ~30 s). Exit 0 = everything reproduced.
//
// Allowed differences (documented in shared/cases/README.md), normalised before comparing:
// - `file` and `settings.agentDir` were rewritten to relative paths in the saved files: compared
//   by basename ("/nonexistent" exactly);
// - v1 sessions (case 08) get fresh random ids on every load: actual ids are mapped to the saved
//   ones by position (path / entry order) and must be 8 lowercase hex digits;
// - pi-open --append: the appended entry's random id and its timestamp.
// Everything else must be identical (values, key sets, array order).

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { OracleClient } from "./oracle-client.mjs";
import { ensureConformanceInstall } from "./setup.mjs";

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const SHARED = resolve(opt("--shared") ?? process.env.PI_CONTEXT_SHARED_DIR ?? "/work/shared");
const SKIP_LARGE = argv.includes("--skip-large");
const VERBOSE = argv.includes("--verbose");

if (!existsSync(join(SHARED, "cases")) || !existsSync(join(SHARED, "fixtures", "pi-1.6.0"))) {
  process.stderr.write(`check-shared-oracles: shared material not found at ${SHARED} (use --shared DIR)\n`);
  process.exit(2);
}

// ------------------------------------------------------------------------------------------------
// Recipes: parsed from expected.md / index.md
// ------------------------------------------------------------------------------------------------

const COMMAND_LINE =
  /^\s*(?:node\s+)?(?:\.\.\/)*(oracle\.mjs|pi-open-check\.mjs)\s+(\S+)((?:\s+--[\w-]+(?:\s+(?!--)[^\s→]+)?)*)\s+→\s+(\S+\.json)\s*$/;

function parseCommandLines(text) {
  const jobs = [];
  for (const line of text.split("\n")) {
    const m = COMMAND_LINE.exec(line);
    if (!m) continue;
    jobs.push({
      tool: m[1] === "oracle.mjs" ? "oracle" : "piOpen",
      session: m[2],
      flags: m[3].trim() ? m[3].trim().split(/\s+/) : [],
      out: m[4],
      recipe: line.trim().replace(/\s+/g, " "),
    });
  }
  return jobs;
}

function listJsonOutputs(dir) {
  return readdirSync(dir).filter((n) => /^(oracle.*|pi-open.*|pi-listing)\.json$/.test(n));
}

function findSessionContaining(dir, token) {
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".jsonl") && e.name.includes(token)) found.push(join(d, e.name));
    }
  };
  walk(dir);
  return found;
}

function buildJobs() {
  const jobs = [];
  const problems = [];
  const casesDir = join(SHARED, "cases");
  for (const caseName of readdirSync(casesDir).sort()) {
    const caseDir = join(casesDir, caseName);
    if (!statSync(caseDir).isDirectory()) continue;
    const expectedMd = join(caseDir, "expected.md");
    const text = existsSync(expectedMd) ? readFileSync(expectedMd, "utf-8") : "";
    const parsed = parseCommandLines(text).map((j) => ({ ...j, dir: caseDir, label: `cases/${caseName}/${j.out}` }));
    const outputs = listJsonOutputs(caseDir);
    for (const out of outputs) {
      const matching = parsed.filter((j) => j.out === out);
      if (matching.length > 0) {
        jobs.push(matching[0]);
        continue;
      }
      const label = `cases/${caseName}/${out}`;
      if (out === "pi-listing.json") {
        jobs.push({ tool: "listing", dir: caseDir, out, label, recipe: "pi's session listing (see expected.md)" });
        continue;
      }
      // "(same for 0000bbbb → oracle-0000bbbb.json ...)": a sibling recipe with another session
      const token = /^oracle-(.+)\.json$/.exec(out)?.[1];
      const sibling = parsed.find((j) => j.tool === "oracle");
      const sessions = token ? findSessionContaining(caseDir, token) : [];
      if (token && sibling && sessions.length === 1) {
        const session = relative(caseDir, sessions[0]);
        jobs.push({
          ...sibling,
          session,
          out,
          label,
          recipe: `oracle.mjs ${session} ${sibling.flags.join(" ")} → ${out} (flags of the sibling recipe)`,
        });
        continue;
      }
      problems.push(`${label}: no recipe found in expected.md`);
    }
    // large generated sessions (case 18): `node generate.mjs <out> [size]` → … bytes, … md5 <hex>
    const generator = join(caseDir, "generate.mjs");
    if (existsSync(generator)) {
      const gen = new Map();
      for (const m of text.matchAll(/`node generate\.mjs (\S+)((?: \d+)?)` → ([\d,]+) bytes,.*?md5 ([0-9a-f]{32})/g)) {
        gen.set(m[1], { size: m[2].trim() || undefined, bytes: Number(m[3].replace(/,/g, "")), md5: m[4] });
      }
      for (const job of jobs.filter((j) => j.dir === caseDir)) {
        if (gen.has(job.session)) job.generate = { script: generator, ...gen.get(job.session) };
        else if (!existsSync(join(caseDir, job.session)))
          problems.push(`${job.label}: session ${job.session} neither present nor generated`);
      }
    }
  }
  const fixturesDir = join(SHARED, "fixtures", "pi-1.6.0");
  const index = readFileSync(join(fixturesDir, "index.md"), "utf-8");
  const template = /node oracle\.mjs <name>\.jsonl(.*)$/m.exec(index);
  if (!template) problems.push("fixtures/pi-1.6.0/index.md: oracle command line not found");
  for (const out of readdirSync(fixturesDir)
    .filter((n) => n.endsWith(".oracle.json"))
    .sort()) {
    const name = out.slice(0, -".oracle.json".length);
    if (!template) break;
    const flags = template[1].trim().replaceAll("<name>", name).split(/\s+/);
    jobs.push({
      tool: "oracle",
      dir: fixturesDir,
      session: `${name}.jsonl`,
      flags,
      out,
      label: `fixtures/pi-1.6.0/${out}`,
      recipe: `oracle.mjs ${name}.jsonl ${flags.join(" ")}`,
    });
  }
  return { jobs, problems };
}

// ------------------------------------------------------------------------------------------------
// Comparison
// ------------------------------------------------------------------------------------------------

function diff(expected, actual, path = "$", out = []) {
  if (out.length >= 25) return out;
  if (expected === actual) return out;
  const te = expected === null ? "null" : Array.isArray(expected) ? "array" : typeof expected;
  const ta = actual === null ? "null" : Array.isArray(actual) ? "array" : typeof actual;
  if (te !== ta) {
    out.push(
      `${path}: expected ${JSON.stringify(expected)?.slice(0, 200)}, got ${JSON.stringify(actual)?.slice(0, 200)}`,
    );
    return out;
  }
  if (te === "array") {
    if (expected.length !== actual.length)
      out.push(`${path}: length ${expected.length} expected, got ${actual.length}`);
    for (let i = 0; i < Math.min(expected.length, actual.length); i++)
      diff(expected[i], actual[i], `${path}[${i}]`, out);
    return out;
  }
  if (te === "object") {
    for (const k of Object.keys(expected)) {
      if (!(k in actual)) out.push(`${path}.${k}: missing (expected ${JSON.stringify(expected[k])?.slice(0, 120)})`);
      else diff(expected[k], actual[k], `${path}.${k}`, out);
    }
    for (const k of Object.keys(actual)) {
      if (!(k in expected)) out.push(`${path}.${k}: unexpected key (got ${JSON.stringify(actual[k])?.slice(0, 120)})`);
    }
    return out;
  }
  out.push(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  return out;
}

function replaceStrings(value, replace) {
  if (typeof value === "string") return replace(value);
  if (Array.isArray(value)) return value.map((v) => replaceStrings(v, replace));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceStrings(v, replace)]));
  }
  return value;
}

function mapIds(actual, pairs, notes) {
  const map = new Map();
  for (const [a, e] of pairs) {
    if (typeof a !== "string" || typeof e !== "string") continue;
    if (!/^[0-9a-f]{8}$/.test(a)) notes.push(`random id ${JSON.stringify(a)} is not 8 lowercase hex digits`);
    if (map.has(a) && map.get(a) !== e) notes.push(`id ${a} maps to both ${map.get(a)} and ${e}`);
    map.set(a, e);
  }
  if (map.size === 0) return actual;
  const pattern = new RegExp([...map.keys()].map((k) => k.replace(/[^0-9a-zA-Z]/g, "\\$&")).join("|"), "g");
  return replaceStrings(actual, (s) => s.replace(pattern, (m) => map.get(m)));
}

function isV1Session(file) {
  const first = readFileSync(file, "utf-8")
    .split("\n")
    .find((l) => l.trim());
  try {
    const header = JSON.parse(first);
    return header.type === "session" && header.version === undefined;
  } catch {
    return false;
  }
}

function normalise(job, expected, actual, sessionPath) {
  const notes = [];
  let a = structuredClone(actual);
  const e = structuredClone(expected);
  for (const obj of [e, a]) {
    if (typeof obj.file === "string") obj.file = basename(obj.file);
  }
  // another pi than the one that wrote the saved answers (npm run test:pi-next): its version is no difference
  if (process.env.PI_ORACLE_VERSION && typeof a.piVersion === "string" && typeof e.piVersion === "string")
    a.piVersion = e.piVersion;
  if (e.settings && a.settings && typeof e.settings.agentDir === "string" && typeof a.settings.agentDir === "string") {
    if (basename(e.settings.agentDir) === basename(a.settings.agentDir)) a.settings.agentDir = e.settings.agentDir;
  }
  if (job.tool !== "listing" && isV1Session(sessionPath)) {
    if (job.tool === "oracle") mapIdsInto();
    else
      a = mapIds(
        a,
        (a.entries ?? []).map((x, i) => [x.id, e.entries?.[i]?.id]),
        notes,
      );
  }
  function mapIdsInto() {
    a = mapIds(
      a,
      (a.pathIds ?? []).map((id, i) => [id, e.pathIds?.[i]]),
      notes,
    );
  }
  if (job.tool === "piOpen" && typeof a.appendedId === "string" && typeof e.appendedId === "string") {
    const iso = /"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;
    const stamp = (obj) => {
      obj.lastTwoPhysicalLines = (obj.lastTwoPhysicalLines ?? []).map((line) =>
        line.includes(obj.appendedId) ? line.replace(iso, '"timestamp":"<appended>"') : line,
      );
    };
    stamp(a);
    stamp(e);
    a = mapIds(a, [[a.appendedId, e.appendedId]], notes);
  }
  return { e, a, notes };
}

// ------------------------------------------------------------------------------------------------
// Running
// ------------------------------------------------------------------------------------------------

function resolveFlags(flags, dir) {
  const out = [...flags];
  for (let i = 0; i < out.length - 1; i++) {
    if ((out[i] === "--agent-dir" || out[i] === "--cwd") && !isAbsolute(out[i + 1]))
      out[i + 1] = resolve(dir, out[i + 1]);
  }
  return out;
}

function md5(file) {
  return createHash("md5").update(readFileSync(file)).digest("hex");
}

function listingRequest(job, expected) {
  // Reconstructed from pi-listing.json + expected.md: the two colliding sessions live in one
  // default session dir; bbbb is the newer file (mtime); the explicit-dir listing uses the same
  // two files from a separate, non-default directory.
  const sessionsDir = join(job.dir, "sessions");
  const mtimes = {};
  const base = Date.UTC(2026, 0, 1);
  for (const d of readdirSync(sessionsDir)) {
    for (const f of readdirSync(join(sessionsDir, d))) {
      const rank = f.includes("0000bbbb") ? 2 : f.includes("0000aaaa") ? 1 : 0;
      mtimes[`sessions/${d}/${f}`] = base + rank * 60_000;
    }
  }
  const collided = Object.values(expected.encode ?? {})[0];
  return {
    agentDir: job.dir,
    cwds: Object.keys(expected.list ?? {}),
    continueRecent: Object.keys(expected.continueRecent ?? {}),
    explicitSessionDir: collided,
    mtimes,
  };
}

async function main() {
  const { jobs, problems } = buildJobs();
  const { node22Path, nodeVersion } = ensureConformanceInstall();
  const client = await OracleClient.start({ node22Path });
  const tmp = mkdtempSync(join(tmpdir(), "pi-oracle-check-"));
  const results = [];
  const started = Date.now();
  try {
    process.stdout.write(
      `pi ${process.env.PI_ORACLE_VERSION ?? "1.6.0"} oracle check — shared dir ${SHARED}, Node 22 ${nodeVersion ?? ""} ${node22Path}\n`,
    );
    for (const job of jobs) {
      const expected = JSON.parse(readFileSync(join(job.dir, job.out), "utf-8"));
      if (job.generate && SKIP_LARGE) {
        results.push({ job, status: "SKIP", details: ["--skip-large"] });
        continue;
      }
      const t0 = Date.now();
      let sessionPath = job.session ? join(job.dir, job.session) : undefined;
      const details = [];
      try {
        if (job.generate) {
          sessionPath = join(tmp, job.session);
          if (!existsSync(sessionPath)) {
            const args = [job.generate.script, sessionPath, ...(job.generate.size ? [job.generate.size] : [])];
            const gen = spawnSync(node22Path, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf-8" });
            if (gen.status !== 0) throw new Error(`generate.mjs failed (${gen.status}): ${gen.stderr}`);
          }
          const size = statSync(sessionPath).size;
          const sum = md5(sessionPath);
          if (size !== job.generate.bytes || sum !== job.generate.md5) {
            throw new Error(
              `generated ${job.session}: ${size} bytes md5 ${sum}, expected.md says ${job.generate.bytes} / ${job.generate.md5}`,
            );
          }
          details.push(`generated ${job.session}: ${size} bytes, md5 ${sum} (as expected.md)`);
        }
        let actual;
        if (job.tool === "oracle") {
          actual = await client.oracle({ file: sessionPath, args: resolveFlags(job.flags, job.dir) });
        } else if (job.tool === "piOpen") {
          actual = await client.piOpen({ file: sessionPath, append: job.flags.includes("--append") });
        } else {
          actual = await client.listing(listingRequest(job, expected));
        }
        const { e, a, notes } = normalise(job, expected, actual, sessionPath);
        const differences = [...notes, ...diff(e, a)];
        results.push({
          job,
          status: differences.length === 0 ? "ok" : "FAIL",
          details: [...details, ...differences],
          ms: Date.now() - t0,
        });
      } catch (error) {
        results.push({ job, status: "FAIL", details: [...details, `error: ${error.message}`], ms: Date.now() - t0 });
      } finally {
        if (
          job.generate &&
          sessionPath &&
          !jobs.some((j) => j !== job && j.session === job.session && !results.some((r) => r.job === j))
        ) {
          rmSync(sessionPath, { force: true });
        }
      }
    }
    // The committed model catalog snapshot must equal what pi's registry resolves with no
    // models.json / models-store.json (built-in pi-ai catalog).
    const catalogPath = resolve(
      dirname(fileURLToPath(import.meta.url)),
      "..",
      "..",
      "..",
      "src",
      "core",
      "data",
      "model-catalog.json",
    );
    const catalogJob = {
      label: "src/core/data/model-catalog.json",
      recipe: "pi ModelRuntime.getModels() with an empty agent dir",
    };
    if (existsSync(catalogPath)) {
      const t0 = Date.now();
      const snapshot = JSON.parse(readFileSync(catalogPath, "utf-8"));
      const pi = await client.catalog({});
      const differences = diff(
        { generatedFrom: "@earendil-works/pi-ai@1.6.0", generatedAt: "2026-11-20T10:48:49.496Z", models: pi.models },
        snapshot,
      );
      if (pi.registryError) differences.unshift(`registry error: ${pi.registryError}`);
      results.push({
        job: catalogJob,
        status: differences.length ? "FAIL" : "ok",
        details: [`${pi.count} models`, ...differences],
        ms: Date.now() - t0,
      });
    } else {
      results.push({ job: catalogJob, status: "SKIP", details: ["not generated yet"] });
    }
  } finally {
    await client.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  for (const r of results) {
    const time = r.ms !== undefined ? ` ${(r.ms / 1000).toFixed(2)}s` : "";
    process.stdout.write(`${r.status.padEnd(4)} ${r.job.label}${time}\n`);
    if (VERBOSE || r.status !== "ok") process.stdout.write(`       ${r.job.recipe}\n`);
    if (r.status !== "ok" || VERBOSE) for (const d of r.details) process.stdout.write(`       - ${d}\n`);
  }
  for (const p of problems) process.stdout.write(`FAIL ${p}\n`);
  const ok = results.filter((r) => r.status === "ok").length;
  const failed = results.filter((r) => r.status === "FAIL").length + problems.length;
  const skipped = results.filter((r) => r.status === "SKIP").length;
  process.stdout.write(
    `${ok}/${results.length + problems.length} checks passed (shared pi 1.6.0 outputs + model catalog)` +
      `${skipped ? `, ${skipped} skipped` : ""}${failed ? `, ${failed} FAILED` : ""} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
  );
  process.exitCode = failed > 0 ? 1 : 0;
}

await main();
