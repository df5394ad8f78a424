/**
 * A last line pi 1.6.0 keeps that is not an entry with a string id (`42`, `[]`, no id, an object id):
 * pi makes every parsed line its leaf, so it decides where pi resumes. A falsy id: pi has no leaf
 * (`buildSessionProjection` falls back to this line's chain); a truthy non-string: the leaf is this line.
 */

import { buildRecord, type EntryRecord, type LineLocation } from "./entries";

/** No real entry's string id starts with U+0000. */
export const ODD_TAIL_ID = "\u0000pi-leaf";

export interface OddTail {
  line: number;
  offset: number;
  byteLength: number;
  /** False: pi has no leaf. */
  truthyId: boolean;
  /** `42 (a number)`, `an array`, `an entry with no id`, … */
  what: string;
  /** The line as an entry with the id {@link ODD_TAIL_ID}, or for id `""` that entry itself. */
  record: EntryRecord;
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The {@link OddTail} of a kept line after the header; undefined when pi gets a string leaf id from it. */
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
