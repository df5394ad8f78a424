/**
 * The raw entry tree of a session file, before any filter: nodes from `id`/`parentId`, labels,
 * the session name, the leaf and the active path.
 *
 * pi 1.6.0 `SessionManager.getTree` / `_buildIndex`: an entry whose parent is missing (or itself)
 * is a root; entries on a parent cycle are unreachable and not shown; labels, the name and the
 * leaf follow every record in file order (the leaf is the last entry). Children are in file order
 * (pi sorts by timestamp; for files pi wrote the two agree).
 */

import type { EntryRecord } from "../read/entries";

/** What the tree model reads: a {@link SessionFile} (records in file order and the id map). */
export interface TreeSource {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
}

/** A label as pi applies it: the latest label entry for a target (an empty label clears it). */
export interface TreeLabel {
  label: string;
  timestamp: string;
}

/**
 * The raw structure of the processed prefix of `source.records`. Built by {@link rebuild},
 * extended by {@link add}; the fields are read by the visible layout and the model.
 */
export class EntryStructure {
  /** Records processed so far (a prefix of `source.records`). */
  processed = 0;
  /** The last processed record (a different object there means the file was re-read). */
  lastRecord: EntryRecord | undefined;
  /** The record that owns each id (the first one, as `byId` has it). */
  own = new Map<string, EntryRecord>();
  /** Raw children per parent id (null = roots), in file order. */
  kids = new Map<string | null, string[]>();
  /** Missing parent ids that orphans point at (an entry with such an id would adopt them). */
  orphanParents = new Set<string>();
  /** Entries on (or below) a parent cycle: never reached from a root, never shown (as in pi's getTree). */
  unreachable = new Set<string>();
  /** Labels by target id (pi's `labelsById`). */
  labels = new Map<string, TreeLabel>();
  /** The session name (latest `session_info`, trimmed; empty clears). */
  name: string | undefined;
  /** The last entry in file order, or null for an empty session. */
  leaf: string | null = null;
  /** Ids on the path from the root to the leaf. */
  active = new Set<string>();
  /** Per assistant entry: its model differs from the previous assistant's on its path. */
  private modelChange = new Map<string, boolean>();

  constructor(readonly source: TreeSource) {}

  /** Forget everything and process every record of the source again. */
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

  /**
   * True when the next record cannot be added incrementally: it reuses an id, would adopt earlier
   * orphans, or is not the record `byId` holds for its id.
   */
  needsRebuildFor(r: EntryRecord): boolean {
    return this.own.has(r.id) || this.orphanParents.has(r.id) || this.source.byId.get(r.id) !== r;
  }

  /** Incremental add of a record that owns a fresh id (checked with {@link needsRebuildFor}). */
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

  /** Labels, name and leaf: every record counts, in file order (as pi's `_buildIndex`). */
  private applyMeta(r: EntryRecord): void {
    if (r.type === "label" && r.targetId !== undefined) {
      if (r.label) this.labels.set(r.targetId, { label: r.label, timestamp: r.timestamp });
      else this.labels.delete(r.targetId);
    } else if (r.type === "session_info") {
      this.name = r.name?.trim() || undefined;
    }
    this.leaf = r.id;
  }

  /** The parent id as the tree uses it: null for roots, self-parents and missing parents. */
  parentOf(r: EntryRecord): string | null {
    if (!r.parentId || r.parentId === r.id) return null;
    return this.own.has(r.parentId) ? r.parentId : null;
  }

  /** Recompute {@link active} from the leaf up. */
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

  /** True when walking up from `id` reaches a root (false on or below a parent cycle). */
  reachable(id: string): boolean {
    return this.own.has(id) && !this.unreachable.has(id);
  }

  /**
   * True when an assistant message's model differs from the previous assistant message on its
   * path (or there is none): the row names the model only there. Cached per entry (ancestors
   * never change).
   */
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

  /**
   * The assistant message a tool result answers: its nearest assistant ancestor, looked for at
   * most 64 entries up; undefined when there is none (or a parent is missing).
   */
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
