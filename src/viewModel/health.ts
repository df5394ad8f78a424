/**
 * The doctor's findings (`core/health/`) in the words of every surface: a short title per code,
 * the health badge of the gauge's tooltip, and the findings of each entry for the Pi Session
 * tree's rows. Pure, no `vscode`.
 */

import type { HealthCode, HealthFinding, HealthReport, HealthSeverity } from "../core/health/types";

/** Short titles per code: what kind of problem (the message says where, why and what to do). */
export const HEALTH_TITLES: Record<HealthCode, string> = {
  "orphan-result": "Orphaned tool result",
  "dropped-call-result": "Result of a failed answer",
  "separated-result": "Tool result separated from its call",
  "duplicate-result": "Second result for one call",
  "missing-result": "Tool call without result",
  "missing-parent": "Missing parent",
  "parent-cycle": "Parent cycle",
  "path-cycle": "Branch runs into a parent cycle",
  "duplicate-id": "Duplicate entry id",
  "tree-hang": "pi's /tree would hang",
  "edit-target-missing": "Context edit of a missing entry",
  "edit-target-off-path": "Context edit of another branch",
  "edit-target-not-editable": "Context edit of a non-editable entry",
  "edit-invalid-replacement": "Invalid context edit",
  "first-kept-missing": "Compaction keeps nothing",
  "first-kept-tool-result": "Compaction keeps from a tool result",
  "branch-summary-from-missing": "Branch summary from a missing entry",
  "concurrent-writers": "Concurrent writers",
  "several-roots": "Several roots",
  "context-overflow": "Context overflow",
  "repeated-failures": "Repeated failed answers",
  "last-answer-error": "Last answer failed",
  "last-answer-aborted": "Last answer stopped",
  bom: "Byte order mark",
  "not-a-session": "Not a pi session",
  "malformed-line": "Malformed line",
  "invalid-escape": "Malformed line",
  "line-too-long": "Line too long",
  "not-an-entry": "Not an entry",
  "not-an-object": "Not an entry",
  "missing-id": "Entry without id",
  "missing-message": "Message entry without message",
  "truncated-final-line": "Incomplete last line",
  "old-version": "Old session format",
  "extra-header": "Second session header",
  "unknown-type": "Unknown entry type",
  "large-entry": "Very large entry",
  "slow-load": "Large session file",
  "read-problem": "Reading problem",
  "reserve-exceeds-window": "reserveTokens ≥ context window",
  "keep-exceeds-threshold": "keepRecentTokens ≥ threshold",
  "unknown-window": "Unknown context window",
  "invalid-setting": "Invalid pi setting",
  "models-json": "models.json problem",
  "check-failed": "Check could not finish",
};

/** The title of a finding's code. */
export function healthTitle(code: HealthCode): string {
  return HEALTH_TITLES[code] ?? code;
}

/** The codicon of a severity (`$(error)`, `$(warning)`, `$(info)`). */
export const SEVERITY_ICONS: Record<HealthSeverity, string> = { error: "error", warning: "warning", info: "info" };

/** `2 errors · 1 warning · 3 notes`, or `no problems`. */
export function healthSummary(report: Pick<HealthReport, "errors" | "warnings" | "infos">): string {
  const parts: string[] = [];
  if (report.errors) parts.push(`${report.errors} error${report.errors === 1 ? "" : "s"}`);
  if (report.warnings) parts.push(`${report.warnings} warning${report.warnings === 1 ? "" : "s"}`);
  if (report.infos) parts.push(`${report.infos} note${report.infos === 1 ? "" : "s"}`);
  return parts.length ? parts.join(" · ") : "no problems";
}

/** The worst severity of a report, or undefined when it has no findings. */
export function worstSeverity(report: Pick<HealthReport, "errors" | "warnings" | "infos">): HealthSeverity | undefined {
  return report.errors ? "error" : report.warnings ? "warning" : report.infos ? "info" : undefined;
}

/** How many findings an appended entry can repair. */
export function repairableCount(report: HealthReport): number {
  return report.findings.filter((f) => f.repair !== null && f.repair.kind !== "compaction").length;
}

/**
 * The health badge of the gauge's tooltip (trusted Markdown; no session text in it): the counts
 * with their icons and the link to "Pi: Check Session Health", e.g.
 * `**Session health:** $(error) 1 error · $(warning) 2 warnings — 1 repairable · [Check Session Health…](command:piContext.checkHealth)`.
 */
export function healthBadge(report: HealthReport): string {
  const worst = worstSeverity(report);
  if (!worst) return "**Session health:** $(pass) no problems found";
  const parts: string[] = [];
  if (report.errors) parts.push(`$(error) ${report.errors} error${report.errors === 1 ? "" : "s"}`);
  if (report.warnings) parts.push(`$(warning) ${report.warnings} warning${report.warnings === 1 ? "" : "s"}`);
  if (report.infos) parts.push(`$(info) ${report.infos} note${report.infos === 1 ? "" : "s"}`);
  const repairable = repairableCount(report);
  return `**Session health:** ${parts.join(" · ")}${repairable ? ` — ${repairable} repairable` : ""} · [Check Session Health…](command:piContext.checkHealth)`;
}

/** The findings about each entry (as `entryId` or one of the `relatedIds`), errors first. */
export function findingsByEntry(report: HealthReport): Map<string, HealthFinding[]> {
  const map = new Map<string, HealthFinding[]>();
  const add = (id: string, f: HealthFinding) => {
    let list = map.get(id);
    if (!list) map.set(id, (list = []));
    if (!list.includes(f)) list.push(f);
  };
  for (const f of report.findings) {
    if (f.source !== "session") continue;
    if (f.entryId) add(f.entryId, f);
    for (const id of f.relatedIds) add(id, f);
  }
  return map;
}

/**
 * What a tree row says about its entry's findings: the worst severity and a short description
 * (`⚠ Orphaned tool result`, `✖ 2 problems`), plus one line per finding for the tooltip.
 */
export function rowHealth(
  entryId: string,
  findings: readonly HealthFinding[],
): { severity: HealthSeverity; badge: string; lines: { severity: HealthSeverity; text: string }[] } | undefined {
  if (findings.length === 0) return undefined;
  const rank = { error: 0, warning: 1, info: 2 } as const;
  const sorted = [...findings].sort((a, b) => rank[a.severity] - rank[b.severity]);
  const severity = sorted[0]!.severity;
  const mark = severity === "error" ? "✖" : severity === "warning" ? "⚠" : "ⓘ";
  const own = sorted.find((f) => f.entryId === entryId) ?? sorted[0]!;
  const badge =
    sorted.length === 1
      ? `${mark} ${healthTitle(own.code)}${own.entryId === entryId ? "" : " (involved)"}`
      : `${mark} ${sorted.length} problems`;
  return {
    severity,
    badge,
    lines: sorted.map((f) => ({
      severity: f.severity,
      text: `${healthTitle(f.code)}${f.entryId === entryId ? "" : " (involved)"}: ${f.message}`,
    })),
  };
}
