/**
 * How large a new compaction summary will be, as a range — the one guess in the compaction preview
 * ("tokens after" = the kept part and the checkpoint, both exact, + this). No `vscode` import.
 */

/** A token range, both ends included. */
export interface TokenRange {
  low: number;
  high: number;
}

/**
 * Tokens a new summary has at the least: none beyond its file lists. pi's format asks for headings,
 * but a summarizer may answer with a few words (a trial with a terse model: pi's result was 25
 * tokens under a 50-token floor, so the range's low end was no bound).
 */
export const SUMMARY_FLOOR_TOKENS = 0;
/** Room per summary request for the format's headings and bullets beyond the content. */
export const SUMMARY_FORMAT_TOKENS = 100;

/**
 * The new summary's size as a range, from what is summarized (pi's estimate, chars/4): at least
 * {@link SUMMARY_FLOOR_TOKENS} (+ what is fixed: the file lists, a reused previous summary), at most the previous summary (kept and updated) +
 * the new content retold (all of it when small, a quarter beyond 200 tokens) + the format
 * ({@link SUMMARY_FORMAT_TOKENS} per request), never more than the requests' output limits. A split
 * turn whose history is empty reuses the previous summary as it is. pi's file-list blocks are added
 * exactly. Checked against the real summaries of the pi 1.6.0 fixtures (`summaryEstimate.test.ts`).
 */
export function summaryTokenRange(input: {
  /** What the summarizer gets to read: the serialised conversation(s), pi's chars/4. */
  summarizedTokens: number;
  previousSummary: string | undefined;
  /** Summary requests made (1, or 2 for a split turn with history). */
  parts: number;
  /** A split turn with an empty history: pi puts the previous summary in front unchanged. */
  reusesPreviousSummary: boolean;
  maxOutputTokens: number;
  fileListsText: string;
}): TokenRange {
  const body = input.previousSummary?.split("\n\n<read-files>")[0]?.split("\n\n<modified-files>")[0] ?? "";
  const previous = Math.ceil(body.length / 4);
  const s = input.summarizedTokens;
  const retold = Math.min(s, 200 + Math.ceil(s / 4));
  const cap = input.maxOutputTokens * input.parts;
  const fixed = input.reusesPreviousSummary ? previous : 0;
  const low = fixed + Math.min(SUMMARY_FLOOR_TOKENS, cap);
  const high =
    fixed + Math.min(cap, (input.reusesPreviousSummary ? 0 : previous) + retold + SUMMARY_FORMAT_TOKENS * input.parts);
  const lists = Math.ceil(input.fileListsText.length / 4);
  return { low: low + lists, high: Math.max(low, high) + lists };
}
