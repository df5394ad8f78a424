/**
 * Repairs that an appended entry can make, planned and proven on an overlay before anything is
 * written (the flow that writes is `flows/repair.ts`):
 * - a `pi-context/leaf` marker (`rules/branch.ts` `buildLeafMarkerEntry`) that moves pi off a
 *   branch running into a parent cycle, onto the newest entry whose branch has none;
 * - `context_edit` entries from the pairing-safe planner (`rules/editPlan.ts`): omitting orphaned
 *   tool results (results without their call, of a failed answer, separated from their call, second
 *   results), restoring entries whose latest edit has an invalid replacement.
 * Compaction is offered, not planned here (it needs a summarizer: the compaction flow).
 *
 * The plan runs in rounds: each round re-runs the doctor on the session with the entries planned so
 * far appended (`read/overlay.ts`), so a repair that reveals another repairable problem (a marker
 * that lands on a branch with an orphaned result) is planned too; at most {@link MAX_REPAIR_ROUNDS}.
 * The final overlay's report is the proof: `remaining` lists repairable errors that survive it.
 */

import { buildLeafMarkerEntry } from "../rules/branch";
import { chainContextEdits } from "../rules/contextEdit";
import { prepareContextEdits, type ContextEditAction, type RefusedAction } from "../rules/editPlan";
import { withAppended } from "../read/overlay";
import type { SessionEntry } from "../types";
import { diagnose, type DoctorContext, type HealthView } from "./doctor";
import type { HealthFinding, HealthReport } from "./types";

/** How many times the doctor is re-run on the planned entries. */
export const MAX_REPAIR_ROUNDS = 3;

/** Options of {@link planRepair}. */
export interface RepairOptions {
  /** A fresh entry id not in the file nor in `reserved` (`flows/write.ts` `newEntryId`). */
  newId: (reserved: ReadonlySet<string>) => string;
  /** ISO timestamp of the appended entries. */
  timestamp: string;
}

/** One finding and the entries appended for it. */
export interface RepairFix {
  finding: HealthFinding;
  /** The appended entries that carry it out (a context edit's cascades included). */
  entries: SessionEntry[];
}

/** What {@link planRepair} found to append. */
export interface RepairPlan {
  /** Every entry to append, in order (the first hangs off the file's leaf). Empty: nothing to write. */
  entries: SessionEntry[];
  /** Per repaired finding (of the report it started from, or of a later round). */
  fixes: RepairFix[];
  /** Context edits pi-context's planner refused (with its reason), per round. */
  refused: RefusedAction[];
  /** Findings with a compaction offered (the compaction flow can write it). */
  compaction: HealthFinding[];
  /** The doctor on the session with `entries` appended: what remains. */
  after: HealthReport;
  /** Errors of `after` that have an append repair (should be empty: the plan did not fix them). */
  remaining: HealthFinding[];
}

const isAppendRepair = (f: HealthFinding) => f.repair !== null && f.repair.kind !== "compaction";

/**
 * Plan the repairs of `report` (the doctor's report of `view`) and prove them.
 * @param context the doctor's context of the view (settings, window); its `leafId` is ignored for
 *   the planned entries (pi resumes at the last appended one).
 */
export function planRepair(
  view: HealthView,
  report: HealthReport,
  context: DoctorContext,
  options: RepairOptions,
): RepairPlan {
  const entries: SessionEntry[] = [];
  const fixes: RepairFix[] = [];
  const refused: RefusedAction[] = [];
  const reserved = new Set<string>();
  const newId = () => {
    const id = options.newId(reserved);
    reserved.add(id);
    return id;
  };
  const overlayContext: DoctorContext = { ...context };
  delete overlayContext.leafId;
  delete overlayContext.structure;
  let current: HealthView = view;
  let currentReport = report;
  for (let round = 0; round < MAX_REPAIR_ROUNDS; round++) {
    const planned = planRound(current, currentReport, newId, options.timestamp);
    refused.push(...planned.refused);
    if (planned.entries.length === 0) break;
    entries.push(...planned.entries);
    fixes.push(...planned.fixes);
    current = { ...withAppended(view, entries), diagnostics: view.diagnostics, size: view.size };
    currentReport = diagnose(current, overlayContext);
  }
  const after = entries.length > 0 ? currentReport : report;
  return {
    entries,
    fixes,
    refused,
    compaction: report.findings.filter((f) => f.repair?.kind === "compaction"),
    after,
    remaining: after.findings.filter((f) => f.severity === "error" && isAppendRepair(f)),
  };
}

/** One round: a leaf marker when the branch loops (then the next round looks at the new branch), else context edits. */
function planRound(
  view: HealthView,
  report: HealthReport,
  newId: () => string,
  timestamp: string,
): { entries: SessionEntry[]; fixes: RepairFix[]; refused: RefusedAction[] } {
  const marker = report.findings.find((f) => f.repair?.kind === "leaf-marker");
  if (marker && marker.repair?.kind === "leaf-marker") {
    const entry = buildLeafMarkerEntry({
      id: newId(),
      parentId: marker.repair.targetId,
      timestamp,
      targetId: marker.repair.targetId,
      fromId: view.leafId,
    });
    return { entries: [entry], fixes: [{ finding: marker, entries: [entry] }], refused: [] };
  }
  const wanted = new Map<string, { action: ContextEditAction; finding: HealthFinding }>();
  for (const f of report.findings) {
    if (f.repair?.kind !== "context-edit") continue;
    const action = f.repair.action;
    if (!wanted.has(action.targetId)) wanted.set(action.targetId, { action, finding: f });
  }
  if (wanted.size === 0) return { entries: [], fixes: [], refused: [] };
  const prep = prepareContextEdits(
    view,
    [...wanted.values()].map((w) => w.action),
  );
  const edits = chainContextEdits(prep.drafts, { leafId: view.leafId, newId: () => newId(), timestamp });
  const fixes: RepairFix[] = [];
  for (const [targetId, w] of wanted) {
    const mine = prep.edits
      .map((e, i) => ({ e, entry: edits[i]! }))
      .filter(({ e }) => e.targetId === targetId || causeTarget(e.cause) === targetId)
      .map(({ entry }) => entry as SessionEntry);
    if (mine.length > 0) fixes.push({ finding: w.finding, entries: mine });
  }
  return { entries: edits, fixes, refused: prep.refused };
}

/** The requested target an edit cascades from. */
function causeTarget(cause: { kind: string; assistantId?: string; resultId?: string }): string | undefined {
  return cause.assistantId ?? cause.resultId;
}
