/**
 * Where pi's numbers come from, in words, for every surface (status-bar tooltip, panel, CLI).
 * Plain text: escape it for Markdown where it goes into Markdown.
 */

import type { ResolvedWindow } from "../core/rules/inspect";
import type { PiReport } from "../core/pi/userPi";
import { REFERENCE_PI_VERSION } from "../core/pi/versions";
import { withPeriod } from "../shared/format";
import * as l10n from "@vscode/l10n";

/**
 * Where `piContext.pi.path` takes effect (its scope is `machine-overridable`): a value in the local
 * User settings is ignored in a remote window (code-server, SSH, WSL, containers), where the Remote
 * settings or the workspace's settings apply — said wherever we ask the user to set it (trial).
 */
export function piPathHint(): string {
  return l10n.t(
    "set piContext.pi.path — in User settings; in a remote window or code-server, in Remote settings or the workspace's settings",
  );
}

/**
 * Where a context window came from, in words: `models.json: providers.scripted, model
 * scripted-small`, `pi 1.5.2's model catalog (openai/gpt-4o)`, `pi-context's snapshot of pi
 * 1.6.0's catalog (openai/gpt-4o)`, `models-store.json: cached catalog for openai`, `the running pi
 * (pi 1.6.0, pid 42)`. Plain text (escape it for Markdown).
 * @param place `where` (default): the place inside the file, without its path (the tooltip and the
 *   panel name the file separately); `file`: the file's path and the place (`models.json:
 *   /…/models.json (providers.scripted.models, id scripted-small)`, for the CLI).
 */
export function windowSourceText(
  w: Pick<ResolvedWindow, "source" | "detail" | "where" | "catalog">,
  place: "where" | "file" = "where",
): string {
  const at = place === "file" ? (w.detail ?? w.where) : w.where;
  switch (w.source) {
    case "catalog":
      if (place === "file" && w.catalog && w.detail) return w.detail;
      return `${w.catalog ?? l10n.t("pi's built-in model catalog")}${w.where ? ` (${w.where})` : ""}`;
    case "models-store":
      return `models-store.json${at ? `: ${at}` : ""}`;
    case "models-json":
    case "models-json-override":
      return `models.json${at ? `: ${at}` : ""}`;
    case "live":
      return l10n.t("the running pi{0}", w.detail ? ` (${w.detail})` : "");
    case "given":
      return l10n.t("given explicitly (--context-window)");
    case "unknown":
      return w.detail ?? "unknown";
  }
}

/**
 * Which pi the numbers follow, in words (tooltip, panel): `1.5.2 — the pi on the PATH
 * (/usr/local/bin/pi)`, `1.6.0 — the running pi (pid 42, live bridge)`, or `none found …`. Plain text.
 * @param live the running pi with the live bridge, when it serves the session.
 */
export function piText(report: PiReport | undefined, live?: { pid: number; piVersion: string }): string {
  if (live) {
    const installed =
      report?.version && report.version !== live.piVersion
        ? l10n.t("; installed: {0}, {1}", report.version, report.sourceText)
        : "";
    return l10n.t("{0} — the running pi (pid {1}, live bridge){2}", live.piVersion, live.pid, installed);
  }
  if (!report) return "unknown";
  if (!report.version)
    return l10n.t(
      "none found — numbers follow pi {0} (to point at yours, {1})",
      report.catalog.piVersion,
      piPathHint(),
    );
  return `${report.version} — ${report.sourceText}`;
}

/** What the user should know about the pi the numbers follow: an older pi's note, an unreadable catalog. */
export function piWarnings(report: PiReport | undefined): string[] {
  if (!report) return [];
  const out: string[] = [];
  if (report.settingProblem)
    out.push(
      l10n.t(
        "{0} The numbers follow {1} instead.",
        withPeriod(report.settingProblem),
        report.version
          ? l10n.t("pi {0} ({1})", report.version, report.sourceText)
          : l10n.t("pi {0} (no pi found)", REFERENCE_PI_VERSION),
      ),
    );
  if (report.settingIgnored) out.push(report.settingIgnored);
  if (report.note) out.push(report.note);
  if (report.catalog.problem)
    out.push(l10n.t("{0} Windows come from {1}.", withPeriod(report.catalog.problem), report.catalog.name));
  return out;
}
