import * as l10n from "@vscode/l10n";
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
 * `[major, minor, patch]` of a version such as `1.5.2` (a pre-release or build suffix is ignored);
 * undefined for anything else.
 */
export function parseVersion(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/**
 * Compare dotted versions numerically: -1 when `a` is older than `b`, 0 when equal, 1 when newer
 * (`1.10.0` > `1.9.2`, `1.0` = `1.0.0`; a leading `v` and a `-pre`/`+build` suffix are ignored,
 * non-numeric parts compare as 0).
 */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .trim()
      .replace(/^v/, "")
      .replace(/[-+].*$/, "")
      .split(".")
      .map((x) => Number.parseInt(x, 10) || 0);
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** True when `version` is `min` or newer. */
export function atLeast(version: string, min: string): boolean {
  return compareVersions(version, min) >= 0;
}

/**
 * Whether `version` satisfies a `package.json` `engines` range of the simple kinds pi uses
 * (`>=22.19.0`, `>=22`, `^22.19.0`); an unknown range form counts as satisfied.
 */
export function satisfiesEngine(version: string, range: string | undefined): boolean {
  if (!range) return true;
  const m = /^\s*(>=|\^)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range);
  if (!m) return true;
  const min = `${m[2]}.${m[3] ?? 0}.${m[4] ?? 0}`;
  if (!atLeast(version, min)) return false;
  return m[1] !== "^" || parseVersion(version)?.[0] === Number(m[2]);
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
