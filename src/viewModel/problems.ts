/** Every problem of the shown session: the doctor's findings (`core/health/`). Pure. */

import { checkHealth } from "../core/health/doctor";
import type { HealthReport } from "../core/health/types";
import type { Analysis } from "../core/rules/analyze";
import type { ProblemModel } from "../shared/protocol";
import { healthTitle } from "./health";

/** In the doctor's order (errors first); ids `p0`, `p1`, … are named by the panel's `openProblem`. */
export function problemsOf(report: HealthReport, sessionFile: string): ProblemModel[] {
  return report.findings.map((f, i) => {
    const p: ProblemModel = {
      id: `p${i}`,
      severity: f.severity,
      source: f.source,
      code: f.code,
      title: healthTitle(f.code),
      message: f.message,
    };
    const file = f.file ?? (f.source === "session" ? sessionFile : undefined);
    if (file) p.file = file;
    if (f.line !== undefined) p.line = f.line;
    if (f.entryId) p.entryId = f.entryId;
    if (f.relatedIds.length) p.relatedIds = f.relatedIds;
    if (f.repair) p.repair = f.repair.kind;
    return p;
  });
}

/** {@link problemsOf} for an analysed session (the doctor's report is cached per analysis). */
export function collectProblems(analysis: Analysis, sessionFile: string): ProblemModel[] {
  return problemsOf(checkHealth(analysis), sessionFile);
}
