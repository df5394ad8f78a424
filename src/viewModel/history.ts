/**
 * The history sparkline: a point per assistant response on the raw path whose usage pi would trust
 * (the provider's context size), compaction markers between them with pi's `tokensBefore`.
 */

import type { EntryRecord } from "../core/read/entries";
import type { CacheReport } from "../core/rules/cache";
import { hasTrustedUsage } from "../core/rules/tokens";
import type { HistoryModel } from "../shared/protocol";
import { pointCache } from "./usage";

/** `cache`: the same leaf's cache report (each point's hit rate and cold mark). */
export function buildHistory(path: readonly EntryRecord[], cache?: CacheReport): HistoryModel {
  const history: HistoryModel = { turns: 0, points: [], compactions: [] };
  const turns = new Map(cache?.turns.map((t) => [t.entryId, t]));
  for (const record of path) {
    if (hasTrustedUsage(record)) {
      const turn = turns.get(record.id);
      history.points.push({
        turn: history.points.length,
        entryId: record.id,
        timestamp: record.timestamp,
        tokens: record.usageTokens,
        ...(turn ? { cache: pointCache(turn) } : {}),
      });
    } else if (record.type === "compaction") {
      history.compactions.push({
        entryId: record.id,
        timestamp: record.timestamp,
        tokensBefore: record.tokensBefore ?? null,
        atPoint: history.points.length,
      });
    }
  }
  history.turns = history.points.length;
  return history;
}

/** The chart is 600 units wide. */
export const HISTORY_CHART_POINTS = 600;

/** Per bucket the lowest and highest point, plus every cold turn and each compaction's neighbours. */
export function downsampleHistory(history: HistoryModel, max = HISTORY_CHART_POINTS): HistoryModel {
  const points = history.points;
  if (points.length <= max) return history;
  const keep = new Set<number>([0, points.length - 1]);
  for (const c of history.compactions) {
    if (c.atPoint > 0) keep.add(c.atPoint - 1);
    if (c.atPoint < points.length) keep.add(c.atPoint);
  }
  points.forEach((p, i) => {
    if (p.cache?.cold) keep.add(i);
  });
  const buckets = Math.max(1, Math.floor(max / 2));
  const size = points.length / buckets;
  for (let b = 0; b < buckets; b++) {
    const start = Math.floor(b * size);
    const end = Math.min(points.length, Math.floor((b + 1) * size));
    let low = start;
    let high = start;
    for (let i = start; i < end; i++) {
      if (points[i]!.tokens < points[low]!.tokens) low = i;
      if (points[i]!.tokens > points[high]!.tokens) high = i;
    }
    keep.add(low).add(high);
  }
  return {
    turns: history.turns,
    points: [...keep].sort((a, b) => a - b).map((i) => points[i]!),
    compactions: history.compactions,
  };
}
