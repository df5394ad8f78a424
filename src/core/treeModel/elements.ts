/** Tree widget elements, interned: VS Code's `TreeDataProvider` compares elements by identity. */

export interface EntryElement {
  readonly kind: "entry";
  /** `e:<id>`, also the tree item id. */
  readonly key: string;
  readonly id: string;
}

/** A branch group: the run starting at `headId`; its row is the head entry itself. */
export interface BranchElement {
  readonly kind: "branch";
  readonly key: string;
  readonly headId: string;
}

/** Items `start` (inclusive) to `end` (exclusive) of the run starting at `runId`. */
export interface PageElement {
  readonly kind: "page";
  readonly key: string;
  readonly runId: string;
  readonly start: number;
  readonly end: number;
}

export type TreeElement = EntryElement | BranchElement | PageElement;

/** The entry id a command got: an id, or an entry/branch element; undefined otherwise. */
export function entryIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object") {
    const e = arg as { kind?: unknown; id?: unknown; headId?: unknown };
    if (e.kind === "entry" && typeof e.id === "string") return e.id;
    if (e.kind === "branch" && typeof e.headId === "string") return e.headId;
  }
  return undefined;
}

/** Stands for the top level in change sets (no element has it). */
export const ROOT_KEY = "\u0000root";

/** Interned elements, kept for the model's lifetime so keys stay valid across syncs. */
export class ElementCache {
  private readonly interned = new Map<string, TreeElement>();

  entry(id: string): EntryElement {
    const key = `e:${id}`;
    let e = this.interned.get(key) as EntryElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "entry", key, id }));
    return e;
  }

  branch(headId: string): BranchElement {
    const key = `b:${headId}`;
    let e = this.interned.get(key) as BranchElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "branch", key, headId }));
    return e;
  }

  page(runId: string, start: number, end: number): PageElement {
    const key = `p:${runId}:${start}-${end}`;
    let e = this.interned.get(key) as PageElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "page", key, runId, start, end }));
    return e;
  }
}
