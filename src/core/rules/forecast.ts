/**
 * "≈ N turns until auto-compaction": how many more requests (pi's turns: one assistant answer
 * each, with its tool results) fit below pi's threshold at the recent growth per turn.
 *
 * Basis: the context sizes the provider reported (`calculateContextTokens(usage)` of trusted
 * assistant usages, the history chart's points) on the path since the latest compaction; growth =
 * the mean of the last {@link FORECAST_WINDOW} differences between consecutive turns (the mean, not
 * the median: a pasted log is part of the growth the next turns will also see). Shown only when it
 * means something: auto-compaction on, pi's threshold and current usage known, at least
 * {@link FORECAST_MIN_TURNS} differences since the compaction, the context growing, below the
 * threshold, and at most {@link FORECAST_MAX_TURNS} turns away.
 */

import type { EntryRecord } from "../read/entries";
import * as l10n from "@vscode/l10n";

/** Differences averaged. */
export const FORECAST_WINDOW = 10;
/** Fewer differences than this: no forecast. */
export const FORECAST_MIN_TURNS = 3;
/** Further than this: no forecast ("not soon" is all one could say). */
export const FORECAST_MAX_TURNS = 500;

/** A forecast, with its basis. */
export interface Forecast {
  /** ≈ turns until pi auto-compacts (the turn whose answer first exceeds the threshold). */
  turns: number;
  /** Mean tokens added per turn over the basis. */
  growthPerTurn: number;
  /** Number of turn-to-turn differences averaged. */
  basisTurns: number;
  /** The first and last turn (assistant entry ids) of the basis. */
  fromEntryId: string;
  toEntryId: string;
  /** threshold − tokens now. */
  remainingTokens: number;
  threshold: number;
}

/** What the forecast needs from the inspect result. */
export interface ForecastInput {
  /** pi's projected estimate now. */
  tokens: number;
  threshold: number | null;
  autoCompaction: boolean;
  /** False right after a compaction (pi shows `?`). */
  usageKnown: boolean;
}

/** Why there is no forecast (shown nowhere but `inspect --json` and the tooltip's basis). */
export interface NoForecast {
  unavailable: string;
}

/** True when pi trusts this assistant's usage (the history chart's rule). */
function trusted(r: EntryRecord): boolean {
  return (
    r.type === "message" &&
    r.role === "assistant" &&
    r.stopReason !== "aborted" &&
    r.stopReason !== "error" &&
    r.usageTokens > 0
  );
}

/** The forecast at the leaf of `path` (root → leaf), or why there is none. */
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
  const points = path.slice(start).filter(trusted);
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

/** Type guard. */
export function hasForecast(f: Forecast | NoForecast): f is Forecast {
  return (f as Forecast).turns !== undefined;
}
