/**
 * The elements of the session tree widget (entries, branch groups, pages), interned so the same
 * key always gives the same object (VS Code's `TreeDataProvider` compares elements by identity).
 */

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
  /** `b:<headId>`. */
  readonly key: string;
  readonly headId: string;
}

/** A page of a long run: items `start` (inclusive) to `end` (exclusive) of the run starting at `runId`. */
export interface PageElement {
  readonly kind: "page";
  /** `p:<runId>:<start>-<end>`. */
  readonly key: string;
  readonly runId: string;
  readonly start: number;
  readonly end: number;
}

/** An element of the tree widget. Elements are interned: the same key gives the same object. */
export type TreeElement = EntryElement | BranchElement | PageElement;

/**
 * The entry id a command was called with: an id, or a tree element (an entry, or a branch row,
 * whose row is its first entry); undefined for anything else (a page row, nothing).
 */
export function entryIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object") {
    const e = arg as { kind?: unknown; id?: unknown; headId?: unknown };
    if (e.kind === "entry" && typeof e.id === "string") return e.id;
    if (e.kind === "branch" && typeof e.headId === "string") return e.headId;
  }
  return undefined;
}

/** The key that stands for the top level in change sets (no element has it). */
export const ROOT_KEY = "\u0000root";

/** Interned elements of one model (kept for the model's lifetime: keys stay valid across syncs). */
export class ElementCache {
  private readonly interned = new Map<string, TreeElement>();

  /** The element of an entry (whether or not it is visible). */
  entry(id: string): EntryElement {
    const key = `e:${id}`;
    let e = this.interned.get(key) as EntryElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "entry", key, id }));
    return e;
  }

  /** The branch group headed by `headId`. */
  branch(headId: string): BranchElement {
    const key = `b:${headId}`;
    let e = this.interned.get(key) as BranchElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "branch", key, headId }));
    return e;
  }

  /** The page of items `start`–`end` (exclusive) of the run headed by `runId`. */
  page(runId: string, start: number, end: number): PageElement {
    const key = `p:${runId}:${start}-${end}`;
    let e = this.interned.get(key) as PageElement | undefined;
    if (!e) this.interned.set(key, (e = { kind: "page", key, runId, start, end }));
    return e;
  }
}
