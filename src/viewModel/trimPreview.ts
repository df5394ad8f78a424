/** The preview of context edits before anything is written, and the same in words. */

import { estimateFailureText } from "../core/rules/estimateFailure";
import type { ContextEditPreparation, EditCause, PlannedContextEdit } from "../core/rules/editPlan";
import type { InspectResult } from "../core/rules/inspect";
import { contentText } from "../core/rules/serialize";
import { formatCount, formatDollars, formatTokens, pluralText } from "../shared/format";
import type { TrimPreviewEdit, TrimPreviewModel } from "../shared/trim";
import { DEFAULT_WARNING_MARGIN, gaugeLevel } from "./gauge";
import type { SessionView } from "../core/read/overlay";
import { priceUnknownNote, sessionPrices, trimEconomics, type TrimPrices } from "./trimCost";
import { describeEntries } from "./trimList";
import { trimKindOf, TRIM_KIND_LABELS } from "./trimActions";
import { describeRecord } from "./treeText";
import { oneLine } from "./treeTextLines";
import * as l10n from "@vscode/l10n";

/** Options of {@link buildTrimPreview}. */
export interface TrimPreviewOptions {
  warningMargin?: number;
  prices?: TrimPrices;
  cache?: "none" | "warm" | "cold";
  texts?: ReadonlyMap<string, string>;
}

/** A planned edit's cause in words. */
export function causeText(cause: EditCause): string {
  switch (cause.kind) {
    case "requested":
      return "requested";
    case "results-of-omitted-call":
      return l10n.t("removed with the assistant message that called it ({0})", cause.assistantId);
    case "results-of-restored-call":
      return l10n.t("restored with the assistant message that called it ({0})", cause.assistantId);
    case "call-of-restored-result":
      return l10n.t("restored because its tool result {0} is shown again", cause.resultId);
    case "orphan-of-plan":
      return l10n.t("removed: it would answer no tool call any more");
  }
}

function noteOf(edit: PlannedContextEdit): string | undefined {
  if (edit.replacement === null || edit.effect === "restore") return undefined;
  return oneLine(contentText(edit.replacement.content, " "), 160);
}

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
    baselineTokens: prep.baselineTokens,
    tokensAfter: after,
    tokensSaved: prep.baselineTokens - after,
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
  if (prep.estimateFailureBefore) model.failureNow = estimateFailureText(prep.estimateFailureBefore);
  if (prep.estimateFailureAfter) model.failureAfter = estimateFailureText(prep.estimateFailureAfter);
  if (prep.earliest) {
    const cachedTokens = prep.earliest.unchangedPrefixTokens;
    model.cache = {
      earliestEntryId: prep.earliest.entryId,
      cachedTokens,
      resentTokens: Math.max(0, after - cachedTokens),
    };
    if (options.prices)
      model.cost = trimEconomics({
        tokensBefore: prep.baselineTokens,
        tokensAfter: after,
        rewrittenTokens: model.cache.resentTokens,
        prices: options.prices,
        cache: options.cache ?? "warm",
      });
    else model.priceNote = priceUnknownNote();
  }
  return model;
}

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
      return l10n.t("replaced by a note");
    case "replace":
      return "replaced";
    case "restore":
      return "restored";
  }
}

/** `restore` when every edit brings an original back, `trim` when none does, else `edit`. */
export function trimVerb(p: Pick<TrimPreviewModel, "edits">): "trim" | "restore" | "edit" {
  const asked = p.edits.filter((e) => !e.cascade);
  if (asked.length > 0 && asked.every((e) => e.effect === "restore")) return "restore";
  if (asked.every((e) => e.effect !== "restore")) return "trim";
  return "edit";
}

export function trimHeadline(p: TrimPreviewModel): string {
  // where pi has no number, never call pi-context's count pi's
  if (p.edits.length === 0 && p.failureNow) return l10n.t("Context unchanged (pi has no estimate)");
  if (p.failureNow || p.failureAfter)
    return l10n.t(
      "Context {0} → {1}",
      p.failureNow ? l10n.t("(pi has no estimate)") : l10n.t("{0} tokens", formatCount(p.baselineTokens)),
      p.failureAfter ? l10n.t("(pi has no estimate)") : l10n.t("{0} tokens", formatCount(p.tokensAfter)),
    );
  if (p.edits.length === 0) return l10n.t("Context unchanged ({0} tokens)", formatCount(p.tokensNow));
  const saved = p.tokensSaved >= 0 ? `saves ${formatCount(p.tokensSaved)}` : `adds ${formatCount(-p.tokensSaved)}`;
  return l10n.t("Context {0} → {1} tokens ({2})", formatCount(p.baselineTokens), formatCount(p.tokensAfter), saved);
}

export function trimPreviewLines(p: TrimPreviewModel): string[] {
  const lines: string[] = [];
  const requested = p.edits.filter((e) => !e.cascade).length;
  const cascades = p.edits.length - requested;
  lines.push(
    p.edits.length === 0
      ? l10n.t("Nothing would be written.")
      : l10n.t(
          "Appends {0} in one write ({1} bytes){2}.",
          pluralText(p.edits.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
          formatCount(p.bytes),
          cascades ? l10n.t(", {0} of them to keep tool calls and results paired", cascades) : "",
        ),
  );
  if (p.failureNow || p.failureAfter) {
    lines.push(`${trimHeadline(p)}.`);
    if (p.failureNow) lines.push(l10n.t("Now: {0}.", p.failureNow));
    if (p.failureAfter) lines.push(l10n.t("After the edits: {0}.", p.failureAfter));
    else if (p.edits.length > 0)
      lines.push(l10n.t("The edits give pi a number again (chars/4 until its next answer)."));
  } else if (p.edits.length === 0) lines.push(`${trimHeadline(p)}.`);
  else
    lines.push(
      l10n.t(
        "{0} by pi's estimate (chars/4). pi shows {1} now{2}; after an edit it counts from chars/4 until its next answer.",
        trimHeadline(p),
        formatCount(p.tokensNow),
        p.methodNow === "usage+estimate" ? l10n.t(" (provider usage + estimate)") : "",
      ),
    );
  if (p.window !== null && p.edits.length > 0 && !p.failureNow && !p.failureAfter) {
    const pct = (v: number | null) => (v === null ? "?" : `${v.toFixed(1)}%`);
    let gauge = l10n.t("Gauge {0} → {1} of {2}", pct(p.percentNow), pct(p.percentAfter), formatTokens(p.window));
    if (p.threshold !== null && p.autoCompaction) {
      gauge +=
        p.untilCompactionAfter !== null && p.untilCompactionAfter >= 0
          ? l10n.t(
              "; {0} tokens until auto-compaction after ({1})",
              formatCount(p.untilCompactionAfter),
              nowText(p.untilCompactionNow ?? 0),
            )
          : l10n.t(
              "; still above the auto-compaction threshold ({0}): pi compacts at its next check",
              formatCount(p.threshold),
            );
    } else if (!p.autoCompaction) gauge += l10n.t(" (auto-compaction off)");
    lines.push(`${gauge}.`);
  }
  if (p.cache) {
    lines.push(
      l10n.t(
        "Prompt cache: the next request sends ≈{0} tokens uncached (everything from {1} on); the {2} tokens before it stay cached.",
        formatCount(p.cache.resentTokens),
        p.cache.earliestEntryId,
        formatCount(p.cache.cachedTokens),
      ),
    );
    if (p.cost && p.cost.perRequestSaving < 0)
      // a restore: every later request costs more, never "-$x less"
      lines.push(
        l10n.t(
          "Cost: {0} once on the next request, then {1} more per request.",
          formatDollars(p.cost.oneOffExtra),
          formatDollars(-p.cost.perRequestSaving),
        ),
      );
    else if (p.cost)
      lines.push(
        l10n.t(
          "Cost: {0} once on the next request, then {1} less per request{2}.",
          formatDollars(p.cost.oneOffExtra),
          formatDollars(p.cost.perRequestSaving),
          p.cost.breakEvenRequests !== null
            ? l10n.t(
                " (pays off after {0})",
                pluralText(p.cost.breakEvenRequests, l10n.t("{0} request"), l10n.t("{0} requests")),
              )
            : "",
        ),
      );
    else if (p.priceNote) lines.push(p.priceNote);
  }
  for (const e of p.edits.filter((x) => x.cascade))
    lines.push(l10n.t("Also {0}: {1} {2} — {3}.", effectText(e.effect), TRIM_KIND_LABELS[e.kind], e.targetId, e.cause));
  for (const r of p.refused) lines.push(l10n.t("Refused {0}: {1}", r.targetId, r.message));
  if (p.unchanged.length) lines.push(l10n.t("Unchanged (already shown that way): {0}.", p.unchanged.join(", ")));
  if (p.restoreBytes > 0)
    lines.push(
      l10n.t(
        "Restoring writes the original content into the session file again: {0} bytes.",
        formatCount(p.restoreBytes),
      ),
    );
  if (p.pairingErrorsBefore > p.pairingErrorsAfter)
    lines.push(
      l10n.t(
        "Repairs {0} providers would reject now.",
        pluralText(p.pairingErrorsBefore - p.pairingErrorsAfter, l10n.t("{0} tool result"), l10n.t("{0} tool results")),
      ),
    );
  return lines;
}

function nowText(until: number): string {
  return until >= 0 ? l10n.t("{0} now", formatCount(until)) : l10n.t("{0} over now", formatCount(-until));
}
