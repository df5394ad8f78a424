/**
 * The last line pi 1.6.0 keeps when it is not an entry with a string id. pi makes every parsed line
 * its leaf (`_buildIndex`: `this.leafId = entry.id` per line, the `session` header excepted;
 * `loadEntriesFromFile` keeps every truthy JSON value), so a last line like `42`, `[]`,
 * `{"type":"leaf",…}` without an id, an object or number id, or an empty id decides where pi resumes:
 * - a falsy id (none, `""`, `0`, `false`): pi has no leaf — `getBranch()` is empty, while
 *   `buildSessionProjection` falls back to the last entry (this line) and its `parentId` chain;
 * - a truthy id that is no string (an object, a number, `true`): pi's leaf is this line, and its
 *   branch is it and its `parentId` chain.
 * pi-context's index skips such a line (or, for `""`, keeps it): this is what it needs to show pi's
 * numbers anyway (`rules/piLeaf.ts`).
 */

import { buildRecord, type EntryRecord, type LineLocation } from "./entries";

/** The placeholder id of an {@link OddTail}'s record (no string id of a real entry starts with U+0000). */
export const ODD_TAIL_ID = "\u0000pi-leaf";

/** The last line pi keeps, when it is not an entry with a string id. */
export interface OddTail {
  line: number;
  offset: number;
  byteLength: number;
  /** pi's leaf id is truthy (`getBranch` follows this line); false: pi has no leaf. */
  truthyId: boolean;
  /** What the line is, in words: `42 (a number)`, `an array`, `an entry with no id`, `an entry with an object id`. */
  what: string;
  /**
   * The line as an entry with the id {@link ODD_TAIL_ID} (its type, parent and messages), or for an
   * entry with the id `""` that entry itself; a line that is no object is an entry of no type with no parent.
   */
  record: EntryRecord;
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * The {@link OddTail} of a parsed line after the header, or undefined when pi gets a string leaf id
 * from it (a normal entry). Call only for lines pi keeps (truthy JSON, not a `session` line).
 * @param record the record pi-context made of the line (`buildRecord`'s result), when it made one.
 */
export function oddTailOf(value: unknown, at: LineLocation, record: EntryRecord | undefined): OddTail | undefined {
  const where = { line: at.line, offset: at.offset, byteLength: at.byteLength };
  if (record) {
    if (record.id !== "") return undefined;
    return { ...where, truthyId: false, what: 'an entry with the id "" (empty)', record };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const shown = JSON.stringify(value) ?? "?";
    return {
      ...where,
      truthyId: false,
      what: Array.isArray(value)
        ? "an array"
        : `${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown} (${kindOf(value)})`,
      record: placeholder(at),
    };
  }
  const id = (value as { id?: unknown }).id;
  const built = buildRecord({ ...(value as object), id: ODD_TAIL_ID }, at);
  return {
    ...where,
    truthyId: Boolean(id),
    what:
      id === undefined
        ? "an entry with no id"
        : `an entry with ${kindOf(id)} id ${JSON.stringify(id)?.slice(0, 40) ?? "?"}`,
    record: "id" in built ? built : placeholder(at),
  };
}

/** An entry of no type and no parent: what pi projects a line that is no object as (no messages). */
function placeholder(at: LineLocation): EntryRecord {
  return {
    index: at.index,
    line: at.line,
    offset: at.offset,
    byteLength: at.byteLength,
    id: ODD_TAIL_ID,
    parentId: null,
    type: "",
    timestamp: "",
    tokens: 0,
    chars: { text: 0, thinking: 0, toolCalls: 0, images: 0, tools: 0 },
    systemTokens: 0,
    usageTokens: 0,
  };
}
