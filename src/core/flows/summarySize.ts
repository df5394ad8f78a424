/** The new compaction summary's size as a range: the one guess in the compaction preview. */

export interface TokenRange {
  low: number;
  high: number;
}

/** A summarizer may answer with a few words, below any floor that pi's headings suggest. */
export const SUMMARY_FLOOR_TOKENS = 0;
/** Per request: the format's headings and bullets beyond the content. */
export const SUMMARY_FORMAT_TOKENS = 100;

/**
 * From pi's chars/4 estimate: at least the fixed part (file lists, a reused summary), at most the
 * previous summary + the new content retold (a quarter beyond 200 tokens) + the format, capped by the
 * output limits. Checked against pi 1.6.0 fixtures' real summaries (`summaryEstimate.test.ts`).
 */
export function summaryTokenRange(input: {
  /** The serialised conversation(s), pi's chars/4. */
  summarizedTokens: number;
  previousSummary: string | undefined;
  /** 1, or 2 for a split turn with history. */
  parts: number;
  /** pi puts the previous summary in front unchanged. */
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
