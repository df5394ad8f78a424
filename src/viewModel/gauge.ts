/**
 * The gauge view model: pi's numbers at the leaf (`InspectResult`) in the shape the panel draws.
 * No computation of pi's rules here — `src/core/inspect.ts` did that; this only selects, labels
 * and derives the colour — the same as the status bar's: by the distance to the real
 * auto-compaction threshold (`window − reserveTokens`), see `statusBarModel.ts`.
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import type { InspectResult } from "../core/rules/inspect";
import type { GaugeModel } from "../shared/protocol";
import { piText, piWarnings, windowSourceText } from "./sourceText";

/**
 * Why pi would not compact although it is above the threshold: the reason there is nothing to
 * compact (`inspect.compactionUnavailable`), or undefined (it compacts; or it is not above the
 * threshold — the compaction is prepared only then, it reads the kept tail).
 */
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
  /** Tokens at which the colour turns to error when exceeded (pi: strict `>`). */
  limit: number;
  kind: "threshold" | "window";
  /** Warning starts at `limit − margin` (margin capped at a quarter of the limit). */
  margin: number;
}

/**
 * The limit the colour is measured against: pi's auto-compaction threshold when auto-compaction is
 * on and `reserveTokens` is valid, else the context window itself (pi will not compact before the
 * provider overflows). `null` without a known window.
 */
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

/**
 * The colour level: `error` when the tokens pi's threshold check uses are above the limit (pi
 * auto-compacts at its next check), `warning` within the margin below it, else `normal`.
 */
export function gaugeLevel(inspect: InspectResult, margin: number): GaugeLevel {
  const limit = gaugeLimit(inspect, margin);
  if (!limit) return "normal";
  const tokens = inspect.contextTokens;
  if (tokens > limit.limit) return "error";
  if (limit.limit - tokens <= limit.margin) return "warning";
  return "normal";
}

/**
 * How the gauge is coloured (`piContext.gauge.colors`): by the distance to pi's auto-compaction
 * threshold (`threshold`, {@link gaugeLevel}) or like pi's own footer (`piFooter`, {@link footerLevel}).
 */
export type GaugeColors = "threshold" | "piFooter";

/** The colour level under a colour mode; pi's footer uses 0 % while it shows `?` (usage unknown). */
export function levelFor(inspect: InspectResult, margin: number, colors: GaugeColors = "threshold"): GaugeLevel {
  if (colors === "piFooter") return footerLevel(inspect.usageKnown ? inspect.percent : null);
  return gaugeLevel(inspect, margin);
}

/** pi's own footer colour for a percentage (`footer.js`: > 90 % error, > 70 % warning; null → normal). */
export function footerLevel(percent: number | null): GaugeModel["level"] {
  if (percent === null) return "normal";
  if (percent > 90) return "error";
  if (percent > 70) return "warning";
  return "normal";
}

/**
 * The gauge of one inspect result.
 * @param margin tokens before the threshold where the gauge turns to warning (`piContext.warning.margin`).
 * @param colors the colour mode (`piContext.gauge.colors`).
 */
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
