/**
 * Usage and cost as every surface words them: pi's footer statistics and `/session` totals, the
 * current model and thinking level, the prompt cache (hit rate, cold turns and their cost, the
 * cache lifetime assumed), and the forecast of turns until auto-compaction. Pure; the numbers are
 * `InspectResult`'s (`core/rules/economics.ts`), the words are here — the gauge tooltip, the panel's
 * "Usage & cost" section and the CLI report use the same functions.
 */

import type { InspectResult } from "../core/rules/inspect";
import type { ColdCause, CacheTurn } from "../core/rules/cache";
import { hasForecast } from "../core/rules/forecast";
import type { ModelPrices } from "../core/rules/cost";
import { formatCount, formatDollars, formatTokens, plural } from "../shared/format";
import type { HistoryPoint, UsageModel } from "../shared/protocol";

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
      return `a compaction (${cause.entryId}) replaced the history`;
    case "branch-summary":
      return `a branch summary (${cause.entryId}) changed the context`;
    case "context-edit":
      return `a context edit (${cause.entryId}) changed an earlier message`;
    case "model-change":
      return `the model changed (${cause.from} → ${cause.to})`;
    case "thinking-change":
      return `the thinking level changed to ${cause.to}`;
    case "system-prompt":
      return `the system prompt changed (${cause.entryId})`;
    case "pause":
      return `a pause of ${formatDuration(cause.idleMs)} (the cache lives ${formatDuration(cause.ttlMs)})`;
    case "unknown":
      return "nothing in the session explains it (the provider may have evicted the cache)";
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
  const rate = (v: number) => `$${Number(v.toPrecision(4))}/M`;
  const parts = [`${rate(prices.input)} in`, `${rate(prices.output)} out`];
  if (prices.cacheRead) parts.push(`${rate(prices.cacheRead)} cache read`);
  if (prices.cacheWrite) parts.push(`${rate(prices.cacheWrite)} cache write`);
  if (prices.tiers?.length) parts.push(`higher above ${formatCount(prices.tiers[0]!.inputTokensAbove)} prompt tokens`);
  return parts.join(" · ");
}

/** The model as pi's footer shows it: `provider/id • high` (thinking level for reasoning models, `• thinking off`). */
export function modelText(inspect: InspectResult, reasoning: boolean | undefined): string | null {
  if (!inspect.model) return null;
  const id = `${inspect.model.provider}/${inspect.model.modelId}`;
  if (reasoning === false) return id;
  const level = inspect.thinkingLevel || "off";
  return level === "off" ? `${id} • thinking off` : `${id} • ${level}`;
}

/**
 * The panel's usage model from an inspect result.
 * @param reasoning whether the current model reasons (pi shows the thinking level only then); undefined = unknown.
 */
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
  return `≈ ${plural(turns, "turn")} until auto-compaction`;
}

/** The forecast's basis in words. */
export function forecastBasis(growth: number, basisTurns: number, remaining: number): string {
  return `${formatCount(remaining)} tokens left at +${formatCount(growth)} per turn (mean of the last ${plural(basisTurns, "turn")} since the last compaction)`;
}

/** `/session`'s token lines in one: `Input 547,261 (cached 273,610 = 50.0%; 0 written) · Output 2,491 · Total 549,752`. */
export function sessionTokensText(m: UsageModel): string {
  const cached =
    m.sessionCacheHitRate !== null
      ? ` (cached ${formatCount(m.cacheRead)} = ${m.sessionCacheHitRate.toFixed(1)}%${m.cacheWrite ? `, ${formatCount(m.cacheWrite)} written to cache` : ""})`
      : "";
  return `input ${formatCount(m.promptTokens)}${cached} · output ${formatCount(m.output)} · total ${formatCount(m.totalTokens)}`;
}

/** The cache in one line: `CH 50.0% (last turn) · 65 cold turns on this path, $0.204 · pi's "Cache Re-billed" $0.204`. */
export function cacheText(m: UsageModel): string {
  if (!m.reportedCache) return "the provider reported no prompt caching";
  const parts: string[] = [];
  if (m.latestCacheHitRate !== null) parts.push(`hit rate ${m.latestCacheHitRate.toFixed(1)}% on the last turn`);
  parts.push(
    m.cold.count
      ? `${plural(m.cold.count, "cold turn")} on this path (${formatTokens(m.cold.missedTokens)} tokens re-sent, ${formatDollars(m.cold.missedCost)})`
      : "no cold turn on this path",
  );
  if (m.reBilled.missCount)
    parts.push(
      `pi's Cache Re-billed ${formatDollars(m.reBilled.missedCost)} (${plural(m.reBilled.missCount, "miss", "misses")})`,
    );
  return parts.join(" · ");
}

/** Markdown-free tooltip rows for the gauge (each `[label, text]`; the caller escapes and tables them). */
export function usageRows(m: UsageModel): [string, string][] {
  const rows: [string, string][] = [];
  if (m.footer) rows.push(["Usage", `${m.footer} — pi's footer, every entry of the file`]);
  else rows.push(["Usage", "no usage reported yet"]);
  if (m.promptTokens || m.output) rows.push(["Tokens", sessionTokensText(m)]);
  const cost = [`${formatDollars(m.cost)} (stored by pi with each answer)`];
  if (m.byModel.length > 1) cost.push(m.byModel.map((r) => `${r.key} ${formatDollars(r.cost)}`).join(", "));
  rows.push(["Cost", cost.join("; ")]);
  if (m.prices) rows.push(["Prices", m.prices]);
  if (m.reportedCache) rows.push(["Cache", cacheText(m)]);
  if (m.forecast) rows.push(["Forecast", `${m.forecast.text} — ${m.forecast.basis}`]);
  if (m.incomplete) rows.push(["Unreadable usage", `${plural(m.incomplete, "entry", "entries")} (counted as 0)`]);
  return rows;
}
