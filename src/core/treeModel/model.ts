/**
 * The view model of a session's entry tree, as pi's `/tree` selector shows it, for the "Pi Session"
 * tree view and `pi-context tree`. No `vscode` import.
 *
 * Structure (pi 1.6.0 `SessionManager.getTree` and `dist/modes/interactive/components/tree-selector.js`):
 * - nodes come from `id`/`parentId`; an entry whose parent is missing (or itself) is a root; entries
 *   on a parent cycle are unreachable and not shown (pi's `getTree` does the same);
 * - a filter hides entry kinds the way pi's filter modes do (`default`, `no-tools`, `user-only`,
 *   `labeled-only`, `all`; `usage` entries are never shown); a hidden entry's visible descendants
 *   attach to its nearest visible ancestor (pi's `recalculateVisualStructure`);
 * - children are in file order (pi sorts by timestamp; for files pi wrote the two agree).
 *
 * Layout for a tree widget (where pi indents, we nest):
 * - a **run** is a chain of visible entries that each have exactly one visible child; it is shown as
 *   a flat list of items (pi keeps single-child chains at one indentation);
 * - an entry with several visible children is a **branch point**: its children are one **branch**
 *   group per child, each holding that child's run;
 * - tool results that directly follow an assistant message in a run are **folded** under it (the
 *   assistant item's children) unless a tool result is itself a branch point;
 * - a long run is split into **pages** of {@link TreeModelOptions.pageSize} items (older items in
 *   collapsible page groups, the newest ones inline), so a 50k-entry session never hands the widget
 *   tens of thousands of items at once.
 *
 * Everything is computed lazily (children on demand) and kept up to date incrementally:
 * {@link SessionTreeModel.sync} processes only the records appended since the previous call and
 * reports which elements changed; it falls back to a rebuild only when the file was re-read, an id
 * was duplicated, or an entry adopted earlier orphans.
 */

import { PI_CONTEXT_CUSTOM_TYPE, type EntryRecord } from "../read/entries";
import { contentText } from "../rules/serialize";
import type { SessionEntry } from "../types";

/** pi's `/tree` filter modes (`TreeFilterMode` in pi's settings: `treeFilterMode`). */
export type TreeFilter = "default" | "no-tools" | "user-only" | "labeled-only" | "all";

/** The filters in pi's cycling order, with their short titles. */
export const TREE_FILTERS: readonly { filter: TreeFilter; title: string; description: string }[] = [
  {
    filter: "default",
    title: "Default",
    description:
      "everything except settings and bookkeeping entries (labels, model/thinking changes, titles, custom entries, context edits)",
  },
  {
    filter: "no-tools",
    title: "No tools",
    description: "the default view without tool results and tool-call-only assistant messages",
  },
  { filter: "user-only", title: "User messages", description: "only user messages" },
  { filter: "labeled-only", title: "Labeled", description: "only labeled entries" },
  { filter: "all", title: "Everything", description: "every entry (except usage records, which pi never shows)" },
];

/** True for a string naming one of {@link TREE_FILTERS}. */
export function isTreeFilter(value: unknown): value is TreeFilter {
  return typeof value === "string" && TREE_FILTERS.some((f) => f.filter === value);
}

/** What the tree model reads: a {@link SessionFile} (records in file order and the id map). */
export interface TreeSource {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
}

/** Reads full entries (tool call arguments for tool result labels). `SessionFile` implements it. */
export interface TreeEntryReader {
  readEntry(record: EntryRecord): SessionEntry;
}

/** One entry shown as an item. */
export interface EntryElement {
  readonly kind: "entry";
  /** Unique and stable element key (`e:<id>`), usable as the tree item id. */
  readonly key: string;
  readonly id: string;
}

/**
 * A branch group: the run that starts at `headId`, a child of a branch point (or one of several
 * roots). The group's row is the head entry itself; its children are the head's own children
 * (folded tool results or sub-branches) followed by the rest of the run.
 */
export interface BranchElement {
  readonly kind: "branch";
  readonly key: string;
  readonly headId: string;
}

/** A page of a long run: items `start` (inclusive) to `end` (exclusive) of the run starting at `runId`. */
export interface PageElement {
  readonly kind: "page";
  readonly key: string;
  readonly runId: string;
  readonly start: number;
  readonly end: number;
}

/** An element of the tree widget. Elements are interned: the same key gives the same object. */
export type TreeElement = EntryElement | BranchElement | PageElement;

/** What changed in a {@link SessionTreeModel.sync}. */
export interface TreeChange {
  /** Everything may have changed (rebuild, filter, active path moved): refresh the whole tree. */
  all: boolean;
  /** Elements whose item or children changed; `null` stands for the top level. */
  elements: (TreeElement | null)[];
  /** Records processed by this sync. */
  added: number;
  /** The file was re-read from scratch (or ids were duplicated): the model was rebuilt. */
  rebuilt: boolean;
  leafChanged: boolean;
  nameChanged: boolean;
}

/** Entry kinds, for icons and texts. */
export type NodeKind =
  | "user"
  | "assistant"
  | "toolResult"
  | "bashExecution"
  | "system"
  | "customMessage"
  | "message"
  | "compaction"
  | "branchSummary"
  | "modelChange"
  | "thinkingLevel"
  | "label"
  | "sessionInfo"
  | "custom"
  | "leafMarker"
  | "contextEdit"
  | "usage"
  | "unknown";

/** How one entry is shown. All texts are single-line and untrusted (they come from the session). */
export interface NodeDisplay {
  id: string;
  kind: NodeKind;
  /** Main text (pi's `/tree` line without the role prefix), e.g. the user message's first line. */
  text: string;
  /** Secondary text: model, tool calls, token counts, tool output preview. */
  detail: string;
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
  /** Tool result with `isError`, or an assistant message that stopped with `error`/`aborted`. */
  error: boolean;
  /**
   * A failed assistant message's error (pi's `errorMessage`, first line, at most 160 characters).
   * It is already part of {@link text} (no text: `Error 400: …`, as pi's `/tree` shows the error;
   * see {@link errorInText}) or of {@link detail} (`error 400: …`).
   */
  errorMessage?: string;
  /** {@link text} is the error (the message had no text of its own). */
  errorInText?: boolean;
  /** An assistant message's model as `provider/model` (the row shows it only where it changes). */
  model?: string;
  /** A compaction or branch summary: its summary can be opened. */
  hasSummary: boolean;
  timestamp: string;
}

/** Options of {@link SessionTreeModel}. */
export interface TreeModelOptions {
  filter?: TreeFilter;
  /** Items per page of a long run (default 100). */
  pageSize?: number;
  /** A run with at most this many items is shown without pages (default 2 × pageSize). */
  inlineMax?: number;
  /** Reads entry bodies for tool-call arguments (optional; without it tool results show the tool name). */
  reader?: TreeEntryReader;
}

interface Run {
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

const ROOT_KEY = "\u0000root";

/** pi's entry types hidden in its default `/tree` view (settings and bookkeeping). */
const SETTINGS_TYPES: ReadonlySet<string> = new Set([
  "label",
  "context_edit",
  "custom",
  "model_change",
  "thinking_level_change",
  "session_info",
]);

/**
 * The tree of one session file, filtered and laid out for a tree widget. See the file comment for
 * the rules. Create it on a {@link TreeSource} (usually the live `SessionFile`), call {@link sync}
 * after the source changed, read it with {@link children} / {@link parent} / {@link display}.
 */
export class SessionTreeModel {
  private readonly source: TreeSource;
  private filterMode: TreeFilter;
  private readonly pageSize: number;
  private readonly inlineMax: number;
  private readonly reader: TreeEntryReader | undefined;

  // Raw structure of the processed prefix of `source.records`.
  private processed = 0;
  private lastRecord: EntryRecord | undefined;
  private own = new Map<string, EntryRecord>();
  private kids = new Map<string | null, string[]>();
  private orphanParents = new Set<string>();
  /** Entries on (or below) a parent cycle: never reached from a root, never shown (as in pi's getTree). */
  private unreachable = new Set<string>();
  private labelMap = new Map<string, { label: string; timestamp: string }>();
  private sessionName: string | undefined;
  private leaf: string | null = null;
  private active = new Set<string>();

  // Visible structure, computed lazily.
  private vkids = new Map<string | null, string[]>();
  private runs = new Map<string, Run>();
  private runOf = new Map<string, Run>();
  private folds = new Map<string, string[]>();
  private foldOwner = new Map<string, string>();
  private interned = new Map<string, TreeElement>();
  private toolCalls = new Map<string, Map<string, string>>();
  /** Per assistant entry: its model differs from the previous assistant's on its path. */
  private modelChange = new Map<string, boolean>();

  constructor(source: TreeSource, options: TreeModelOptions = {}) {
    this.source = source;
    this.filterMode = options.filter ?? "default";
    this.pageSize = Math.max(2, Math.floor(options.pageSize ?? 100));
    this.inlineMax = Math.max(this.pageSize, Math.floor(options.inlineMax ?? this.pageSize * 2));
    this.reader = options.reader;
    this.rebuild();
  }

  // ---------------------------------------------------------------------------------------------
  // State

  /** The filter in use. */
  get filter(): TreeFilter {
    return this.filterMode;
  }

  /** Entries processed so far (= `source.records.length` after {@link sync}). */
  get entryCount(): number {
    return this.processed;
  }

  /** The file's leaf: the last entry in file order (pi's rule), or null for an empty session. */
  get leafId(): string | null {
    return this.leaf;
  }

  /**
   * The entry that stands for the leaf in this filter: the leaf itself when visible, else its
   * nearest visible ancestor (pi's `/tree` selects that one), or null.
   */
  get displayLeafId(): string | null {
    return this.leaf === null ? null : this.visibleSelfOrAncestor(this.leaf);
  }

  /** The session name (latest `session_info`, trimmed; empty clears), as pi's `getSessionName`. */
  get name(): string | undefined {
    return this.sessionName;
  }

  /** Labels by target id, applied in file order (pi's `labelsById`). */
  get labels(): ReadonlyMap<string, { label: string; timestamp: string }> {
    return this.labelMap;
  }

  /** Ids on the path from the root to the leaf. */
  get activePath(): ReadonlySet<string> {
    return this.active;
  }

  /** The record of an entry id (the entry that owns the id). */
  record(id: string): EntryRecord | undefined {
    return this.own.get(id);
  }

  /** Raw children of an entry (null = roots), in file order. */
  rawChildren(id: string | null): readonly string[] {
    return this.kids.get(id) ?? [];
  }

  /** Switch the filter; everything visible is recomputed lazily. */
  setFilter(filter: TreeFilter): void {
    if (filter === this.filterMode) return;
    this.filterMode = filter;
    this.clearVisible();
  }

  /**
   * Catch up with the source: process the records appended since the last call.
   * @returns what changed (for `onDidChangeTreeData`).
   */
  sync(): TreeChange {
    const records = this.source.records;
    const change: TreeChange = {
      all: false,
      elements: [],
      added: 0,
      rebuilt: false,
      leafChanged: false,
      nameChanged: false,
    };
    if (this.processed > records.length || (this.processed > 0 && records[this.processed - 1] !== this.lastRecord)) {
      return this.fullRebuild(change);
    }
    if (this.processed === records.length) return change;
    const elements = new Map<string, TreeElement | null>();
    const oldLeaf = this.leaf;
    const oldDisplayLeaf = this.displayLeafId;
    const oldName = this.sessionName;
    let all = false;
    for (let i = this.processed; i < records.length; i++) {
      const r = records[i]!;
      if (this.own.has(r.id) || this.orphanParents.has(r.id) || this.source.byId.get(r.id) !== r) {
        return this.fullRebuild(change);
      }
      const previousLeaf = this.leaf;
      this.addRecord(r);
      this.processed = i + 1;
      this.lastRecord = r;
      change.added++;
      // Active path: extend when appended on the leaf, else recompute.
      if (previousLeaf !== null && this.rawParentId(r) === previousLeaf && this.active.has(previousLeaf))
        this.active.add(r.id);
      else {
        this.computeActivePath();
        all = true;
      }
      if (r.type === "label" && r.targetId !== undefined) {
        if (this.filterMode === "labeled-only") {
          this.clearVisible();
          all = true;
        } else if (this.own.has(r.targetId) && this.isVisible(r.targetId))
          elements.set(`e:${r.targetId}`, this.entryElement(r.targetId));
      }
      this.placeAppended(r, elements);
    }
    change.leafChanged = this.leaf !== oldLeaf;
    change.nameChanged = this.sessionName !== oldName;
    const newDisplayLeaf = this.displayLeafId;
    if (oldDisplayLeaf !== null && this.own.has(oldDisplayLeaf))
      elements.set(`e:${oldDisplayLeaf}`, this.entryElement(oldDisplayLeaf));
    if (newDisplayLeaf !== null) elements.set(`e:${newDisplayLeaf}`, this.entryElement(newDisplayLeaf));
    change.all = all;
    if (!all) {
      // An entry that heads a branch is shown by its branch group: report the group.
      const shown = new Map<string, TreeElement | null>();
      for (const e of elements.values()) {
        const element = e && e.kind === "entry" && this.own.has(e.id) ? this.displayElement(e.id) : e;
        shown.set(element ? element.key : ROOT_KEY, element);
      }
      change.elements = [...shown.values()];
    } else change.elements = [];
    return change;
  }

  // ---------------------------------------------------------------------------------------------
  // Tree widget API

  /** Children of an element (`undefined` = the top level), computed on demand. */
  children(element?: TreeElement): TreeElement[] {
    if (!element) {
      const roots = this.visibleChildren(null);
      if (roots.length === 0) return [];
      if (roots.length === 1) return this.runChildren(this.run(roots[0]!));
      return roots.map((id) => this.branchElement(id));
    }
    switch (element.kind) {
      case "entry":
        return this.ownChildren(element.id);
      case "branch":
        if (!this.own.has(element.headId)) return [];
        return this.runChildren(this.run(element.headId));
      case "page": {
        const run = this.own.has(element.runId) ? this.run(element.runId) : undefined;
        if (!run) return [];
        const end = Math.min(element.end, run.items.length);
        if (element.end - element.start <= this.pageSize)
          return run.items.slice(element.start, end).map((id) => this.entryElement(id));
        return this.pages(run, element.start, element.end, this.chunkSize(element.end - element.start));
      }
    }
  }

  /** True when {@link children} would return something (cheap for entries). */
  hasChildren(element: TreeElement): boolean {
    if (element.kind === "page") return true;
    const id = element.kind === "entry" ? element.id : element.headId;
    if (!this.own.has(id)) return false;
    if (element.kind === "branch" && this.run(id).items.length > 1) return true;
    if (this.visibleChildren(id).length >= 2) return true;
    this.ensureRunOf(id);
    return (this.folds.get(id)?.length ?? 0) > 0;
  }

  /** An entry's own children: one branch group per child at a branch point, else its folded tool results. */
  private ownChildren(id: string): TreeElement[] {
    if (!this.own.has(id)) return [];
    const visible = this.visibleChildren(id);
    if (visible.length >= 2) return visible.map((c) => this.branchElement(c));
    this.ensureRunOf(id);
    const folded = this.folds.get(id);
    return folded ? folded.map((c) => this.entryElement(c)) : [];
  }

  /** The parent element (`undefined` = top level), for `TreeView.reveal`. */
  parent(element: TreeElement): TreeElement | undefined {
    switch (element.kind) {
      case "entry": {
        const id = element.id;
        const run = this.ensureRunOf(id);
        if (!run) return undefined;
        const owner = this.foldOwner.get(id);
        if (owner !== undefined) return this.displayElement(owner);
        const position = run.index.get(id);
        if (position === undefined) return undefined;
        if (position === 0 && this.runBase(run) === 1) return this.parent(this.branchElement(id)); // shown as its branch group
        return this.containerOf(run, position);
      }
      case "branch": {
        const vp = this.visibleParent(element.headId);
        return vp === null ? undefined : this.displayElement(vp);
      }
      case "page": {
        const run = this.own.has(element.runId) ? this.run(element.runId) : undefined;
        if (!run) return undefined;
        const chain = this.pageChain(run, element.start);
        const at = chain.findIndex((p) => p === element);
        return at > 0 ? chain[at - 1] : at === 0 ? this.runContainer(run) : undefined;
      }
    }
  }

  /**
   * The element that shows an entry in this filter: the entry itself when visible, else its nearest
   * visible ancestor; undefined when there is none (or the entry is unreachable, e.g. on a cycle).
   */
  elementOf(id: string): EntryElement | BranchElement | undefined {
    if (!this.own.has(id) || !this.reachable(id)) return undefined;
    const shown = this.visibleSelfOrAncestor(id);
    return shown === null ? undefined : this.displayElement(shown);
  }

  /**
   * The element that shows a visible entry: its branch group when the entry heads a branch (the
   * group row is the entry itself: it carries the entry's text, and its children are the rest of
   * the branch), else its entry element.
   */
  displayElement(id: string): EntryElement | BranchElement {
    return this.headsBranch(id) ? this.branchElement(id) : this.entryElement(id);
  }

  /** True for a visible entry that starts a branch group: a child of a branch point, or one of several roots. */
  headsBranch(id: string): boolean {
    const r = this.own.get(id);
    if (!r || !this.reachable(id) || !this.isVisible(id)) return false;
    const parent = this.rawParentId(r);
    const vp = parent === null ? null : this.visibleSelfOrAncestor(parent);
    return this.visibleChildren(vp).length >= 2;
  }

  /** The interned element of an entry (whether or not it is visible). */
  entryElement(id: string): EntryElement {
    const key = `e:${id}`;
    let e = this.interned.get(key) as EntryElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "entry", key, id }));
    return e;
  }

  /** Number of visible entries in a branch group's run (items and folded tool results). */
  branchSize(headId: string): number {
    return this.own.has(headId) ? this.run(headId).members.length : 0;
  }

  /** True when the branch group's run, or anything below it, holds the leaf. */
  branchIsActive(headId: string): boolean {
    return this.active.has(headId);
  }

  /** The entries of a page, for its label: first and last item ids. */
  pageBounds(page: PageElement): { first: string | undefined; last: string | undefined; count: number } {
    const run = this.own.has(page.runId) ? this.run(page.runId) : undefined;
    if (!run) return { first: undefined, last: undefined, count: 0 };
    const end = Math.min(page.end, run.items.length);
    return { first: run.items[page.start], last: run.items[end - 1], count: Math.max(0, end - page.start) };
  }

  /** True when the page holds an item on the active path. */
  pageIsActive(page: PageElement): boolean {
    const { last } = this.pageBounds(page);
    return last !== undefined && this.active.has(last);
  }

  /** How an entry is shown. */
  display(id: string): NodeDisplay {
    const r = this.own.get(id);
    const displayLeaf = this.displayLeafId;
    if (!r) {
      return {
        id,
        kind: "unknown",
        text: "(missing entry)",
        detail: "",
        isLeaf: false,
        isFileLeaf: false,
        onActivePath: false,
        branches: 0,
        folded: 0,
        error: false,
        hasSummary: false,
        timestamp: "",
      };
    }
    const described = describeRecord(r, this.toolCallText(r));
    const { kind, text, error } = described;
    let detail = described.detail;
    if (described.model !== undefined && this.modelChangesAt(r))
      detail = [detail, shortModelName(described.model)].filter(Boolean).join("  ");
    const visible = this.own.has(id) && this.isVisible(id) ? this.visibleChildren(id).length : 0;
    if (this.isVisible(id)) this.ensureRunOf(id);
    const out: NodeDisplay = {
      id,
      kind,
      text,
      detail,
      isLeaf: id === displayLeaf,
      isFileLeaf: id === this.leaf,
      onActivePath: this.active.has(id),
      branches: visible >= 2 ? visible : 0,
      folded: this.folds.get(id)?.length ?? 0,
      error,
      hasSummary: r.type === "compaction" || r.type === "branch_summary",
      timestamp: r.timestamp,
    };
    if (described.errorMessage !== undefined) out.errorMessage = described.errorMessage;
    if (described.errorInText) out.errorInText = true;
    if (described.model !== undefined) out.model = described.model;
    const label = this.labelMap.get(id);
    if (label) out.label = label.label;
    return out;
  }

  /**
   * True when an assistant message's model differs from the previous assistant message on its
   * path (or there is none): the row names the model only there. Cached per entry (ancestors never change).
   */
  private modelChangesAt(r: EntryRecord): boolean {
    const cached = this.modelChange.get(r.id);
    if (cached !== undefined) return cached;
    const mine = modelKey(r);
    let changed = true;
    let current = this.rawParentId(r);
    for (let steps = 0; current !== null && steps < 256; steps++) {
      const p = this.own.get(current);
      if (!p) break;
      if (p.type === "message" && p.role === "assistant" && (p.model !== undefined || p.provider !== undefined)) {
        changed = modelKey(p) !== mine;
        break;
      }
      current = this.rawParentId(p);
    }
    this.modelChange.set(r.id, changed);
    return changed;
  }

  /** Ids of all visible entries in display order (depth-first, as the widget would list them fully expanded). */
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

  // ---------------------------------------------------------------------------------------------
  // Raw structure

  private rebuild(): void {
    this.processed = 0;
    this.lastRecord = undefined;
    this.own = new Map();
    this.kids = new Map();
    this.orphanParents = new Set();
    this.labelMap = new Map();
    this.sessionName = undefined;
    this.leaf = null;
    this.toolCalls = new Map();
    this.modelChange = new Map();
    this.clearVisible();
    const records = this.source.records;
    for (const r of records) if (this.source.byId.get(r.id) === r) this.own.set(r.id, r);
    for (const r of records) {
      if (this.own.get(r.id) === r) {
        const parent = this.rawParentId(r);
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

  private fullRebuild(change: TreeChange): TreeChange {
    const before = this.processed;
    const oldName = this.sessionName;
    const oldLeaf = this.leaf;
    this.rebuild();
    change.all = true;
    change.rebuilt = true;
    change.elements = [];
    change.added = Math.max(0, this.processed - before);
    change.leafChanged = this.leaf !== oldLeaf;
    change.nameChanged = this.sessionName !== oldName;
    return change;
  }

  /** Incremental add of a record that owns a fresh id (checked by the caller). */
  private addRecord(r: EntryRecord): void {
    this.own.set(r.id, r);
    const parent = this.rawParentId(r);
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
      if (r.label) this.labelMap.set(r.targetId, { label: r.label, timestamp: r.timestamp });
      else this.labelMap.delete(r.targetId);
    } else if (r.type === "session_info") {
      this.sessionName = r.name?.trim() || undefined;
    }
    this.leaf = r.id;
  }

  /** The parent id as the tree uses it: null for roots, self-parents and missing parents. */
  private rawParentId(r: EntryRecord): string | null {
    if (!r.parentId || r.parentId === r.id) return null;
    return this.own.has(r.parentId) ? r.parentId : null;
  }

  private computeActivePath(): void {
    this.active = new Set();
    let current = this.leaf;
    while (current !== null && !this.active.has(current)) {
      const r = this.own.get(current);
      if (!r) break;
      this.active.add(current);
      current = this.rawParentId(r);
    }
  }

  /** True when walking up from `id` reaches a root (false on or below a parent cycle). */
  private reachable(id: string): boolean {
    return this.own.has(id) && !this.unreachable.has(id);
  }

  // ---------------------------------------------------------------------------------------------
  // Visibility and visible structure

  /** pi's `/tree` filter for one entry (`applyFilter`), except that tool-call-only assistant messages stay visible outside `no-tools` (tool results fold under them). */
  private isVisible(id: string): boolean {
    const r = this.own.get(id);
    if (!r || r.type === "usage") return false;
    switch (this.filterMode) {
      case "all":
        return true;
      case "user-only":
        return r.type === "message" && r.role === "user";
      case "labeled-only":
        return this.labelMap.has(id);
      case "no-tools":
        if (SETTINGS_TYPES.has(r.type)) return false;
        if (r.type === "message" && r.role === "toolResult") return false;
        if (r.type === "message" && r.role === "assistant" && !r.preview) {
          const errorOrAborted = r.stopReason !== undefined && r.stopReason !== "stop" && r.stopReason !== "toolUse";
          return errorOrAborted;
        }
        return true;
      default:
        return !SETTINGS_TYPES.has(r.type);
    }
  }

  private visibleSelfOrAncestor(id: string): string | null {
    let current: string | null = id;
    let steps = 0;
    while (current !== null && steps++ <= this.own.size) {
      if (this.isVisible(current)) return current;
      const r = this.own.get(current);
      if (!r) return null;
      current = this.rawParentId(r);
    }
    return null;
  }

  /** Nearest visible proper ancestor of an entry (null = top level). */
  private visibleParent(id: string): string | null {
    const r = this.own.get(id);
    if (!r) return null;
    const parent = this.rawParentId(r);
    return parent === null ? null : this.visibleSelfOrAncestor(parent);
  }

  /** Visible children of a visible entry (null = visible roots), in file order. */
  private visibleChildren(id: string | null): string[] {
    const cached = this.vkids.get(id);
    if (cached) return cached;
    const out: string[] = [];
    const raw = this.kids.get(id);
    if (raw) {
      const stack: string[] = [];
      for (let i = raw.length - 1; i >= 0; i--) stack.push(raw[i]!);
      let budget = this.own.size + 1;
      while (stack.length > 0 && budget-- > 0) {
        const c = stack.pop()!;
        if (this.isVisible(c)) out.push(c);
        else {
          const k = this.kids.get(c);
          if (k) for (let i = k.length - 1; i >= 0; i--) stack.push(k[i]!);
        }
      }
      if (out.length > 1) out.sort((a, b) => this.own.get(a)!.index - this.own.get(b)!.index);
    }
    this.vkids.set(id, out);
    return out;
  }

  private foldsToolResults(): boolean {
    return this.filterMode === "default" || this.filterMode === "all";
  }

  private isAssistant(id: string): boolean {
    const r = this.own.get(id);
    return r !== undefined && r.type === "message" && r.role === "assistant";
  }

  /** A tool result that may fold under the assistant before it (not a branch point). */
  private foldable(id: string): boolean {
    if (!this.foldsToolResults()) return false;
    const r = this.own.get(id);
    return r !== undefined && r.type === "message" && r.role === "toolResult" && this.visibleChildren(id).length <= 1;
  }

  /** The run starting at `head` (computed and cached on first use). */
  private run(head: string): Run {
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
  private extendRun(run: Run, id: string): "folded" | "item" {
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

  private dropRun(run: Run): void {
    this.runs.delete(run.head);
    for (const id of run.members) {
      if (this.runOf.get(id) === run) this.runOf.delete(id);
      this.folds.delete(id);
      this.foldOwner.delete(id);
    }
  }

  /** The run holding a visible entry (computing it if needed), or undefined for hidden/unreachable entries. */
  private ensureRunOf(id: string): Run | undefined {
    const known = this.runOf.get(id);
    if (known) return known;
    if (!this.reachable(id) || !this.isVisible(id)) return undefined;
    // Walk up to the run head: the first entry whose visible parent is not a single-child link.
    let head = id;
    let steps = 0;
    for (;;) {
      if (steps++ > this.own.size) return undefined;
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

  private clearVisible(): void {
    this.vkids = new Map();
    this.runs = new Map();
    this.runOf = new Map();
    this.folds = new Map();
    this.foldOwner = new Map();
  }

  /** Incremental placement of an appended record in the cached visible structure. */
  private placeAppended(r: EntryRecord, elements: Map<string, TreeElement | null>): void {
    if (!this.isVisible(r.id)) return;
    const parent = this.rawParentId(r);
    const vp = parent === null ? null : this.visibleSelfOrAncestor(parent);
    const cached = this.vkids.get(vp);
    if (!cached) {
      // Nobody asked for this part of the tree yet: nothing is cached that could be stale.
      elements.set(vp === null ? ROOT_KEY : `e:${vp}`, vp === null ? null : this.entryElement(vp));
      return;
    }
    cached.push(r.id);
    this.vkids.set(r.id, []);
    const count = cached.length;
    if (vp === null) {
      // A new root: the top level changes shape when it goes from one run to branch groups.
      if (count === 2) {
        const first = this.runs.get(cached[0]!);
        if (first) this.dropRun(first);
      }
      elements.set(ROOT_KEY, null);
      return;
    }
    const run = this.runOf.get(vp);
    if (count === 1) {
      if (run && run.tail === vp) {
        const how = this.extendRun(run, r.id);
        if (how === "folded") {
          elements.set(`e:${run.owner}`, this.entryElement(run.owner!));
          const container = this.runContainer(run);
          if (container) elements.set(container.key, container); // its size changed
        } else {
          const container = this.containerOf(run, run.items.length - 1);
          elements.set(container ? container.key : ROOT_KEY, container ?? null);
          const previous = run.items[run.items.length - 2];
          if (previous !== undefined) elements.set(`e:${previous}`, this.entryElement(previous));
        }
      } else if (run) {
        this.dropRun(run);
        this.notifyRun(run, elements);
      }
      return;
    }
    if (count === 2) {
      // `vp` becomes a branch point: its run ends there now (and a folded tool result unfolds).
      if (run) {
        this.dropRun(run);
        this.notifyRun(run, elements);
      }
      elements.set(`e:${vp}`, this.entryElement(vp));
      return;
    }
    elements.set(`e:${vp}`, this.entryElement(vp));
  }

  /** Changes for a run whose layout was dropped: its container (and the owner of folded items). */
  private notifyRun(run: Run, elements: Map<string, TreeElement | null>): void {
    const roots = this.visibleChildren(null);
    if (roots.length === 1 && roots[0] === run.head) elements.set(ROOT_KEY, null);
    else elements.set(`b:${run.head}`, this.branchElement(run.head));
  }

  // ---------------------------------------------------------------------------------------------
  // Layout of runs (pages)

  private branchElement(headId: string): BranchElement {
    const key = `b:${headId}`;
    let e = this.interned.get(key) as BranchElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "branch", key, headId }));
    return e;
  }

  private pageElement(runId: string, start: number, end: number): PageElement {
    const key = `p:${runId}:${start}-${end}`;
    let e = this.interned.get(key) as PageElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "page", key, runId, start, end }));
    return e;
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
    for (let s = start; s < end; s += size) out.push(this.pageElement(run.head, s, Math.min(s + size, end)));
    return out;
  }

  private runChildren(run: Run): TreeElement[] {
    const base = this.runBase(run);
    const paged = this.pagedLength(run);
    const out: TreeElement[] = base === 1 ? this.ownChildren(run.head) : [];
    if (paged > 0) out.push(...this.pages(run, base, base + paged, this.chunkSize(paged)));
    for (let i = base + paged; i < run.items.length; i++) out.push(this.entryElement(run.items[i]!));
    return out;
  }

  /** The element directly holding the run's item at `position` (a page, the branch group, or the top level). */
  private containerOf(run: Run, position: number): TreeElement | undefined {
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
      const page = this.pageElement(run.head, s, Math.min(s + size, end));
      chain.push(page);
      start = page.start;
      end = page.end;
      if (size <= this.pageSize) break;
    }
    return chain;
  }

  private runContainer(run: Run): TreeElement | undefined {
    const roots = this.visibleChildren(null);
    if (roots.length === 1 && roots[0] === run.head) return undefined;
    return this.branchElement(run.head);
  }

  // ---------------------------------------------------------------------------------------------
  // Texts

  /** pi's `[read: path]`-style text of the call a tool result answers (reads the assistant message once). */
  private toolCallText(r: EntryRecord): string | undefined {
    if (r.type !== "message" || r.role !== "toolResult" || !r.toolCallId || !this.reader) return undefined;
    let current: string | null = this.rawParentId(r);
    let steps = 0;
    while (current !== null && steps++ < 64) {
      const p = this.own.get(current);
      if (!p) return undefined;
      if (p.type === "message" && p.role === "assistant") {
        let calls = this.toolCalls.get(p.id);
        if (!calls) {
          calls = new Map();
          try {
            const entry = this.reader.readEntry(p) as unknown as { message?: { content?: unknown } };
            const content = entry.message?.content;
            if (Array.isArray(content)) {
              for (const block of content) {
                if (block && typeof block === "object" && (block as { type?: unknown }).type === "toolCall") {
                  const b = block as { id?: unknown; name?: unknown; arguments?: unknown };
                  if (typeof b.id === "string")
                    calls.set(
                      b.id,
                      formatToolCall(
                        String(b.name ?? "tool"),
                        (b.arguments && typeof b.arguments === "object" ? b.arguments : {}) as Record<string, unknown>,
                      ),
                    );
                }
              }
            }
          } catch {
            // stale or unreadable line: fall back to the tool name
          }
          this.toolCalls.set(p.id, calls);
        }
        return calls.get(r.toolCallId);
      }
      current = this.rawParentId(p);
    }
    return undefined;
  }
}

/** A number of tokens as pi's footer writes them (`1.2k`, `45k`, `1.3M`). */
export function formatTokenCount(count: number): string {
  if (!Number.isFinite(count)) return "?";
  if (count < 1000) return String(Math.round(count));
  if (count < 10000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1000000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1000000).toFixed(1)}M`;
}

function oneLine(text: string, max = 160): string {
  const s = text.replace(/[\r\n\t]+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * One line of markdown as plain text, for tree rows: heading, quote and list markers, emphasis
 * (`**x**`, `__x__`, `*x*`, `_x_`, `~~x~~`), code spans (`` `x` ``), links and images (their text)
 * are removed; code span contents are kept verbatim. `**`pi-format-demo`**` → `pi-format-demo`.
 */
export function plainText(line: string): string {
  const code: string[] = [];
  let s = line.replace(/(`+)(.+?)\1/g, (_m, _ticks: string, body: string) => {
    code.push(body.trim());
    return `\u0000${code.length - 1}\u0000`;
  });
  s = s.replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+)/, "");
  s = s.replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/\[([^\]]+)\]\([^)\s]*\)/g, "$1");
  s = s.replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2").replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1");
  s = s.replace(
    /(^|[^\w*])\*(?=[^\s*])([^*]*?[^\s*])?\*(?![\w*])/g,
    (_m, pre: string, body: string | undefined) => `${pre}${body ?? ""}`,
  );
  s = s.replace(
    /(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])?_(?!\w)/g,
    (_m, pre: string, body: string | undefined) => `${pre}${body ?? ""}`,
  );
  return s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => code[Number(i)] ?? "");
}

/**
 * A provider error as a row shows it, after `Error`: the HTTP status and the JSON body's
 * `message` when there is one (`400 {"error":{"message":"`max_tokens` must…"}}` →
 * ` 400: max_tokens must…`), else `: ` and the text as it is.
 */
export function readableError(errorMessage: string): string {
  const status = /^(\d{3})\b/.exec(errorMessage)?.[1];
  const quoted = /"message"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(errorMessage)?.[1];
  if (quoted) {
    let message = quoted;
    try {
      message = JSON.parse(`"${quoted}"`) as string;
    } catch {
      message = quoted.replace(/\\(.)/g, "$1"); // cut inside an escape: take it as it is
    }
    message = oneLine(plainText(message)).replace(/\\$/, "");
    if (message) return `${status ? ` ${status}` : ""}: ${message}`;
  }
  return `: ${errorMessage}`;
}

/** `1 entry`, `2 entries`, `1,234 entries` (English plural for our nouns). */
export function plural(
  count: number,
  singular: string,
  pluralForm = singular.endsWith("y") && !/[aeiou]y$/.test(singular) ? `${singular.slice(0, -1)}ies` : `${singular}s`,
): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? singular : pluralForm}`;
}

/** The model part of `provider/model` as a row shows it: the last path segment (`accounts/x/routers/kimi` → `kimi`). */
export function shortModelName(model: string): string {
  const slash = model.lastIndexOf("/");
  return slash >= 0 && slash < model.length - 1 ? model.slice(slash + 1) : model;
}

function modelKey(r: EntryRecord): string {
  return `${r.provider ?? ""}/${r.model ?? ""}`;
}

/**
 * An entry in words for titles and messages: its text as the tree shows it (a user message's first
 * line, an assistant's answer, "Compaction: …"), in quotes and shortened to `max` characters.
 * `“Read README.md and NOTES.md”`. Falls back to the id for entries without words.
 */
export function entryWords(r: EntryRecord | undefined, max = 48): string {
  if (!r) return "the start of the session";
  const text = describeRecord(r).text.trim();
  if (!text) return r.id;
  return `“${text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text}”`;
}

/** pi's `formatToolCall` in the `/tree` selector (`[read: path:1-20]`, `[bash: cmd]`, …), without brackets. */
export function formatToolCall(name: string, args: Record<string, unknown>): string {
  const str = (v: unknown) => (v === undefined || v === null ? "" : String(v));
  switch (name) {
    case "read": {
      const range = readLineRange(args.offset, args.limit);
      return `read: ${str(args.path || args.file_path)}${range}`;
    }
    case "write":
    case "edit":
      return `${name}: ${str(args.path || args.file_path)}`;
    case "bash": {
      const raw = str(args.command);
      const cmd = raw
        .replace(/[\n\t]/g, " ")
        .trim()
        .slice(0, 50);
      return `bash: ${cmd}${raw.length > 50 ? "..." : ""}`;
    }
    case "grep":
      return `grep: /${str(args.pattern)}/ in ${str(args.path || ".")}`;
    case "find":
      return `find: ${str(args.pattern)} in ${str(args.path || ".")}`;
    case "ls":
      return `ls: ${str(args.path || ".")}`;
    default: {
      const json = JSON.stringify(args) ?? "";
      return `${name}: ${json.slice(0, 40)}${json.length > 40 ? "..." : ""}`;
    }
  }
}

function readLineRange(offset: unknown, limit: unknown): string {
  const num = (v: unknown) => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : num(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = num(limit);
  if (count === undefined) return "";
  return `:${start}-${start + count - 1}`;
}

/** Tool call names summarised: `read ×2, edit`. */
export function summarizeToolNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(", ");
}

const SUMMARY_PREAMBLE_LINES = new Set([
  "The user explored a different conversation branch before returning here.",
  "Summary of that exploration:",
]);

/**
 * The first informative line of a compaction/branch summary: skips pi's branch-summary preamble,
 * headings, list markers and checkboxes.
 */
export function summaryHeadline(summary: string): string {
  for (const raw of summary.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || SUMMARY_PREAMBLE_LINES.has(line) || line.startsWith("<")) continue;
    const text = plainText(line.replace(/^([-*+]|\d+[.)])\s+/, "").replace(/^\[[ xX]\]\s*/, "")).trim();
    if (text) return oneLine(text);
  }
  return "";
}

/** What {@link describeRecord} tells about one record. */
export interface RecordDescription {
  kind: NodeKind;
  text: string;
  detail: string;
  error: boolean;
  /** A failed assistant message's error text (already shown in `text` or `detail`). */
  errorMessage?: string;
  /** `text` is the error (the message had no text of its own). */
  errorInText?: boolean;
  /** An assistant message's `provider/model` (not in `detail`: the tree shows it where it changes). */
  model?: string;
}

/**
 * Kind, texts and error flag of one record (pi's `getEntryDisplayText`, on records). Message texts
 * are plain (markdown markers removed, see {@link plainText}). A failed assistant message without
 * text shows its error as pi's `/tree` does (`Error 400: …`, see {@link readableError}); with text,
 * the error goes to the detail.
 */
export function describeRecord(r: EntryRecord, toolCall?: string): RecordDescription {
  switch (r.type) {
    case "message": {
      switch (r.role) {
        case "user": {
          const images = r.images ? plural(r.images, "image") : "";
          const text = r.preview ? oneLine(plainText(r.preview)) : "";
          return {
            kind: "user",
            text: text || (images ? `(${images})` : "(empty)"),
            detail: text && images ? images : "",
            error: false,
          };
        }
        case "assistant": {
          const tools = r.toolNames?.length ? `→ ${summarizeToolNames(r.toolNames)}` : "";
          const error = r.stopReason === "error" || r.stopReason === "aborted";
          const errorMessage = error && r.errorMessage ? oneLine(r.errorMessage) : undefined;
          let text = r.preview ? oneLine(plainText(r.preview)) : "";
          let errorDetail = "";
          if (!text)
            text =
              r.stopReason === "aborted"
                ? "(aborted)"
                : errorMessage
                  ? `Error${readableError(errorMessage)}`
                  : r.stopReason === "error"
                    ? "(error)"
                    : tools || "(no content)";
          else if (errorMessage) errorDetail = `error${readableError(errorMessage)}`;
          else if (error) errorDetail = r.stopReason === "aborted" ? "aborted" : "stopped with an error";
          const detail = [text === tools ? "" : tools, errorDetail].filter(Boolean).join("  ");
          const model =
            r.model !== undefined || r.provider !== undefined
              ? `${r.provider ? `${r.provider}/` : ""}${r.model ?? "?"}`
              : undefined;
          const out: RecordDescription = { kind: "assistant", text, detail, error };
          if (errorMessage !== undefined) out.errorMessage = errorMessage;
          if (errorMessage !== undefined && !errorDetail) out.errorInText = true;
          if (model !== undefined) out.model = model;
          return out;
        }
        case "toolResult":
          return {
            kind: "toolResult",
            text: toolCall ?? r.toolName ?? "tool",
            detail: r.preview ? oneLine(r.preview, 120) : "",
            error: Boolean(r.isError),
          };
        case "bashExecution":
          return {
            kind: "bashExecution",
            text: `$ ${oneLine(r.preview ?? "")}`,
            detail: r.excludeFromContext ? "not sent to the model" : "",
            error: false,
          };
        case "system":
          return {
            kind: "system",
            text: "System prompt",
            detail: `${formatTokenCount(r.systemTokens)} tokens`,
            error: false,
          };
        case "custom":
          return {
            kind: "customMessage",
            text: `[${r.customType ?? "custom"}] ${oneLine(plainText(r.preview ?? ""))}`.trim(),
            detail: "",
            error: false,
          };
        default:
          return { kind: "message", text: `[${r.role ?? "message"}]`, detail: "", error: false };
      }
    }
    case "custom_message":
      return {
        kind: "customMessage",
        text: `[${r.customType ?? "custom"}] ${oneLine(plainText(r.preview ?? ""))}`.trim(),
        detail: r.display ? "" : "hidden in pi",
        error: false,
      };
    case "compaction":
      return {
        kind: "compaction",
        text: `Compaction: ${r.tokensBefore !== undefined ? formatTokenCount(r.tokensBefore) : "?"} tokens → summary`,
        detail: `${formatTokenCount(r.tokens)}-token summary${r.fromHook ? " (extension)" : ""}`,
        error: false,
      };
    case "branch_summary":
      return {
        kind: "branchSummary",
        text: `Branch summary: ${summaryHeadline(r.summary ?? "") || "(empty)"}`,
        detail: `${formatTokenCount(r.tokens)} tokens`,
        error: false,
      };
    case "model_change":
      return {
        kind: "modelChange",
        text: `Model: ${r.provider ? `${r.provider}/` : ""}${r.modelId ?? "?"}`,
        detail: "",
        error: false,
      };
    case "thinking_level_change":
      return { kind: "thinkingLevel", text: `Thinking: ${r.thinkingLevel ?? "?"}`, detail: "", error: false };
    case "label":
      return {
        kind: "label",
        text: `Label: ${r.label ? oneLine(r.label) : "(cleared)"}`,
        detail: r.targetId ? `on ${r.targetId}` : "",
        error: false,
      };
    case "session_info":
      return {
        kind: "sessionInfo",
        text: `Title: ${r.name?.trim() ? oneLine(r.name) : "(empty)"}`,
        detail: "",
        error: false,
      };
    case "custom":
      if (r.customType === PI_CONTEXT_CUSTOM_TYPE) {
        return { kind: "leafMarker", text: "Leaf moved here", detail: "by pi Context", error: false };
      }
      return { kind: "custom", text: `Custom: ${r.customType ?? "?"}`, detail: "", error: false };
    case "context_edit":
      return {
        kind: "contextEdit",
        text: `Context ${r.replacementIsNull ? "omit" : "replace"}: ${r.targetId ?? "?"}`,
        detail: "",
        error: false,
      };
    case "usage":
      return { kind: "usage", text: `Usage: ${r.provider ?? "?"}/${r.model ?? "?"}`, detail: "", error: false };
    default:
      return { kind: "unknown", text: `[${r.type || "unknown"}]`, detail: "", error: false };
  }
}

/**
 * The text a user-message or custom-message target gives back (pi's `navigateTree` `editorText`:
 * `contentText(content, "")`), or undefined for other entries.
 */
export function entryEditorText(entry: SessionEntry): string | undefined {
  const e = entry as unknown as { type: string; message?: { role?: string; content?: unknown }; content?: unknown };
  if (e.type === "message" && e.message?.role === "user") return contentText(e.message.content, "");
  if (e.type === "custom_message") return contentText(e.content, "");
  return undefined;
}
