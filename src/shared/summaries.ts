/** The summaries on the current path and what each lost (`protocol.ts` re-exports them). Browser-safe. */

export interface SummaryModel {
  entryId: string;
  /** `span_summary`: a scoped summary; `entryId` is its `context_edit`. */
  type: "compaction" | "branch_summary" | "span_summary";
  timestamp: string;
  tokensBefore: number | null;
  firstKeptEntryId: string | null;
  /** Branch summaries: the abandoned leaf (`"root"` when it was the root). */
  fromId: string | null;
  fromHook: boolean;
  body: string;
  text: string;
  readFiles: string[];
  modifiedFiles: string[];
  tokens: number;
  inContext: boolean;
  /** See `core/rules/lostItems.ts`; absent when it could not be computed. */
  lost?: LostModel;
  span?: { targetId: string; count: number; tokens: number; fromId: string; toId: string };
}

/** Items of the summarized range that neither the summary nor the kept part contain. */
export interface LostModel {
  items: { kind: "path" | "command" | "identifier" | "number"; text: string; entryId: string; count: number }[];
  more: number;
  totals: Record<"path" | "command" | "identifier" | "number", { found: number; lost: number }>;
  truncated: boolean;
}

export const LOST_ITEMS_SHOWN = 200;
