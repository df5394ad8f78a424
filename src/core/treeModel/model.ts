/**
 * The model of a session's entry tree, as pi's `/tree` selector shows it, for the "Pi Session"
 * tree view and `pi-context tree`: structure and layout only (the row texts are
 * `src/viewModel/treeText.ts`). No `vscode` import.
 *
 * - nodes come from `id`/`parentId` (structure.ts: roots, orphans, cycles, labels, leaf, active path);
 * - a filter hides entry kinds the way pi's filter modes do (filters.ts); a hidden entry's visible
 *   descendants attach to its nearest visible ancestor (runs.ts);
 * - runs, folded tool results, branch groups and pages lay the tree out for a widget (runs.ts,
 *   layout.ts);
 * - everything is computed lazily (children on demand) and kept up to date incrementally (sync.ts).
 *
 * Source: pi 1.6.0 `SessionManager.getTree` and `dist/modes/interactive/components/tree-selector.js`.
 */

import type { EntryRecord } from "../read/entries";
import { ElementCache, type BranchElement, type EntryElement, type PageElement, type TreeElement } from "./elements";
import type { TreeFilter } from "./filters";
import { TreeLayout } from "./layout";
import { VisibleTree } from "./runs";
import { EntryStructure, type TreeLabel, type TreeSource } from "./structure";
import { TreeSync, type TreeChange } from "./sync";

/** Options of {@link SessionTreeModel}. */
export interface TreeModelOptions {
  filter?: TreeFilter;
  /** Items per page of a long run (default 100). */
  pageSize?: number;
  /** A run with at most this many items is shown without pages (default 2 × pageSize). */
  inlineMax?: number;
}

/** An entry's place in the tree (what its row shows besides its texts; see `viewModel/treeText.ts`). */
export interface TreeNode {
  id: string;
  /** The entry's record; undefined for an id the model does not know. */
  record: EntryRecord | undefined;
  /** The entry's label (pi's `/tree` label), if any. */
  label?: string;
  /** The entry is the current leaf as shown (the leaf, or its nearest visible ancestor). */
  isLeaf: boolean;
  /** The entry is the real leaf of the file (last entry), not only its visible stand-in. */
  isFileLeaf: boolean;
  /** The entry is on the path from the root to the leaf. */
  onActivePath: boolean;
  /** Number of visible children when this is a branch point (≥ 2), else 0. */
  branches: number;
  /** Tool results folded under this assistant message. */
  folded: number;
  /** An assistant message (with a model) whose model differs from the previous assistant's on its path, or the first one. */
  modelChanged: boolean;
  /** A compaction or branch summary: its summary can be opened. */
  hasSummary: boolean;
  timestamp: string;
}

/**
 * The tree of one session file, filtered and laid out for a tree widget. Create it on a
 * {@link TreeSource} (usually the live `SessionFile`), call {@link sync} after the source changed,
 * read it with {@link children} / {@link parent} / {@link node}.
 */
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

  // ---------------------------------------------------------------------------------------------
  // State

  /** The filter in use. */
  get filter(): TreeFilter {
    return this.v.filter;
  }

  /** Entries processed so far (= `source.records.length` after {@link sync}). */
  get entryCount(): number {
    return this.s.processed;
  }

  /**
   * Entries on (or below) a parent cycle: no root above them, so, as in pi's `getTree`, they are
   * in no branch of the tree. Surfaces say so (the view's message, the CLI's note).
   */
  get unreachableCount(): number {
    return this.s.unreachable.size;
  }

  /** The file's leaf: the last entry in file order (pi's rule), or null for an empty session. */
  get leafId(): string | null {
    return this.s.leaf;
  }

  /**
   * The entry that stands for the leaf in this filter: the leaf itself when visible, else its
   * nearest visible ancestor (pi's `/tree` selects that one), or null.
   */
  get displayLeafId(): string | null {
    return this.v.displayLeaf();
  }

  /** The session name (latest `session_info`, trimmed; empty clears), as pi's `getSessionName`. */
  get name(): string | undefined {
    return this.s.name;
  }

  /** Labels by target id, applied in file order (pi's `labelsById`). */
  get labels(): ReadonlyMap<string, TreeLabel> {
    return this.s.labels;
  }

  /** Ids on the path from the root to the leaf. */
  get activePath(): ReadonlySet<string> {
    return this.s.active;
  }

  /** The record of an entry id (the entry that owns the id). */
  record(id: string): EntryRecord | undefined {
    return this.s.own.get(id);
  }

  /** Raw children of an entry (null = roots), in file order. */
  rawChildren(id: string | null): readonly string[] {
    return this.s.kids.get(id) ?? [];
  }

  /**
   * The assistant message whose tool call a tool result answers: the entry's nearest assistant
   * ancestor (at most 64 entries up), or undefined.
   */
  callingAssistant(id: string): EntryRecord | undefined {
    const r = this.s.own.get(id);
    return r ? this.s.assistantBefore(r) : undefined;
  }

  /** Switch the filter; everything visible is recomputed lazily. */
  setFilter(filter: TreeFilter): void {
    if (filter === this.v.filter) return;
    this.v.filter = filter;
    this.v.clear();
  }

  /**
   * Catch up with the source: process the records appended since the last call.
   * @returns what changed (for `onDidChangeTreeData`).
   */
  sync(): TreeChange {
    return this.syncer.sync();
  }

  // ---------------------------------------------------------------------------------------------
  // Tree widget API

  /** Children of an element (`undefined` = the top level), computed on demand. */
  children(element?: TreeElement): TreeElement[] {
    return this.layout.children(element);
  }

  /**
   * Compute now what a tree view's first showing asks for: the top level (the active spine, its
   * runs and pages) and the element of the leaf as shown, with its parents. They stay cached until
   * the model changes; {@link children} would compute the same on demand. On the 128 MB bench
   * session (7 900 entries) this is 20–60 ms, which the view's first render no longer waits for.
   */
  prepare(): void {
    this.layout.children(undefined);
    const leaf = this.displayLeafId;
    let element: TreeElement | undefined = leaf === null ? undefined : this.elementOf(leaf);
    for (let guard = 0; element && guard <= this.s.own.size; guard++) element = this.layout.parent(element);
  }

  /** True when {@link children} would return something (cheap for entries). */
  hasChildren(element: TreeElement): boolean {
    return this.layout.hasChildren(element);
  }

  /** The parent element (`undefined` = top level), for `TreeView.reveal`. */
  parent(element: TreeElement): TreeElement | undefined {
    return this.layout.parent(element);
  }

  /**
   * The element that shows an entry in this filter: the entry itself when visible, else its nearest
   * visible ancestor; undefined when there is none (or the entry is unreachable, e.g. on a cycle).
   */
  elementOf(id: string): EntryElement | BranchElement | undefined {
    if (!this.s.own.has(id) || !this.s.reachable(id)) return undefined;
    const shown = this.v.visibleSelfOrAncestor(id);
    return shown === null ? undefined : this.layout.displayElement(shown);
  }

  /**
   * The element that shows a visible entry: its branch group when the entry heads a branch (the
   * group row is the entry itself: it carries the entry's text, and its children are the rest of
   * the branch), else its entry element.
   */
  displayElement(id: string): EntryElement | BranchElement {
    return this.layout.displayElement(id);
  }

  /** True for a visible entry that starts a branch group: a child of a branch point, or one of several roots. */
  headsBranch(id: string): boolean {
    return this.layout.headsBranch(id);
  }

  /**
   * True for the first entry of the branch that holds the leaf at a branch point on the active
   * path: it starts a branch but is listed in the top level (the active spine), not as a branch group.
   */
  continuesBranch(id: string): boolean {
    return this.layout.continuesBranch(id);
  }

  /** The interned element of an entry (whether or not it is visible). */
  entryElement(id: string): EntryElement {
    return this.elements.entry(id);
  }

  /** Number of visible entries a branch group holds (items and folded tool results; the spine's, for the active root's group). */
  branchSize(headId: string): number {
    return this.layout.branchSize(headId);
  }

  /** True when the branch group's run, or anything below it, holds the leaf. */
  branchIsActive(headId: string): boolean {
    return this.s.active.has(headId);
  }

  /** The entries of a page, for its label: first and last item ids. */
  pageBounds(page: PageElement): { first: string | undefined; last: string | undefined; count: number } {
    return this.layout.pageBounds(page);
  }

  /** True when the page holds an item on the active path. */
  pageIsActive(page: PageElement): boolean {
    const { last } = this.layout.pageBounds(page);
    return last !== undefined && this.s.active.has(last);
  }

  /**
   * The tool results folded under an assistant message under the current filter (its row's
   * children when it is not a branch point), in order; empty for any other entry or an unknown id.
   */
  foldedResults(id: string): readonly string[] {
    if (!this.s.own.has(id) || !this.v.isVisible(id)) return [];
    this.v.ensureRunOf(id);
    return this.v.folds.get(id) ?? [];
  }

  /** An entry's place in the tree (leaf, active path, branches, folds, label); all false for an unknown id. */
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

  /** All visible elements in display order (depth-first, as the widget would list them fully expanded). */
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
