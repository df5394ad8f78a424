/**
 * Session usage and cost totals exactly as pi 1.6.0 counts them for its footer and `/session`.
 *
 * Source: `dist/core/usage-totals.js` (`createUsageTotals`, `addUsageToTotals`,
 * `getUsageCostBreakdown`), `FooterComponent.getSessionStats` / `render`
 * (`dist/modes/interactive/components/footer.js`), `AgentSession.getSessionStats`
 * (`dist/core/agent-session.js`) and `handleSessionCommand` (`dist/modes/interactive/interactive-mode.js`).
 *
 * pi sums over `sessionManager.getEntries()`: **every entry of the file, all branches, in file
 * order** — not the path, not the projection. Each stored usage counts once: assistant messages
 * (every stop reason), tool results that carry a `usage`, compaction and branch-summary `usage`,
 * and `usage` entries (cache warming). Nothing is deduplicated: an edited or omitted message still
 * counts (it was billed). Within one file every usage is one entry, so nothing is counted twice;
 * `/fork` and `/clone` copy entries (with their usage) into a *new* file, so adding the totals of
 * several files of one family would count the copied part twice — pi never does, and neither do we
 * (totals are always per file).
 *
 * Costs are summed from what the entries store (`usage.cost.total`, computed by pi-ai when the
 * response arrived); nothing is re-priced here.
 *
 * Where pi would fail (an assistant without a usage object throws in pi's footer; a missing field
 * makes pi's totals `NaN`), we count the numeric fields and report the entry in `incomplete`.
 */

import type { EntryRecord } from "../read/entries";
import type { UsageNumbers } from "../read/estimate";
import { formatTokens, piDollars } from "../../shared/format";

/** pi's `createUsageTotals()`: tokens and US dollars. */
export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

/** One row of pi's `/session` cost breakdown (`getUsageCostBreakdown`). */
export interface UsageBreakdownRow {
  /** `provider/(responseModel ?? model)` for assistants and `usage` entries; `Tools/summaries` for tool results, compactions, branch summaries. */
  key: string;
  cost: number;
  /** input + output + cacheRead + cacheWrite. */
  tokens: number;
}

/** Everything pi's footer and `/session` show about a file's usage. */
export interface SessionUsage {
  /** pi's `usageTotals` (footer `↑ ↓ R W $`, `/session` tokens and cost). */
  totals: UsageTotals;
  /** `/session` "Input": input + cacheRead + cacheWrite (the footer's ↑ is `input` only). */
  promptTokens: number;
  /** `/session` "Total": all four token counts. */
  totalTokens: number;
  /**
   * pi's footer `CH`: the cache hit rate of the **latest assistant message in file order**,
   * `cacheRead / (input + cacheRead + cacheWrite) * 100`; null when that prompt was 0 or there is no assistant.
   */
  latestCacheHitRate: number | null;
  /** `/session` "Cached (x%)": the session's hit rate, `cacheRead / promptTokens * 100`; null without prompt tokens. */
  sessionCacheHitRate: number | null;
  /** `/session` Messages (all branches). */
  messages: { total: number; user: number; assistant: number; toolCalls: number; toolResults: number };
  /** `/session` Cost breakdown, most expensive first (rows with neither cost nor tokens dropped, as pi). */
  byModel: UsageBreakdownRow[];
  /** Number of usages summed. */
  usageCount: number;
  /** Entries whose usage pi reads but that have none or non-numeric fields (pi would crash or show NaN); their numeric fields are counted. */
  incomplete: string[];
  /** pi's footer statistics part, e.g. `↑6.4k ↓645 R500 W50 CH0.0% $0.065` (empty when nothing was used). */
  footer: string;
}

/** The usage pi reads from an entry, and its breakdown key; undefined when pi reads none. */
function usageOf(record: EntryRecord): { usage: UsageNumbers | undefined; key: string; required: boolean } | undefined {
  if (record.type === "usage")
    return { usage: record.usage, key: `${record.provider}/${record.model}`, required: true };
  if (record.type === "message" && record.role === "assistant")
    return { usage: record.usage, key: `${record.provider}/${record.responseModel ?? record.model}`, required: true };
  if (record.type === "message" && record.role === "toolResult" && record.usage)
    return { usage: record.usage, key: "Tools/summaries", required: false };
  if ((record.type === "compaction" || record.type === "branch_summary") && record.usage)
    return { usage: record.usage, key: "Tools/summaries", required: false };
  return undefined;
}

const fin = (n: number): number => (Number.isFinite(n) ? n : 0);

/** pi's `addUsageToTotals`; non-numeric fields count as 0 (pi: NaN). @returns false when a field was not a number. */
function addUsage(totals: UsageTotals, usage: UsageNumbers): boolean {
  totals.input += fin(usage.input);
  totals.output += fin(usage.output);
  totals.cacheRead += fin(usage.cacheRead);
  totals.cacheWrite += fin(usage.cacheWrite);
  totals.cost += fin(usage.cost);
  return [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, usage.cost].every(Number.isFinite);
}

const empty = (): UsageTotals => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 });

/**
 * pi's footer statistics (`FooterComponent.render`, the part before the context percentage):
 * `↑input ↓output Rread Wwrite` (each only when non-zero), `CH<rate>%` when any cache activity,
 * `$<cost.toFixed(3)>` when the cost is non-zero. pi's ` (sub)` for subscription providers needs
 * pi's login state and is not shown.
 */
export function formatUsageFooter(totals: UsageTotals, latestCacheHitRate: number | null): string {
  const parts: string[] = [];
  if (totals.input) parts.push(`↑${formatTokens(totals.input)}`);
  if (totals.output) parts.push(`↓${formatTokens(totals.output)}`);
  if (totals.cacheRead) parts.push(`R${formatTokens(totals.cacheRead)}`);
  if (totals.cacheWrite) parts.push(`W${formatTokens(totals.cacheWrite)}`);
  if ((totals.cacheRead > 0 || totals.cacheWrite > 0) && latestCacheHitRate !== null)
    parts.push(`CH${latestCacheHitRate.toFixed(1)}%`);
  if (totals.cost) parts.push(piDollars(totals.cost));
  return parts.join(" ");
}

const memo = new WeakMap<
  readonly EntryRecord[],
  { length: number; last: EntryRecord | undefined; value: SessionUsage }
>();

/**
 * pi's session totals over every record of a file, in file order (see the module comment).
 * Memoised per records array while it is unchanged. O(entries).
 */
export function sessionUsage(records: readonly EntryRecord[]): SessionUsage {
  const last = records[records.length - 1];
  const hit = memo.get(records);
  if (hit && hit.length === records.length && hit.last === last) return hit.value;
  const totals = empty();
  const byKey = new Map<string, UsageTotals>();
  const messages = { total: 0, user: 0, assistant: 0, toolCalls: 0, toolResults: 0 };
  const incomplete: string[] = [];
  let latest: number | null = null;
  let usageCount = 0;
  for (const record of records) {
    if (record.type === "message") {
      messages.total++;
      if (record.role === "user") messages.user++;
      else if (record.role === "toolResult") messages.toolResults++;
      else if (record.role === "assistant") {
        messages.assistant++;
        messages.toolCalls += record.toolNames?.length ?? 0;
      }
    }
    const found = usageOf(record);
    if (!found) continue;
    const { usage, key, required } = found;
    if (!usage) {
      if (required) incomplete.push(record.id);
      if (record.role === "assistant") latest = null;
      continue;
    }
    usageCount++;
    if (!addUsage(totals, usage)) incomplete.push(record.id);
    let row = byKey.get(key);
    if (!row) byKey.set(key, (row = empty()));
    addUsage(row, usage);
    if (record.type === "message" && record.role === "assistant") {
      const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
      latest = prompt > 0 ? (usage.cacheRead / prompt) * 100 : null;
    }
  }
  const promptTokens = totals.input + totals.cacheRead + totals.cacheWrite;
  const value: SessionUsage = {
    totals,
    promptTokens,
    totalTokens: promptTokens + totals.output,
    latestCacheHitRate: latest,
    sessionCacheHitRate:
      promptTokens > 0 && (totals.cacheRead > 0 || totals.cacheWrite > 0)
        ? (totals.cacheRead / promptTokens) * 100
        : null,
    messages,
    byModel: [...byKey]
      .map(([key, t]) => ({ key, cost: t.cost, tokens: t.input + t.output + t.cacheRead + t.cacheWrite }))
      .filter((row) => row.cost > 0 || row.tokens > 0)
      .sort((a, b) => b.cost - a.cost),
    usageCount,
    incomplete,
    footer: formatUsageFooter(totals, latest),
  };
  memo.set(records, { length: records.length, last, value });
  return value;
}
