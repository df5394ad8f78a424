/** The shapes of context surgery ("trim") every surface shows. Browser-safe. Tokens: pi's chars/4 estimate. */

export type TrimItemKind =
  | "user"
  | "assistant"
  | "toolResult"
  | "custom"
  | "bashExecution"
  | "system"
  | "compactionSummary"
  | "branchSummary"
  | "other";

/** The latest `context_edit` on the path wins, as in pi. */
export interface TrimEditState {
  kind: "removed" | "replaced";
  editId: string;
  note?: string;
  originalTokens: number;
  /** A scoped summary's note ("Summarize these messages"): what it replaces. */
  span?: { count: number; tokens: number; fromId: string; toId: string };
}

export interface TrimItem {
  entryId: string;
  kind: TrimItemKind;
  tool?: string;
  text: string;
  tokens: number;
  timestamp: string;
  /** User messages after it on the path (0 = in the current turn). */
  turnsAgo: number;
  contextIndex: number;
  /** pi's `appendContextEdit` accepts it as a target. */
  editable: boolean;
  notEditable?: string;
  images: number;
  failed: boolean;
  edit?: TrimEditState;
}

export type TrimSuggestionKind = "superseded-read" | "image" | "large-result" | "failed-output" | "abandoned-retry";

export interface TrimSuggestion {
  kind: TrimSuggestionKind;
  title: string;
  detail: string;
  actions: TrimRequestItem[];
  /** Pure estimate now − after (the planner's numbers). */
  tokensSaved: number;
}

export interface TrimListModel {
  leafId: string | null;
  /** Largest first (ties: newest first); at most the requested limit. */
  items: TrimItem[];
  itemCount: number;
  editedCount: number;
  suggestions: TrimSuggestion[];
  pureTokens: number;
}

export type TrimChoice = "default" | "remove" | "note" | "restore" | "strip-images";

export const TRIM_CHOICES: readonly TrimChoice[] = ["default", "remove", "note", "restore", "strip-images"];

export interface TrimRequestItem {
  entryId: string;
  choice: TrimChoice;
  note?: string;
}

export interface TrimPreviewEdit {
  targetId: string;
  kind: TrimItemKind;
  effect: "omit" | "note" | "replace" | "restore";
  cause: string;
  /** Not asked for: a cascade that keeps tool calls and results paired. */
  cascade: boolean;
  text: string;
  tokensBefore: number;
  tokensAfter: number;
  note?: string;
  bytes: number;
}

export interface TrimPreviewRefusal {
  targetId: string;
  code: string;
  message: string;
}

/** US dollars, where the model's prices are known. */
export interface TrimCostModel {
  /** The next request re-writes the cache from the earliest edit on (negative: it saves). */
  oneOffExtra: number;
  perRequestSaving: number;
  /** 1 = the next request; null = never within 10,000. */
  breakEvenRequests: number | null;
  warmRate: { perMillion: number; kind: "cacheRead" | "input" };
  cache: "none" | "warm" | "cold";
}

export interface TrimPreviewModel {
  leafId: string | null;
  edits: TrimPreviewEdit[];
  refused: TrimPreviewRefusal[];
  unchanged: string[];
  /** pi's projected estimate now (its footer: provider usage + estimate when usage is trusted). */
  tokensNow: number;
  methodNow: "usage+estimate" | "estimate";
  pureTokensNow: number;
  /** `pureTokensNow` when edits are planned, `tokensNow` when nothing would be written. */
  baselineTokens: number;
  /** pi recounts from chars/4 after an edit until its next answer. */
  tokensAfter: number;
  tokensSaved: number;
  /** pi has no estimate (its `estimateTokens` throws or counts NaN): where; the numbers are then ours. */
  failureNow?: string;
  failureAfter?: string;
  window: number | null;
  threshold: number | null;
  autoCompaction: boolean;
  percentNow: number | null;
  percentAfter: number | null;
  untilCompactionNow: number | null;
  untilCompactionAfter: number | null;
  compactsAfter: boolean;
  levelAfter: "normal" | "warning" | "error";
  cache?: {
    /** The cached prefix ends before the earliest edited item. */
    earliestEntryId: string;
    cachedTokens: number;
    resentTokens: number;
  };
  cost: TrimCostModel | null;
  priceNote?: string;
  bytes: number;
  restoreBytes: number;
  /** Tool calls/results providers would reject, before → after. */
  pairingErrorsBefore: number;
  pairingErrorsAfter: number;
}
