/**
 * Layout of the visible tree for a tree widget: the top level is the **active spine** (the runs
 * along the active path down to the leaf), branch points hold one branch group per child, assistant
 * messages hold their folded tool results, and long runs split into pages of `pageSize` items.
 * Why a spine: a widget fetches one level per round trip, so a nested active path would delay
 * the first render by two round trips per branch point. `parent` inverts `children` (`TreeView.reveal`).
 */

import type { BranchElement, ElementCache, EntryElement, PageElement, TreeElement } from "./elements";
import type { Run, Spine, VisibleTree } from "./runs";
import type { EntryStructure } from "./structure";

type Sequence = Run | Spine;

export class TreeLayout {
  constructor(
    private readonly s: EntryStructure,
    private readonly v: VisibleTree,
    private readonly elements: ElementCache,
    private readonly pageSize: number,
    /** A run with at most this many items is shown without pages. */
    private readonly inlineMax: number,
  ) {}

  /** Children of an element (`undefined` = the top level). */
  children(element?: TreeElement): TreeElement[] {
    if (!element) {
      const roots = this.v.visibleChildren(null);
      if (roots.length === 0) return [];
      if (roots.length === 1) return this.sequenceChildren(this.spine() ?? this.v.run(roots[0]!));
      return roots.map((id) => this.elements.branch(id));
    }
    switch (element.kind) {
      case "entry":
        return this.ownChildren(element.id);
      case "branch":
        if (!this.s.own.has(element.headId)) return [];
        return this.sequenceChildren(this.sequence(element.headId));
      case "page": {
        const seq = this.s.own.has(element.runId) ? this.sequence(element.runId) : undefined;
        if (!seq) return [];
        const end = Math.min(element.end, seq.items.length);
        if (element.end - element.start <= this.pageSize)
          return seq.items.slice(element.start, end).map((id) => this.elements.entry(id));
        return this.pages(seq, element.start, element.end, this.chunkSize(element.end - element.start));
      }
    }
  }

  hasChildren(element: TreeElement): boolean {
    if (element.kind === "page") return true;
    const id = element.kind === "entry" ? element.id : element.headId;
    if (!this.s.own.has(id)) return false;
    if (element.kind === "branch" && this.sequence(id).items.length > 1) return true;
    if (this.v.visibleChildren(id).length >= 2) return true;
    this.v.ensureRunOf(id);
    return (this.v.folds.get(id)?.length ?? 0) > 0;
  }

  /** Branch groups at a branch point (except the one the spine continues with), else folded tool results. */
  private ownChildren(id: string): TreeElement[] {
    if (!this.s.own.has(id)) return [];
    const visible = this.v.visibleChildren(id);
    if (visible.length >= 2) {
      const next = this.spine()?.next.get(id);
      return visible.filter((c) => c !== next).map((c) => this.elements.branch(c));
    }
    this.v.ensureRunOf(id);
    const folded = this.v.folds.get(id);
    return folded ? folded.map((c) => this.elements.entry(c)) : [];
  }

  /** For `TreeView.reveal`. */
  parent(element: TreeElement): TreeElement | undefined {
    switch (element.kind) {
      case "entry": {
        const id = element.id;
        const run = this.v.ensureRunOf(id);
        if (!run) return undefined;
        const owner = this.v.foldOwner.get(id);
        if (owner !== undefined) return this.displayElement(owner);
        const at = this.itemPosition(run, id);
        if (!at) return undefined;
        if (at.position === 0 && this.base(at.seq) === 1) return this.parent(this.elements.branch(id)); // shown as its branch group
        return this.containerIn(at.seq, at.position);
      }
      case "branch": {
        const vp = this.v.visibleParent(element.headId);
        return vp === null ? undefined : this.displayElement(vp);
      }
      case "page": {
        const seq = this.s.own.has(element.runId) ? this.sequence(element.runId) : undefined;
        if (!seq) return undefined;
        const chain = this.pageChain(seq, element.start);
        const at = chain.findIndex((p) => p === element);
        return at > 0 ? chain[at - 1] : at === 0 ? this.sequenceContainer(seq) : undefined;
      }
    }
  }

  /** The branch group when the entry heads a branch, else its entry element. */
  displayElement(id: string): EntryElement | BranchElement {
    return this.headsBranch(id) ? this.elements.branch(id) : this.elements.entry(id);
  }

  /** A child of a branch point or one of several roots, except a branch the spine continues with. */
  headsBranch(id: string): boolean {
    const r = this.s.own.get(id);
    if (!r || !this.s.reachable(id) || !this.v.isVisible(id)) return false;
    const parent = this.s.parentOf(r);
    const vp = parent === null ? null : this.v.visibleSelfOrAncestor(parent);
    if (this.v.visibleChildren(vp).length < 2) return false;
    return vp === null || this.spine()?.next.get(vp) !== id;
  }

  /** First entry of the branch the spine continues with: shown as a spine item, not a branch group. */
  continuesBranch(id: string): boolean {
    const vp = this.v.visibleParent(id);
    return vp !== null && this.v.isVisible(id) && this.spine()?.next.get(vp) === id;
  }

  branchSize(headId: string): number {
    if (!this.s.own.has(headId)) return 0;
    const seq = this.sequence(headId);
    return "runs" in seq ? seq.runs.reduce((n, run) => n + run.members.length, 0) : seq.members.length;
  }

  pageBounds(page: PageElement): { first: string | undefined; last: string | undefined; count: number } {
    const seq = this.s.own.has(page.runId) ? this.sequence(page.runId) : undefined;
    if (!seq) return { first: undefined, last: undefined, count: 0 };
    const end = Math.min(page.end, seq.items.length);
    return { first: seq.items[page.start], last: seq.items[end - 1], count: Math.max(0, end - page.start) };
  }

  /** The active spine (cached), or undefined (several roots none on the active path, or no visible root). */
  spine(): Spine | undefined {
    if (this.v.spine !== undefined) return this.v.spine ?? undefined;
    const roots = this.v.visibleChildren(null);
    const head = roots.length === 1 ? roots[0] : roots.find((id) => this.s.active.has(id));
    if (head === undefined) {
      this.v.spine = null;
      return undefined;
    }
    const spine: Spine = { head, runs: [], offsets: new Map(), items: [], next: new Map() };
    let run = this.v.run(head);
    for (let guard = 0; guard <= this.s.own.size; guard++) {
      spine.offsets.set(run, spine.items.length);
      spine.runs.push(run);
      for (const id of run.items) spine.items.push(id);
      const kids = this.v.visibleChildren(run.tail);
      if (kids.length < 2) break;
      const c = kids.find((k) => this.s.active.has(k));
      if (c === undefined) break;
      const following = this.v.run(c);
      if (spine.offsets.has(following)) break; // defensive: never loop
      spine.next.set(run.tail, c);
      run = following;
    }
    this.v.spine = spine;
    return spine;
  }

  private sequence(head: string): Sequence {
    const spine = this.spine();
    return spine && spine.head === head ? spine : this.v.run(head);
  }

  private itemPosition(run: Run, id: string): { seq: Sequence; position: number } | undefined {
    const index = run.index.get(id);
    if (index === undefined) return undefined;
    const spine = this.spine();
    const offset = spine?.offsets.get(run);
    return spine && offset !== undefined ? { seq: spine, position: offset + index } : { seq: run, position: index };
  }

  /** 1 when the sequence is a branch group (its head is the row), else 0 (the top level). */
  private base(seq: Sequence): number {
    return this.sequenceContainer(seq) ? 1 : 0;
  }

  /** Items that go into page groups (a multiple of the page size; 0 = no pages). */
  private pagedLength(seq: Sequence): number {
    const n = seq.items.length - this.base(seq);
    if (n <= this.inlineMax) return 0;
    return Math.floor((n - this.pageSize) / this.pageSize) * this.pageSize;
  }

  /** The largest chunk size (pageSize^k) that splits `length` items into at most pageSize groups. */
  private chunkSize(length: number): number {
    let size = this.pageSize;
    while (length > size * this.pageSize) size *= this.pageSize;
    if (size >= length) size = Math.max(this.pageSize, size / this.pageSize);
    return size;
  }

  private pages(seq: Sequence, start: number, end: number, size: number): PageElement[] {
    const out: PageElement[] = [];
    for (let s = start; s < end; s += size) out.push(this.elements.page(seq.head, s, Math.min(s + size, end)));
    return out;
  }

  private sequenceChildren(seq: Sequence): TreeElement[] {
    const base = this.base(seq);
    const paged = this.pagedLength(seq);
    const out: TreeElement[] = base === 1 ? this.ownChildren(seq.head) : [];
    if (paged > 0) out.push(...this.pages(seq, base, base + paged, this.chunkSize(paged)));
    for (let i = base + paged; i < seq.items.length; i++) out.push(this.elements.entry(seq.items[i]!));
    return out;
  }

  /** The element directly holding a run's item (page, branch group, or top level), for change reports. */
  containerOf(run: Run, index: number): TreeElement | undefined {
    const id = run.items[index];
    const at = id === undefined ? undefined : this.itemPosition(run, id);
    return at ? this.containerIn(at.seq, at.position) : this.runContainer(run);
  }

  private containerIn(seq: Sequence, position: number): TreeElement | undefined {
    const chain = this.pageChain(seq, position);
    return chain.length > 0 ? chain[chain.length - 1] : this.sequenceContainer(seq);
  }

  private pageChain(seq: Sequence, position: number): PageElement[] {
    const base = this.base(seq);
    const paged = this.pagedLength(seq);
    if (position < base || position >= base + paged) return [];
    const chain: PageElement[] = [];
    let start = base;
    let end = base + paged;
    while (end - start > this.pageSize || chain.length === 0) {
      const size = this.chunkSize(end - start);
      const s = start + Math.floor((position - start) / size) * size;
      const page = this.elements.page(seq.head, s, Math.min(s + size, end));
      chain.push(page);
      start = page.start;
      end = page.end;
      if (size <= this.pageSize) break;
    }
    return chain;
  }

  /** A run's branch group, or undefined when it is in the top level. */
  runContainer(run: Run): TreeElement | undefined {
    const spine = this.spine();
    return this.sequenceContainer(spine && spine.offsets.has(run) ? spine : run);
  }

  private sequenceContainer(seq: Sequence): TreeElement | undefined {
    const roots = this.v.visibleChildren(null);
    if (roots.length === 1 && roots[0] === seq.head) return undefined;
    return this.elements.branch(seq.head);
  }
}
