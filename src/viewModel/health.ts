/** The doctor's findings (`core/health/`) in the words of every surface. Pure. */

import type { HealthCode, HealthFinding, HealthReport, HealthSeverity } from "../core/health/types";
import { localisedRecord, pluralText } from "../shared/format";
import * as l10n from "@vscode/l10n";

/** Short titles per code: what kind of problem (the message says where, why and what to do). */
export const HEALTH_TITLES: Readonly<Record<HealthCode, string>> = localisedRecord({
  "orphan-result": () => l10n.t("Orphaned tool result"),
  "dropped-call-result": () => l10n.t("Result of a failed answer"),
  "separated-result": () => l10n.t("Tool result separated from its call"),
  "duplicate-result": () => l10n.t("Second result for one call"),
  "missing-result": () => l10n.t("Tool call without result"),
  "missing-parent": () => l10n.t("Missing parent"),
  "parent-cycle": () => l10n.t("Parent cycle"),
  "path-cycle": () => l10n.t("Branch runs into a parent cycle"),
  "leaf-not-an-entry": () => l10n.t("pi's leaf is not an entry"),
  "duplicate-id": () => l10n.t("Duplicate entry id"),
  "tree-hang": () => l10n.t("pi's /tree would hang"),
  "edit-target-missing": () => l10n.t("Context edit of a missing entry"),
  "edit-target-off-path": () => l10n.t("Context edit of another branch"),
  "edit-target-not-editable": () => l10n.t("Context edit of a non-editable entry"),
  "edit-invalid-replacement": () => l10n.t("Invalid context edit"),
  "estimate-fails": () => l10n.t("pi cannot estimate the context"),
  "first-kept-missing": () => l10n.t("Compaction keeps nothing"),
  "label-target-missing": () => l10n.t("Label of a missing entry"),
  "first-kept-tool-result": () => l10n.t("Compaction keeps from a tool result"),
  "branch-summary-from-missing": () => l10n.t("Branch summary from a missing entry"),
  "concurrent-writers": () => l10n.t("Concurrent writers"),
  "several-roots": () => l10n.t("Several roots"),
  "context-overflow": () => l10n.t("Context overflow"),
  "repeated-failures": () => l10n.t("Repeated failed answers"),
  "last-answer-error": () => l10n.t("Last answer failed"),
  "last-answer-aborted": () => l10n.t("Last answer stopped"),
  bom: () => l10n.t("Byte order mark"),
  "not-a-session": () => l10n.t("Not a pi session"),
  "malformed-line": () => l10n.t("Malformed line"),
  "invalid-escape": () => l10n.t("Malformed line"),
  "line-too-long": () => l10n.t("Line too long"),
  "not-an-entry": () => l10n.t("Not an entry"),
  "not-an-object": () => l10n.t("Not an entry"),
  "missing-id": () => l10n.t("Entry without id"),
  "missing-message": () => l10n.t("Message entry without message"),
  "truncated-final-line": () => l10n.t("Incomplete last line"),
  "old-version": () => l10n.t("Old session format"),
  "extra-header": () => l10n.t("Second session header"),
  "unknown-type": () => l10n.t("Unknown entry type"),
  "large-entry": () => l10n.t("Very large entry"),
  "slow-load": () => l10n.t("Large session file"),
  "read-problem": () => l10n.t("Reading problem"),
  "reserve-exceeds-window": () => l10n.t("reserveTokens ≥ context window"),
  "keep-exceeds-threshold": () => l10n.t("keepRecentTokens ≥ threshold"),
  "unknown-window": () => l10n.t("Unknown context window"),
  "invalid-setting": () => l10n.t("Invalid pi setting"),
  "setting-not-boolean": () => l10n.t("compaction.enabled is not true/false"),
  "models-json": () => l10n.t("models.json problem"),
  "check-failed": () => l10n.t("Check could not finish"),
});

/** The title of a finding's code. */
export function healthTitle(code: HealthCode): string {
  return HEALTH_TITLES[code] ?? code;
}

/** `2 errors · 1 warning · 3 notes`, or `no problems`. */
export function healthSummary(report: Pick<HealthReport, "errors" | "warnings" | "infos">): string {
  const parts: string[] = [];
  if (report.errors) parts.push(pluralText(report.errors, l10n.t("{0} error"), l10n.t("{0} errors")));
  if (report.warnings) parts.push(pluralText(report.warnings, l10n.t("{0} warning"), l10n.t("{0} warnings")));
  if (report.infos) parts.push(pluralText(report.infos, l10n.t("{0} note"), l10n.t("{0} notes")));
  return parts.length ? parts.join(" · ") : l10n.t("no problems");
}

/** The worst severity of a report, or undefined when it has no findings. */
export function worstSeverity(report: Pick<HealthReport, "errors" | "warnings" | "infos">): HealthSeverity | undefined {
  return report.errors ? "error" : report.warnings ? "warning" : report.infos ? "info" : undefined;
}

/** How many findings an appended entry can repair. */
export function repairableCount(report: HealthReport): number {
  return report.findings.filter((f) => f.repair !== null && f.repair.kind !== "compaction").length;
}

/** The gauge tooltip's health badge: trusted Markdown, so no session text in it. */
export function healthBadge(report: HealthReport): string {
  const worst = worstSeverity(report);
  if (!worst) return l10n.t("**Session health:** $(pass) no problems found");
  const parts: string[] = [];
  if (report.errors) parts.push(pluralText(report.errors, l10n.t("$(error) {0} error"), l10n.t("$(error) {0} errors")));
  if (report.warnings)
    parts.push(pluralText(report.warnings, l10n.t("$(warning) {0} warning"), l10n.t("$(warning) {0} warnings")));
  if (report.infos) parts.push(pluralText(report.infos, l10n.t("$(info) {0} note"), l10n.t("$(info) {0} notes")));
  const repairable = repairableCount(report);
  return l10n.t(
    "**Session health:** {0}{1} · [Check Session Health…](command:piContext.checkHealth)",
    parts.join(" · "),
    repairable ? l10n.t(" — {0} repairable", repairable) : "",
  );
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

/** A tree row's worst severity and short description, plus one tooltip line per finding. */
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
      ? `${mark} ${healthTitle(own.code)}${own.entryId === entryId ? "" : l10n.t(" (involved)")}`
      : l10n.t("{0} {1} problems", mark, sorted.length);
  return {
    severity,
    badge,
    lines: sorted.map((f) => ({
      severity: f.severity,
      text: `${healthTitle(f.code)}${f.entryId === entryId ? "" : l10n.t(" (involved)")}: ${f.message}`,
    })),
  };
}
