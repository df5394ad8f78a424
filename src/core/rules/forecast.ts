/**
 * "≈ N turns until auto-compaction": the mean growth of the last {@link FORECAST_WINDOW} reported
 * context sizes since the latest compaction (the mean: a pasted log is growth later turns also see).
 * Shown only when auto-compaction is on, the numbers are known, and the context grows below the threshold.
 */

import type { EntryRecord } from "../read/entries";
import { hasTrustedUsage } from "./tokens";
import * as l10n from "@vscode/l10n";

export const FORECAST_WINDOW = 10;
export const FORECAST_MIN_TURNS = 3;
/** Further than this: no forecast ("not soon" is all one could say). */
export const FORECAST_MAX_TURNS = 500;

export interface Forecast {
  /** The turn whose answer first exceeds the threshold. */
  turns: number;
  growthPerTurn: number;
  basisTurns: number;
  /** Assistant entry ids of the basis' first and last turn. */
  fromEntryId: string;
  toEntryId: string;
  remainingTokens: number;
  threshold: number;
}

export interface ForecastInput {
  /** pi's projected estimate now. */
  tokens: number;
  threshold: number | null;
  autoCompaction: boolean;
  /** False right after a compaction (pi shows `?`). */
  usageKnown: boolean;
}

export interface NoForecast {
  unavailable: string;
}

export function forecastCompaction(path: readonly EntryRecord[], input: ForecastInput): Forecast | NoForecast {
  if (!input.autoCompaction) return { unavailable: l10n.t("auto-compaction is off") };
  if (input.threshold === null) return { unavailable: l10n.t("the threshold is unknown") };
  if (!input.usageKnown) return { unavailable: l10n.t("no answer since the last compaction") };
  const remaining = input.threshold - input.tokens;
  if (remaining <= 0) return { unavailable: l10n.t("already above the threshold") };
  let start = 0;
  for (let i = path.length - 1; i >= 0; i--)
    if (path[i]!.type === "compaction") {
      start = i + 1;
      break;
    }
  const points = path.slice(start).filter(hasTrustedUsage);
  const basis = points.slice(-(FORECAST_WINDOW + 1));
  if (basis.length - 1 < FORECAST_MIN_TURNS)
    return { unavailable: l10n.t("fewer than {0} turns since the last compaction", FORECAST_MIN_TURNS) };
  const first = basis[0]!;
  const last = basis[basis.length - 1]!;
  const growth = (last.usageTokens - first.usageTokens) / (basis.length - 1);
  if (!(growth > 0)) return { unavailable: l10n.t("the context is not growing") };
  const turns = Math.max(1, Math.ceil(remaining / growth));
  if (turns > FORECAST_MAX_TURNS) return { unavailable: l10n.t("more than {0} turns away", FORECAST_MAX_TURNS) };
  return {
    turns,
    growthPerTurn: growth,
    basisTurns: basis.length - 1,
    fromEntryId: first.id,
    toEntryId: last.id,
    remainingTokens: remaining,
    threshold: input.threshold,
  };
}

export function hasForecast(f: Forecast | NoForecast): f is Forecast {
  return (f as Forecast).turns !== undefined;
}
