import * as l10n from "@vscode/l10n";
import * as semver from "semver";
import type { SemVer } from "semver";
/**
 * The pi versions pi-context follows and the rule switches between them. One rule set covers pi
 * 0.87.0 … the current release (the conformance matrix runs 0.87.1, 1.0.3, 1.4.0, 1.5.2 and 1.6.0
 * as oracles); the switches below are the differences the study of 0.84.4 … 1.6.0 found in the
 * rules pi-context mirrors (`/work/shared/reference/pi-versions.md`, `docs/notes/pi-versions.md`).
 * Below 0.87 the numbers are computed with the 0.87+ rules and {@link rulesFor} carries a note that
 * says what differs.
 */

/** The pi version whose rules and catalog pi-context ships (the oracle of the single-version tests). */
export const REFERENCE_PI_VERSION = "1.6.0";

/** The oldest pi whose rules pi-context follows exactly. */
export const OLDEST_MATCHING_PI_VERSION = "0.87.0";

/**
 * A version as semver reads it: `1.5.2`, `v22.19.0`, `1.7.0-beta.1`; a bare `1` or `1.0` means `.0`.
 * Undefined for anything else (nothing is guessed out of other text).
 */
function semverOf(version: string): SemVer | undefined {
  const v = version.trim();
  return semver.parse(v, { loose: true }) ?? (/^v?\d+(\.\d+)?$/.test(v) ? semver.coerce(v) : null) ?? undefined;
}

/** `[major, minor, patch]` of a version such as `1.5.2` or `1.7.0-beta.1`; undefined for anything else. */
export function parseVersion(version: string): [number, number, number] | undefined {
  const v = semverOf(version);
  return v ? [v.major, v.minor, v.patch] : undefined;
}

/**
 * Compare versions by semver precedence: -1 when `a` is older than `b`, 0 when equal, 1 when newer
 * (`1.10.0` > `1.9.2`, `1.7.0-beta.1` < `1.7.0`, `v1.0` = `1.0.0`; build metadata is ignored). A
 * version that cannot be read is older than every readable one.
 */
export function compareVersions(a: string, b: string): number {
  const va = semverOf(a);
  const vb = semverOf(b);
  if (!va || !vb) return (va ? 1 : 0) - (vb ? 1 : 0);
  return semver.compare(va, vb);
}

/** True when `version` is `min` or newer (a pre-release of `min` is older than `min`). */
export function atLeast(version: string, min: string): boolean {
  return compareVersions(version, min) >= 0;
}

/**
 * Whether the Node `version` satisfies a `package.json` `engines.node` range (npm's range syntax:
 * `>=22.19.0`, `^22.19.0 || >=24`, `22.x`; a Node pre-release counts as its release line). No range
 * is no constraint. A range semver cannot read is not satisfied by any version: `nodeForPi` then runs
 * no Node and says which range it could not meet, instead of starting pi on a Node it may not run on.
 */
export function satisfiesEngine(version: string, range: string | undefined): boolean {
  if (range === undefined) return true;
  const v = semverOf(version);
  return !!v && semver.validRange(range) !== null && semver.satisfies(v, range, { includePrerelease: true });
}

/** The rule switches of one pi version (see {@link rulesFor}). */
export interface PiRules {
  /** The pi version these rules are for (the reference version when unknown). */
  version: string;
  /** pi ≥ 1.5.0: branch summaries apply `context_edit`s to the messages they summarize (before: the original messages). */
  branchSummaryContextEdits: boolean;
  /**
   * pi ≥ 1.3.0: models.json `contextWindow`/`maxTokens` must be > 0 (schema `exclusiveMinimum: 0`;
   * otherwise the whole file is ignored). Before, any number passes and the model keeps it.
   */
  modelsJsonPositiveLimits: boolean;
  /** pi ≥ 0.99: file operations of codemode calls recorded on a tool result (`nestedCalls`) count for compaction and branch-summary file lists; before, only assistant tool calls. */
  nestedCallFileOps: boolean;
  /** pi ≥ 0.99: the cached catalog (`models-store.json`) merges by model type + id and only chat models count; before, by id. */
  storeMergesByType: boolean;
  /** pi ≥ 1.3.0: OpenRouter's saved personalised list (`models-store.json`) replaces its catalog whenever non-empty. */
  openRouterPersonalized: boolean;
  /** pi ≥ 1.4.0 knows `--no-mcp` (older versions exit on the unknown flag). */
  noMcpFlag: boolean;
  /** Set below {@link OLDEST_MATCHING_PI_VERSION}: what pi-context computes differently from that pi, in words. */
  note?: string;
}

/**
 * The rules of a pi version; the reference version's rules when the version is unknown or not
 * parsable. Versions newer than the newest tested one get the newest rules.
 */
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

/**
 * Below pi 0.87: what differs, in words (from the study of 0.84.4 … 0.86.1); undefined from 0.87 on.
 */
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
