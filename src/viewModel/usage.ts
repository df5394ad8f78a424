/** Usage and cost (`core/rules/economics.ts`) as every surface words them. Pure. */

import type { InspectResult } from "../core/rules/inspect";
import type { ColdCause, CacheTurn } from "../core/rules/cache";
import { hasForecast } from "../core/rules/forecast";
import type { ModelPrices } from "../core/rules/cost";
import { windowSourceText } from "./sourceText";
import { formatCount, formatDollars, formatPricePerMillion, formatTokens, pluralText } from "../shared/format";
import type { HistoryPoint, UsageModel } from "../shared/protocol";
import * as l10n from "@vscode/l10n";

/** A duration as `12m`, `1h 05m`, `40s`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** One cause of a cold turn in words (plain text). */
export function coldCauseText(cause: ColdCause): string {
  switch (cause.kind) {
    case "compaction":
      return l10n.t("a compaction ({0}) replaced the history", cause.entryId);
    case "branch-summary":
      return l10n.t("a branch summary ({0}) changed the context", cause.entryId);
    case "context-edit":
      return l10n.t("a context edit ({0}) changed an earlier message", cause.entryId);
    case "model-change":
      return l10n.t("the model changed ({0} → {1})", cause.from, cause.to);
    case "thinking-change":
      return l10n.t("the thinking level changed to {0}", cause.to);
    case "system-prompt":
      return l10n.t("the system prompt changed ({0})", cause.entryId);
    case "pause":
      return l10n.t("a pause of {0} (the cache lives {1})", formatDuration(cause.idleMs), formatDuration(cause.ttlMs));
    case "unknown":
      return l10n.t("nothing in the session explains it (the provider may have evicted the cache)");
  }
}

/** The history point's cache fields of a turn (`HistoryPoint.cache`). */
export function pointCache(turn: CacheTurn): NonNullable<HistoryPoint["cache"]> {
  return {
    hitRate: turn.hitRate,
    promptTokens: turn.promptTokens,
    cacheRead: turn.cacheRead,
    ...(turn.cold
      ? {
          cold: {
            missedTokens: turn.cold.missedTokens,
            missedCost: turn.cold.missedCost,
            counted: turn.cold.counted,
            causes: turn.cold.causes.map(coldCauseText),
          },
        }
      : {}),
  };
}

/** `$3/M in · $15/M out · $0.30/M cache read · $3.75/M cache write`. */
export function pricesText(prices: ModelPrices): string {
  const rate = formatPricePerMillion;
  const parts = [l10n.t("{0} in", rate(prices.input)), l10n.t("{0} out", rate(prices.output))];
  if (prices.cacheRead) parts.push(l10n.t("{0} cache read", rate(prices.cacheRead)));
  if (prices.cacheWrite) parts.push(l10n.t("{0} cache write", rate(prices.cacheWrite)));
  if (prices.tiers?.length)
    parts.push(l10n.t("higher above {0} prompt tokens", formatCount(prices.tiers[0]!.inputTokensAbove)));
  return parts.join(" · ");
}

/** pi's footer: `provider/id • high` (thinking level for reasoning models). */
export function modelText(inspect: InspectResult, reasoning: boolean | undefined): string | null {
  if (!inspect.model) return null;
  const id = `${inspect.model.provider}/${inspect.model.modelId}`;
  if (reasoning === false) return id;
  const level = inspect.thinkingLevel || "off";
  return level === "off" ? `${id} • thinking off` : `${id} • ${level}`;
}

/** `reasoning`: pi shows the thinking level only then; undefined = unknown. */
export function buildUsageModel(inspect: InspectResult, reasoning?: boolean): UsageModel {
  const u = inspect.usage;
  const cache = inspect.cache;
  const f = inspect.forecast;
  const model: UsageModel = {
    footer: u.footer,
    input: u.totals.input,
    output: u.totals.output,
    cacheRead: u.totals.cacheRead,
    cacheWrite: u.totals.cacheWrite,
    promptTokens: u.promptTokens,
    totalTokens: u.totalTokens,
    cost: u.totals.cost,
    latestCacheHitRate: u.latestCacheHitRate,
    sessionCacheHitRate: u.sessionCacheHitRate,
    byModel: u.byModel,
    messages: u.messages,
    incomplete: u.incomplete.length,
    reBilled: cache.reBilled,
    cold: cache.cold,
    reportedCache: cache.reportedCache,
    cacheTtl: cache.ttl,
    model: modelText(inspect, reasoning),
    thinkingLevel: inspect.thinkingLevel,
    prices: inspect.cost.prices ? pricesText(inspect.cost.prices) : null,
    pricesSource: inspect.cost.prices ? windowSourceText(inspect.pricesFrom ?? inspect.contextWindow) : null,
    forecast: hasForecast(f)
      ? {
          turns: f.turns,
          growthPerTurn: f.growthPerTurn,
          basisTurns: f.basisTurns,
          remainingTokens: f.remainingTokens,
          text: forecastText(f.turns),
          basis: forecastBasis(f.growthPerTurn, f.basisTurns, f.remainingTokens),
        }
      : null,
    forecastUnavailable: hasForecast(f) ? null : f.unavailable,
  };
  return model;
}

/** `≈ 6 turns until auto-compaction`. */
export function forecastText(turns: number): string {
  return l10n.t("≈ {0} until auto-compaction", pluralText(turns, l10n.t("{0} turn"), l10n.t("{0} turns")));
}

/** The forecast's basis in words. */
export function forecastBasis(growth: number, basisTurns: number, remaining: number): string {
  return l10n.t(
    "{0} tokens left at +{1} per turn (mean of the last {2} since the last compaction)",
    formatCount(remaining),
    formatCount(growth),
    pluralText(basisTurns, l10n.t("{0} turn"), l10n.t("{0} turns")),
  );
}

/** `/session`'s token lines in one: `Input 547,261 (cached 273,610 = 50.0%; 0 written) · Output 2,491 · Total 549,752`. */
export function sessionTokensText(m: UsageModel): string {
  const cached =
    m.sessionCacheHitRate !== null
      ? l10n.t(
          " (cached {0} = {1}%{2})",
          formatCount(m.cacheRead),
          m.sessionCacheHitRate.toFixed(1),
          m.cacheWrite ? l10n.t(", {0} written to cache", formatCount(m.cacheWrite)) : "",
        )
      : "";
  return l10n.t(
    "input {0}{1} · output {2} · total {3}",
    formatCount(m.promptTokens),
    cached,
    formatCount(m.output),
    formatCount(m.totalTokens),
  );
}

/** The cache in one line: `CH 50.0% (last turn) · 65 cold turns on this path, $0.204 · pi's "Cache Re-billed" $0.204`. */
export function cacheText(m: UsageModel): string {
  if (!m.reportedCache) return l10n.t("the provider reported no prompt caching");
  const parts: string[] = [];
  if (m.latestCacheHitRate !== null)
    parts.push(l10n.t("hit rate {0}% on the last turn", m.latestCacheHitRate.toFixed(1)));
  parts.push(
    m.cold.count
      ? l10n.t(
          "{0} on this path ({1} tokens re-sent, {2})",
          pluralText(m.cold.count, l10n.t("{0} cold turn"), l10n.t("{0} cold turns")),
          formatTokens(m.cold.missedTokens),
          formatDollars(m.cold.missedCost),
        )
      : l10n.t("no cold turn on this path"),
  );
  if (m.reBilled.missCount)
    parts.push(
      l10n.t(
        "pi's Cache Re-billed {0} ({1})",
        formatDollars(m.reBilled.missedCost),
        pluralText(m.reBilled.missCount, l10n.t("{0} miss"), l10n.t("{0} misses")),
      ),
    );
  return parts.join(" · ");
}

/** Markdown-free tooltip rows for the gauge (each `[label, text]`; the caller escapes and tables them). */
export function usageRows(m: UsageModel): [string, string][] {
  const rows: [string, string][] = [];
  if (m.footer) rows.push([l10n.t("Usage"), l10n.t("{0} — pi's footer, every entry of the file", m.footer)]);
  else rows.push([l10n.t("Usage"), l10n.t("no usage reported yet")]);
  if (m.promptTokens || m.output) rows.push([l10n.t("Tokens"), sessionTokensText(m)]);
  const cost = [l10n.t("{0} (stored by pi with each answer)", formatDollars(m.cost))];
  if (m.byModel.length > 1) cost.push(m.byModel.map((r) => `${r.key} ${formatDollars(r.cost)}`).join(", "));
  rows.push([l10n.t("Cost"), cost.join("; ")]);
  if (m.prices)
    rows.push([l10n.t("Prices"), m.pricesSource ? l10n.t("{0} — {1}", m.prices, m.pricesSource) : m.prices]);
  if (m.reportedCache) rows.push([l10n.t("Cache"), cacheText(m)]);
  if (m.forecast) rows.push([l10n.t("Forecast"), `${m.forecast.text} — ${m.forecast.basis}`]);
  if (m.incomplete)
    rows.push([
      l10n.t("Unreadable usage"),
      l10n.t("{0} (counted as 0)", pluralText(m.incomplete, l10n.t("{0} entry"), l10n.t("{0} entries"))),
    ]);
  return rows;
}
