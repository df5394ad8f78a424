/**
 * Incremental sync: processes only appended records, patches the cached visible structure, and reports
 * changed elements; rebuilds only on re-read, duplicate id, or adopted orphans.
 */

import { ROOT_KEY, type ElementCache, type TreeElement } from "./elements";
import type { TreeLayout } from "./layout";
import type { Run, VisibleTree } from "./runs";
import type { EntryStructure } from "./structure";
import type { EntryRecord } from "../read/entries";

export interface TreeChange {
  /** Everything may have changed (rebuild, filter, active path moved). */
  all: boolean;
  /** `null` stands for the top level. */
  elements: (TreeElement | null)[];
  added: number;
  rebuilt: boolean;
  leafChanged: boolean;
  nameChanged: boolean;
}

export class TreeSync {
  constructor(
    private readonly s: EntryStructure,
    private readonly v: VisibleTree,
    private readonly layout: TreeLayout,
    private readonly elements: ElementCache,
  ) {}

  rebuild(): void {
    this.s.rebuild();
    this.v.clear();
  }

  sync(): TreeChange {
    const s = this.s;
    const records = s.source.records;
    const change: TreeChange = {
      all: false,
      elements: [],
      added: 0,
      rebuilt: false,
      leafChanged: false,
      nameChanged: false,
    };
    if (s.processed > records.length || (s.processed > 0 && records[s.processed - 1] !== s.lastRecord)) {
      return this.fullRebuild(change);
    }
    if (s.processed === records.length) return change;
    const elements = new Map<string, TreeElement | null>();
    const oldLeaf = s.leaf;
    const oldDisplayLeaf = this.v.displayLeaf();
    const oldName = s.name;
    let all = false;
    for (let i = s.processed; i < records.length; i++) {
      const r = records[i]!;
      if (s.needsRebuildFor(r)) return this.fullRebuild(change);
      const previousLeaf = s.leaf;
      this.v.spine = undefined; // the active path, and with it the spine, may change
      s.add(r);
      s.processed = i + 1;
      s.lastRecord = r;
      change.added++;
      if (previousLeaf !== null && s.parentOf(r) === previousLeaf && s.active.has(previousLeaf)) s.active.add(r.id);
      else {
        s.computeActivePath();
        all = true;
      }
      if (r.type === "label" && r.targetId !== undefined) {
        if (this.v.filter === "labeled-only") {
          this.v.clear();
          all = true;
        } else if (s.own.has(r.targetId) && this.v.isVisible(r.targetId))
          elements.set(`e:${r.targetId}`, this.elements.entry(r.targetId));
      }
      this.placeAppended(r, elements);
    }
    change.leafChanged = s.leaf !== oldLeaf;
    change.nameChanged = s.name !== oldName;
    const newDisplayLeaf = this.v.displayLeaf();
    if (oldDisplayLeaf !== null && s.own.has(oldDisplayLeaf))
      elements.set(`e:${oldDisplayLeaf}`, this.elements.entry(oldDisplayLeaf));
    if (newDisplayLeaf !== null) elements.set(`e:${newDisplayLeaf}`, this.elements.entry(newDisplayLeaf));
    change.all = all;
    if (!all) {
      // An entry that heads a branch is shown by its branch group: report the group.
      const shown = new Map<string, TreeElement | null>();
      for (const e of elements.values()) {
        const element = e && e.kind === "entry" && s.own.has(e.id) ? this.layout.displayElement(e.id) : e;
        shown.set(element ? element.key : ROOT_KEY, element);
      }
      change.elements = [...shown.values()];
    } else change.elements = [];
    return change;
  }

  private fullRebuild(change: TreeChange): TreeChange {
    const before = this.s.processed;
    const oldName = this.s.name;
    const oldLeaf = this.s.leaf;
    this.rebuild();
    change.all = true;
    change.rebuilt = true;
    change.elements = [];
    change.added = Math.max(0, this.s.processed - before);
    change.leafChanged = this.s.leaf !== oldLeaf;
    change.nameChanged = this.s.name !== oldName;
    return change;
  }

  private placeAppended(r: EntryRecord, elements: Map<string, TreeElement | null>): void {
    const v = this.v;
    if (!v.isVisible(r.id)) return;
    const parent = this.s.parentOf(r);
    const vp = parent === null ? null : v.visibleSelfOrAncestor(parent);
    const cached = v.vkids.get(vp);
    if (!cached) {
      // Nobody asked for this part of the tree yet: nothing cached can be stale.
      elements.set(vp === null ? ROOT_KEY : `e:${vp}`, vp === null ? null : this.elements.entry(vp));
      return;
    }
    cached.push(r.id);
    v.vkids.set(r.id, []);
    const count = cached.length;
    if (vp === null) {
      // A new root: the top level goes from one run to branch groups.
      if (count === 2) {
        const first = v.runs.get(cached[0]!);
        if (first) v.dropRun(first);
      }
      elements.set(ROOT_KEY, null);
      return;
    }
    const run = v.runOf.get(vp);
    if (count === 1) {
      if (run && run.tail === vp) {
        const how = v.extendRun(run, r.id);
        if (how === "folded") {
          elements.set(`e:${run.owner}`, this.elements.entry(run.owner!));
          const container = this.layout.runContainer(run);
          if (container) elements.set(container.key, container); // its size changed
        } else {
          const container = this.layout.containerOf(run, run.items.length - 1);
          elements.set(container ? container.key : ROOT_KEY, container ?? null);
          const previous = run.items[run.items.length - 2];
          if (previous !== undefined) elements.set(`e:${previous}`, this.elements.entry(previous));
        }
      } else if (run) {
        v.dropRun(run);
        this.notifyRun(run, elements);
      }
      return;
    }
    if (count === 2) {
      // `vp` becomes a branch point: its run ends there (and a folded tool result unfolds).
      if (run) {
        v.dropRun(run);
        this.notifyRun(run, elements);
      }
    }
    elements.set(`e:${vp}`, this.elements.entry(vp));
    // An append on the active path that makes or extends a branch point continues the spine: top level changes.
    if (this.s.active.has(r.id)) elements.set(ROOT_KEY, null);
  }

  private notifyRun(run: Run, elements: Map<string, TreeElement | null>): void {
    const roots = this.v.visibleChildren(null);
    if (roots.length === 1 && roots[0] === run.head) elements.set(ROOT_KEY, null);
    else elements.set(`b:${run.head}`, this.elements.branch(run.head));
  }
}
