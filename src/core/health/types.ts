/**
 * The doctor's vocabulary: one {@link HealthFinding} per problem that breaks a pi session or makes
 * pi or a provider misbehave, with the entries involved, what pi and providers will do, the fix,
 * and — where an appended entry fixes the model context — the repair.
 */

import type { ContextEditAction } from "../rules/editPlan";
import * as l10n from "@vscode/l10n";

/** `error`: pi or the provider fails (a request is rejected, pi hangs or cannot open the file). */
export type HealthSeverity = "error" | "warning" | "info";

/** Every kind of finding (stable; `pi-context doctor --json` prints them). */
export type HealthCode =
  // tool-call pairing in what pi sends (rules/pairing.ts)
  | "orphan-result"
  | "dropped-call-result"
  | "separated-result"
  | "duplicate-result"
  | "missing-result"
  // references
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
  // a message pi's estimateTokens cannot measure (estimate.ts)
  | "estimate-fails"
  | "first-kept-missing"
  | "label-target-missing"
  | "first-kept-tool-result"
  | "branch-summary-from-missing"
  | "concurrent-writers"
  | "several-roots"
  // failures at the end of the path
  | "context-overflow"
  | "repeated-failures"
  | "last-answer-error"
  | "last-answer-aborted"
  // the file
  | "bom"
  | "not-a-session"
  // lines pi skips (the reading diagnostic's own code)
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
  // settings
  | "reserve-exceeds-window"
  | "keep-exceeds-threshold"
  | "unknown-window"
  | "invalid-setting"
  | "setting-not-boolean"
  | "models-json"
  // a check that could not finish (reported, never thrown)
  | "check-failed";

/** What an appended entry would do about a finding (see `repair.ts`). */
export type HealthRepair =
  /** A `context_edit` (through the pairing-safe planner `rules/editPlan.ts`). */
  | { kind: "context-edit"; action: ContextEditAction; description: string }
  /** A `pi-context/leaf` marker parented on `targetId`: pi resumes there (`rules/branch.ts`). */
  | { kind: "leaf-marker"; targetId: string; description: string }
  /** A compaction through the existing compaction flow (needs a summarizer: offered, not appended here). */
  | { kind: "compaction"; description: string };

/** One problem. */
export interface HealthFinding {
  code: HealthCode;
  severity: HealthSeverity;
  /** The entry the finding is about (null: the file or the settings). */
  entryId: string | null;
  /** The other entries involved (the call of a result, the message in between, a cycle's members…). */
  relatedIds: string[];
  /** Plain text: what is wrong, what pi and providers will do, and what the user can do. */
  message: string;
  /** Where it was found. */
  source: "session" | "settings" | "models";
  /** 1-based line in the session file, when the finding is tied to a line. */
  line?: number;
  /** The file the finding is in when it is not the session (a settings file, models.json). */
  file?: string;
  /** What an appended entry would do about it; null when only pi or a person can fix it. */
  repair: HealthRepair | null;
  /** A line pi skips that is no entry at all (unparseable, or JSON pi takes for nothing): which line, to acknowledge it (`acknowledged.ts`). */
  skippedLine?: { offset: number; bytes: number; sha256: string };
  /** The user called that line harmless: a note now (`acknowledged.ts`). */
  acknowledged?: true;
}

/** The doctor's answer for one session at its leaf. */
export interface HealthReport {
  /** Errors first, then warnings, then info; within a severity in the order the checks meet them. */
  findings: HealthFinding[];
  errors: number;
  warnings: number;
  infos: number;
  /** The leaf the context checks looked at. */
  leafId: string | null;
}

const RANK: Record<HealthSeverity, number> = { error: 0, warning: 1, info: 2 };

/** A report from findings in check order: sorted by severity (stable), with counts. */
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
