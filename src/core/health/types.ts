/** The doctor's vocabulary: one {@link HealthFinding} per problem that breaks pi or makes a provider misbehave. */

import type { ContextEditAction } from "../rules/editPlan";
import * as l10n from "@vscode/l10n";

/** `error`: pi or the provider fails (a request is rejected, pi hangs or cannot open the file). */
export type HealthSeverity = "error" | "warning" | "info";

/** Stable: `pi-context doctor --json` prints them. */
export type HealthCode =
  | "orphan-result"
  | "dropped-call-result"
  | "separated-result"
  | "duplicate-result"
  | "missing-result"
  | "missing-parent"
  | "parent-cycle"
  | "path-cycle"
  | "leaf-not-an-entry"
  | "duplicate-id"
  | "tree-hang"
  | "edit-target-missing"
  | "edit-target-off-path"
  | "edit-target-not-editable"
  | "edit-invalid-replacement"
  | "estimate-fails"
  | "first-kept-missing"
  | "label-target-missing"
  | "first-kept-tool-result"
  | "branch-summary-from-missing"
  | "concurrent-writers"
  | "several-roots"
  | "context-overflow"
  | "repeated-failures"
  | "last-answer-error"
  | "last-answer-aborted"
  | "bom"
  | "not-a-session"
  | "malformed-line"
  | "invalid-escape"
  | "line-too-long"
  | "not-an-entry"
  | "not-an-object"
  | "missing-id"
  | "missing-message"
  | "truncated-final-line"
  | "old-version"
  | "extra-header"
  | "unknown-type"
  | "large-entry"
  | "slow-load"
  | "read-problem"
  | "reserve-exceeds-window"
  | "keep-exceeds-threshold"
  | "unknown-window"
  | "invalid-setting"
  | "setting-not-boolean"
  | "models-json"
  | "check-failed";

export type HealthRepair =
  | { kind: "context-edit"; action: ContextEditAction; description: string }
  /** A `pi-context/leaf` marker parented on `targetId`: pi resumes there. */
  | { kind: "leaf-marker"; targetId: string; description: string }
  /** Needs a summarizer: offered, not appended here. */
  | { kind: "compaction"; description: string };

export interface HealthFinding {
  code: HealthCode;
  severity: HealthSeverity;
  /** Null: the file or the settings. */
  entryId: string | null;
  relatedIds: string[];
  /** Plain text: what is wrong, what pi and providers will do, and what the user can do. */
  message: string;
  source: "session" | "settings" | "models";
  /** 1-based line in the session file. */
  line?: number;
  /** When not the session (a settings file, models.json). */
  file?: string;
  /** Null when only pi or a person can fix it. */
  repair: HealthRepair | null;
  /** A line pi skips that is no entry at all, to acknowledge it (`acknowledged.ts`). */
  skippedLine?: { offset: number; bytes: number; sha256: string };
  acknowledged?: true;
}

export interface HealthReport {
  /** Errors, then warnings, then info; within a severity in check order. */
  findings: HealthFinding[];
  errors: number;
  warnings: number;
  infos: number;
  leafId: string | null;
}

const RANK: Record<HealthSeverity, number> = { error: 0, warning: 1, info: 2 };

export function reportOf(findings: readonly HealthFinding[], leafId: string | null): HealthReport {
  const sorted = findings
    .map((f, order) => ({ f, order }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.order - b.order)
    .map(({ f }) => f);
  const count = (s: HealthSeverity) => sorted.filter((f) => f.severity === s).length;
  return { findings: sorted, errors: count("error"), warnings: count("warning"), infos: count("info"), leafId };
}

/** A short description of an entry for messages: `tool result t3 (line 12)`. */
export function entryRef(
  record: { id: string; type: string; role?: string; line: number; toolName?: string } | undefined,
  id?: string,
): string {
  if (!record) return l10n.t("entry {0}", id ?? "?");
  const kind =
    record.type === "message"
      ? record.role === "toolResult"
        ? l10n.t("tool result")
        : l10n.t("{0} message", record.role ?? "message")
      : record.type.replace(/_/g, " ");
  const where = [
    record.type === "message" && record.role === "toolResult" ? record.toolName : undefined,
    record.line > 0 ? l10n.t("line {0}", record.line) : undefined,
  ]
    .filter(Boolean)
    .join(", ");
  return `${kind} ${record.id}${where ? ` (${where})` : ""}`;
}
