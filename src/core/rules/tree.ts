/**
 * The entry tree: paths, common ancestors and structural problems.
 *
 * Source: pi 1.6.0 `SessionManager.getBranch` / `buildSessionPath` (walk `parentId` through the id
 * map until a missing or null parent, then reverse) and `collectEntriesForBranchSummary` (common
 * ancestor). pi loops forever on a parent cycle; here a cycle ends the walk and is reported.
 */

import type { EntryRecord } from "../read/entries";
import type { Diagnostic } from "../types";

/** What {@link SessionFile} offers the tree functions. */
export interface EntryIndex {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
}

/** A root-first path plus what stopped the walk. */
export interface PathResult {
  /** Entries root → leaf. */
  path: EntryRecord[];
  /** The walk met an entry it had already visited (a parent cycle) and stopped there. */
  cycleAt?: string;
  /** The first entry's `parentId` names no entry (the path is cut there). */
  missingParent?: string;
}

/**
 * The path from the root to `leafId` (pi's `getBranch(leafId)`).
 * @param leafId an entry id; `null` → empty path; an unknown id → the last entry in file order
 *   (pi's `buildSessionPath` fallback).
 */
export function getPath(index: EntryIndex, leafId: string | null): PathResult {
  if (leafId === null) return { path: [] };
  const leaf = index.byId.get(leafId) ?? index.records[index.records.length - 1];
  // A walk longer than the number of entries must have met a cycle: only then pay for a visited set.
  return walkToRoot(index, leaf, false) ?? (walkToRoot(index, leaf, true) as PathResult);
}

/**
 * Follow `parentId` from `leaf` to the root. Without `detectCycles` the walk gives up (returns
 * undefined) once it is longer than the number of entries; with it, a revisited entry ends the walk
 * and is reported as `cycleAt`.
 */
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

/**
 * pi's common ancestor for tree navigation: the deepest entry of the target's path that is also on
 * the old leaf's path (`collectEntriesForBranchSummary`).
 * @returns the ancestor id, or null (disjoint roots, or no old leaf).
 */
export function commonAncestor(index: EntryIndex, oldLeafId: string | null, targetId: string): string | null {
  if (!oldLeafId) return null;
  const oldPath = new Set(getPath(index, oldLeafId).path.map((e) => e.id));
  const targetPath = getPath(index, targetId).path;
  for (let i = targetPath.length - 1; i >= 0; i--) {
    if (oldPath.has(targetPath[i]!.id)) return targetPath[i]!.id;
  }
  return null;
}

/**
 * Structural problems pi does not report: parents that do not exist, parent cycles (pi would hang
 * on them) and several roots. Linear in the number of entries.
 */
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
  // Cycles longer than one: colour walk over the parent function.
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
 * Heuristic for two pi processes appending to one file (case 11, pi #8300). pi appends each new
 * entry to its leaf, so one writer extends one tip; navigation starts a branch (the new entry's
 * parent already has children) or writes a branch summary/label first. Two writers instead keep
 * *resuming* an older tip — an entry whose parent is a childless entry other than the previous
 * line — within seconds. Two such resumes within {@link CONCURRENT_WRITERS_WINDOW_SECONDS} of the
 * previous line raise one warning, placed at the fork of the two branches. Linear in entries.
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

/** The older tip `r` resumes (see {@link concurrentWriterDiagnostics}), or undefined. */
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
 * {@link structureDiagnostics} kept up to date as entries are appended, in time proportional to
 * the new entries. While every parent reference points to an earlier entry and ids are unique
 * (what pi writes), the tree cannot have cycles and the result is assembled from running counts;
 * a duplicate id, a self-parent or a forward reference falls back to the full computation.
 */
export class StructureTracker {
  private first: EntryRecord | undefined;
  private processed = 0;
  private simple = true;
  private readonly ids = new Set<string>();
  private readonly missingParents = new Map<string, EntryRecord[]>();
  private roots = 0;
  // concurrent-writers scan state (see concurrentWriterDiagnostics)
  private readonly hasChild = new Set<string>();
  private previous: EntryRecord | undefined;
  private resumes = 0;
  private firstResume: { tip: EntryRecord; previous: EntryRecord; line: number } | undefined;
  private concurrent: Diagnostic[] | undefined;
  private full: { key: string; diagnostics: Diagnostic[] } | undefined;

  /** The structural diagnostics of the index as it is now. */
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
