/**
 * The shapes of context surgery ("trim") that every surface shows: the list of model-visible items
 * on the current path with suggestions (`viewModel/trimList.ts` builds it), the preview of a set of
 * edits (`viewModel/trimPreview.ts`), and what a user asks for. Browser-safe (no `vscode`, no
 * `node:`): the panel's webview renders these, the QuickPick, the tree and the CLI word them.
 *
 * All token numbers are pi's estimate (`estimateTokens`, chars/4) in whole tokens; bytes are UTF-8.
 */

/** What a context item is (the message it contributes). */
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

/** How an item is edited in the context now (the latest `context_edit` on the path wins, as in pi). */
export interface TrimEditState {
  /** `removed`: `replacement: null`; `replaced`: a replacement content (a note, shortened text…). */
  kind: "removed" | "replaced";
  /** The `context_edit` entry. */
  editId: string;
  /** The replacement's text, one line, shortened (replaced items). */
  note?: string;
  /** pi's estimate of the original content, in tokens (what a restore brings back). */
  originalTokens: number;
  /** The replacement is a scoped summary's note ("Summarize these messages"): what it replaces. */
  span?: { count: number; tokens: number; fromId: string; toId: string };
}

/** One model-visible item of the context (or one an edit removed from it). */
export interface TrimItem {
  entryId: string;
  kind: TrimItemKind;
  /** Tool results: the call as pi's `/tree` shows it (`read: src/a.ts`); assistants: their calls (`→ read ×2`). */
  tool?: string;
  /** One line of its text (plain, at most 120 characters). */
  text: string;
  /** pi's estimate of what it contributes now (after its edit), in tokens. */
  tokens: number;
  /** The entry's time (ISO). */
  timestamp: string;
  /** User messages after it on the path (0 = in the current turn). */
  turnsAgo: number;
  /** Position among the context entries (0 = oldest). */
  contextIndex: number;
  /** pi's `appendContextEdit` accepts it as a target. */
  editable: boolean;
  /** Why it cannot be edited (when not editable). */
  notEditable?: string;
  /** Image blocks in its content. */
  images: number;
  /** A tool result with `isError`, or a failed / aborted assistant answer. */
  failed: boolean;
  /** Set when a context edit changes it now. */
  edit?: TrimEditState;
}

/** The kinds of suggestions, in the order they are listed. */
export type TrimSuggestionKind = "superseded-read" | "image" | "large-result" | "failed-output" | "abandoned-retry";

/** A suggestion: a set of items and what to do with them. */
export interface TrimSuggestion {
  kind: TrimSuggestionKind;
  /** e.g. `3 older reads of files read again later`. */
  title: string;
  /** Why these, in a sentence. */
  detail: string;
  /** The actions it proposes (one per item). */
  actions: TrimRequestItem[];
  /** pi's estimate of what the context loses (pure estimate now − after, the planner's numbers), in tokens. */
  tokensSaved: number;
}

/** The list of a session's context items at its leaf. */
export interface TrimListModel {
  leafId: string | null;
  /** Largest first (ties: newest first); at most the requested limit. */
  items: TrimItem[];
  /** All items in the context (the list may be cut). */
  itemCount: number;
  /** Items an edit changes now. */
  editedCount: number;
  suggestions: TrimSuggestion[];
  /** pi's pure estimate of the context now (the basis of `tokensSaved`), in tokens. */
  pureTokens: number;
}

/**
 * What the user asks for one item: the default (a note for tool results, removal otherwise), remove
 * it, replace it with a note, bring the original back, or keep it without its images.
 */
export type TrimChoice = "default" | "remove" | "note" | "restore" | "strip-images";

/** Every {@link TrimChoice} (for validation). */
export const TRIM_CHOICES: readonly TrimChoice[] = ["default", "remove", "note", "restore", "strip-images"];

/** One item of a request. `note`: the replacement text for `note` (default: pi-context's note of the item). */
export interface TrimRequestItem {
  entryId: string;
  choice: TrimChoice;
  note?: string;
}

/** One planned `context_edit`, for the preview. */
export interface TrimPreviewEdit {
  targetId: string;
  kind: TrimItemKind;
  /** `omit` (removed), `note` (a tool result replaced by a note), `replace`, `restore`. */
  effect: "omit" | "note" | "replace" | "restore";
  /** Why it is in the plan, in words: `requested`, `result of a removed call (a1b2c3d4)`, … */
  cause: string;
  /** True when it was not asked for (a cascade that keeps tool calls and results paired). */
  cascade: boolean;
  text: string;
  tokensBefore: number;
  tokensAfter: number;
  /** The replacement text (notes and replacements), one line. */
  note?: string;
  bytes: number;
}

/** A request the planner refused (nothing is written for it). */
export interface TrimPreviewRefusal {
  targetId: string;
  code: string;
  message: string;
}

/** Money of the prompt-cache effect, where the model's prices are known (US dollars). */
export interface TrimCostModel {
  /** What the next request costs more because the cache is re-written from the earliest edit on (negative: it saves). */
  oneOffExtra: number;
  /** What every later request costs less. */
  perRequestSaving: number;
  /** Requests until the trim has paid for itself (1 = the next one); null = never within 10,000. */
  breakEvenRequests: number | null;
  /** The warm-prompt rate used (per million tokens) and what it is. */
  warmRate: { perMillion: number; kind: "cacheRead" | "input" };
  /** The prompt cache now: not used by the provider, warm, or expired. */
  cache: "none" | "warm" | "cold";
}

/** The preview of a set of edits before anything is written. */
export interface TrimPreviewModel {
  leafId: string | null;
  edits: TrimPreviewEdit[];
  refused: TrimPreviewRefusal[];
  /** Requested items that already show what was asked (nothing to write for them). */
  unchanged: string[];
  /** pi's projected estimate now (what its footer shows: provider usage + estimate when usage is trusted). */
  tokensNow: number;
  /** `usage+estimate` or `estimate` (how `tokensNow` was counted). */
  methodNow: "usage+estimate" | "estimate";
  /** pi's pure chars/4 estimate now. */
  pureTokensNow: number;
  /**
   * The context now on the basis of `tokensAfter` (what "now → after" shows): `pureTokensNow` when
   * edits are planned, `tokensNow` when nothing would be written (pi's number does not move).
   */
  baselineTokens: number;
  /** pi's estimate after the edits (pi recounts from chars/4 after an edit until its next answer; unchanged without edits). */
  tokensAfter: number;
  /** `baselineTokens − tokensAfter` (negative: the context grows). */
  tokensSaved: number;
  /**
   * pi has no estimate now / after the edits (its `estimateTokens` throws or counts NaN): the
   * sentence saying where. The numbers above are then pi-context's own counts.
   */
  failureNow?: string;
  failureAfter?: string;
  window: number | null;
  /** `window − reserveTokens` (null when unknown). */
  threshold: number | null;
  autoCompaction: boolean;
  percentNow: number | null;
  percentAfter: number | null;
  /** `threshold − tokens`, now (pi's headline) and after. */
  untilCompactionNow: number | null;
  untilCompactionAfter: number | null;
  /** pi would auto-compact at its next check after the edits (`tokensAfter > threshold`, auto-compaction on). */
  compactsAfter: boolean;
  /** The gauge's colour after (same rule as the status bar). */
  levelAfter: "normal" | "warning" | "error";
  /** The prompt-cache effect: absent without edits. */
  cache?: {
    /** The earliest edited item: the cached prefix ends before it. */
    earliestEntryId: string;
    /** Tokens before it (system prompt + earlier messages): still cached on the next request. */
    cachedTokens: number;
    /** Tokens from it on, after the edits: sent uncached on the next request. */
    resentTokens: number;
  };
  /** Money, where the model's prices are known (else null, and `priceNote` says why). */
  cost: TrimCostModel | null;
  priceNote?: string;
  /** Bytes the append adds to the session file (all edits), and the part restores take. */
  bytes: number;
  restoreBytes: number;
  /** Pairing errors (tool results providers would reject) before → after. */
  pairingErrorsBefore: number;
  pairingErrorsAfter: number;
}
