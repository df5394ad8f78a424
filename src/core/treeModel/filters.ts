/** pi's `/tree` filter modes (pi 1.6.0 `tree-selector.js` `applyFilter`); `usage` entries never show. */

import type { EntryRecord } from "../read/entries";

export type TreeFilter = "default" | "no-tools" | "user-only" | "labeled-only" | "all";

/** The filters in pi's cycling order. */
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

export function isTreeFilter(value: unknown): value is TreeFilter {
  return typeof value === "string" && TREE_FILTERS.some((f) => f.filter === value);
}

/** Entry types pi's default `/tree` view hides. */
const SETTINGS_TYPES: ReadonlySet<string> = new Set([
  "label",
  "context_edit",
  "custom",
  "model_change",
  "thinking_level_change",
  "session_info",
]);

/**
 * pi's `applyFilter` for one entry, except that tool-call-only assistant messages stay visible
 * outside `no-tools` (tool results fold under them).
 */
export function filterShows(r: EntryRecord, filter: TreeFilter, labeled: boolean): boolean {
  if (r.type === "usage") return false;
  switch (filter) {
    case "all":
      return true;
    case "user-only":
      return r.type === "message" && r.role === "user";
    case "labeled-only":
      return labeled;
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

export function filterFoldsToolResults(filter: TreeFilter): boolean {
  return filter === "default" || filter === "all";
}

/**
 * The entry pi's default `/tree` view stands the leaf at: the leaf, else its nearest shown ancestor
 * (a "Switch to Here" without summary leaves the leaf at a hidden `custom` entry); null if none.
 */
export function defaultShownLeaf(byId: ReadonlyMap<string, EntryRecord>, leafId: string | null): string | null {
  let current = leafId;
  for (let steps = 0; current !== null && steps <= byId.size; steps++) {
    const r = byId.get(current);
    if (!r) return null;
    if (filterShows(r, "default", false)) return current;
    current = r.parentId;
  }
  return null;
}
