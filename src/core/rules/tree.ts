/**
 * The entry tree: paths, common ancestors, structural problems (pi 1.6.0 `getBranch`,
 * `collectEntriesForBranchSummary`). pi loops forever on a parent cycle; here it ends the walk.
 */

import type { EntryRecord } from "../read/entries";
import type { Diagnostic } from "../types";

export interface EntryIndex {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
}

export interface PathResult {
  path: EntryRecord[];
  /** The walk met a visited entry (a parent cycle) and stopped there. */
  cycleAt?: string;
  /** The first entry's `parentId` names no entry. */
  missingParent?: string;
}

/** pi's `getBranch(leafId)`; `null` → empty; an unknown id → the last entry (pi's `buildSessionPath` fallback). */
export function getPath(index: EntryIndex, leafId: string | null): PathResult {
  if (leafId === null) return { path: [] };
  const leaf = index.byId.get(leafId) ?? index.records[index.records.length - 1];
  // A walk longer than the number of entries must have met a cycle: only then pay for a visited set.
  return walkToRoot(index, leaf, false) ?? (walkToRoot(index, leaf, true) as PathResult);
}

/** Without `detectCycles`, undefined once longer than the entry count; with it, a revisit ends as `cycleAt`. */
function walkToRoot(index: EntryIndex, leaf: EntryRecord | undefined, detectCycles: boolean): PathResult | undefined {
  const path: EntryRecord[] = [];
  const result: PathResult = { path };
  const seen = detectCycles ? new Set<string>() : undefined;
  const limit = index.byId.size;
  let current: EntryRecord | undefined = leaf;
  while (current) {
    if (seen) {
      if (seen.has(current.id)) {
        result.cycleAt = current.id;
        break;
      }
      seen.add(current.id);
    } else if (path.length > limit) return undefined;
    path.push(current);
    const parentId: string | null = current.parentId;
    if (!parentId) break;
    const parent = index.byId.get(parentId);
    if (!parent) {
      result.missingParent = parentId;
      break;
    }
    current = parent;
  }
  path.reverse();
  return result;
}

/** pi's common ancestor (`collectEntriesForBranchSummary`); null for disjoint roots or no old leaf. */
export function commonAncestor(index: EntryIndex, oldLeafId: string | null, targetId: string): string | null {
  if (!oldLeafId) return null;
  const oldPath = new Set(getPath(index, oldLeafId).path.map((e) => e.id));
  const targetPath = getPath(index, targetId).path;
  for (let i = targetPath.length - 1; i >= 0; i--) {
    if (oldPath.has(targetPath[i]!.id)) return targetPath[i]!.id;
  }
  return null;
}

/** Problems pi does not report: missing parents, parent cycles (pi would hang), several roots. */
export function structureDiagnostics(index: EntryIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const owners: EntryRecord[] = [];
  for (const r of index.records) if (index.byId.get(r.id) === r) owners.push(r);
  let roots = 0;
  for (const r of owners) {
    if (r.parentId === null || r.parentId === "") roots++;
    else if (r.parentId === r.id) {
      diagnostics.push({
        severity: "error",
        code: "parent-cycle",
        message: `entry ${r.id} (line ${r.line}) is its own parent`,
        line: r.line,
        entryId: r.id,
      });
    } else if (!index.byId.has(r.parentId)) {
      diagnostics.push({
        severity: "warning",
        code: "missing-parent",
        message: `entry ${r.id} (line ${r.line}) has parent ${r.parentId}, which is not in the file; its path starts there`,
        line: r.line,
        entryId: r.id,
      });
    }
  }
  const state = new Map<string, 1 | 2>(); // 1 = on the current walk, 2 = done
  for (const start of owners) {
    if (state.has(start.id)) continue;
    const walk: EntryRecord[] = [];
    let current: EntryRecord | undefined = start;
    while (current && !state.has(current.id)) {
      state.set(current.id, 1);
      walk.push(current);
      current = current.parentId && current.parentId !== current.id ? index.byId.get(current.parentId) : undefined;
    }
    if (current && state.get(current.id) === 1 && current.parentId !== current.id) {
      const cycle = walk.slice(walk.indexOf(current)).map((e) => e.id);
      diagnostics.push({
        severity: "error",
        code: "parent-cycle",
        message: `parent cycle: ${cycle.join(" → ")} → ${cycle[0]} (pi would hang on it; paths stop there)`,
        line: current.line,
        entryId: current.id,
        relatedIds: cycle.filter((id) => id !== current!.id),
      });
    }
    for (const e of walk) state.set(e.id, 2);
  }
  diagnostics.push(...concurrentWriterDiagnostics(index, owners));
  if (roots > 1) {
    diagnostics.push({
      severity: "info",
      code: "several-roots",
      message: `${roots} entries have no parent (several roots)`,
    });
  }
  return diagnostics;
}

/** Seconds within which alternating writes to two branches look like two writers rather than navigation. */
export const CONCURRENT_WRITERS_WINDOW_SECONDS = 120;

/**
 * Two pi processes appending to one file (pi #8300): each keeps *resuming* an older childless tip
 * instead of extending the previous line; two such resumes within the window raise one warning.
 */
function concurrentWriterDiagnostics(index: EntryIndex, owners: readonly EntryRecord[]): Diagnostic[] {
  void owners;
  const hasChild = new Set<string>();
  let previous: EntryRecord | undefined;
  let resumes = 0;
  let first: { tip: EntryRecord; previous: EntryRecord; line: number } | undefined;
  for (const r of index.records) {
    const tip = resumeStep(r, previous, hasChild, index);
    if (tip) {
      resumes++;
      first ??= { tip, previous: previous!, line: r.line };
    }
    if (r.parentId) hasChild.add(r.parentId);
    previous = r;
  }
  if (resumes < 2 || !first) return [];
  return concurrentWriterDiagnostic(index, first, resumes);
}

function resumeStep(
  r: EntryRecord,
  previous: EntryRecord | undefined,
  hasChild: ReadonlySet<string>,
  index: EntryIndex,
): EntryRecord | undefined {
  const p = r.parentId;
  const navigation =
    r.type === "branch_summary" || r.type === "label" || (r.type === "custom" && r.customType === "pi-context/leaf");
  if (!p || !previous || p === previous.id || hasChild.has(p) || navigation) return undefined;
  const parent = index.byId.get(p);
  const t = Date.parse(r.timestamp);
  const tp = Date.parse(previous.timestamp);
  if (
    parent &&
    Number.isFinite(t) &&
    Number.isFinite(tp) &&
    Math.abs(t - tp) <= CONCURRENT_WRITERS_WINDOW_SECONDS * 1000
  )
    return parent;
  return undefined;
}

function concurrentWriterDiagnostic(
  index: EntryIndex,
  first: { tip: EntryRecord; previous: EntryRecord; line: number },
  resumes: number,
): Diagnostic[] {
  const fork = commonAncestor(index, first.previous.id, first.tip.id);
  const forkRecord = fork ? index.byId.get(fork) : undefined;
  return [
    {
      severity: "warning",
      code: "concurrent-writers",
      message: `entries of sibling branches${fork ? ` under ${fork}${forkRecord ? ` (line ${forkRecord.line})` : ""}` : ""} alternate in the file (${resumes} times within ${CONCURRENT_WRITERS_WINDOW_SECONDS} s) without a branch summary or navigation entry: possibly two pi processes writing the same session. pi resumes the branch of the last line.`,
      line: first.line,
      ...(fork ? { entryId: fork } : {}),
    },
  ];
}

/**
 * {@link structureDiagnostics} updated per append: while parents point backwards and ids are unique
 * (what pi writes) there can be no cycle; anything else falls back to the full computation.
 */
export class StructureTracker {
  private first: EntryRecord | undefined;
  private processed = 0;
  private simple = true;
  private readonly ids = new Set<string>();
  private readonly missingParents = new Map<string, EntryRecord[]>();
  private roots = 0;
  private readonly hasChild = new Set<string>();
  private previous: EntryRecord | undefined;
  private resumes = 0;
  private firstResume: { tip: EntryRecord; previous: EntryRecord; line: number } | undefined;
  private concurrent: Diagnostic[] | undefined;
  private full: { key: string; diagnostics: Diagnostic[] } | undefined;

  diagnostics(index: EntryIndex): Diagnostic[] {
    if (index.records[0] !== this.first || index.records.length < this.processed) this.reset(index);
    for (let i = this.processed; i < index.records.length; i++) this.add(index, index.records[i]!);
    this.processed = index.records.length;
    if (!this.simple) {
      const key = `${index.records.length}:${index.byId.size}:${index.records[index.records.length - 1]?.id ?? ""}`;
      if (!this.full || this.full.key !== key) this.full = { key, diagnostics: structureDiagnostics(index) };
      return this.full.diagnostics;
    }
    const out: Diagnostic[] = [];
    for (const children of this.missingParents.values()) {
      for (const r of children) {
        out.push({
          severity: "warning",
          code: "missing-parent",
          message: `entry ${r.id} (line ${r.line}) has parent ${r.parentId}, which is not in the file; its path starts there`,
          line: r.line,
          entryId: r.id,
        });
      }
    }
    out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    if (this.resumes >= 2 && this.firstResume) {
      this.concurrent ??= concurrentWriterDiagnostic(index, this.firstResume, this.resumes);
      out.push(...this.concurrent);
    }
    if (this.roots > 1)
      out.push({
        severity: "info",
        code: "several-roots",
        message: `${this.roots} entries have no parent (several roots)`,
      });
    return out;
  }

  private reset(index: EntryIndex): void {
    this.first = index.records[0];
    this.processed = 0;
    this.simple = true;
    this.ids.clear();
    this.missingParents.clear();
    this.roots = 0;
    this.hasChild.clear();
    this.previous = undefined;
    this.resumes = 0;
    this.firstResume = undefined;
    this.concurrent = undefined;
    this.full = undefined;
  }

  private add(index: EntryIndex, r: EntryRecord): void {
    if (this.ids.has(r.id) || r.parentId === r.id || this.missingParents.has(r.id)) this.simple = false;
    this.ids.add(r.id);
    if (r.parentId === null || r.parentId === "") this.roots++;
    else if (!this.ids.has(r.parentId)) {
      let list = this.missingParents.get(r.parentId);
      if (!list) this.missingParents.set(r.parentId, (list = []));
      list.push(r);
    }
    const step = resumeStep(r, this.previous, this.hasChild, index);
    if (step) {
      this.resumes++;
      if (!this.firstResume) this.firstResume = { tip: step, previous: this.previous!, line: r.line };
      this.concurrent = undefined;
    }
    if (r.parentId) this.hasChild.add(r.parentId);
    this.previous = r;
  }
}
