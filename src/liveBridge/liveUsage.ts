/**
 * pi's live numbers over our file-based analysis (pi 1.6.0 `shouldCompact`: `enabled && tokens >
 * threshold`). Prices are the running pi's when sent: the installed pi may be another version.
 */

import type { Analysis } from "../core/rules/analyze";
import { buildProjection } from "../core/rules/context";
import { pricesOf } from "../core/rules/cost";
import { forecastCompaction } from "../core/rules/forecast";
import type { InspectResult } from "../core/rules/inspect";
import { formatTokens } from "../shared/format";
import type { BridgeState } from "../bridge/protocol";
import * as l10n from "@vscode/l10n";

/** Who the numbers come from. */
export interface LiveSource {
  pid: number;
  piVersion: string;
  bridgeVersion: string;
}

/** `ahead`: pi's leaf not read yet; `behind`: a compaction in the file pi has not reported. */
export function stateFit(analysis: Analysis, state: BridgeState): "same" | "ahead" | "behind" {
  const leaf = state.leafId;
  if (leaf === null || leaf === analysis.inspect.leafId) return "same";
  if (!analysis.session.byId.has(leaf)) return "ahead";
  // from the file's leaf back to pi's (near it, usually)
  const path = buildProjection(analysis.session, analysis.inspect.leafId).path;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.id === leaf) return "same";
    if (path[i]!.type === "compaction") return path.slice(0, i).some((r) => r.id === leaf) ? "behind" : "same";
  }
  return "same";
}

/** The state's numbers describe the file's context (see {@link stateFit}). */
export function stateMatches(analysis: Analysis, state: BridgeState): boolean {
  return stateFit(analysis, state) === "same";
}

/**
 * Without its own count (pi's `?`) a push shows the file's estimate, stale when the file is behind:
 * so `state` when it matches or brings a count, else the last matching one, else `state` without count.
 */
export function matchingState(analysis: Analysis, state: BridgeState, last: BridgeState | undefined): BridgeState {
  const fit = stateFit(analysis, state);
  if (fit === "same" || (fit === "ahead" && state.usage?.tokens != null)) return state;
  if (fit === "ahead" && last && stateMatches(analysis, last)) return last;
  return state.usage ? { ...state, usage: { ...state.usage, tokens: null, percent: null } } : state;
}

/** A new object; without live usage only the compaction settings are taken over. */
export function applyLiveState(analysis: Analysis, state: BridgeState, source: LiveSource): Analysis {
  const base = analysis.inspect;
  const inspect: InspectResult = { ...base };
  if (state.compaction) {
    inspect.compactionEnabled = { ...base.compactionEnabled, value: state.compaction.enabled };
    inspect.reserveTokens = { ...base.reserveTokens, value: state.compaction.reserveTokens };
    inspect.keepRecentTokens = { ...base.keepRecentTokens, value: state.compaction.keepRecentTokens };
  }
  if (state.model) inspect.model = { provider: state.model.provider, modelId: state.model.id };
  if (state.thinkingLevel) inspect.thinkingLevel = state.thinkingLevel;
  const usage = state.usage;
  if (usage && usage.contextWindow > 0) {
    const window = usage.contextWindow;
    inspect.contextWindow = {
      value: window,
      source: "live",
      detail: l10n.t("pi {0}, pid {1}", source.piVersion, source.pid),
    };
    inspect.usageKnown = usage.tokens !== null;
    if (usage.tokens !== null) inspect.contextTokens = usage.tokens;
    inspect.percent = usage.percent ?? (inspect.contextTokens / window) * 100;
    const reserve = inspect.reserveTokens.value;
    inspect.threshold = reserve !== null ? window - reserve : null;
    inspect.tokensUntilCompaction = inspect.threshold !== null ? inspect.threshold - inspect.contextTokens : null;
    inspect.shouldCompact =
      inspect.threshold !== null ? inspect.compactionEnabled.value && inspect.contextTokens > inspect.threshold : null;
    inspect.footer = `${usage.percent === null ? "?" : usage.percent.toFixed(1) + "%"}/${formatTokens(window)}${inspect.compactionEnabled.value ? " (auto)" : ""}`;
  }
  // the forecast ("≈ N turns until auto-compaction") against pi's numbers, not the file's threshold
  // (computed on first read, like the file-based one)
  let forecast: InspectResult["forecast"] | undefined;
  Object.defineProperty(inspect, "forecast", {
    get: () =>
      (forecast ??= forecastCompaction(buildProjection(analysis.session, base.leafId).path, {
        tokens: inspect.contextTokens,
        threshold: inspect.threshold,
        autoCompaction: inspect.compactionEnabled.value,
        usageKnown: inspect.usageKnown,
      })),
    enumerable: true,
    configurable: true,
  });
  const model = state.model;
  const livePrices = model ? pricesOf(model) : undefined;
  if (!model || !livePrices) {
    // an older bridge (no `cost`): the installed catalog's prices, for the running pi's model;
    // the Prices row names that resolution, not the running pi the window comes from
    if (model && (base.model?.provider !== model.provider || base.model.modelId !== model.id)) {
      inspect.cost = { ...inspect.cost, prices: analysis.prices(model.provider, model.id) ?? null };
      inspect.pricesFrom = {
        source: "catalog",
        where: `${model.provider}/${model.id}`,
        ...(base.contextWindow.catalog ? { catalog: base.contextWindow.catalog } : {}),
      };
    } else if (inspect.contextWindow !== base.contextWindow) inspect.pricesFrom = base.contextWindow;
    return { ...analysis, inspect, window: inspect.contextWindow };
  }
  inspect.cost = { ...inspect.cost, prices: livePrices };
  inspect.pricesFrom = { source: "live", detail: l10n.t("pi {0}, pid {1}", source.piVersion, source.pid) };
  const prices = (provider: string, modelId: string) =>
    provider === model.provider && modelId === model.id ? livePrices : analysis.prices(provider, modelId);
  return { ...analysis, inspect, window: inspect.contextWindow, prices };
}
