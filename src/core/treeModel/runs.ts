/**
 * The visible structure of the entry tree under one filter: visible children, runs and folded
 * tool results. Computed lazily and cached until the filter changes or the model rebuilds.
 *
 * - A hidden entry's visible descendants attach to its nearest visible ancestor (pi 1.6.0
 *   `tree-selector.js` `recalculateVisualStructure`).
 * - A **run** is a chain of visible entries that each have exactly one visible child (pi keeps
 *   single-child chains at one indentation; a tree widget shows them as a flat list of items).
 * - Tool results that directly follow an assistant message in a run are **folded** under it
 *   unless a tool result is itself a branch point.
 */

import { filterFoldsToolResults, filterShows, type TreeFilter } from "./filters";
import type { EntryStructure } from "./structure";

/** A run: a chain of single-child visible entries, shown as items (tool results folded). */
export interface Run {
  head: string;
  /** Entries shown as items, in order. */
  items: string[];
  /** Position of each item. */
  index: Map<string, number>;
  /** Every visible entry of the run (items and folded tool results). */
  members: string[];
  /** The last visible entry of the run. */
  tail: string;
  /** The assistant message whose folds the run's tail extends (null when the tail is not foldable after). */
  owner: string | null;
}

/**
 * The **active spine**: the runs from the top of the tree along the active path, shown one after
 * the other as a single list (see `layout.ts`). It starts at the single visible root's run (or at
 * the active root's run when there are several roots) and, at each branch point that ends a run,
 * continues with the branch that holds the leaf; it ends where no visible child is on the active
 * path.
 */
export interface Spine {
  /** The head of the first run (the key of the spine's pages). */
  head: string;
  /** The runs, in order. */
  runs: Run[];
  /** Each run's first position in {@link items}. */
  offsets: Map<Run, number>;
  /** Every item of every run, in order. */
  items: string[];
  /** Branch point (a run's tail) → the child the spine continues with. */
  next: Map<string, string>;
}

/** Visible children, runs and folds of an {@link EntryStructure} under a filter. */
export class VisibleTree {
  /** Visible children per visible entry (null = visible roots), in file order. */
  vkids = new Map<string | null, string[]>();
  /** Runs by head id. */
  runs = new Map<string, Run>();
  /** The run of every visible entry computed so far. */
  runOf = new Map<string, Run>();
  /** Tool results folded under each assistant message. */
  folds = new Map<string, string[]>();
  /** The assistant message each folded tool result is folded under. */
  foldOwner = new Map<string, string>();
  /**
   * The layout's active spine (`layout.ts`), cached: undefined = not computed yet, null = none.
   * Dropped with anything it is made of (a run, the filter, the active path).
   */
  spine: Spine | null | undefined;

  constructor(
    private readonly s: EntryStructure,
    public filter: TreeFilter,
  ) {}

  /** Drop everything computed (after a filter change or a rebuild). */
  clear(): void {
    this.vkids = new Map();
    this.runs = new Map();
    this.runOf = new Map();
    this.folds = new Map();
    this.foldOwner = new Map();
    this.spine = undefined;
  }

  /** True when the filter shows the entry (see {@link filterShows}). */
  isVisible(id: string): boolean {
    const r = this.s.own.get(id);
    return r !== undefined && filterShows(r, this.filter, this.s.labels.has(id));
  }

  /** The entry itself when visible, else its nearest visible ancestor, or null. */
  visibleSelfOrAncestor(id: string): string | null {
    let current: string | null = id;
    let steps = 0;
    while (current !== null && steps++ <= this.s.own.size) {
      if (this.isVisible(current)) return current;
      const r = this.s.own.get(current);
      if (!r) return null;
      current = this.s.parentOf(r);
    }
    return null;
  }

  /**
   * The entry that stands for the file's leaf in this filter: the leaf itself when visible, else
   * its nearest visible ancestor (pi's `/tree` selects that one), or null.
   */
  displayLeaf(): string | null {
    return this.s.leaf === null ? null : this.visibleSelfOrAncestor(this.s.leaf);
  }

  /** Nearest visible proper ancestor of an entry (null = top level). */
  visibleParent(id: string): string | null {
    const r = this.s.own.get(id);
    if (!r) return null;
    const parent = this.s.parentOf(r);
    return parent === null ? null : this.visibleSelfOrAncestor(parent);
  }

  /** Visible children of a visible entry (null = visible roots), in file order. */
  visibleChildren(id: string | null): string[] {
    const cached = this.vkids.get(id);
    if (cached) return cached;
    const out: string[] = [];
    const raw = this.s.kids.get(id);
    if (raw) {
      const stack: string[] = [];
      for (let i = raw.length - 1; i >= 0; i--) stack.push(raw[i]!);
      let budget = this.s.own.size + 1;
      while (stack.length > 0 && budget-- > 0) {
        const c = stack.pop()!;
        if (this.isVisible(c)) out.push(c);
        else {
          const k = this.s.kids.get(c);
          if (k) for (let i = k.length - 1; i >= 0; i--) stack.push(k[i]!);
        }
      }
      if (out.length > 1) out.sort((a, b) => this.s.own.get(a)!.index - this.s.own.get(b)!.index);
    }
    this.vkids.set(id, out);
    return out;
  }

  private isAssistant(id: string): boolean {
    const r = this.s.own.get(id);
    return r !== undefined && r.type === "message" && r.role === "assistant";
  }

  /** A tool result that may fold under the assistant before it (not a branch point). */
  private foldable(id: string): boolean {
    if (!filterFoldsToolResults(this.filter)) return false;
    const r = this.s.own.get(id);
    return r !== undefined && r.type === "message" && r.role === "toolResult" && this.visibleChildren(id).length <= 1;
  }

  /** The run starting at `head` (computed and cached on first use). */
  run(head: string): Run {
    const cached = this.runs.get(head);
    if (cached) return cached;
    const run: Run = {
      head,
      items: [head],
      index: new Map([[head, 0]]),
      members: [head],
      tail: head,
      owner: this.isAssistant(head) ? head : null,
    };
    this.runs.set(head, run);
    this.runOf.set(head, run);
    let current = head;
    for (;;) {
      const next = this.visibleChildren(current);
      if (next.length !== 1) break;
      const c = next[0]!;
      if (this.runOf.has(c)) break; // defensive: never loop
      this.extendRun(run, c);
      current = c;
    }
    return run;
  }

  /** Append a visible entry to a run's end (fold it or add an item). */
  extendRun(run: Run, id: string): "folded" | "item" {
    this.spine = undefined;
    run.members.push(id);
    run.tail = id;
    this.runOf.set(id, run);
    if (run.owner !== null && this.foldable(id)) {
      let list = this.folds.get(run.owner);
      if (!list) this.folds.set(run.owner, (list = []));
      list.push(id);
      this.foldOwner.set(id, run.owner);
      return "folded";
    }
    run.index.set(id, run.items.length);
    run.items.push(id);
    run.owner = this.isAssistant(id) ? id : null;
    return "item";
  }

  /** Forget a run's layout (and the folds of its members): it is recomputed on next use. */
  dropRun(run: Run): void {
    this.spine = undefined;
    this.runs.delete(run.head);
    for (const id of run.members) {
      if (this.runOf.get(id) === run) this.runOf.delete(id);
      this.folds.delete(id);
      this.foldOwner.delete(id);
    }
  }

  /** The run holding a visible entry (computing it if needed), or undefined for hidden/unreachable entries. */
  ensureRunOf(id: string): Run | undefined {
    const known = this.runOf.get(id);
    if (known) return known;
    if (!this.s.reachable(id) || !this.isVisible(id)) return undefined;
    // Walk up to the run head: the first entry whose visible parent is not a single-child link.
    let head = id;
    let steps = 0;
    for (;;) {
      if (steps++ > this.s.own.size) return undefined;
      const vp = this.visibleParent(head);
      if (vp === null || this.visibleChildren(vp).length !== 1) break;
      const knownRun = this.runOf.get(vp);
      if (knownRun) {
        // The run of the parent is cached but does not reach `id` yet (should not happen): recompute it.
        this.dropRun(knownRun);
        head = knownRun.head;
        break;
      }
      head = vp;
    }
    const run = this.run(head);
    return this.runOf.get(id) === run ? run : undefined;
  }
}
