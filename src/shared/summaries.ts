/**
 * The summaries of the panel's protocol (`protocol.ts` re-exports them): compactions, branch
 * summaries and scoped summaries ("Summarize these messages") on the current path, and what each
 * lost. Browser-safe: no `vscode`, no `node:`.
 */

/** A compaction, branch summary or scoped summary on the current path. */
export interface SummaryModel {
  entryId: string;
  /** `span_summary`: a scoped summary ("Summarize these messages"); `entryId` is its `context_edit`. */
  type: "compaction" | "branch_summary" | "span_summary";
  timestamp: string;
  /** Compactions: pi's `tokensBefore`. */
  tokensBefore: number | null;
  /** Compactions: the first entry kept verbatim. */
  firstKeptEntryId: string | null;
  /** Branch summaries: the abandoned leaf (`"root"` when it was the root). */
  fromId: string | null;
  fromHook: boolean;
  /** The summary body without the trailing `<read-files>`/`<modified-files>` blocks (markdown). */
  body: string;
  /** The whole summary text as written (for diffs). */
  text: string;
  /** The file blocks parsed from the summary text. */
  readFiles: string[];
  modifiedFiles: string[];
  /** Estimated tokens of the summary message. */
  tokens: number;
  /** True when the summary is part of the current context (not summarized away by a later compaction). */
  inContext: boolean;
  /** Compactions and scoped summaries: what the summary lost (see `core/rules/lostItems.ts`); absent when it could not be computed. */
  lost?: LostModel;
  /** Scoped summaries: the message carrying the note and the span it replaced. */
  span?: { targetId: string; count: number; tokens: number; fromId: string; toId: string };
}

/** Items of a compaction's summarized range that neither its summary nor its kept part contain. */
export interface LostModel {
  /** At most {@link LOST_ITEMS_SHOWN}, in kind order (path, command, identifier, number), first occurrence first. */
  items: { kind: "path" | "command" | "identifier" | "number"; text: string; entryId: string; count: number }[];
  /** Lost items not listed (beyond the cap). */
  more: number;
  totals: Record<"path" | "command" | "identifier" | "number", { found: number; lost: number }>;
  truncated: boolean;
}

/** Lost items sent to the webview per compaction. */
export const LOST_ITEMS_SHOWN = 200;
