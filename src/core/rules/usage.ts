/**
 * Usage and cost totals as pi 1.6.0 counts them for its footer and `/session` (`usage-totals.js`): over
 * every entry of the file, all branches, nothing deduplicated (an edited message was still billed), per
 * file only (forks copy usages). Where pi would crash or show NaN, numeric fields count and the entry is
 * listed in `incomplete`.
 */

import type { EntryRecord } from "../read/entries";
import type { UsageNumbers } from "../read/estimate";
import { formatTokens, piDollars } from "../../shared/format";

export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

/** pi's `getUsageCostBreakdown`. */
export interface UsageBreakdownRow {
  /** `provider/(responseModel ?? model)`, or `Tools/summaries` for tool results and summaries. */
  key: string;
  cost: number;
  tokens: number;
}

export interface SessionUsage {
  /** Footer `↑ ↓ R W $`, `/session` tokens and cost. */
  totals: UsageTotals;
  /** `/session` "Input": input + cacheRead + cacheWrite (the footer's ↑ is `input` only). */
  promptTokens: number;
  totalTokens: number;
  /** pi's footer `CH`: hit rate of the latest assistant in file order; null when its prompt was 0 or none. */
  latestCacheHitRate: number | null;
  /** `/session` "Cached (x%)"; null without prompt tokens. */
  sessionCacheHitRate: number | null;
  messages: { total: number; user: number; assistant: number; toolCalls: number; toolResults: number };
  /** Most expensive first; rows with neither cost nor tokens dropped, as pi. */
  byModel: UsageBreakdownRow[];
  usageCount: number;
  /** Entries where pi would crash or show NaN; their numeric fields are counted. */
  incomplete: string[];
  /** E.g. `↑6.4k ↓645 R500 W50 CH0.0% $0.065` (empty when nothing was used). */
  footer: string;
}

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

/** pi's `addUsageToTotals`; false when a field was not a number (pi: NaN, here 0). */
function addUsage(totals: UsageTotals, usage: UsageNumbers): boolean {
  totals.input += fin(usage.input);
  totals.output += fin(usage.output);
  totals.cacheRead += fin(usage.cacheRead);
  totals.cacheWrite += fin(usage.cacheWrite);
  totals.cost += fin(usage.cost);
  return [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, usage.cost].every(Number.isFinite);
}

const empty = (): UsageTotals => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 });

/** pi's footer statistics (`FooterComponent.render`); pi's ` (sub)` needs its login state and is not shown. */
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

/** Memoised per records array. */
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
