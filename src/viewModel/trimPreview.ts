/**
 * The preview of context edits before anything is written (`TrimPreviewModel`), from the planner's
 * plan (`core/rules/editPlan.ts` `ContextEditPreparation`) and pi's numbers at the leaf
 * (`InspectResult`): tokens now → after, the gauge's colour and the distance to auto-compaction
 * after, the prompt-cache effect (the earliest edited item ends the cached prefix: everything from
 * it on is sent uncached on the next request) and, where prices are known, its money
 * (`trimCost.ts`); cascades and refusals with their reasons. Plus the same preview in words
 * ({@link trimPreviewLines}) for the QuickPick, the CLI and notifications. No `vscode`.
 */

import type { ContextEditPreparation, EditCause, PlannedContextEdit } from "../core/rules/editPlan";
import type { InspectResult } from "../core/rules/inspect";
import { contentText } from "../core/rules/serialize";
import { formatCount, formatTokens, plural } from "../shared/format";
import type { TrimPreviewEdit, TrimPreviewModel } from "../shared/trim";
import { DEFAULT_WARNING_MARGIN, gaugeLevel } from "./gauge";
import type { SessionView } from "../core/read/overlay";
import { formatUsd, PRICE_UNKNOWN_NOTE, sessionPrices, trimEconomics, type TrimPrices } from "./trimCost";
import { describeEntries } from "./trimList";
import { trimKindOf, TRIM_KIND_WORDS } from "./trimActions";
import { describeRecord } from "./treeText";
import { oneLine } from "./treeTextLines";

/** Options of {@link buildTrimPreview}. */
export interface TrimPreviewOptions {
  /** `piContext.warning.margin` (the gauge's warning band). */
  warningMargin?: number;
  /** The session model's prices, when known. */
  prices?: TrimPrices;
  /** The prompt cache now (default `warm` when prices are given). */
  cache?: "none" | "warm" | "cold";
  /** Texts of the edited entries (`describeEntries`); default: the tree's text of each record. */
  texts?: ReadonlyMap<string, string>;
}

/** A planned edit's cause in words. */
export function causeText(cause: EditCause): string {
  switch (cause.kind) {
    case "requested":
      return "requested";
    case "results-of-omitted-call":
      return `removed with the assistant message that called it (${cause.assistantId})`;
    case "results-of-restored-call":
      return `restored with the assistant message that called it (${cause.assistantId})`;
    case "call-of-restored-result":
      return `restored because its tool result ${cause.resultId} is shown again`;
    case "orphan-of-plan":
      return "removed: it would answer no tool call any more";
  }
}

function noteOf(edit: PlannedContextEdit): string | undefined {
  if (edit.replacement === null || edit.effect === "restore") return undefined;
  return oneLine(contentText(edit.replacement.content, " "), 160);
}

/**
 * The preview of `prep`.
 * @param inspect pi's numbers at the same leaf (window, reserve, threshold, auto-compaction).
 */
export function buildTrimPreview(
  prep: ContextEditPreparation,
  inspect: InspectResult,
  options: TrimPreviewOptions = {},
): TrimPreviewModel {
  const byId = new Map(prep.projection.entries.map((e) => [e.record.id, e.record]));
  const edits: TrimPreviewEdit[] = prep.edits.map((e) => {
    const record = byId.get(e.targetId)!;
    const out: TrimPreviewEdit = {
      targetId: e.targetId,
      kind: trimKindOf(record),
      effect: e.effect,
      cause: causeText(e.cause),
      cascade: e.cause.kind !== "requested",
      text: options.texts?.get(e.targetId) ?? describeRecord(record).text,
      tokensBefore: e.tokensBefore,
      tokensAfter: e.tokensAfter,
      bytes: e.bytes,
    };
    const note = noteOf(e);
    if (note !== undefined) out.note = note;
    return out;
  });
  const window = inspect.contextWindow.value && inspect.contextWindow.value > 0 ? inspect.contextWindow.value : null;
  const threshold = inspect.threshold;
  const after = prep.tokensAfter.tokens;
  const autoCompaction = inspect.compactionEnabled.value;
  const margin = options.warningMargin ?? DEFAULT_WARNING_MARGIN;
  const model: TrimPreviewModel = {
    leafId: prep.leafId,
    edits,
    refused: prep.refused.map((r) => ({ targetId: r.action.targetId, code: r.code, message: r.message })),
    unchanged: prep.unchanged.map((a) => a.targetId),
    tokensNow: prep.tokensBefore.tokens,
    methodNow: prep.tokensBefore.lastUsageIndex !== null ? "usage+estimate" : "estimate",
    pureTokensNow: prep.pureTokensBefore,
    tokensAfter: after,
    tokensSaved: prep.pureTokensBefore - after,
    window,
    threshold,
    autoCompaction,
    percentNow: window ? (prep.tokensBefore.tokens / window) * 100 : null,
    percentAfter: window ? (after / window) * 100 : null,
    untilCompactionNow: threshold !== null ? threshold - prep.tokensBefore.tokens : null,
    untilCompactionAfter: threshold !== null ? threshold - after : null,
    compactsAfter: autoCompaction && threshold !== null && after > threshold,
    levelAfter: gaugeLevel({ ...inspect, contextTokens: after }, margin),
    cost: null,
    bytes: prep.bytes,
    restoreBytes: prep.edits.filter((e) => e.effect === "restore").reduce((s, e) => s + e.bytes, 0),
    pairingErrorsBefore: prep.pairingBefore.errors,
    pairingErrorsAfter: prep.pairingAfter.errors,
  };
  if (prep.earliest) {
    const cachedTokens = prep.earliest.unchangedPrefixTokens;
    model.cache = {
      earliestEntryId: prep.earliest.entryId,
      cachedTokens,
      resentTokens: Math.max(0, after - cachedTokens),
    };
    if (options.prices)
      model.cost = trimEconomics({
        tokensBefore: prep.pureTokensBefore,
        tokensAfter: after,
        rewrittenTokens: model.cache.resentTokens,
        prices: options.prices,
        cache: options.cache ?? "warm",
      });
    else model.priceNote = PRICE_UNKNOWN_NOTE;
  }
  return model;
}

/**
 * The preview every surface shows for a plan on `session`: {@link buildTrimPreview} with the texts
 * of the edited items (`describeEntries`) and the session model's prices when known.
 */
export function sessionTrimPreview(
  session: SessionView,
  prep: ContextEditPreparation,
  inspect: InspectResult,
  warningMargin?: number,
): TrimPreviewModel {
  const prices = sessionPrices(inspect);
  return buildTrimPreview(prep, inspect, {
    texts: describeEntries(
      session,
      prep.edits.map((e) => e.targetId),
    ),
    ...(warningMargin !== undefined ? { warningMargin } : {}),
    ...(prices ? { prices } : {}),
  });
}

/** An edit's effect in words: `removed`, `replaced by a note`, `replaced`, `restored`. */
export function effectText(effect: TrimPreviewEdit["effect"]): string {
  switch (effect) {
    case "omit":
      return "removed";
    case "note":
      return "replaced by a note";
    case "replace":
      return "replaced";
    case "restore":
      return "restored";
  }
}

/** The headline: `Context 12,345 → 8,000 tokens (saves 4,345)`. */
export function trimHeadline(p: TrimPreviewModel): string {
  const saved = p.tokensSaved >= 0 ? `saves ${formatCount(p.tokensSaved)}` : `adds ${formatCount(-p.tokensSaved)}`;
  return `Context ${formatCount(p.pureTokensNow)} → ${formatCount(p.tokensAfter)} tokens (${saved})`;
}

/**
 * The preview in words, one fact per line: what is written, tokens, gauge and auto-compaction, the
 * cache effect, cascades, refusals, unchanged items, bytes. Session text is single-line and plain.
 */
export function trimPreviewLines(p: TrimPreviewModel): string[] {
  const lines: string[] = [];
  const requested = p.edits.filter((e) => !e.cascade).length;
  const cascades = p.edits.length - requested;
  lines.push(
    p.edits.length === 0
      ? "Nothing would be written."
      : `Appends ${plural(p.edits.length, "context edit")} in one write (${formatCount(p.bytes)} bytes)${cascades ? `, ${cascades} of them to keep tool calls and results paired` : ""}.`,
  );
  lines.push(
    `${trimHeadline(p)} by pi's estimate (chars/4). pi shows ${formatCount(p.tokensNow)} now${p.methodNow === "usage+estimate" ? " (provider usage + estimate)" : ""}; after an edit it counts from chars/4 until its next answer.`,
  );
  if (p.window !== null) {
    const pct = (v: number | null) => (v === null ? "?" : `${v.toFixed(1)}%`);
    let gauge = `Gauge ${pct(p.percentNow)} → ${pct(p.percentAfter)} of ${formatTokens(p.window)}`;
    if (p.threshold !== null && p.autoCompaction) {
      gauge +=
        p.untilCompactionAfter !== null && p.untilCompactionAfter >= 0
          ? `; ${formatCount(p.untilCompactionAfter)} tokens until auto-compaction after (${nowText(p.untilCompactionNow ?? 0)})`
          : `; still above the auto-compaction threshold (${formatCount(p.threshold)}): pi compacts at its next check`;
    } else if (!p.autoCompaction) gauge += " (auto-compaction off)";
    lines.push(`${gauge}.`);
  }
  if (p.cache) {
    lines.push(
      `Prompt cache: the next request sends ≈${formatCount(p.cache.resentTokens)} tokens uncached (everything from ${p.cache.earliestEntryId} on); the ${formatCount(p.cache.cachedTokens)} tokens before it stay cached.`,
    );
    if (p.cost)
      lines.push(
        `Cost: ${formatUsd(p.cost.oneOffExtra)} once on the next request, then ${formatUsd(p.cost.perRequestSaving)} less per request${p.cost.breakEvenRequests !== null ? ` (pays off after ${plural(p.cost.breakEvenRequests, "request")})` : ""}.`,
      );
    else if (p.priceNote) lines.push(p.priceNote);
  }
  for (const e of p.edits.filter((x) => x.cascade))
    lines.push(`Also ${effectText(e.effect)}: ${TRIM_KIND_WORDS[e.kind]} ${e.targetId} — ${e.cause}.`);
  for (const r of p.refused) lines.push(`Refused ${r.targetId}: ${r.message}`);
  if (p.unchanged.length) lines.push(`Unchanged (already shown that way): ${p.unchanged.join(", ")}.`);
  if (p.restoreBytes > 0)
    lines.push(
      `Restoring writes the original content into the session file again: ${formatCount(p.restoreBytes)} bytes.`,
    );
  if (p.pairingErrorsBefore > p.pairingErrorsAfter)
    lines.push(
      `Repairs ${plural(p.pairingErrorsBefore - p.pairingErrorsAfter, "tool result")} providers would reject now.`,
    );
  return lines;
}

/** Tokens until auto-compaction now, in words: "5,000 now", or "540 over now" past the threshold. */
function nowText(until: number): string {
  return until >= 0 ? `${formatCount(until)} now` : `${formatCount(-until)} over now`;
}
