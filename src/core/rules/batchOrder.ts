/**
 * The order a batch of context edits is written in, so that every prefix of it is pairing-safe: the
 * batch is one append, but pi (or a crash, or pi's turn boundary taking the entries one by one) can
 * see any prefix, and a tool result without its call makes providers reject every request
 * (`pairing.ts`). A call without its result is safe: pi-ai sends "No result provided" for it.
 *
 * First what hides (tool results, then the assistants whose calls they answer, then user and custom
 * messages), then what shows (assistants, then tool results, then user and custom messages, which
 * can only separate a call from its result); context order within each. So a result is hidden
 * before its assistant, shown after it, and no message is shown between a call and its result
 * before the result's own edit. The live bridge orders its batches by the same rule
 * (`bridge/contextEdits.ts`, which cannot import this).
 */

import type { EditableRole } from "./contextEdit";

/** What the order needs of an edit. */
export interface OrderedEdit {
  role: EditableRole;
  /** `null` hides the target. */
  replacement: unknown;
  /** Position of the target among the context entries. */
  contextIndex: number;
}

const HIDE_ORDER: readonly string[] = ["toolResult", "assistant", "user"];
const SHOW_ORDER: readonly string[] = ["assistant", "toolResult", "user"];

/** Rank of an edit in {@link pairingSafeOrder}: hides 0–2, shows 3–5. */
function rank(e: OrderedEdit): number {
  const role = e.role === "custom" ? "user" : e.role;
  return e.replacement === null ? HIDE_ORDER.indexOf(role) : HIDE_ORDER.length + SHOW_ORDER.indexOf(role);
}

/** `edits` in the order they are written (see the file comment); a new array, the input unchanged. */
export function pairingSafeOrder<T extends OrderedEdit>(edits: readonly T[]): T[] {
  return [...edits].sort((a, b) => rank(a) - rank(b) || a.contextIndex - b.contextIndex);
}
