import * as l10n from "@vscode/l10n";
import * as semver from "semver";
import type { SemVer } from "semver";
/**
 * The pi versions pi-context follows (0.87.0 … current; the conformance matrix runs several as
 * oracles) and the rule switches between them (`docs/notes/pi-versions.md`). Below 0.87 the 0.87+
 * rules apply and {@link rulesFor} carries a note.
 */

/** The oracle of the single-version tests. */
export const REFERENCE_PI_VERSION = "1.6.0";

export const OLDEST_MATCHING_PI_VERSION = "0.87.0";

/** `1.5.2`, `v22.19.0`, `1.7.0-beta.1`; a bare `1` or `1.0` means `.0`; nothing guessed from other text. */
function semverOf(version: string): SemVer | undefined {
  const v = version.trim();
  return semver.parse(v, { loose: true }) ?? (/^v?\d+(\.\d+)?$/.test(v) ? semver.coerce(v) : null) ?? undefined;
}

export function parseVersion(version: string): [number, number, number] | undefined {
  const v = semverOf(version);
  return v ? [v.major, v.minor, v.patch] : undefined;
}

/** Semver precedence: -1 / 0 / 1; an unreadable version is older than every readable one. */
export function compareVersions(a: string, b: string): number {
  const va = semverOf(a);
  const vb = semverOf(b);
  if (!va || !vb) return (va ? 1 : 0) - (vb ? 1 : 0);
  return semver.compare(va, vb);
}

/** A pre-release of `min` is older than `min`. */
export function atLeast(version: string, min: string): boolean {
  return compareVersions(version, min) >= 0;
}

/**
 * Node `version` satisfies npm range `range` (a pre-release counts as its release line; no range: true).
 * An unreadable range is never satisfied: better no Node than one pi may not run on.
 */
export function satisfiesEngine(version: string, range: string | undefined): boolean {
  if (range === undefined) return true;
  const v = semverOf(version);
  return !!v && semver.validRange(range) !== null && semver.satisfies(v, range, { includePrerelease: true });
}

export interface PiRules {
  version: string;
  /** pi ≥ 1.5.0: branch summaries apply `context_edit`s to what they summarize. */
  branchSummaryContextEdits: boolean;
  /** pi ≥ 1.3.0: models.json limits must be > 0, or the whole file is ignored. */
  modelsJsonPositiveLimits: boolean;
  /** pi ≥ 0.99: codemode calls on a tool result (`nestedCalls`) count for file lists. */
  nestedCallFileOps: boolean;
  /** pi ≥ 0.99: `models-store.json` merges by model type + id, chat models only; before, by id. */
  storeMergesByType: boolean;
  /** pi ≥ 1.3.0: OpenRouter's saved personalised list replaces its catalog whenever non-empty. */
  openRouterPersonalized: boolean;
  /** pi ≥ 1.4.0 (older versions exit on the unknown flag). */
  noMcpFlag: boolean;
  note?: string;
}

/** Unknown or unparsable: the reference rules; newer than tested: the newest rules. */
export function rulesFor(version: string | undefined): PiRules {
  const v = version && parseVersion(version) ? version : REFERENCE_PI_VERSION;
  const rules: PiRules = {
    version: v,
    branchSummaryContextEdits: atLeast(v, "1.5.0"),
    nestedCallFileOps: atLeast(v, "0.99.0"),
    modelsJsonPositiveLimits: atLeast(v, "1.3.0"),
    storeMergesByType: atLeast(v, "0.99.0"),
    openRouterPersonalized: atLeast(v, "1.3.0"),
    noMcpFlag: atLeast(v, "1.4.0"),
  };
  const note = olderPiNote(v);
  if (note) rules.note = note;
  return rules;
}

/** Below pi 0.87: what differs, in words; undefined from 0.87 on. */
export function olderPiNote(version: string): string | undefined {
  if (atLeast(version, OLDEST_MATCHING_PI_VERSION)) return undefined;
  const changes = [
    l10n.t("how the context is built after several compactions (older compactions re-appear in pi before 0.87)"),
    l10n.t("how system messages count (0 tokens before 0.87)"),
    l10n.t("how the gauge is computed (last usage + estimate, without pi 0.87's projection)"),
    l10n.t("where compaction cuts (pi before 0.87 prepares on the raw path)"),
  ];
  if (!atLeast(version, "0.86.0"))
    changes.push(l10n.t("settings (`compaction.modelOverrides` and setting validation only exist from 0.86)"));
  return l10n.t(
    "Numbers may differ from your pi {0}: pi 0.87 changed {1}. pi-context follows pi 0.87 and later; update pi for exact numbers.",
    version,
    changes.join(", "),
  );
}
