/**
 * The doctor's fuzz run, in a worker thread so that the test's main thread can stop it when a case
 * does not finish (a hang): random sessions (`random-session.ts`) with mutations
 * (`mutate-session.ts`) → read → analyse → the doctor → the repair plan (proven on its overlay) →
 * the doctor on the repaired text. Posts `{progress, case}` before each case and `{done, stats}`
 * or `{failure}` at the end.
 */

import { parentPort, workerData } from "node:worker_threads";
import fc from "fast-check";
import { analyzeLoaded } from "../../src/core/rules/analyze";
import { checkHealth, contextOf, diagnose } from "../../src/core/health/doctor";
import { planRepair } from "../../src/core/health/repair";
import { SessionFile } from "../../src/core/read/session";
import { buildSession, recipeArb } from "./random-session";
import { mutate, mutationsArb } from "./mutate-session";
import { agentDirFor } from "./doctor";

const { runs, seed } = workerData as { runs: number; seed: number };
const agents = [
  agentDirFor(),
  agentDirFor({ window: 0 }),
  agentDirFor({ settings: { compaction: { reserveTokens: 200000 } } }),
];
const stats = { cases: 0, findings: 0, errors: 0, repaired: 0, appended: 0, codes: {} as Record<string, number> };

function check(text: string, agentIndex: number): void {
  const session = SessionFile.fromBytes(text);
  const analysis = analyzeLoaded(session, { agentDir: agents[agentIndex % agents.length]!, projectSettings: "never" });
  const report = checkHealth(analysis);
  // the report is well formed and plain data
  const ids = new Set(session.records.map((r) => r.id));
  for (const f of report.findings) {
    if (typeof f.message !== "string" || f.message.length === 0) throw new Error(`empty message for ${f.code}`);
    if (f.line !== undefined && (f.line < 1 || !Number.isInteger(f.line))) throw new Error(`bad line ${f.line}`);
    if (f.entryId !== null && f.source === "session" && !ids.has(f.entryId))
      throw new Error(`${f.code} names unknown ${f.entryId}`);
    stats.codes[f.code] = (stats.codes[f.code] ?? 0) + 1;
  }
  JSON.stringify(report);
  if (report.errors + report.warnings + report.infos !== report.findings.length) throw new Error("counts");
  stats.findings += report.findings.length;
  stats.errors += report.errors;
  let n = 0;
  const plan = planRepair(session, report, contextOf(analysis), {
    newId: (reserved) => {
      let id: string;
      do id = `fz${++n}`;
      while (session.byId.has(id) || reserved.has(id));
      return id;
    },
    timestamp: "2026-06-01T00:00:00.000Z",
  });
  if (plan.entries.length === 0) return;
  if (plan.remaining.length > 0)
    throw new Error(`repair leaves ${plan.remaining.map((f) => `${f.code}@${f.entryId}`).join(", ")}`);
  // the repaired text read back: same verdict as the overlay's proof (for files that take an append)
  if (session.size === session.committedBytes && session.fileVersion >= 3 && !session.invalid) {
    const back = SessionFile.fromBytes(text + plan.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const after = diagnose(back, {
      ...contextOf(analyzeLoaded(back, { agentDir: agents[agentIndex % agents.length]!, projectSettings: "never" })),
    });
    const left = after.findings.filter((f) => f.severity === "error" && f.repair && f.repair.kind !== "compaction");
    if (left.length > 0) throw new Error(`after the repair: ${left.map((f) => `${f.code}@${f.entryId}`).join(", ")}`);
  }
  stats.repaired++;
  stats.appended += plan.entries.length;
}

try {
  let i = 0;
  fc.assert(
    fc.property(recipeArb, mutationsArb, fc.nat({ max: 2 }), (recipe, mutations, agent) => {
      const text = mutate(buildSession(recipe).jsonl, mutations);
      parentPort!.postMessage({ progress: ++i, case: { recipe, mutations, agent } });
      stats.cases++;
      check(text, agent);
    }),
    { numRuns: runs, seed },
  );
  parentPort!.postMessage({ done: true, stats });
} catch (error) {
  parentPort!.postMessage({ failure: (error as Error).message });
}
