/**
 * The prompt cache turn by turn: hit rates and cold requests with cost and likely cause. The miss rule
 * is pi 1.6.0's `cache-stats.js` (`/session` "Cache Re-billed"). Beyond pi: the first request after a
 * compaction or branch summary is compared too (`counted: false`), and each cold turn names a cause.
 */

import type { EntryRecord } from "../read/entries";
import type { PriceLookup } from "./cost";

/** pi's `NOISE_FLOOR_TOKENS`: per-turn misses at or below this are cache breakpoint granularity. */
export const CACHE_NOISE_FLOOR_TOKENS = 1024;

/** pi's `CACHE_TTL_MS` (5 minutes): idle gaps at least this long are a likely cause. */
export const CACHE_TTL_MS = 5 * 60 * 1000;

export interface CacheTtl {
  ms: number;
  source: string;
}

/**
 * The assumed cache lifetime: pi's 5 min for every provider. Claude: pi-ai's catalog says 300 s (1 h
 * with `PI_CACHE_RETENTION=long`, not visible in the file); OpenAI: 5–10 min of inactivity.
 */
export function cacheTtl(provider: string | undefined): CacheTtl {
  switch (provider) {
    case "anthropic":
    case "amazon-bedrock":
    case "google-vertex":
      return {
        ms: CACHE_TTL_MS,
        source:
          "5 min: pi-ai's catalog gives Claude models promptCache.short = 300 s (1 h only with PI_CACHE_RETENTION=long)",
      };
    case "openai":
    case "openai-codex":
    case "azure":
      return {
        ms: CACHE_TTL_MS,
        source: "5 min: OpenAI keeps cached prefixes for 5–10 min of inactivity (its prompt-caching guide)",
      };
    default:
      return {
        ms: CACHE_TTL_MS,
        source: "5 min: pi's CACHE_TTL_MS (the provider publishes no lifetime in pi's catalog)",
      };
  }
}

export type ColdCause =
  | { kind: "compaction"; entryId: string }
  | { kind: "branch-summary"; entryId: string }
  | { kind: "context-edit"; entryId: string }
  | { kind: "model-change"; from: string; to: string }
  | { kind: "thinking-change"; entryId: string; to: string }
  | { kind: "system-prompt"; entryId: string }
  | { kind: "pause"; idleMs: number; ttlMs: number }
  | { kind: "unknown" };

export interface ColdTurn {
  /** `min(prev prompt, prompt) − cacheRead`. */
  missedTokens: number;
  /** US dollars above the cache-read rate (pi's `missedCost`). */
  missedCost: number;
  /** Between this request and the previous one (pi's `idleMs`). */
  idleMs: number;
  /** Counted in `/session`'s "Cache Re-billed" (false right after a compaction or branch summary). */
  counted: boolean;
  /** Most likely first; `unknown` when nothing in the file explains it. */
  causes: ColdCause[];
}

export interface CacheTurn {
  entryId: string;
  timestamp: string;
  provider: string;
  model: string;
  /** input + cacheRead + cacheWrite. */
  promptTokens: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  /** `cacheRead / promptTokens` (0…1; pi's footer `CH` ×100); null without prompt tokens. */
  hitRate: number | null;
  cold?: ColdTurn;
}

export interface CacheReport {
  turns: CacheTurn[];
  /** pi's `computeCacheWaste` over the whole file. */
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  cold: { count: number; missedTokens: number; missedCost: number };
  /** Else hit rates mean nothing. */
  reportedCache: boolean;
  ttl: CacheTtl;
}

interface PreviousRequest {
  promptTokens: number;
  modelKey: string;
  time: number;
  reportedCache: boolean;
}

const n = (v: number): number => (Number.isFinite(v) ? v : 0);

function promptOf(r: EntryRecord): number {
  const u = r.usage;
  return u ? n(u.input) + n(u.cacheRead) + n(u.cacheWrite) : 0;
}

function detectMiss(
  prev: PreviousRequest | undefined,
  r: EntryRecord,
  time: number,
  prices: PriceLookup,
): Omit<ColdTurn, "counted" | "causes"> | undefined {
  const u = r.usage!;
  const input = n(u.input);
  const cacheRead = n(u.cacheRead);
  const cacheWrite = n(u.cacheWrite);
  const prompt = input + cacheRead + cacheWrite;
  if (!prev || prompt <= 0 || (cacheRead + cacheWrite === 0 && !prev.reportedCache)) return undefined;
  const missedTokens = Math.min(prev.promptTokens, prompt) - cacheRead;
  if (missedTokens <= CACHE_NOISE_FLOOR_TOKENS) return undefined;
  const paidTokens = input + cacheWrite;
  const paidPerToken = paidTokens > 0 ? (n(u.costInput) + n(u.costCacheWrite)) / paidTokens : 0;
  const readPerToken =
    cacheRead > 0
      ? n(u.costCacheRead) / cacheRead
      : (prices(r.provider ?? "", r.model ?? "")?.cacheRead ?? 0) / 1_000_000;
  return {
    missedTokens,
    missedCost: missedTokens * Math.max(0, paidPerToken - readPerToken),
    idleMs: Math.max(0, time - prev.time),
  };
}

function causesBetween(
  between: readonly EntryRecord[],
  modelChanged: { from: string; to: string } | undefined,
  idleMs: number,
  ttl: CacheTtl,
): ColdCause[] {
  const causes: ColdCause[] = [];
  for (const r of between) {
    if (r.type === "compaction") causes.push({ kind: "compaction", entryId: r.id });
    else if (r.type === "branch_summary") causes.push({ kind: "branch-summary", entryId: r.id });
    else if (r.type === "context_edit") causes.push({ kind: "context-edit", entryId: r.id });
    else if (r.type === "thinking_level_change")
      causes.push({ kind: "thinking-change", entryId: r.id, to: r.thinkingLevel ?? "?" });
    else if (r.type === "message" && r.role === "system") causes.push({ kind: "system-prompt", entryId: r.id });
  }
  if (modelChanged) causes.unshift({ kind: "model-change", ...modelChanged });
  if (idleMs >= ttl.ms) causes.push({ kind: "pause", idleMs, ttlMs: ttl.ms });
  if (causes.length === 0) causes.push({ kind: "unknown" });
  return causes;
}

export interface CacheScan {
  cold: Map<string, ColdTurn>;
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  reportedCache: boolean;
}

/** pi's `cache-stats.js` `scan` over the whole file, plus the after-reset comparison and causes. */
export function scanCache(records: readonly EntryRecord[], prices: PriceLookup, ttl: CacheTtl): CacheScan {
  const reBilled = { missedTokens: 0, missedCost: 0, missCount: 0 };
  const cold = new Map<string, ColdTurn>();
  let prev: PreviousRequest | undefined; // pi's (reset by compactions and branch summaries)
  let before: PreviousRequest | undefined; // the last request, never reset (for the first request after a reset)
  let reportedCache = false;
  let sinceIndex = 0; // the first record after the previous request
  records.forEach((r, index) => {
    if (r.type === "compaction" || r.type === "branch_summary") {
      prev = undefined;
      return;
    }
    if (r.type === "usage") {
      const prompt = promptOf(r);
      if (r.usageKind === "cache_warm" && prompt > 0) {
        prev = {
          promptTokens: prompt,
          modelKey: `${r.provider}/${r.model}`,
          time: Date.parse(r.timestamp),
          reportedCache: true,
        };
        before = prev;
        reportedCache = true;
        sinceIndex = index + 1;
      }
      return;
    }
    if (r.type !== "message" || r.role !== "assistant" || !r.usage) return;
    const time = r.messageTime ?? Date.parse(r.timestamp);
    const modelKey = `${r.provider}/${r.model}`;
    let basis = prev;
    let miss = detectMiss(prev, r, time, prices);
    const afterReset = !prev && before !== undefined;
    if (!miss && afterReset) {
      basis = before;
      miss = detectMiss(before, r, time, prices);
    }
    if (miss && basis) {
      const modelChanged = modelKey !== basis.modelKey ? { from: basis.modelKey, to: modelKey } : undefined;
      const causes = causesBetween(records.slice(sinceIndex, index), modelChanged, miss.idleMs, ttl);
      cold.set(r.id, { ...miss, counted: !afterReset, causes });
      if (!afterReset) {
        reBilled.missedTokens += miss.missedTokens;
        reBilled.missedCost += miss.missedCost;
        reBilled.missCount += 1;
      }
    }
    // pi's asPreviousRequest(message, prev?.reportedCache ?? false) ?? prev
    const prompt = promptOf(r);
    const reports = n(r.usage.cacheRead) + n(r.usage.cacheWrite) > 0;
    if (reports) reportedCache = true;
    if (prompt > 0) {
      prev = { promptTokens: prompt, modelKey, time, reportedCache: (prev?.reportedCache ?? false) || reports };
      before = { ...prev, reportedCache: prev.reportedCache || (before?.reportedCache ?? false) };
      sinceIndex = index + 1;
    }
  });

  return { cold, reBilled, reportedCache };
}

/** The cache report at a leaf: {@link scanCache}, then the path's turns with hit rates and cold marks. */
export function cacheReport(
  records: readonly EntryRecord[],
  path: readonly EntryRecord[],
  prices: PriceLookup,
  provider: string | undefined,
): CacheReport {
  const ttl = cacheTtl(provider);
  const { cold, reBilled, reportedCache } = scanCache(records, prices, ttl);
  const turns: CacheTurn[] = [];
  const onPath = { count: 0, missedTokens: 0, missedCost: 0 };
  for (const r of path) {
    if (r.type !== "message" || r.role !== "assistant" || !r.usage) continue;
    const input = n(r.usage.input);
    const cacheRead = n(r.usage.cacheRead);
    const cacheWrite = n(r.usage.cacheWrite);
    const promptTokens = input + cacheRead + cacheWrite;
    if (promptTokens <= 0) continue;
    const turn: CacheTurn = {
      entryId: r.id,
      timestamp: r.timestamp,
      provider: r.provider ?? "",
      model: r.model ?? "",
      promptTokens,
      input,
      cacheRead,
      cacheWrite,
      hitRate: cacheRead / promptTokens,
    };
    const c = cold.get(r.id);
    if (c) {
      turn.cold = c;
      onPath.count++;
      onPath.missedTokens += c.missedTokens;
      onPath.missedCost += c.missedCost;
    }
    turns.push(turn);
  }
  return { turns, reBilled, cold: onPath, reportedCache, ttl };
}
