/**
 * Two next steps of "Pi Context: Check Session Health" about lines pi skips:
 * - **End the last line as pi does** (a last line without `\n`: an interrupted write). pi 1.6.0
 *   appends one `\n` to such a file when it opens the session; doing the same now — asked first,
 *   through the route chooser (nobody may be writing that line) and `core/flows/repair.ts`
 *   `endFinalLine` — makes the file appendable, so the repair can follow.
 * - **Acknowledge a skipped line as harmless** (a fragment pi skips at every open): from then on it is
 *   a note, not a warning, on every surface (`core/health/acknowledged.ts`, kept outside the session).
 */

import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { acknowledgeLine } from "../core/health/acknowledged";
import type { HealthFinding } from "../core/health/types";
import { endFinalLine, type FinalLineResult, type RepairFlowOptions } from "../core/flows/repair";
import type { SessionRepairPlan } from "../core/flows/repair";
import type { Services } from "../services";
import { formatCount, pluralText } from "../shared/format";
import { visibleText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";
import * as notify from "../ui/notify";

/** The quick pick row that offers pi's fix, when the plan has a last line without `\n`. */
export function endLineItem(plan: SessionRepairPlan): (vscode.QuickPickItem & { action: "end-line" }) | undefined {
  if (plan.tornLineBytes === undefined) return undefined;
  return {
    label: vscode.l10n.t("$(newline) End the last line as pi does"),
    description: vscode.l10n.t("appends one newline; asked first"),
    detail: vscode.l10n.t(
      "The last line ({0}) has no newline: a write was interrupted. pi appends a newline when it next opens the session and skips the fragment; doing that now lets the repair append after it.",
      pluralText(plan.tornLineBytes, vscode.l10n.t("{0} byte"), vscode.l10n.t("{0} bytes")),
    ),
    action: "end-line",
  };
}

/** One row per skipped line that can be acknowledged as harmless (not yet acknowledged). */
export function acknowledgeItems(
  findings: readonly HealthFinding[],
): (vscode.QuickPickItem & { action: "acknowledge"; finding: HealthFinding })[] {
  return findings
    .filter((f) => f.skippedLine && !f.acknowledged)
    .map((f) => ({
      label: vscode.l10n.t("$(pass) Acknowledge line {0} as harmless", f.line ?? "?"),
      description: vscode.l10n.t("pi skips it; a note from now on"),
      detail: vscode.l10n.t(
        "Stored outside the session (for this file and exactly this line, {0}); the file is not changed.",
        pluralText(f.skippedLine!.bytes, vscode.l10n.t("{0} byte"), vscode.l10n.t("{0} bytes")),
      ),
      action: "acknowledge" as const,
      finding: f,
    }));
}

/** What {@link endLastLine} did. */
export type EndLineOutcome =
  { kind: "ended"; result: FinalLineResult } | { kind: "declined" } | { kind: "failed"; message: string };

/**
 * Ask, then end the last line of `file` as pi does (one `\n`). The route comes first: a pi that has
 * the session open, or a write moments ago, may be in the middle of that line (refused, with
 * *Anyway* where the evidence allows).
 */
export async function endLastLine(
  services: Services,
  file: string,
  name: string,
  flowOptions: (force: boolean) => RepairFlowOptions,
  options: { force?: boolean; skipPreview?: boolean; retry: () => void },
): Promise<EndLineOutcome> {
  const route = await services.access.route(file, ACTIONS.endLine, {
    force: options.force === true,
    retry: options.retry,
  });
  if (route.kind === "refuse") return { kind: "failed", message: route.message };
  if (route.kind === "bridge") return { kind: "failed", message: "internal error: no bridge route for end-line" };
  if (!options.skipPreview && !(await confirmEndLine(name))) return { kind: "declined" };
  try {
    const result = await endFinalLine(file, { ...flowOptions(route.forced), surface: "vscode" });
    services.log.info(
      `health ${file}: ended the last line (${result.lineBytes} bytes) with a newline, ${result.bytesBefore} → ${result.bytesAfter} bytes`,
    );
    void notify.info(
      vscode.l10n.t(
        "Ended the last line of {0} as pi does (appended a newline after its {1}); pi skips that fragment.",
        name,
        pluralText(result.lineBytes, vscode.l10n.t("{0} byte"), vscode.l10n.t("{0} bytes")),
      ),
    );
    await services.sessions.refresh();
    return { kind: "ended", result };
  } catch (error) {
    const failure = notify.reportFlowFailure(services.log, {
      operation: vscode.l10n.t("Ending the last line"),
      logPrefix: "health",
      file,
      error,
      configActions: [],
      refused: (e) => services.access.showRefusal(e, file, options.retry),
    });
    return { kind: "failed", message: failure.message };
  }
}

/** The question before the newline (a quick pick, as every preview of ours). */
async function confirmEndLine(name: string): Promise<boolean> {
  type Item = vscode.QuickPickItem & { go: boolean };
  const pick = await vscode.window.showQuickPick<Item>(
    safePickItems([
      {
        label: vscode.l10n.t("$(check) Append a newline"),
        description: vscode.l10n.t("1 byte at the end; nothing else changes"),
        detail: vscode.l10n.t(
          "What pi 1.6.0 itself does when it opens a session whose last line has no newline. The fragment stays in the file as a line pi skips.",
        ),
        go: true,
      },
      { label: vscode.l10n.t("$(close) Cancel"), description: vscode.l10n.t("nothing is written"), go: false },
    ]),
    {
      title: visibleText(vscode.l10n.t("End the last line of {0} as pi does?", name)),
      placeHolder: vscode.l10n.t("pi-context appends nothing after an incomplete line otherwise"),
      ignoreFocusOut: true,
    },
  );
  return pick?.go === true;
}

/**
 * Acknowledge a skipped line of `file` as harmless (stored outside the session); the surfaces show
 * it as a note from their next look. @returns false (and says why) when it could not be stored.
 */
export async function acknowledgeSkippedLine(
  services: Services,
  plan: SessionRepairPlan,
  finding: HealthFinding,
  name: string,
): Promise<boolean> {
  const identity = plan.session.fileIdentity;
  if (!identity || !finding.skippedLine) return false;
  try {
    acknowledgeLine(plan.file, identity, finding.skippedLine);
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`health ${plan.file}: could not store the acknowledgement: ${message}`);
    void notify.error(vscode.l10n.t("Could not store the acknowledgement: {0}", message));
    return false;
  }
  services.log.info(
    `health ${plan.file}: line ${finding.line ?? "?"} (${formatCount(finding.skippedLine.bytes)} bytes at offset ${finding.skippedLine.offset}) acknowledged as harmless`,
  );
  void notify.info(
    vscode.l10n.t(
      "Line {0} of {1} acknowledged as harmless: it shows as a note from now on.",
      finding.line ?? "?",
      name,
    ),
  );
  await services.sessions.refresh();
  return true;
}
