/**
 * The visible structure under one filter, lazy and cached: a hidden entry's visible descendants attach
 * to its nearest visible ancestor (pi 1.6.0 `recalculateVisualStructure`); a **run** is a chain of
 * single-child visible entries (one indentation in pi, a flat list here), with tool results folded
 * under the assistant message before them unless a tool result is itself a branch point.
 */

import { filterFoldsToolResults, filterShows, type TreeFilter } from "./filters";
import type { EntryStructure } from "./structure";

export interface Run {
  head: string;
  items: string[];
  index: Map<string, number>;
  /** Every visible entry of the run (items and folded tool results). */
  members: string[];
  tail: string;
  /** The assistant message whose folds the run's tail extends (null when the tail is not foldable after). */
  owner: string | null;
}

/** The runs along the active path from the top, shown as one list (see `layout.ts`). */
export interface Spine {
  /** The head of the first run (the key of the spine's pages). */
  head: string;
  runs: Run[];
  offsets: Map<Run, number>;
  items: string[];
  /** Branch point (a run's tail) → the child the spine continues with. */
  next: Map<string, string>;
}

export class VisibleTree {
  /** Per visible entry (null = visible roots), in file order. */
  vkids = new Map<string | null, string[]>();
  runs = new Map<string, Run>();
  runOf = new Map<string, Run>();
  folds = new Map<string, string[]>();
  foldOwner = new Map<string, string>();
  /** The layout's spine: undefined = not computed yet, null = none; dropped with any run it uses. */
  spine: Spine | null | undefined;

  constructor(
    private readonly s: EntryStructure,
    public filter: TreeFilter,
  ) {}

  clear(): void {
    this.vkids = new Map();
    this.runs = new Map();
    this.runOf = new Map();
    this.folds = new Map();
    this.foldOwner = new Map();
    this.spine = undefined;
  }

  isVisible(id: string): boolean {
    const r = this.s.own.get(id);
    return r !== undefined && filterShows(r, this.filter, this.s.labels.has(id));
  }

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

  displayLeaf(): string | null {
    return this.s.leaf === null ? null : this.visibleSelfOrAncestor(this.s.leaf);
  }

  visibleParent(id: string): string | null {
    const r = this.s.own.get(id);
    if (!r) return null;
    const parent = this.s.parentOf(r);
    return parent === null ? null : this.visibleSelfOrAncestor(parent);
  }

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

  private foldable(id: string): boolean {
    if (!filterFoldsToolResults(this.filter)) return false;
    const r = this.s.own.get(id);
    return r !== undefined && r.type === "message" && r.role === "toolResult" && this.visibleChildren(id).length <= 1;
  }

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

  dropRun(run: Run): void {
    this.spine = undefined;
    this.runs.delete(run.head);
    for (const id of run.members) {
      if (this.runOf.get(id) === run) this.runOf.delete(id);
      this.folds.delete(id);
      this.foldOwner.delete(id);
    }
  }

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
        // Cached run of the parent does not reach `id` yet (should not happen): recompute it.
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
