/**
 * The prompt cache, turn by turn: each request's hit rate, and the requests where the cache went
 * cold, with what cold turns cost and the likely cause.
 *
 * The miss rule is pi 1.6.0's own (`dist/core/cache-stats.js`, the "Cache Re-billed" line of
 * `/session` and its "Cache miss: … re-billed" transcript notices): walking every entry of the
 * file in order, an assistant request *misses* when `min(previous prompt, this prompt) −
 * cacheRead > 1024` tokens (pi's noise floor), counted only once the provider has reported cache
 * activity; its cost is the missed tokens at the rate actually paid (this message's own
 * `cost.input + cost.cacheWrite` per uncached token) minus the cache-read rate. A compaction or a
 * branch summary resets pi's comparison (new content is not "re-billed"); a `cache_warm` usage
 * entry (pi's cache warming) counts as a request.
 *
 * Beyond pi: the first request after a compaction or branch summary is compared with the request
 * before it by the same formula and, when it missed, marked cold with that cause but not added to
 * pi's re-billed total (`counted: false`); and each cold turn names what happened since the
 * previous request — model change, thinking-level change, context edit, a new system prompt, or a
 * pause longer than the cache's lifetime ({@link cacheTtl}).
 */

import type { EntryRecord } from "../read/entries";
import type { PriceLookup } from "./cost";

/** pi's `NOISE_FLOOR_TOKENS`: per-turn misses at or below this are cache breakpoint granularity. */
export const CACHE_NOISE_FLOOR_TOKENS = 1024;

/** pi's `CACHE_TTL_MS` (5 minutes, "Anthropic's default cache TTL"): idle gaps at least this long are a likely cause. */
export const CACHE_TTL_MS = 5 * 60 * 1000;

/** How long a provider keeps a prompt-cache entry, and where that number comes from. */
export interface CacheTtl {
  ms: number;
  source: string;
}

/**
 * The cache lifetime we assume for a provider. Every provider gets pi's `CACHE_TTL_MS` (5 min),
 * which is what pi itself uses to call a miss "after N m idle"; the source says why that is right
 * for the provider:
 * - `anthropic` (and Claude behind other providers): pi-ai 1.6.0's catalog gives Claude models
 *   `promptCache: {short: 300, long: 3600}` seconds — 5 min, or 1 h when pi runs with
 *   `PI_CACHE_RETENTION=long` (not visible in the session file);
 * - `openai`, `openai-codex`, `azure`: OpenAI's prompt-caching guide: cached prefixes stay for
 *   5–10 minutes of inactivity (up to an hour off-peak) — 5 min is the safe lower bound;
 * - everything else: the catalog has no lifetime; pi's 5 min.
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

/** Why a turn's cache went cold (what happened between the previous request and this one). */
export type ColdCause =
  | { kind: "compaction"; entryId: string }
  | { kind: "branch-summary"; entryId: string }
  | { kind: "context-edit"; entryId: string }
  | { kind: "model-change"; from: string; to: string }
  | { kind: "thinking-change"; entryId: string; to: string }
  | { kind: "system-prompt"; entryId: string }
  | { kind: "pause"; idleMs: number; ttlMs: number }
  | { kind: "unknown" };

/** A request whose cache went cold. */
export interface ColdTurn {
  /** Prompt tokens that were in the previous request but not read from the cache: `min(prev prompt, prompt) − cacheRead`. */
  missedTokens: number;
  /** US dollars those tokens cost above the cache-read rate (pi's `missedCost`). */
  missedCost: number;
  /** ms between this request and the previous one (pi's `idleMs`: message timestamps, request starts). */
  idleMs: number;
  /** True when pi counts it in `/session`'s "Cache Re-billed" (false: right after a compaction or branch summary). */
  counted: boolean;
  /** Most likely first; `unknown` when nothing in the file explains it (a provider eviction, a changed tool set…). */
  causes: ColdCause[];
}

/** One assistant request on the path. */
export interface CacheTurn {
  entryId: string;
  timestamp: string;
  provider: string;
  model: string;
  /** Prompt tokens: input + cacheRead + cacheWrite. */
  promptTokens: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  /** `cacheRead / promptTokens` (0…1; pi's footer shows it ×100 as `CH`); null without prompt tokens. */
  hitRate: number | null;
  cold?: ColdTurn;
}

/** The cache report of a session at a leaf. */
export interface CacheReport {
  /** Assistant requests on the path with a usage, root → leaf. */
  turns: CacheTurn[];
  /** pi's `computeCacheWaste` over the whole file (`/session` "Cache Re-billed"). */
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  /** Cold turns on the path (pi's misses plus the first request after a compaction or branch summary that missed). */
  cold: { count: number; missedTokens: number; missedCost: number };
  /** The provider reported cache activity at least once (else hit rates mean nothing). */
  reportedCache: boolean;
  /** The lifetime assumed for the current model's provider. */
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

/** pi's `detectMiss` (plus the previous request for the after-reset comparison). */
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

/** What happened between two requests (records strictly between them in file order). */
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

/** The file-wide scan: every cold request by entry id, and pi's re-billed total. */
export interface CacheScan {
  /** Cold requests in file order (pi's misses have `counted: true`). */
  cold: Map<string, ColdTurn>;
  /** pi's `computeCacheWaste`. */
  reBilled: { missedTokens: number; missedCost: number; missCount: number };
  reportedCache: boolean;
}

/**
 * pi's cache scan (`cache-stats.js` `scan`) over every record of the file in order, plus the
 * uncounted after-reset comparison and the causes (see the module comment).
 * @param records the whole file in order (`session.records`).
 * @param prices prices by `provider/model` (pi's read rate when a request read nothing from the cache).
 * @param ttl the cache lifetime a pause is compared with.
 */
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

/**
 * The cache report at a leaf: {@link scanCache} over the file, the turns of `path` with their hit
 * rates and cold marks.
 * @param records the whole file in order (`session.records`).
 * @param path the leaf's path (`projection.path`).
 * @param prices prices by `provider/model`.
 * @param provider the current model's provider, for the assumed cache lifetime ({@link cacheTtl}).
 */
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
