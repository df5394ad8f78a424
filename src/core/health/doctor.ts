/**
 * The session doctor: every health check over one session at its leaf, as one {@link HealthReport}.
 * Pure; never throws for bad session content. `diagnose` takes any view (also an overlay with planned
 * entries: the repair proves itself on it); `checkHealth` is cached per analysis.
 */

import type { Analysis } from "../rules/analyze";
import { buildProjection } from "../rules/context";
import { structureDiagnostics } from "../rules/tree";
import type { SessionView } from "../read/overlay";
import type { Diagnostic } from "../types";
import { acknowledgedStamp, withAcknowledged } from "./acknowledged";
import { danglingFindings } from "./dangling";
import { estimateFindings } from "./estimate";
import { leafFindings } from "./leaf";
import type { OddTail } from "../read/oddTail";
import { fileFindings } from "./fileChecks";
import { pairingFindings } from "./pairing";
import { referenceFindings } from "./references";
import { settingsFindings, type SettingsInput } from "./settingsChecks";
import { tailFindings } from "./tail";
import { reportOf, type HealthFinding, type HealthReport } from "./types";
import * as l10n from "@vscode/l10n";

export interface HealthView extends SessionView {
  /** Reading diagnostics; structural ones are computed here unless given. */
  readonly diagnostics: readonly Diagnostic[];
  readonly size: number;
  /** The last line pi keeps when it is not an entry with a string id (`SessionFile.oddTail`). */
  readonly oddTail?: OddTail | undefined;
}

/** What the doctor needs besides the session: pi's settings and window for its model. */
export interface DoctorContext {
  settings: SettingsInput;
  /** pi's `prepareCompaction` has something to summarize at the leaf. */
  canCompact: () => boolean;
  /** Default: the view's leaf. */
  leafId?: string | null;
  /** Precomputed `structureDiagnostics` of the view (e.g. the gauge's incremental tracker). */
  structure?: readonly Diagnostic[];
  /** Thresholds for tests (see `fileChecks.ts`). */
  largeEntryBytes?: number;
  slowLoadBytes?: number;
}

/** The findings of one view of a session, errors first. */
export function diagnose(view: HealthView, context: DoctorContext): HealthReport {
  const projection = buildProjection(view, context.leafId);
  const structure = context.structure ?? structureDiagnostics(view);
  const diagnostics = [...view.diagnostics, ...structure];
  const window =
    context.settings.contextWindow.value && context.settings.contextWindow.value > 0
      ? context.settings.contextWindow.value
      : undefined;
  const findings: HealthFinding[] = [];
  const guard = (what: string, run: () => HealthFinding[]) => {
    try {
      findings.push(...run());
    } catch (error) {
      // a check must never take the others down (e.g. a body changed on disk while reading)
      findings.push({
        code: "check-failed",
        severity: "info",
        entryId: null,
        relatedIds: [],
        message: l10n.t("The {0} check could not finish: {1}", what, (error as Error).message),
        source: "session",
        repair: null,
      });
    }
  };
  guard(l10n.t("tool pairing"), () => pairingFindings(projection, view, view.byId));
  guard(l10n.t("reference"), () =>
    referenceFindings({ records: view.records, byId: view.byId, projection, diagnostics }),
  );
  guard(l10n.t("leaf"), () => leafFindings({ oddTail: view.oddTail, records: view.records, byId: view.byId }));
  guard(l10n.t("dangling reference"), () => danglingFindings({ records: view.records, byId: view.byId, projection }));
  guard(l10n.t("token estimate"), () =>
    estimateFindings({
      projection,
      reader: view,
      byId: view.byId,
      keepRecentTokens: context.settings.keepRecentTokens.value ?? undefined,
    }),
  );
  guard(l10n.t("last answer"), () =>
    tailFindings({
      projection,
      readEntry: (r) => view.readEntry(r),
      contextWindow: window,
      compactionEnabled: context.settings.compactionEnabled.value,
      ...(context.settings.compactionEnabled.file
        ? { compactionEnabledWhere: context.settings.compactionEnabled.file }
        : {}),
      model: context.settings.model ?? context.settings.selection ?? null,
      canCompact: context.canCompact,
    }),
  );
  guard(l10n.t("file"), () =>
    fileFindings({
      records: view.records,
      diagnostics,
      fileBytes: view.size,
      projection,
      contextWindow: window,
      ...(view.oddTail ? { oddLeafLine: view.oddTail.line } : {}),
      ...(context.largeEntryBytes !== undefined ? { largeEntryBytes: context.largeEntryBytes } : {}),
      ...(context.slowLoadBytes !== undefined ? { slowLoadBytes: context.slowLoadBytes } : {}),
    }),
  );
  guard(l10n.t("settings"), () => settingsFindings(context.settings));
  return reportOf(findings, projection.leafId);
}

export function contextOf(analysis: Analysis): DoctorContext {
  const inspect = analysis.inspect;
  return {
    settings: {
      contextWindow: inspect.contextWindow,
      reserveTokens: inspect.reserveTokens,
      keepRecentTokens: inspect.keepRecentTokens,
      compactionEnabled: inspect.compactionEnabled,
      settingsProblems: inspect.settingsProblems,
      model: inspect.model,
      modelsError: analysis.modelsError,
      selection: analysis.selection
        ? { provider: analysis.selection.provider, modelId: analysis.selection.modelId }
        : null,
    },
    canCompact: () => inspect.compaction !== null,
    // at an odd last line pi has no leaf pi-context can name: check the conversation it shows
    leafId: inspect.piLeaf ? analysis.session.leafId : inspect.leafId,
  };
}

const reports = new WeakMap<Analysis, { raw: HealthReport; acks: string; shown: HealthReport }>();

/** The doctor's report at the analysed leaf, cached per analysis (gauge, panel and tree ask after every change). */
export function checkHealth(analysis: Analysis): HealthReport {
  const acks = acknowledgedStamp();
  const cached = reports.get(analysis);
  if (cached?.acks === acks) return cached.shown;
  const session = analysis.session;
  let raw = cached?.raw;
  if (!raw) {
    const reading = new Set(session.diagnostics);
    const structure = analysis.inspect.diagnostics.filter((d) => !reading.has(d) && d.code !== "path-cycle");
    raw = diagnose(session, { ...contextOf(analysis), structure });
  }
  const shown = withAcknowledged(raw, session.fileIdentity);
  reports.set(analysis, { raw, acks, shown });
  return shown;
}

/** Counts by severity, e.g. `2 errors, 1 warning, 3 notes`; English, for the log and the CLI. */
export function healthCounts(report: Pick<HealthReport, "errors" | "warnings" | "infos">): string {
  const parts: string[] = [];
  if (report.errors) parts.push(`${report.errors} error${report.errors === 1 ? "" : "s"}`);
  if (report.warnings) parts.push(`${report.warnings} warning${report.warnings === 1 ? "" : "s"}`);
  if (report.infos) parts.push(`${report.infos} note${report.infos === 1 ? "" : "s"}`);
  return parts.join(", ");
}
