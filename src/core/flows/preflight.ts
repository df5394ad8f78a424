/**
 * Checks every write flow runs before any question or summarizer request: {@link assertPiCanOpen} (pi
 * 1.6.0 would loop, throw or resume elsewhere at that leaf, so writing would spend tokens for numbers pi
 * never has) and {@link unpairedAt} (providers reject tool results without their call).
 */

import { buildProjection } from "../rules/context";
import { contextFailure } from "../rules/estimateFailure";
import { analyzePairing, type PairingFinding } from "../rules/pairing";
import type { SessionView } from "../read/overlay";
import type { SessionFile } from "../read/session";
import { fileFindings } from "../health/fileChecks";
import { leafFindings } from "../health/leaf";
import { referenceFindings } from "../health/references";
import type { HealthFinding } from "../health/types";
import { UnsafeSessionWriteError } from "./write";
import * as l10n from "@vscode/l10n";

/** The doctor's findings that mean pi cannot open `session` at its leaf, with their repairs. */
export function piOpenProblems(session: SessionFile): HealthFinding[] {
  const projection = buildProjection(session);
  const out: HealthFinding[] = leafFindings({ oddTail: session.oddTail, records: session.records, byId: session.byId });
  const context = contextFailure(projection, session);
  const references = referenceFindings({
    records: session.records,
    byId: session.byId,
    projection,
    diagnostics: session.diagnostics,
  });
  out.push(
    ...references.filter(
      (f) => f.code === "path-cycle" || (f.code === "edit-invalid-replacement" && f.entryId === context?.editId),
    ),
  );
  if (context && context.editId === undefined)
    out.push(
      ...fileFindings({
        records: session.records,
        diagnostics: session.diagnostics,
        fileBytes: session.size,
        projection,
        contextWindow: undefined,
      }).filter((f) => f.code === "missing-message" && f.severity === "error"),
    );
  return out;
}

/**
 * Refuse when pi cannot open the session at its leaf, naming the problem and the doctor's repair.
 * @throws {UnsafeSessionWriteError} (nothing was sent or written).
 */
export function assertPiCanOpen(session: SessionFile, what: string, surface: "vscode" | "cli" = "vscode"): void {
  const problem = piOpenProblems(session)[0];
  if (!problem) return;
  const repair = problem.repair;
  const how =
    surface === "cli"
      ? l10n.t("pi-context doctor --repair {0}", JSON.stringify(session.filePath))
      : l10n.t("Pi Context: Check Session Health");
  throw new UnsafeSessionWriteError(
    l10n.t(
      "pi 1.6.0 cannot open this session where pi-context would write: {0} Refusing to {1} it: nothing was sent or written. {2}",
      problem.message,
      what,
      repair && repair.kind !== "compaction"
        ? l10n.t("Repair it first with {0}: it would {1}.", how, repair.description)
        : l10n.t("{0} shows what can be done.", how),
    ),
  );
}

/** Tool results pi would send without their call at `leafId`: providers reject the next request. */
export function unpairedAt(session: SessionView, leafId: string | null): PairingFinding[] {
  return analyzePairing(buildProjection(session, leafId), session).findings.filter((f) => f.severity === "error");
}
