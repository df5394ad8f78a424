/**
 * The entry tree: paths, common ancestors and structural problems.
 *
 * Source: pi 1.6.0 `SessionManager.getBranch` / `buildSessionPath` (walk `parentId` through the id
 * map until a missing or null parent, then reverse) and `collectEntriesForBranchSummary` (common
 * ancestor). pi loops forever on a parent cycle; here a cycle ends the walk and is reported.
 */

import type { EntryRecord } from "./entries";
import type { Diagnostic } from "./types";

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
  let leaf = index.byId.get(leafId);
  leaf ??= index.records[index.records.length - 1];
  const path: EntryRecord[] = [];
  const seen = new Set<string>();
  let current: EntryRecord | undefined = leaf;
  const result: PathResult = { path };
  while (current) {
    if (seen.has(current.id)) {
      result.cycleAt = current.id;
      break;
    }
    seen.add(current.id);
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
      diagnostics.push({ severity: "error", code: "parent-cycle", message: `entry ${r.id} (line ${r.line}) is its own parent`, line: r.line, entryId: r.id });
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
      });
    }
    for (const e of walk) state.set(e.id, 2);
  }
  diagnostics.push(...concurrentWriterDiagnostics(index, owners));
  if (roots > 1) {
    diagnostics.push({ severity: "info", code: "several-roots", message: `${roots} entries have no parent (several roots)` });
  }
  return diagnostics;
}

/** Seconds within which interleaved sibling branches look like two writers rather than navigation. */
export const CONCURRENT_WRITERS_WINDOW_SECONDS = 120;

/**
 * Heuristic for two pi processes appending to one file (case 11, pi #8300): at a branch point
 * without a branch summary, the subtree of an earlier child receives entries *after* a later
 * sibling started, within {@link CONCURRENT_WRITERS_WINDOW_SECONDS}. pi's navigation only
 * starts a new branch; it does not keep writing to the old one in the same minute.
 */
function concurrentWriterDiagnostics(index: EntryIndex, owners: readonly EntryRecord[]): Diagnostic[] {
  const children = new Map<string, EntryRecord[]>();
  for (const r of owners) {
    if (!r.parentId) continue;
    let list = children.get(r.parentId);
    if (!list) children.set(r.parentId, (list = []));
    list.push(r);
  }
  // The first-level child each entry descends from, per branch point (computed lazily by walking up).
  const out: Diagnostic[] = [];
  for (const [parentId, kids] of children) {
    if (kids.length < 2 || kids.some((k) => k.type === "branch_summary")) continue;
    const kidIds = new Set(kids.map((k) => k.id));
    // For every entry after the second child in file order, find which child's subtree it is in.
    const secondStart = kids[1]!.index;
    const branchOf = (r: EntryRecord): string | undefined => {
      let cur: EntryRecord | undefined = r;
      const seen = new Set<string>();
      while (cur && !seen.has(cur.id)) {
        if (kidIds.has(cur.id)) return cur.id;
        seen.add(cur.id);
        cur = cur.parentId ? index.byId.get(cur.parentId) : undefined;
      }
      return undefined;
    };
    let last: { branch: string; time: number } | undefined;
    let switches = 0;
    let close = false;
    for (let i = kids[0]!.index; i < index.records.length && switches < 3; i++) {
      const r = index.records[i]!;
      if (r.index < kids[0]!.index) continue;
      const branch = branchOf(r);
      if (!branch) continue;
      const time = Date.parse(r.timestamp);
      if (last && branch !== last.branch) {
        if (r.index > secondStart) switches++;
        if (Number.isFinite(time) && Number.isFinite(last.time) && Math.abs(time - last.time) <= CONCURRENT_WRITERS_WINDOW_SECONDS * 1000) close = true;
      }
      last = { branch, time };
    }
    if (switches >= 2 && close) {
      const parent = index.byId.get(parentId);
      out.push({
        severity: "warning",
        code: "concurrent-writers",
        message: `entries of sibling branches under ${parentId}${parent ? ` (line ${parent.line})` : ""} alternate in the file within ${CONCURRENT_WRITERS_WINDOW_SECONDS} s and no branch summary or navigation explains it: possibly two pi processes writing the same session. pi resumes the branch of the last line.`,
        line: kids[1]!.line,
        entryId: parentId,
      });
    }
  }
  return out;
}
