/**
 * The order a batch of context edits is written in so every prefix is pairing-safe: pi or a crash can
 * see any prefix, and a result without its call makes providers reject every request (a call without
 * result is safe). Hides first (results, assistants, user/custom), then shows (assistants, results,
 * user/custom), context order within each. `bridge/contextEdits.ts` mirrors it (cannot import this).
 */

import type { EditableRole } from "./contextEdit";

export interface OrderedEdit {
  role: EditableRole;
  /** `null` hides the target. */
  replacement: unknown;
  contextIndex: number;
}

const HIDE_ORDER: readonly string[] = ["toolResult", "assistant", "user"];
const SHOW_ORDER: readonly string[] = ["assistant", "toolResult", "user"];

function rank(e: OrderedEdit): number {
  const role = e.role === "custom" ? "user" : e.role;
  return e.replacement === null ? HIDE_ORDER.indexOf(role) : HIDE_ORDER.length + SHOW_ORDER.indexOf(role);
}

/** `edits` in write order, as a new array. */
export function pairingSafeOrder<T extends OrderedEdit>(edits: readonly T[]): T[] {
  return [...edits].sort((a, b) => rank(a) - rank(b) || a.contextIndex - b.contextIndex);
}
