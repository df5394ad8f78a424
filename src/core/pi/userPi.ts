/**
 * The user's pi as far as pi-context's numbers are concerned: which pi was found (and where), its
 * version's rules, and its model catalog — plus the plain JSON report `pi-context inspect --json`
 * prints as `pi` and every surface names in words.
 */

import { catalogFor, type CatalogOrigin, type ModelCatalog } from "./catalog";
import {
  piSourceText,
  SETTING_LABEL,
  type LocateAttempt,
  type PiInstall,
  type PiLocation,
  type PiSource,
} from "./locate";
import { REFERENCE_PI_VERSION, rulesFor, type PiRules } from "./versions";

/** The pi the numbers follow. */
export interface UserPi {
  /** The pi found; undefined when none was (then the snapshot catalog and the reference rules apply). */
  install?: PiInstall;
  catalog: ModelCatalog;
  /** Why the pi's own catalog could not be read (the snapshot is used). */
  catalogProblem?: string;
  rules: PiRules;
  /** Everything looked at, for "no pi found" explanations. */
  tried: LocateAttempt[];
  /**
   * A `piContext.pi.path` the user set where VS Code does not apply it (User settings in a remote
   * window), in a sentence saying where it must go; the lookup went on without it.
   */
  settingIgnored?: string;
}

/** What `pi-context inspect --json` prints as `pi`. */
export interface PiReport {
  /** pi's version; null when no pi was found. */
  version: string | null;
  /** Where it was found (`path`, `login-shell`, `managed`, `npm-global`, `setting`, `flag`, `running`), `none`. */
  source: PiSource | "none";
  /** The same in words, with the path: `the pi on the PATH (/usr/local/bin/pi)`. */
  sourceText: string;
  /** pi's package dir; null when none was found. */
  path: string | null;
  /** The built-in model catalog the windows start from. */
  catalog: { name: string; piVersion: string; origin: CatalogOrigin; location: string; problem?: string };
  /** Below pi 0.87: what pi-context computes differently (see `versions.ts`). */
  note?: string;
  /**
   * The pi the user pointed at (setting `piContext.pi.path`) is not usable, with the reason: the
   * numbers follow the pi found next (or none) — said, never silently.
   */
  settingProblem?: string;
  /** A `piContext.pi.path` VS Code does not apply where the user set it (see {@link UserPi.settingIgnored}). */
  settingIgnored?: string;
}

/** The {@link UserPi} for a lookup result (reads pi's catalog; cached by file stamps). Never throws. */
export function userPiOf(location: PiLocation | undefined): UserPi {
  const install = location?.pi;
  const lookup = catalogFor(install);
  const pi: UserPi = {
    catalog: lookup.catalog,
    rules: rulesFor(install?.version),
    tried: location?.tried ?? [],
  };
  if (install) pi.install = install;
  if (lookup.problem) pi.catalogProblem = lookup.problem;
  return pi;
}

/** No pi found: pi-context's snapshot and the reference version's rules. */
export const NO_USER_PI: UserPi = userPiOf(undefined);

/** The JSON report of a {@link UserPi}. */
export function piReport(pi: UserPi): PiReport {
  const install = pi.install;
  const report: PiReport = {
    version: install?.version ?? null,
    source: install?.source ?? "none",
    sourceText: install
      ? piSourceText(install)
      : `no pi found (looked at ${pi.tried.length ? pi.tried.map((t) => t.where).join(", ") : "nothing"}); numbers follow pi ${REFERENCE_PI_VERSION}`,
    path: install?.packageDir ?? null,
    catalog: {
      name: pi.catalog.name,
      piVersion: pi.catalog.piVersion,
      origin: pi.catalog.origin,
      location: pi.catalog.location,
      ...(pi.catalogProblem ? { problem: pi.catalogProblem } : {}),
    },
  };
  if (pi.rules.note) report.note = pi.rules.note;
  const setting = pi.tried.find((t) => t.where === SETTING_LABEL);
  if (setting && install?.source !== "setting") report.settingProblem = `${SETTING_LABEL}: ${setting.result}`;
  if (pi.settingIgnored) report.settingIgnored = pi.settingIgnored;
  return report;
}
