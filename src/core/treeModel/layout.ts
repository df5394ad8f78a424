/**
 * The layout of the visible tree for a tree widget (where pi indents, we nest):
 * - a single visible root's run is the top level; several roots are one branch group each;
 * - an entry with several visible children is a **branch point**: its children are one **branch**
 *   group per child, each holding that child's run (the group's row is the child itself);
 * - an assistant message's children are its folded tool results;
 * - a long run is split into **pages** of `pageSize` items (older items in collapsible page groups,
 *   nested when there are many, the newest ones inline), so a 50k-entry session never hands the
 *   widget tens of thousands of items at once.
 *
 * `parent` is the inverse of `children` (VS Code's `TreeView.reveal` walks it).
 */

import type { BranchElement, ElementCache, EntryElement, PageElement, TreeElement } from "./elements";
import type { Run, VisibleTree } from "./runs";
import type { EntryStructure } from "./structure";

/** Children and parents of the widget's elements. */
export class TreeLayout {
  constructor(
    private readonly s: EntryStructure,
    private readonly v: VisibleTree,
    private readonly elements: ElementCache,
    /** Items per page (≥ 2). */
    private readonly pageSize: number,
    /** A run with at most this many items is shown without pages (≥ pageSize). */
    private readonly inlineMax: number,
  ) {}

  /** Children of an element (`undefined` = the top level), computed on demand. */
  children(element?: TreeElement): TreeElement[] {
    if (!element) {
      const roots = this.v.visibleChildren(null);
      if (roots.length === 0) return [];
      if (roots.length === 1) return this.runChildren(this.v.run(roots[0]!));
      return roots.map((id) => this.elements.branch(id));
    }
    switch (element.kind) {
      case "entry":
        return this.ownChildren(element.id);
      case "branch":
        if (!this.s.own.has(element.headId)) return [];
        return this.runChildren(this.v.run(element.headId));
      case "page": {
        const run = this.s.own.has(element.runId) ? this.v.run(element.runId) : undefined;
        if (!run) return [];
        const end = Math.min(element.end, run.items.length);
        if (element.end - element.start <= this.pageSize)
          return run.items.slice(element.start, end).map((id) => this.elements.entry(id));
        return this.pages(run, element.start, element.end, this.chunkSize(element.end - element.start));
      }
    }
  }

  /** True when {@link children} would return something (cheap for entries). */
  hasChildren(element: TreeElement): boolean {
    if (element.kind === "page") return true;
    const id = element.kind === "entry" ? element.id : element.headId;
    if (!this.s.own.has(id)) return false;
    if (element.kind === "branch" && this.v.run(id).items.length > 1) return true;
    if (this.v.visibleChildren(id).length >= 2) return true;
    this.v.ensureRunOf(id);
    return (this.v.folds.get(id)?.length ?? 0) > 0;
  }

  /** An entry's own children: one branch group per child at a branch point, else its folded tool results. */
  private ownChildren(id: string): TreeElement[] {
    if (!this.s.own.has(id)) return [];
    const visible = this.v.visibleChildren(id);
    if (visible.length >= 2) return visible.map((c) => this.elements.branch(c));
    this.v.ensureRunOf(id);
    const folded = this.v.folds.get(id);
    return folded ? folded.map((c) => this.elements.entry(c)) : [];
  }

  /** The parent element (`undefined` = top level), for `TreeView.reveal`. */
  parent(element: TreeElement): TreeElement | undefined {
    switch (element.kind) {
      case "entry": {
        const id = element.id;
        const run = this.v.ensureRunOf(id);
        if (!run) return undefined;
        const owner = this.v.foldOwner.get(id);
        if (owner !== undefined) return this.displayElement(owner);
        const position = run.index.get(id);
        if (position === undefined) return undefined;
        if (position === 0 && this.runBase(run) === 1) return this.parent(this.elements.branch(id)); // shown as its branch group
        return this.containerOf(run, position);
      }
      case "branch": {
        const vp = this.v.visibleParent(element.headId);
        return vp === null ? undefined : this.displayElement(vp);
      }
      case "page": {
        const run = this.s.own.has(element.runId) ? this.v.run(element.runId) : undefined;
        if (!run) return undefined;
        const chain = this.pageChain(run, element.start);
        const at = chain.findIndex((p) => p === element);
        return at > 0 ? chain[at - 1] : at === 0 ? this.runContainer(run) : undefined;
      }
    }
  }

  /**
   * The element that shows a visible entry: its branch group when the entry heads a branch, else
   * its entry element.
   */
  displayElement(id: string): EntryElement | BranchElement {
    return this.headsBranch(id) ? this.elements.branch(id) : this.elements.entry(id);
  }

  /** True for a visible entry that starts a branch group: a child of a branch point, or one of several roots. */
  headsBranch(id: string): boolean {
    const r = this.s.own.get(id);
    if (!r || !this.s.reachable(id) || !this.v.isVisible(id)) return false;
    const parent = this.s.parentOf(r);
    const vp = parent === null ? null : this.v.visibleSelfOrAncestor(parent);
    return this.v.visibleChildren(vp).length >= 2;
  }

  /** The entries of a page: first and last item ids, and how many items it holds. */
  pageBounds(page: PageElement): { first: string | undefined; last: string | undefined; count: number } {
    const run = this.s.own.has(page.runId) ? this.v.run(page.runId) : undefined;
    if (!run) return { first: undefined, last: undefined, count: 0 };
    const end = Math.min(page.end, run.items.length);
    return { first: run.items[page.start], last: run.items[end - 1], count: Math.max(0, end - page.start) };
  }

  /** 1 when the run is shown as a branch group (its head is the group's row), else 0 (the top-level run). */
  private runBase(run: Run): number {
    return this.runContainer(run) ? 1 : 0;
  }

  /** Items of a run (after its head when it is a branch group) that go into page groups (a multiple of the page size; 0 = no pages). */
  private pagedLength(run: Run): number {
    const n = run.items.length - this.runBase(run);
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

  private pages(run: Run, start: number, end: number, size: number): PageElement[] {
    const out: PageElement[] = [];
    for (let s = start; s < end; s += size) out.push(this.elements.page(run.head, s, Math.min(s + size, end)));
    return out;
  }

  private runChildren(run: Run): TreeElement[] {
    const base = this.runBase(run);
    const paged = this.pagedLength(run);
    const out: TreeElement[] = base === 1 ? this.ownChildren(run.head) : [];
    if (paged > 0) out.push(...this.pages(run, base, base + paged, this.chunkSize(paged)));
    for (let i = base + paged; i < run.items.length; i++) out.push(this.elements.entry(run.items[i]!));
    return out;
  }

  /** The element directly holding the run's item at `position` (a page, the branch group, or the top level). */
  containerOf(run: Run, position: number): TreeElement | undefined {
    const chain = this.pageChain(run, position);
    return chain.length > 0 ? chain[chain.length - 1] : this.runContainer(run);
  }

  /** The pages holding the item at `position`, outermost first (empty when the item is inline). */
  private pageChain(run: Run, position: number): PageElement[] {
    const base = this.runBase(run);
    const paged = this.pagedLength(run);
    if (position < base || position >= base + paged) return [];
    const chain: PageElement[] = [];
    let start = base;
    let end = base + paged;
    while (end - start > this.pageSize || chain.length === 0) {
      const size = this.chunkSize(end - start);
      const s = start + Math.floor((position - start) / size) * size;
      const page = this.elements.page(run.head, s, Math.min(s + size, end));
      chain.push(page);
      start = page.start;
      end = page.end;
      if (size <= this.pageSize) break;
    }
    return chain;
  }

  /** The element holding a run: its branch group, or undefined for the top-level run (a single root's). */
  runContainer(run: Run): TreeElement | undefined {
    const roots = this.v.visibleChildren(null);
    if (roots.length === 1 && roots[0] === run.head) return undefined;
    return this.elements.branch(run.head);
  }
}
