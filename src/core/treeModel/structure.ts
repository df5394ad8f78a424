/**
 * The raw entry tree, before any filter (pi 1.6.0 `SessionManager.getTree` / `_buildIndex`): a missing
 * or self parent makes a root; parent cycles are unreachable; labels, name and leaf follow file order.
 * Children are in file order (pi sorts by timestamp; for files pi wrote the two agree).
 */

import type { EntryRecord } from "../read/entries";

/** What the tree model reads: a {@link SessionFile} (records in file order and the id map). */
export interface TreeSource {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
}

/** The latest label entry for a target (an empty label clears it). */
export interface TreeLabel {
  label: string;
  timestamp: string;
}

/** The raw structure of the processed prefix of `source.records`. */
export class EntryStructure {
  processed = 0;
  /** A different object there means the file was re-read. */
  lastRecord: EntryRecord | undefined;
  /** The first record with each id, as `byId` has it. */
  own = new Map<string, EntryRecord>();
  kids = new Map<string | null, string[]>();
  /** Missing parent ids that orphans point at (an entry with such an id would adopt them). */
  orphanParents = new Set<string>();
  /** Never reached from a root, never shown (as in pi's getTree). */
  unreachable = new Set<string>();
  labels = new Map<string, TreeLabel>();
  name: string | undefined;
  leaf: string | null = null;
  active = new Set<string>();
  private modelChange = new Map<string, boolean>();

  constructor(readonly source: TreeSource) {}

  rebuild(): void {
    this.processed = 0;
    this.lastRecord = undefined;
    this.own = new Map();
    this.kids = new Map();
    this.orphanParents = new Set();
    this.labels = new Map();
    this.name = undefined;
    this.leaf = null;
    this.modelChange = new Map();
    const records = this.source.records;
    for (const r of records) if (this.source.byId.get(r.id) === r) this.own.set(r.id, r);
    for (const r of records) {
      if (this.own.get(r.id) === r) {
        const parent = this.parentOf(r);
        if (parent === null && r.parentId && r.parentId !== r.id) this.orphanParents.add(r.parentId);
        let list = this.kids.get(parent);
        if (!list) this.kids.set(parent, (list = []));
        list.push(r.id);
      }
      this.applyMeta(r);
    }
    this.processed = records.length;
    this.lastRecord = records[records.length - 1];
    this.unreachable = new Set();
    const reached = new Set<string>();
    const stack = [...(this.kids.get(null) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      reached.add(id);
      const k = this.kids.get(id);
      if (k) for (const c of k) stack.push(c);
    }
    if (reached.size !== this.own.size)
      for (const id of this.own.keys()) if (!reached.has(id)) this.unreachable.add(id);
    this.computeActivePath();
  }

  /** True when the record reuses an id, would adopt earlier orphans, or is not the one `byId` holds. */
  needsRebuildFor(r: EntryRecord): boolean {
    return this.own.has(r.id) || this.orphanParents.has(r.id) || this.source.byId.get(r.id) !== r;
  }

  add(r: EntryRecord): void {
    this.own.set(r.id, r);
    const parent = this.parentOf(r);
    if (parent === null && r.parentId && r.parentId !== r.id) this.orphanParents.add(r.parentId);
    if (parent !== null && this.unreachable.has(parent)) this.unreachable.add(r.id);
    let list = this.kids.get(parent);
    if (!list) this.kids.set(parent, (list = []));
    list.push(r.id);
    this.applyMeta(r);
  }

  /** Every record counts, in file order (as pi's `_buildIndex`). */
  private applyMeta(r: EntryRecord): void {
    if (r.type === "label" && r.targetId !== undefined) {
      if (r.label) this.labels.set(r.targetId, { label: r.label, timestamp: r.timestamp });
      else this.labels.delete(r.targetId);
    } else if (r.type === "session_info") {
      this.name = r.name?.trim() || undefined;
    }
    this.leaf = r.id;
  }

  /** Null for roots, self-parents and missing parents. */
  parentOf(r: EntryRecord): string | null {
    if (!r.parentId || r.parentId === r.id) return null;
    return this.own.has(r.parentId) ? r.parentId : null;
  }

  computeActivePath(): void {
    this.active = new Set();
    let current = this.leaf;
    while (current !== null && !this.active.has(current)) {
      const r = this.own.get(current);
      if (!r) break;
      this.active.add(current);
      current = this.parentOf(r);
    }
  }

  /** False on or below a parent cycle. */
  reachable(id: string): boolean {
    return this.own.has(id) && !this.unreachable.has(id);
  }

  /** The row names the model only where it differs from the previous assistant's on its path. */
  modelChangesAt(r: EntryRecord): boolean {
    const cached = this.modelChange.get(r.id);
    if (cached !== undefined) return cached;
    const mine = modelKey(r);
    let changed = true;
    let current = this.parentOf(r);
    for (let steps = 0; current !== null && steps < 256; steps++) {
      const p = this.own.get(current);
      if (!p) break;
      if (p.type === "message" && p.role === "assistant" && (p.model !== undefined || p.provider !== undefined)) {
        changed = modelKey(p) !== mine;
        break;
      }
      current = this.parentOf(p);
    }
    this.modelChange.set(r.id, changed);
    return changed;
  }

  /** The nearest assistant ancestor (at most 64 entries up); undefined if none or a parent is missing. */
  assistantBefore(r: EntryRecord): EntryRecord | undefined {
    let current: string | null = this.parentOf(r);
    let steps = 0;
    while (current !== null && steps++ < 64) {
      const p = this.own.get(current);
      if (!p) return undefined;
      if (p.type === "message" && p.role === "assistant") return p;
      current = this.parentOf(p);
    }
    return undefined;
  }
}

function modelKey(r: EntryRecord): string {
  return `${r.provider ?? ""}/${r.model ?? ""}`;
}
