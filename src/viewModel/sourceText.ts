/** Where pi's numbers come from, in words. Plain text: escape it where it goes into Markdown. */

import type { ResolvedWindow } from "../core/rules/inspect";
import type { PiReport } from "../core/pi/userPi";
import { REFERENCE_PI_VERSION } from "../core/pi/versions";
import { withPeriod } from "../shared/format";
import * as l10n from "@vscode/l10n";

/** `piContext.pi.path` is `machine-overridable`: local User settings are ignored in a remote window. */
export function piPathHint(): string {
  return l10n.t(
    "set piContext.pi.path — in User settings; in a remote window or code-server, in Remote settings or the workspace's settings",
  );
}

/** `place` `where`: the place inside the file (the surface names the file); `file`: path and place (CLI). */
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

/** `1.5.2 — the pi on the PATH (/usr/local/bin/pi)`, `1.6.0 — the running pi (pid 42, live bridge)`. */
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
