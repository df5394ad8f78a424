/**
 * The context breakdown by category (pi 1.6.0 `estimateTokens` per message, split by character kind,
 * largest remainder). With `usage+estimate`, messages up to the last usage are scaled to it, later
 * ones added unscaled (docs/architecture.md): Σ categories = the headline exactly.
 */

import * as l10n from "@vscode/l10n";
import { localisedRecord } from "../shared/format";
import type { ProjectedEntry, Projection } from "../core/rules/context";
import type { EntryRecord } from "../core/read/entries";
import { messageChars, type CharBreakdown } from "../core/read/estimate";
import type { InspectResult } from "../core/rules/inspect";
import { contribution, currentSystemMessage, type BodyReader } from "../core/rules/tokens";
import { buildFixedContextModel } from "./fixedContext";
import {
  CATEGORY_IDS,
  type BreakdownModel,
  type CategoryEntry,
  type CategoryId,
  type CategoryModel,
} from "../shared/protocol";

/** Display labels of the categories. */
export const CATEGORY_LABELS: Readonly<Record<CategoryId, string>> = localisedRecord({
  system: () => l10n.t("System prompt & tools"),
  summaries: () => l10n.t("Compaction & branch summaries"),
  user: () => l10n.t("User messages"),
  assistantText: () => l10n.t("Assistant text"),
  thinking: () => l10n.t("Thinking"),
  toolCalls: () => l10n.t("Tool calls"),
  toolResults: () => l10n.t("Tool results"),
  other: () => l10n.t("Other"),
  free: () => l10n.t("Free"),
  reserve: () => l10n.t("Reserve"),
});

/** The in-context categories (everything but free/reserve). */
export const CONTEXT_CATEGORIES: readonly CategoryId[] = CATEGORY_IDS.filter((c) => c !== "free" && c !== "reserve");

type Parts = Partial<Record<CategoryId, number>>;

/** Largest remainder, ties to the earlier key: Σ result = total when Σ weights > 0, else all zero. */
export function allocate(total: number, weights: Parts): Parts {
  const keys = (Object.keys(weights) as CategoryId[]).filter((k) => (weights[k] ?? 0) > 0);
  const sum = keys.reduce((s, k) => s + (weights[k] ?? 0), 0);
  const out: Parts = {};
  if (sum <= 0 || total <= 0) return out;
  let assigned = 0;
  const rema: { key: CategoryId; frac: number; order: number }[] = [];
  keys.forEach((k, order) => {
    const exact = (total * (weights[k] ?? 0)) / sum;
    const floor = Math.floor(exact);
    out[k] = floor;
    assigned += floor;
    rema.push({ key: k, frac: exact - floor, order });
  });
  rema.sort((a, b) => b.frac - a.frac || a.order - b.order);
  for (let i = 0; i < total - assigned; i++) {
    const r = rema[i % rema.length]!;
    out[r.key] = (out[r.key] ?? 0) + 1;
  }
  return out;
}

function roleOf(record: EntryRecord): string {
  if (record.type === "message") return record.role ?? "";
  if (record.type === "custom_message") return "custom";
  if (record.type === "compaction") return "compactionSummary";
  if (record.type === "branch_summary") return "branchSummary";
  return record.type;
}

function charWeights(role: string, chars: CharBreakdown): Parts {
  const all = chars.text + chars.thinking + chars.toolCalls + chars.images + chars.tools;
  switch (role) {
    case "user":
    case "custom":
    case "bashExecution":
      return { user: all };
    case "assistant":
      return {
        assistantText: chars.text + chars.images + chars.tools,
        thinking: chars.thinking,
        toolCalls: chars.toolCalls,
      };
    case "toolResult":
      return { toolResults: all };
    case "compactionSummary":
    case "branchSummary":
      return { summaries: all };
    default:
      return { other: all };
  }
}

interface EntryParts {
  record: EntryRecord;
  parts: Parts;
}

function entryParts(entry: ProjectedEntry, reader: BodyReader, systemSeparately: boolean): EntryParts {
  const parts: Parts = {};
  const record = entry.record;
  if (entry.roles.length === 0) return { record, parts };
  if (systemSeparately && entry.roles[0] === "system") parts.system = record.systemTokens;
  const onlySystem = entry.roles.length === 1 && entry.roles[0] === "system";
  if (!onlySystem) {
    const c = contribution(entry, reader);
    const split = allocate(c.tokens, charWeights(roleOf(record), c.chars));
    for (const [k, v] of Object.entries(split) as [CategoryId, number][]) parts[k] = (parts[k] ?? 0) + v;
  }
  return { record, parts };
}

function describe(record: EntryRecord): Pick<CategoryEntry, "kind" | "tool" | "preview"> {
  const kind = record.type === "message" ? (record.role ?? "message") : record.type;
  const out: Pick<CategoryEntry, "kind" | "tool" | "preview"> = { kind };
  if (record.toolNames?.length) out.tool = [...new Set(record.toolNames)].join(", ");
  else if (record.toolName) out.tool = record.toolName;
  const preview = record.preview ?? (record.summary ? record.summary.split("\n").find((l) => l.trim()) : undefined);
  if (preview) out.preview = preview.length > 160 ? `${preview.slice(0, 159)}…` : preview;
  return out;
}

/** Options for {@link buildBreakdown}. */
export interface BreakdownOptions {
  topLimit?: number;
}

/** All entries of one category, biggest first (what `requestCategory` answers). */
export function categoryEntries(
  projection: Projection,
  inspect: InspectResult,
  reader: BodyReader,
  category: CategoryId,
  limit = 500,
): CategoryEntry[] {
  return (
    computeBreakdown(projection, inspect, reader, { topLimit: limit }).categories.find((c) => c.id === category)?.top ??
    []
  );
}

/**
 * @param projection `buildProjection(session, leafId)` for the same leaf as `inspect`.
 * @returns categories in display order; Σ in-context categories = `inspect.contextTokens`.
 */
export function buildBreakdown(
  projection: Projection,
  inspect: InspectResult,
  reader: BodyReader,
  options: BreakdownOptions = {},
): BreakdownModel {
  const model = computeBreakdown(projection, inspect, reader, options);
  const fixed = inspect.fixedContext;
  if (fixed) model.fixed = buildFixedContextModel(fixed, model.scale);
  return model;
}

function computeBreakdown(
  projection: Projection,
  inspect: InspectResult,
  reader: BodyReader,
  options: BreakdownOptions,
): BreakdownModel {
  const topLimit = options.topLimit ?? 8;
  const entries = projection.entries;
  const usageId = inspect.estimate.method === "usage+estimate" ? inspect.estimate.lastUsageEntryId : null;
  const usageAt = usageId === null ? -1 : entries.findIndex((e) => e.record.id === usageId);

  // pi replays every system message into one: counted once
  const covered = usageAt >= 0 ? entries.slice(0, usageAt + 1) : entries;
  const trailing = usageAt >= 0 ? entries.slice(usageAt + 1) : [];
  const coveredProjection: Projection = { ...projection, entries: covered };
  const system = currentSystemMessage(coveredProjection);
  const systemParts: Parts = {};
  if (system) {
    const c = messageChars(system);
    const tokens = Math.ceil((c.text + c.thinking + c.toolCalls + c.images + c.tools) / 4);
    if (tokens > 0) systemParts.system = tokens;
  }
  const coveredParts = covered.map((e) => entryParts(e, reader, false));
  const trailingParts = trailing.map((e) => entryParts(e, reader, true));

  const coveredTotals: Parts = { ...systemParts };
  for (const ep of coveredParts)
    for (const [k, v] of Object.entries(ep.parts) as [CategoryId, number][])
      coveredTotals[k] = (coveredTotals[k] ?? 0) + v;
  const coveredEstimate = Object.values(coveredTotals).reduce((s, v) => s + (v ?? 0), 0);

  let scale = 1;
  let coveredScaled: Parts = coveredTotals;
  if (usageAt >= 0) {
    const usageTokens = inspect.estimate.usageTokens;
    if (coveredEstimate > 0) {
      scale = usageTokens / coveredEstimate;
      coveredScaled = allocate(usageTokens, coveredTotals);
    } else {
      coveredScaled = usageTokens > 0 ? { other: usageTokens } : {};
    }
  }

  const totals: Parts = { ...coveredScaled };
  const estimated: Parts = { ...coveredTotals };
  for (const ep of trailingParts) {
    for (const [k, v] of Object.entries(ep.parts) as [CategoryId, number][]) {
      totals[k] = (totals[k] ?? 0) + v;
      estimated[k] = (estimated[k] ?? 0) + v;
    }
  }

  // the headline is pi's number: anything not attributed goes to "other"
  const sum = CONTEXT_CATEGORIES.reduce((s, k) => s + (totals[k] ?? 0), 0);
  if (sum !== inspect.contextTokens) totals.other = (totals.other ?? 0) + (inspect.contextTokens - sum);

  const perCategory = new Map<CategoryId, CategoryEntry[]>();
  const counts = new Map<CategoryId, number>();
  const push = (k: CategoryId, record: EntryRecord, tokens: number) => {
    if (tokens <= 0) return;
    const list = perCategory.get(k) ?? [];
    list.push({ entryId: record.id, timestamp: record.timestamp, tokens, ...describe(record) });
    perCategory.set(k, list);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  };
  for (const ep of coveredParts)
    for (const [k, v] of Object.entries(ep.parts) as [CategoryId, number][]) push(k, ep.record, Math.round(v * scale));
  for (const ep of trailingParts)
    for (const [k, v] of Object.entries(ep.parts) as [CategoryId, number][]) push(k, ep.record, v);
  for (const e of covered)
    if (e.roles[0] === "system" && e.record.systemTokens > 0)
      push("system", e.record, Math.round(e.record.systemTokens * scale));

  const used = inspect.contextTokens;
  const window = inspect.contextWindow.value;
  const reserveTokens = inspect.reserveTokens.value;
  let free = 0;
  let reserve = 0;
  if (window && window > 0 && reserveTokens !== null) {
    const threshold = window - reserveTokens;
    free = Math.max(0, threshold - used);
    reserve = Math.min(reserveTokens, Math.max(0, window - Math.max(used, threshold)));
  } else if (window && window > 0) {
    free = Math.max(0, window - used);
  }

  const categories: CategoryModel[] = [];
  for (const id of CONTEXT_CATEGORIES) {
    const tokens = totals[id] ?? 0;
    if (id === "other" && tokens === 0) continue;
    const top = (perCategory.get(id) ?? []).sort((a, b) => b.tokens - a.tokens || a.entryId.localeCompare(b.entryId));
    categories.push({
      id,
      label: CATEGORY_LABELS[id],
      tokens,
      estimated: estimated[id] ?? 0,
      entryCount: counts.get(id) ?? 0,
      top: top.slice(0, topLimit),
    });
  }
  if (window && window > 0) {
    categories.push({ id: "free", label: CATEGORY_LABELS.free, tokens: free, estimated: free, entryCount: 0, top: [] });
    if (reserveTokens !== null)
      categories.push({
        id: "reserve",
        label: CATEGORY_LABELS.reserve,
        tokens: reserve,
        estimated: reserve,
        entryCount: 0,
        top: [],
      });
  }
  const total = categories.filter((c) => c.id !== "free" && c.id !== "reserve").reduce((s, c) => s + c.tokens, 0);
  return { categories, total, method: usageAt >= 0 ? "scaled" : "estimate", scale };
}
