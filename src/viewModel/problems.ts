/**
 * Every problem pi-context found reading the shown session and pi's settings, as one list for the
 * status-bar tooltip and the panel: session-file diagnostics (`SessionFile.diagnostics`: torn final
 * line, malformed lines, unknown entry types, duplicate ids…), tree diagnostics
 * (`structureDiagnostics`: missing parents, parent cycles, concurrent writers), the path cycle of
 * `inspect`, invalid pi settings and an unreadable models.json. Pure, no `vscode`.
 */

import type { InspectResult } from "../core/rules/inspect";
import type { Diagnostic } from "../core/types";
import type { ProblemModel } from "../shared/protocol";

/** Short titles per diagnostic code (what kind of problem; the message says where and why). */
const TITLES: Record<string, string> = {
  "truncated-final-line": "Incomplete last line",
  "malformed-line": "Malformed line",
  "line-too-long": "Line too long",
  "not-an-object": "Not an entry",
  "not-an-entry": "Not an entry",
  "missing-id": "Entry without id",
  "missing-message": "Message entry without message",
  "unknown-type": "Unknown entry type",
  "duplicate-id": "Duplicate entry id",
  "missing-parent": "Missing parent",
  "parent-cycle": "Parent cycle",
  "path-cycle": "Parent cycle",
  "several-roots": "Several roots",
  "concurrent-writers": "Concurrent writers",
  "extra-header": "Second session header",
  "old-version": "Old session format",
  "not-a-session": "Not a pi session",
  bom: "Byte order mark",
  settings: "Invalid pi setting",
  models: "models.json problem",
};

/** Extra explanation appended to some codes' messages. */
const NOTES: Record<string, string> = {
  "truncated-final-line": "pi skips it; while pi is still writing the line this clears itself",
};

const RANK = { error: 0, warning: 1, info: 2 } as const;

function fromDiagnostic(d: Diagnostic, sessionFile: string): Omit<ProblemModel, "id"> {
  const p: Omit<ProblemModel, "id"> = {
    severity: d.severity,
    source: "session",
    code: d.code,
    title: TITLES[d.code] ?? d.code,
    message: NOTES[d.code] ? `${d.message} — ${NOTES[d.code]}` : d.message,
    file: sessionFile,
  };
  if (d.line !== undefined) p.line = d.line;
  if (d.entryId !== undefined) p.entryId = d.entryId;
  return p;
}

/**
 * All problems of a session view, errors first, then warnings, then info (stable within a
 * severity: file order for the session, pi's order for settings).
 * @param inspect the session's inspect result (diagnostics and settings problems).
 * @param sessionFile the session file (problems with a `line` are in it).
 * @param modelsError `Analysis.modelsError` (models.json could not be read), if any.
 * @returns problems with ids `p0`, `p1`, … in that order (the panel's "open problem" message names them).
 */
export function collectProblems(
  inspect: Pick<InspectResult, "diagnostics" | "settingsProblems">,
  sessionFile: string,
  modelsError?: string,
): ProblemModel[] {
  const list: Omit<ProblemModel, "id">[] = [];
  for (const d of inspect.diagnostics) list.push(fromDiagnostic(d, sessionFile));
  for (const s of inspect.settingsProblems) {
    list.push({
      severity: "warning",
      source: "settings",
      code: "settings",
      title: TITLES.settings!,
      message: `${s.key ? `${s.key}: ` : ""}${s.message}`,
      file: s.file,
    });
  }
  if (modelsError)
    list.push({ severity: "warning", source: "models", code: "models", title: TITLES.models!, message: modelsError });
  return list
    .map((p, order) => ({ p, order }))
    .sort((a, b) => RANK[a.p.severity] - RANK[b.p.severity] || a.order - b.order)
    .map(({ p }, i) => ({ id: `p${i}`, ...p }));
}

/** Counts by severity, e.g. `2 errors, 1 warning` (empty string for none). */
export function problemCounts(problems: readonly ProblemModel[]): string {
  const n = (s: ProblemModel["severity"]) => problems.filter((p) => p.severity === s).length;
  const parts: string[] = [];
  const e = n("error");
  const w = n("warning");
  const i = n("info");
  if (e) parts.push(`${e} error${e === 1 ? "" : "s"}`);
  if (w) parts.push(`${w} warning${w === 1 ? "" : "s"}`);
  if (i) parts.push(`${i} note${i === 1 ? "" : "s"}`);
  return parts.join(", ");
}
