/**
 * The history sparkline: context tokens per turn on the current path.
 *
 * A point per assistant response on the raw path (root → leaf, across compactions) with a usage
 * pi would trust (`calculateContextTokens(usage) > 0`, not aborted, not an error): that is the
 * context size the provider reported for that request. Compactions on the path are markers placed
 * between the points before and after them, carrying pi's `tokensBefore`.
 */

import type { EntryRecord } from "../core/read/entries";
import type { CacheReport } from "../core/rules/cache";
import type { HistoryModel } from "../shared/protocol";
import { pointCache } from "./usage";

/** True when pi would use this assistant's usage (`estimateContextTokens`'s validity rule). */
export function hasTrustedUsage(record: EntryRecord): boolean {
  return (
    record.type === "message" &&
    record.role === "assistant" &&
    record.stopReason !== "aborted" &&
    record.stopReason !== "error" &&
    record.usageTokens > 0
  );
}

/**
 * The sparkline of a path (`projection.path`).
 * @param cache the cache report of the same leaf: each point gets its request's hit rate and cold mark.
 */
export function buildHistory(path: readonly EntryRecord[], cache?: CacheReport): HistoryModel {
  const history: HistoryModel = { points: [], compactions: [] };
  const turns = new Map(cache?.turns.map((t) => [t.entryId, t]));
  for (const record of path) {
    if (hasTrustedUsage(record)) {
      const turn = turns.get(record.id);
      history.points.push({
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
  return history;
}
