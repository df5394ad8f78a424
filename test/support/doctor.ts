/**
 * Running the session doctor on hand-made sessions in tests: a temp agent dir with a models.json
 * that gives the builder's model (`p/m`) a context window, optional settings, and the report.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { analyzeLoaded, type Analysis } from "../../src/core/rules/analyze";
import { checkHealth, contextOf, diagnose } from "../../src/core/health/doctor";
import { planRepair, type RepairPlan } from "../../src/core/health/repair";
import type { HealthFinding, HealthReport } from "../../src/core/health/types";
import { SessionFile } from "../../src/core/read/session";

/** Options of {@link doctorOf}. */
export interface DoctorTestOptions {
  /** `settings.json` of the agent dir (default: none). */
  settings?: object;
  /** Context window of `p/m` in models.json (default 100000; 0 = no models.json). */
  window?: number;
  /** Raw models.json text (overrides `window`). */
  modelsJson?: string;
  largeEntryBytes?: number;
  slowLoadBytes?: number;
}

const dirs: string[] = [];
process.on("exit", () => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp pi agent dir for the builder's model `p/m`. */
export function agentDirFor(options: DoctorTestOptions = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-doctor-agent-"));
  dirs.push(dir);
  const window = options.window ?? 100000;
  if (options.modelsJson !== undefined) fs.writeFileSync(path.join(dir, "models.json"), options.modelsJson);
  else if (window > 0)
    fs.writeFileSync(
      path.join(dir, "models.json"),
      JSON.stringify({
        providers: {
          p: {
            baseUrl: "http://127.0.0.1:1/v1",
            api: "openai-completions",
            apiKey: "x",
            models: [{ id: "m", name: "m", contextWindow: window, maxTokens: 1000, input: ["text"] }],
          },
        },
      }),
    );
  if (options.settings) fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(options.settings));
  return dir;
}

/** The analysis and the doctor's report of a session given as JSONL text (or bytes). */
export function doctorOf(
  jsonl: string | Buffer,
  options: DoctorTestOptions = {},
): { session: SessionFile; analysis: Analysis; report: HealthReport } {
  const session = SessionFile.fromBytes(jsonl);
  const analysis = analyzeLoaded(session, { agentDir: agentDirFor(options), projectSettings: "never" });
  const report =
    options.largeEntryBytes !== undefined || options.slowLoadBytes !== undefined
      ? diagnose(session, {
          ...contextOf(analysis),
          ...(options.largeEntryBytes !== undefined ? { largeEntryBytes: options.largeEntryBytes } : {}),
          ...(options.slowLoadBytes !== undefined ? { slowLoadBytes: options.slowLoadBytes } : {}),
        })
      : checkHealth(analysis);
  return { session, analysis, report };
}

/** `severity:code@entryId` per finding, in report order. */
export function codes(report: HealthReport): string[] {
  return report.findings.map((f) => `${f.severity}:${f.code}${f.entryId ? `@${f.entryId}` : ""}`);
}

/** The findings with a code. */
export function withCode(report: HealthReport, code: HealthFinding["code"]): HealthFinding[] {
  return report.findings.filter((f) => f.code === code);
}

let counter = 0;
/** The repair plan of a doctored session, with deterministic ids `r0001`, `r0002`, … */
export function repairOf(d: { session: SessionFile; analysis: Analysis; report: HealthReport }): RepairPlan {
  return planRepair(d.session, d.report, contextOf(d.analysis), {
    newId: (reserved) => {
      let id: string;
      do id = `r${String(++counter).padStart(4, "0")}`;
      while (d.session.byId.has(id) || reserved.has(id));
      return id;
    },
    timestamp: "2026-06-01T00:00:00.000Z",
  });
}

/** The JSONL of a session with a repair plan's entries appended (what the write would produce). */
export function appended(jsonl: string, plan: RepairPlan): string {
  return jsonl + plan.entries.map((e) => `${JSON.stringify(e)}\n`).join("");
}
