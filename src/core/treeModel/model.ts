/**
 * The session entry tree as pi's `/tree` selector shows it (pi 1.6.0 `SessionManager.getTree`,
 * `tree-selector.js`): structure and layout only, lazy and incrementally synced; row texts are in
 * `src/viewModel/treeText.ts`.
 */

import type { EntryRecord } from "../read/entries";
import { ElementCache, type BranchElement, type EntryElement, type PageElement, type TreeElement } from "./elements";
import type { TreeFilter } from "./filters";
import { TreeLayout } from "./layout";
import { VisibleTree } from "./runs";
import { EntryStructure, type TreeLabel, type TreeSource } from "./structure";
import { TreeSync, type TreeChange } from "./sync";

export interface TreeModelOptions {
  filter?: TreeFilter;
  pageSize?: number;
  /** A run with at most this many items is shown without pages (default 2 × pageSize). */
  inlineMax?: number;
}

/** An entry's place in the tree (what its row shows besides its texts). */
export interface TreeNode {
  id: string;
  /** Undefined for an id the model does not know. */
  record: EntryRecord | undefined;
  label?: string;
  /** The current leaf as shown (the leaf, or its nearest visible ancestor). */
  isLeaf: boolean;
  /** The file's real leaf, not only its visible stand-in. */
  isFileLeaf: boolean;
  onActivePath: boolean;
  /** Visible children when a branch point (≥ 2), else 0. */
  branches: number;
  folded: number;
  /** An assistant message whose model differs from the previous assistant's on its path (or the first). */
  modelChanged: boolean;
  hasSummary: boolean;
  timestamp: string;
}

/** The tree of one session file, filtered and laid out; call {@link sync} after the source changed. */
export class SessionTreeModel {
  private readonly s: EntryStructure;
  private readonly v: VisibleTree;
  private readonly elements = new ElementCache();
  private readonly layout: TreeLayout;
  private readonly syncer: TreeSync;

  constructor(source: TreeSource, options: TreeModelOptions = {}) {
    const pageSize = Math.max(2, Math.floor(options.pageSize ?? 100));
    const inlineMax = Math.max(pageSize, Math.floor(options.inlineMax ?? pageSize * 2));
    this.s = new EntryStructure(source);
    this.v = new VisibleTree(this.s, options.filter ?? "default");
    this.layout = new TreeLayout(this.s, this.v, this.elements, pageSize, inlineMax);
    this.syncer = new TreeSync(this.s, this.v, this.layout, this.elements);
    this.syncer.rebuild();
  }

  get entryCount(): number {
    return this.s.processed;
  }

  /** Entries on or below a parent cycle: in no branch, as in pi's `getTree` (surfaces say so). */
  get unreachableCount(): number {
    return this.s.unreachable.size;
  }

  /** The last entry in file order (pi's rule), or null for an empty session. */
  get leafId(): string | null {
    return this.s.leaf;
  }

  /** The leaf when visible, else its nearest visible ancestor (pi's `/tree` selects that one), or null. */
  get displayLeafId(): string | null {
    return this.v.displayLeaf();
  }

  /** Latest `session_info` name (trimmed; empty clears), as pi's `getSessionName`. */
  get name(): string | undefined {
    return this.s.name;
  }

  /** Labels by target id, applied in file order (pi's `labelsById`). */
  get labels(): ReadonlyMap<string, TreeLabel> {
    return this.s.labels;
  }

  get activePath(): ReadonlySet<string> {
    return this.s.active;
  }

  record(id: string): EntryRecord | undefined {
    return this.s.own.get(id);
  }

  /** The tool result's nearest assistant ancestor (at most 64 entries up), or undefined. */
  callingAssistant(id: string): EntryRecord | undefined {
    const r = this.s.own.get(id);
    return r ? this.s.assistantBefore(r) : undefined;
  }

  setFilter(filter: TreeFilter): void {
    if (filter === this.v.filter) return;
    this.v.filter = filter;
    this.v.clear();
  }

  /** Processes the records appended since the last call; returns what changed (for `onDidChangeTreeData`). */
  sync(): TreeChange {
    return this.syncer.sync();
  }

  children(element?: TreeElement): TreeElement[] {
    return this.layout.children(element);
  }

  /** Computes now what a view's first showing asks for (top level, shown leaf, its parents): not on the render path. */
  prepare(): void {
    this.layout.children(undefined);
    const leaf = this.displayLeafId;
    let element: TreeElement | undefined = leaf === null ? undefined : this.elementOf(leaf);
    for (let guard = 0; element && guard <= this.s.own.size; guard++) element = this.layout.parent(element);
  }

  hasChildren(element: TreeElement): boolean {
    return this.layout.hasChildren(element);
  }

  parent(element: TreeElement): TreeElement | undefined {
    return this.layout.parent(element);
  }

  /** The entry itself when visible, else its nearest visible ancestor; undefined if none (e.g. on a cycle). */
  elementOf(id: string): EntryElement | BranchElement | undefined {
    if (!this.s.own.has(id) || !this.s.reachable(id)) return undefined;
    const shown = this.v.visibleSelfOrAncestor(id);
    return shown === null ? undefined : this.layout.displayElement(shown);
  }

  headsBranch(id: string): boolean {
    return this.layout.headsBranch(id);
  }

  /** First entry of the leaf's branch at a branch point on the active path: listed on the spine, not as a group. */
  continuesBranch(id: string): boolean {
    return this.layout.continuesBranch(id);
  }

  entryElement(id: string): EntryElement {
    return this.elements.entry(id);
  }

  /** Visible entries a branch group holds (the spine's, for the active root's group). */
  branchSize(headId: string): number {
    return this.layout.branchSize(headId);
  }

  branchIsActive(headId: string): boolean {
    return this.s.active.has(headId);
  }

  pageBounds(page: PageElement): { first: string | undefined; last: string | undefined; count: number } {
    return this.layout.pageBounds(page);
  }

  pageIsActive(page: PageElement): boolean {
    const { last } = this.layout.pageBounds(page);
    return last !== undefined && this.s.active.has(last);
  }

  /** Tool results folded under an assistant message under the current filter; empty otherwise. */
  foldedResults(id: string): readonly string[] {
    if (!this.s.own.has(id) || !this.v.isVisible(id)) return [];
    this.v.ensureRunOf(id);
    return this.v.folds.get(id) ?? [];
  }

  /** All false for an unknown id. */
  node(id: string): TreeNode {
    const r = this.s.own.get(id);
    if (!r) {
      return {
        id,
        record: undefined,
        isLeaf: false,
        isFileLeaf: false,
        onActivePath: false,
        branches: 0,
        folded: 0,
        modelChanged: false,
        hasSummary: false,
        timestamp: "",
      };
    }
    const visible = this.v.isVisible(id) ? this.v.visibleChildren(id).length : 0;
    if (this.v.isVisible(id)) this.v.ensureRunOf(id);
    const hasModel =
      r.type === "message" && r.role === "assistant" && (r.model !== undefined || r.provider !== undefined);
    const out: TreeNode = {
      id,
      record: r,
      isLeaf: id === this.v.displayLeaf(),
      isFileLeaf: id === this.s.leaf,
      onActivePath: this.s.active.has(id),
      branches: visible >= 2 ? visible : 0,
      folded: this.v.folds.get(id)?.length ?? 0,
      modelChanged: hasModel && this.s.modelChangesAt(r),
      hasSummary: r.type === "compaction" || r.type === "branch_summary",
      timestamp: r.timestamp,
    };
    const label = this.s.labels.get(id);
    if (label) out.label = label.label;
    return out;
  }

  /** All visible elements in display order, fully expanded. */
  *walk(): Generator<{ element: TreeElement; depth: number }> {
    const stack: { element: TreeElement; depth: number }[] = [];
    const top = this.children();
    for (let i = top.length - 1; i >= 0; i--) stack.push({ element: top[i]!, depth: 0 });
    while (stack.length > 0) {
      const item = stack.pop()!;
      yield item;
      const kids = this.children(item.element);
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ element: kids[i]!, depth: item.depth + 1 });
    }
  }
}
