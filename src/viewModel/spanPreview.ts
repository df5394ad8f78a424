/**
 * The preview of "Summarize these messages" in words. The next request sends everything from the
 * span's first message on uncached (with Anthropic message threads, the full request once).
 */

import type { SpanSummaryPlan } from "../core/flows/spanSummary";
import type { CompactionPrice } from "../core/flows/planPrice";
import type { InspectResult } from "../core/rules/inspect";
import { formatCount, formatTokenRange, formatTokens, pluralText } from "../shared/format";
import { priceLines } from "./compactionPrice";
import { KIND_NAMES, describeRecord } from "./treeText";
import * as l10n from "@vscode/l10n";

/** What the preview shows (numbers; {@link spanPreviewLines} words them). */
export interface SpanPreviewModel {
  fromId: string;
  toId: string;
  requested: { fromId: string; toId: string };
  widenedBy: string[];
  messageCount: number;
  spanTokens: number;
  targetId: string;
  targetKind: string;
  header: string;
  tokensBefore: number;
  /** After, without the summary's text (exact), and with it (a range). */
  tokensAfterWithoutSummary: number;
  tokensAfter: { low: number; high: number };
  summaryTokens: { low: number; high: number };
  window: number | null;
  percentAfter: number | null;
  cachedTokens: number;
  resentTokens: number;
  threads: boolean;
  edits: number;
  bytes: number;
  price: CompactionPrice;
}

/** Build the preview of a plan (`inspect`: the session's numbers, for the window). */
export function buildSpanPreview(
  plan: SpanSummaryPlan,
  inspect: InspectResult,
  price: CompactionPrice,
): SpanPreviewModel {
  const span = plan.span;
  const window = inspect.contextWindow.value;
  const prefix = plan.edits.earliest?.unchangedPrefixTokens ?? 0;
  const high = plan.estimatedTokensAfterRange.high;
  const target = plan.session.byId.get(span.targetId);
  const provider = inspect.model?.provider ?? "";
  return {
    fromId: span.fromId,
    toId: span.toId,
    requested: span.requested,
    widenedBy: span.widenedBy,
    messageCount: span.messages.length,
    spanTokens: span.spanTokens,
    targetId: span.targetId,
    targetKind: target ? KIND_NAMES[describeRecord(target).kind] : span.targetRole,
    header: plan.edits.drafts.length ? headerOf(plan) : "",
    tokensBefore: plan.edits.pureTokensBefore,
    tokensAfterWithoutSummary: plan.edits.tokensAfter.tokens,
    tokensAfter: plan.estimatedTokensAfterRange,
    summaryTokens: plan.estimatedSummaryRange,
    window: window && window > 0 ? window : null,
    percentAfter: window && window > 0 ? (high / window) * 100 : null,
    cachedTokens: prefix,
    resentTokens: Math.max(0, high - prefix),
    threads: provider === "anthropic" || provider === "openai-codex",
    edits: plan.edits.drafts.length,
    bytes: plan.edits.bytes,
    price,
  };
}

function headerOf(plan: SpanSummaryPlan): string {
  const target = plan.edits.drafts.find((d) => d.replacement !== null)?.replacement;
  const content = target?.content;
  const text = typeof content === "string" ? content : (content?.[0] as { text?: string } | undefined)?.text;
  return (text ?? "").split("\n")[0] ?? "";
}

/** The preview as lines (quick pick details, the details document, the CLI). */
export function spanPreviewLines(p: SpanPreviewModel): string[] {
  const lines = [
    l10n.t(
      "Summarizes {0} (≈{1} tokens) from {2} to {3} into one note in place of the first one ({4} {5}); the others are omitted from the context — nothing is deleted, Restore brings them back.",
      pluralText(p.messageCount, l10n.t("{0} message"), l10n.t("{0} messages")),
      formatCount(p.spanTokens),
      p.fromId,
      p.toId,
      p.targetKind,
      p.targetId,
    ),
  ];
  if (p.widenedBy.length)
    lines.push(
      l10n.t(
        "Widened to whole tool call / result groups (a call and its results are never split): {0} added to the span you chose ({1} to {2}).",
        p.widenedBy.join(", "),
        p.requested.fromId,
        p.requested.toId,
      ),
    );
  lines.push(
    l10n.t(
      "Tokens {0} → {1} by pi's estimate ({2} without the summary, exact; the summary {3}, a guess).",
      formatCount(p.tokensBefore),
      formatTokenRange(p.tokensAfter),
      formatCount(p.tokensAfterWithoutSummary),
      formatTokenRange(p.summaryTokens),
    ),
  );
  if (p.window !== null && p.percentAfter !== null)
    lines.push(l10n.t("Gauge after: up to {0}% of {1}.", p.percentAfter.toFixed(1), formatTokens(p.window)));
  lines.push(
    l10n.t(
      "Prompt cache: the next request sends ≈{0} tokens uncached (everything from {1} on); the {2} tokens before it stay cached.",
      formatCount(p.resentTokens),
      p.fromId,
      formatCount(p.cachedTokens),
    ),
  );
  if (p.threads)
    lines.push(
      l10n.t(
        "The session's model continues from its previous reply (Anthropic message threads): after an edit pi sends the full request once instead of only the new messages.",
      ),
    );
  lines.push(...priceLines(p.price));
  lines.push(
    l10n.t(
      "Appends {0} in one write ({1} bytes + the summary).",
      pluralText(p.edits, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
      formatCount(p.bytes),
    ),
  );
  return lines;
}
