/** The user's pi for pi-context's numbers: the install found, its rules and catalog, and its JSON report. */

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

export interface UserPi {
  /** Undefined: the snapshot catalog and the reference rules apply. */
  install?: PiInstall;
  catalog: ModelCatalog;
  catalogProblem?: string;
  rules: PiRules;
  /** For "no pi found" explanations. */
  tried: LocateAttempt[];
  /** A `piContext.pi.path` VS Code does not apply there (User settings in a remote window), in a sentence. */
  settingIgnored?: string;
}

export interface PiReport {
  version: string | null;
  source: PiSource | "none";
  /** `the pi on the PATH (/usr/local/bin/pi)`. */
  sourceText: string;
  path: string | null;
  catalog: { name: string; piVersion: string; origin: CatalogOrigin; location: string; problem?: string };
  /** Below pi 0.87: what pi-context computes differently. */
  note?: string;
  /** The set `piContext.pi.path` is not usable: the reason (the numbers follow the next pi found, said). */
  settingProblem?: string;
  settingIgnored?: string;
}

/** Reads pi's catalog (cached by file stamps). Never throws. */
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

export const NO_USER_PI: UserPi = userPiOf(undefined);

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
