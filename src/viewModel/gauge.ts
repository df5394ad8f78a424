/** The gauge view model: selects and labels pi's numbers (`core/rules/inspect.ts`) and colours them. */

import { estimateFailureText } from "../core/rules/estimateFailure";
import type { InspectResult } from "../core/rules/inspect";
import type { GaugeModel } from "../shared/protocol";
import { piText, piWarnings, windowSourceText } from "./sourceText";

/** Undefined when pi compacts, or is not above the threshold (pi only prepares a compaction then). */
export function nothingToCompact(inspect: InspectResult): string | undefined {
  if (!inspect.shouldCompact) return undefined;
  return inspect.compaction === null ? inspect.compactionUnavailable : undefined;
}
/** Default warning margin (tokens before the threshold), as the `piContext.warning.margin` setting. */
export const DEFAULT_WARNING_MARGIN = 10000;

/** The colour of a gauge: by the distance to the limit pi compacts (or overflows) at. */
export type GaugeLevel = "normal" | "warning" | "error";

/** Where the colour limit is and why. */
export interface GaugeLimit {
  /** pi: strict `>`. */
  limit: number;
  kind: "threshold" | "window";
  /** Capped at a quarter of the limit. */
  margin: number;
}

/** pi's threshold when auto-compaction is on and `reserveTokens` valid, else the window. Null without a window. */
export function gaugeLimit(inspect: InspectResult, margin: number): GaugeLimit | null {
  const window = inspect.contextWindow.value;
  if (!window || window <= 0) return null;
  const useThreshold = inspect.compactionEnabled.value && inspect.threshold !== null;
  const limit = useThreshold ? (inspect.threshold as number) : window;
  return {
    limit,
    kind: useThreshold ? "threshold" : "window",
    margin: Math.max(0, Math.min(margin, Math.floor(Math.max(limit, 0) / 4))),
  };
}

/** `error` above the limit (pi compacts at its next check), `warning` within the margin below. */
export function gaugeLevel(inspect: InspectResult, margin: number): GaugeLevel {
  const limit = gaugeLimit(inspect, margin);
  if (!limit) return "normal";
  const tokens = inspect.contextTokens;
  if (tokens > limit.limit) return "error";
  if (limit.limit - tokens <= limit.margin) return "warning";
  return "normal";
}

export type GaugeColors = "threshold" | "piFooter";

/** pi's footer uses 0 % while it shows `?` (usage unknown). */
export function levelFor(inspect: InspectResult, margin: number, colors: GaugeColors = "threshold"): GaugeLevel {
  if (colors === "piFooter") return footerLevel(inspect.usageKnown ? inspect.percent : null);
  return gaugeLevel(inspect, margin);
}

/** pi's `footer.js`: > 90 % error, > 70 % warning; null → normal. */
export function footerLevel(percent: number | null): GaugeModel["level"] {
  if (percent === null) return "normal";
  if (percent > 90) return "error";
  if (percent > 70) return "warning";
  return "normal";
}

export function buildGauge(
  inspect: InspectResult,
  margin = DEFAULT_WARNING_MARGIN,
  colors: GaugeColors = "threshold",
  live?: { pid: number; piVersion: string },
): GaugeModel {
  const window = inspect.contextWindow.value ?? null;
  const gauge: GaugeModel = {
    used: inspect.contextTokens,
    window: window && window > 0 ? window : null,
    windowSource: inspect.contextWindow.source,
    windowSourceText: windowSourceText(inspect.contextWindow),
    reserveTokens: inspect.reserveTokens.value,
    reserveSource: inspect.reserveTokens.source,
    reserveKey: inspect.reserveTokens.key,
    keepRecentTokens: inspect.keepRecentTokens.value,
    keepRecentSource: inspect.keepRecentTokens.source,
    keepRecentKey: inspect.keepRecentTokens.key,
    threshold: inspect.threshold,
    tokensUntilCompaction: inspect.tokensUntilCompaction,
    percent: inspect.percent,
    autoCompaction: inspect.compactionEnabled.value,
    shouldCompact: inspect.shouldCompact,
    usageKnown: inspect.usageKnown,
    method: inspect.estimate.method,
    usageTokens: inspect.estimate.usageTokens,
    trailingTokens: inspect.estimate.trailingTokens,
    footer: inspect.footer,
    level: levelFor(inspect, margin, colors),
    levelBasis: colors,
    model: inspect.model ? `${inspect.model.provider}/${inspect.model.modelId}` : null,
    thinkingLevel: inspect.thinkingLevel,
    pi: piText(inspect.pi, live),
    piWarnings: piWarnings(inspect.pi),
  };
  if (inspect.pi?.path) gauge.piPath = inspect.pi.path;
  if (inspect.contextWindow.detail) gauge.windowDetail = inspect.contextWindow.detail;
  if (inspect.contextWindow.file) gauge.windowFile = inspect.contextWindow.file;
  if (inspect.reserveTokens.file) gauge.reserveFile = inspect.reserveTokens.file;
  if (inspect.keepRecentTokens.file) gauge.keepRecentFile = inspect.keepRecentTokens.file;
  const nothing = nothingToCompact(inspect);
  if (nothing !== undefined) gauge.nothingToCompact = nothing;
  if (inspect.estimateFailure) gauge.estimateFailure = estimateFailureText(inspect.estimateFailure);
  return gauge;
}
