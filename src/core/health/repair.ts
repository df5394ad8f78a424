/**
 * Repairs an appended entry can make (a `pi-context/leaf` marker off a looping branch; `context_edit`s
 * from the pairing-safe planner for orphaned results and invalid replacements), planned in rounds and
 * proven on an overlay before anything is written (`flows/repair.ts` writes). Compaction is only offered.
 */

import { buildLeafMarkerEntry } from "../rules/branch";
import { chainContextEdits } from "../rules/contextEdit";
import { prepareContextEdits, type ContextEditAction, type RefusedAction } from "../rules/editPlan";
import { withAppended } from "../read/overlay";
import type { SessionEntry } from "../types";
import { diagnose, type DoctorContext, type HealthView } from "./doctor";
import type { HealthFinding, HealthReport } from "./types";

export const MAX_REPAIR_ROUNDS = 3;

export interface RepairOptions {
  /** A fresh entry id not in the file nor in `reserved` (`flows/write.ts` `newEntryId`). */
  newId: (reserved: ReadonlySet<string>) => string;
  timestamp: string;
}

export interface RepairFix {
  finding: HealthFinding;
  /** Includes a context edit's cascades. */
  entries: SessionEntry[];
}

export interface RepairPlan {
  /** In order (the first hangs off the file's leaf); empty: nothing to write. */
  entries: SessionEntry[];
  fixes: RepairFix[];
  refused: RefusedAction[];
  compaction: HealthFinding[];
  /** The doctor on the session with `entries` appended: what remains. */
  after: HealthReport;
  /** Errors of `after` that have an append repair (should be empty). */
  remaining: HealthFinding[];
}

const isAppendRepair = (f: HealthFinding) => f.repair !== null && f.repair.kind !== "compaction";

/**
 * Plans the repairs of `report` and proves them: each round re-runs the doctor with the planned entries
 * appended, at most {@link MAX_REPAIR_ROUNDS}. `context.leafId` is ignored (pi resumes at the last one).
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

/** A leaf marker when the branch loops (the next round looks at the new branch), else context edits. */
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

function causeTarget(cause: { kind: string; assistantId?: string; resultId?: string }): string | undefined {
  return cause.assistantId ?? cause.resultId;
}
