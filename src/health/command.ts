/**
 * "Pi Context: Check Session Health" (`piContext.checkHealth`): the session doctor (`core/health/`) on a
 * session file, its findings in a quick pick (errors first; picking one shows its entry in the
 * Pi Session tree, or the file at its line), and the repairs: a preview of exactly what is appended
 * (one item per entry, its JSON line) before the one append of `core/flows/repair.ts`; a
 * compaction offered through "Pi Context: Compact Session…" where that is the fix. Never rewrites a file.
 *
 * `piContext.checkHealth(file?, options?)`: `file` = a session path or URI (default: the current
 * session); `options.repair` goes straight to the repair preview; `options.skipPreview` appends
 * without the preview (tests, scripts). Resolves with a {@link HealthCommandOutcome}.
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { healthCounts } from "../core/health/doctor";
import { sessionLabel } from "../core/rules/sessionLabel";
import type { HealthFinding } from "../core/health/types";
import { planSessionRepair, runRepairFlow, type RepairFlowOptions, type SessionRepairPlan } from "../core/flows/repair";
import { expandHome, getAgentDir } from "../core/rules/settings";
import type { ContextEditEntry, SessionEntry } from "../core/types";
import type { Services } from "../services";
import { pluralText } from "../shared/format";
import { iconLabelText, visibleText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";
import * as notify from "../ui/notify";
import { healthTitle } from "../viewModel/health";
import { entryWordsOf } from "../viewModel/treeText";
import { acknowledgeItems, acknowledgeSkippedLine, endLastLine, endLineItem } from "./skippedLines";

/** Options of `piContext.checkHealth`. */
export interface HealthCommandOptions {
  /** Go straight to the repair preview (when there is something to append). */
  repair?: boolean;
  /** Append without the preview. */
  skipPreview?: boolean;
  /** *Anyway* after a refusal whose evidence is only probable or possible. */
  force?: boolean;
}

/** What `piContext.checkHealth` did. */
export type HealthCommandOutcome =
  | { kind: "no-session" }
  | { kind: "healthy"; file: string }
  /** The findings were shown; `picked` is the finding the user opened (its code), if any. */
  | { kind: "shown"; file: string; errors: number; warnings: number; infos: number; picked?: string }
  /**
   * Appended (`live` absent: by us, `errorsAfter` read back) or, when a running pi with the live
   * bridge has the session, by pi itself (`live`: `applied`, or `queued` for its next turn
   * boundary; `errorsAfter` is the doctor on the planned entries).
   */
  | {
      kind: "repaired";
      file: string;
      appended: number;
      errorsBefore: number;
      errorsAfter: number;
      live?: "applied" | "queued";
    }
  | { kind: "declined"; file: string }
  | { kind: "compact"; file: string }
  /** The last line was ended as pi does (one `\n`); `then`: what followed (the repair, or the findings again). */
  | { kind: "line-ended"; file: string; lineBytes: number; then: HealthCommandOutcome }
  /** A skipped line was acknowledged as harmless (1-based line). */
  | { kind: "acknowledged"; file: string; line: number | undefined }
  | { kind: "failed"; file: string; message: string };

const SEVERITY_ICON = { error: "$(error)", warning: "$(warning)", info: "$(info)" } as const;
const DETAIL_MAX = 300;

/** One line, at most `max` characters. */
function short(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/**
 * What an appended entry does, in words: `context_edit: omit “export const a = 1;” (t1)`,
 * `leaf marker: pi resumes at “…” (u2)` — the target by its text as the tree shows it when the
 * session is given, its id after it.
 */
export function entryWords(entry: SessionEntry, session?: SessionRepairPlan["session"]): string {
  const e = entry as unknown as Record<string, unknown>;
  const target = (id: unknown): string => {
    const words = session ? entryWordsOf(String(id), session) : String(id);
    return words === String(id) ? words : `${words} (${String(id)})`;
  };
  if (e.type === "context_edit")
    return `context_edit: ${e.replacement === null ? "omit" : "restore the content of"} ${target(e.targetId)}`;
  if (e.type === "custom" && e.customType === "pi-context/leaf")
    return vscode.l10n.t(
      "leaf marker: pi resumes at {0}",
      target((e.data as { targetId?: unknown } | undefined)?.targetId),
    );
  return String(e.type);
}

/** The "after the repair" sentence of a plan. */
function afterText(plan: SessionRepairPlan): string {
  const after = plan.repair.after;
  return after.errors === 0
    ? vscode.l10n.t(
        "Checked on the session as if appended: no error remains{0}.",
        after.warnings || after.infos ? ` (${healthCounts(after)})` : "",
      )
    : vscode.l10n.t(
        "Checked on the session as if appended: {0} remain (only pi or a person can fix those).",
        healthCounts(after),
      );
}

/** Registers the command (and nothing else: the log and the tree read the doctor themselves). */
export class HealthCommand {
  constructor(private readonly services: Services) {}

  private options(force = false): RepairFlowOptions {
    const config = this.services.config();
    const current = this.services.sessions.current;
    return {
      agentDir: current?.agentDir ?? (config.agentDir ? expandHome(config.agentDir) : getAgentDir()),
      projectSettings: config.projectSettings,
      ...this.services.access.flowOptions(force),
      pi: this.services.pi.current,
    };
  }

  /** The session as every surface names it, in quotes: its label (pi's rule), not the file name. */
  private async titleOf(file: string): Promise<string> {
    const current = this.services.sessions.current;
    const label =
      current?.file === file ? current.label : sessionLabel((await this.services.sessions.sessionInfo(file)) ?? {});
    return `“${label}”`;
  }

  /** `piContext.checkHealth(file?, options?)`. */
  async run(arg?: unknown, options: HealthCommandOptions = {}): Promise<HealthCommandOutcome> {
    const file = this.fileOf(arg);
    if (!file) {
      void notify.info(
        vscode.l10n.t(
          "No pi session to check. Open a workspace with pi sessions, or pick one with Pi Context: Select Session….",
        ),
      );
      return { kind: "no-session" };
    }
    const log = this.services.log;
    const name = await this.titleOf(file);
    let plan: SessionRepairPlan;
    try {
      plan = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: vscode.l10n.t("Checking session health…") },
        () => planSessionRepair(file, this.options()),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.warn(`health ${file}: ${message}`);
      void notify.error(vscode.l10n.t("Could not check {0}: {1}", name, message));
      return { kind: "failed", file, message };
    }
    const report = plan.report;
    log.info(
      `health ${file}: ${report.findings.length === 0 ? "no problems" : healthCounts(report)}; ${plan.repair.entries.length} entr${plan.repair.entries.length === 1 ? "y" : "ies"} would repair ${plan.repair.fixes.length} finding(s)`,
    );
    // a complete last entry without its newline is no finding (pi reads it), but no append can follow it
    if (report.findings.length === 0 && plan.tornLineBytes === undefined) {
      void notify.info(vscode.l10n.t("Session health: no problems found in {0}.", name));
      return { kind: "healthy", file };
    }
    if (options.repair && plan.repair.entries.length > 0)
      return plan.tornLineBytes !== undefined
        ? this.endLine(file, options, name, true)
        : this.repair(file, options, name);

    type Item = vscode.QuickPickItem & {
      action?: "repair" | "compact" | "end-line" | "acknowledge";
      finding?: HealthFinding;
    };
    const items: Item[] = [];
    // a last line without `\n` first: the repair can only follow once it is ended
    const endLine = endLineItem(plan);
    if (endLine) items.push(endLine);
    if (plan.repair.entries.length > 0)
      items.push({
        label: vscode.l10n.t(
          "$(wrench) Repair: append {0}",
          pluralText(plan.repair.entries.length, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
        ),
        description: vscode.l10n.t(
          "fixes {0}; nothing is rewritten",
          pluralText(plan.repair.fixes.length, vscode.l10n.t("{0} finding"), vscode.l10n.t("{0} findings")),
        ),
        detail: endLine
          ? vscode.l10n.t("After the last line is ended (above). {0}", afterText(plan))
          : plan.unsafe
            ? vscode.l10n.t("Not possible now: {0}", plan.unsafe)
            : afterText(plan),
        action: "repair",
      });
    if (plan.repair.compaction.length > 0)
      items.push({
        label: vscode.l10n.t("$(archive) Compact Session…"),
        description: vscode.l10n.t("a compaction makes the context fit again"),
        detail: vscode.l10n.t("Pi Context: Compact Session… (previewed; needs the configured summarizer)"),
        action: "compact",
      });
    items.push(...acknowledgeItems(report.findings));
    if (items.length > 0) items.push({ label: vscode.l10n.t("Findings"), kind: vscode.QuickPickItemKind.Separator });
    for (const f of report.findings)
      items.push({
        label: `${SEVERITY_ICON[f.severity]} ${healthTitle(f.code)}`,
        description: [
          f.entryId ? `entry ${f.entryId}` : "",
          f.line !== undefined ? `line ${f.line}` : "",
          f.repair ? "repairable" : "",
        ]
          .filter(Boolean)
          .join(" · "),
        detail: short(f.message, DETAIL_MAX),
        finding: f,
      });
    const pick = await vscode.window.showQuickPick(safePickItems(items), {
      title: visibleText(vscode.l10n.t("Session health of {0}: {1}", name, healthCounts(report))),
      placeHolder: vscode.l10n.t("Pick a finding to see its entry, or a repair"),
      matchOnDescription: true,
      matchOnDetail: true,
      ignoreFocusOut: true,
    });
    const counts = { errors: report.errors, warnings: report.warnings, infos: report.infos };
    if (!pick) return { kind: "shown", file, ...counts };
    if (pick.action === "end-line") return this.endLine(file, options, name, plan.repair.entries.length > 0);
    if (pick.action === "acknowledge" && pick.finding) {
      const done = await acknowledgeSkippedLine(this.services, plan, pick.finding, name);
      return done
        ? { kind: "acknowledged", file, line: pick.finding.line }
        : { kind: "failed", file, message: "could not store the acknowledgement" };
    }
    if (pick.action === "repair") {
      // the repair needs the line ended first: the same question, then the repair
      if (endLine) return this.endLine(file, options, name, true);
      return this.repair(file, options, name);
    }
    if (pick.action === "compact") {
      await this.services.actions.compact(file);
      return { kind: "compact", file };
    }
    if (pick.finding) await this.show(file, pick.finding);
    return { kind: "shown", file, ...counts, ...(pick.finding ? { picked: pick.finding.code } : {}) };
  }

  /**
   * The repair: preview (unless skipped), then the flow's one append; the outcome in a toast and the
   * log. A running pi with the live bridge appends the context edits itself ({@link repairLive}).
   */
  private async repair(file: string, options: HealthCommandOptions, name: string): Promise<HealthCommandOutcome> {
    let errorsBefore = 0;
    try {
      // the route before the preview: a repair that moves the leaf cannot go through a running pi
      const planned = await planSessionRepair(file, { ...this.options(), guardSeconds: 0, procRoot: null });
      const action = planned.repair.entries.some((e) => e.type !== "context_edit")
        ? ACTIONS.repairLeaf
        : ACTIONS.repair;
      const retry = () => void this.repair(file, { ...options, force: true }, name);
      let route = await this.services.access.route(file, action, { force: options.force === true, retry });
      if (route.kind === "bridge") {
        const live = await this.repairLive(file, options, name);
        if (live) return live;
        route = await this.services.access.route(file, action, { force: options.force === true, retry });
      }
      if (route.kind === "refuse") return { kind: "failed", file, message: route.message };
      if (route.kind === "bridge")
        return {
          kind: "failed",
          file,
          message: vscode.l10n.t("The live bridge does not answer. Nothing was written."),
        };
      const outcome = await runRepairFlow(file, this.options(route.forced), {
        confirm: async (plan, changed) => {
          errorsBefore = plan.report.errors;
          return options.skipPreview ? true : this.preview(plan, changed, name);
        },
      });
      if (outcome.kind === "declined") return { kind: "declined", file };
      if (outcome.kind === "nothing") return this.nothingToRepair(file);
      const { result } = outcome;
      this.services.log.info(
        `health ${file}: appended ${result.entries.length} entr${result.entries.length === 1 ? "y" : "ies"} (${result.bytesBefore} → ${result.bytesAfter} bytes): ${result.entries.map((e) => entryWords(e)).join("; ")}`,
      );
      const after = result.after;
      void notify.info(
        vscode.l10n.t(
          "Repaired {0}: appended {1}. {2}{3}.",
          name,
          pluralText(result.entries.length, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
          after.errors === 0 ? vscode.l10n.t("No error remains") : vscode.l10n.t("{0} remain", healthCounts(after)),
          after.errors === 0 && (after.warnings || after.infos) ? ` (${healthCounts(after)})` : "",
        ),
      );
      await this.services.sessions.refresh();
      return {
        kind: "repaired",
        file,
        appended: result.entries.length,
        errorsBefore: errorsBefore || outcome.plan.report.errors,
        errorsAfter: after.errors,
      };
    } catch (error) {
      const failure = notify.reportFlowFailure(this.services.log, {
        operation: vscode.l10n.t("Repair"),
        logPrefix: "health",
        file,
        error,
        configActions: [],
        refused: (e) =>
          this.services.access.showRefusal(e, file, () => void this.repair(file, { ...options, force: true }, name)),
      });
      return { kind: "failed", file, message: failure.message };
    }
  }

  /**
   * End the last line as pi does (asked first), then the repair when there is one, else the
   * findings again (the fragment is a line pi skips now, which can be acknowledged).
   */
  private async endLine(
    file: string,
    options: HealthCommandOptions,
    name: string,
    repairAfter: boolean,
  ): Promise<HealthCommandOutcome> {
    const ended = await endLastLine(this.services, file, name, (force) => this.options(force), {
      ...options,
      retry: () => void this.endLine(file, { ...options, force: true }, name, repairAfter),
    });
    if (ended.kind === "declined") return { kind: "declined", file };
    if (ended.kind === "failed") return { kind: "failed", file, message: ended.message };
    const then = repairAfter ? await this.repair(file, options, name) : await this.run(file, options);
    return { kind: "line-ended", file, lineBytes: ended.result.lineBytes, then };
  }

  private nothingToRepair(file: string): HealthCommandOutcome {
    void notify.info(vscode.l10n.t("Nothing to repair: no finding of this session is fixed by an appended entry."));
    return { kind: "declined", file };
  }

  /**
   * The repair through the live bridge: pi keeps its session in memory and never re-reads the file,
   * so an entry we appended would not reach pi's next request (and pi's next append would hang off
   * its own leaf); pi appends the context edits itself instead, at once while idle or at its next
   * turn boundary (`routeContextEdit`, as a trim). Planned on the file as pi wrote it; a repair
   * that also moves the leaf (a leaf marker off a looping branch) is refused, nothing sent.
   * @returns undefined when the bridge went away before anything was sent (the file flow runs).
   */
  private async repairLive(
    file: string,
    options: HealthCommandOptions,
    name: string,
  ): Promise<HealthCommandOutcome | undefined> {
    const plan = await planSessionRepair(file, { ...this.options(), guardSeconds: 0, procRoot: null });
    const entries = plan.repair.entries;
    if (entries.length === 0) return this.nothingToRepair(file);
    const edits = entries.filter((e): e is ContextEditEntry => e.type === "context_edit");
    if (edits.length !== entries.length) {
      const message = vscode.l10n.t(
        "pi is running on {0} with the live bridge, and this repair also moves the leaf ({1}), which only pi itself can do while it runs. Nothing was written. Use /tree in pi, or quit pi and repair again.",
        name,
        entries
          .filter((e) => e.type !== "context_edit")
          .map((e) => entryWords(e, plan.session))
          .join("; "),
      );
      this.services.log.warn(`health ${file}: ${message}`);
      void notify.error(message);
      return { kind: "failed", file, message };
    }
    if (!options.skipPreview && !(await this.preview(plan, false, name, true))) return { kind: "declined", file };
    const routed = await this.services.liveBridge.routeContextEdit(
      file,
      edits.map((e) => ({ type: "context_edit", targetId: e.targetId, replacement: e.replacement })),
      plan.session.leafId,
    );
    if (!routed) return undefined;
    if (routed.kind === "error") return { kind: "failed", file, message: routed.message };
    const counts = pluralText(edits.length, vscode.l10n.t("{0} context edit"), vscode.l10n.t("{0} context edits"));
    const after = plan.repair.after;
    this.services.log.info(
      `health ${file}: ${routed.kind === "applied" ? "pi appended" : "pi queued"} ${edits.map((e) => entryWords(e)).join("; ")}`,
    );
    void notify.info(
      routed.kind === "applied"
        ? vscode.l10n.t(
            "pi repaired {0}: appended {1} itself. {2}.",
            name,
            counts,
            after.errors === 0 ? vscode.l10n.t("No error remains") : vscode.l10n.t("{0} remain", healthCounts(after)),
          )
        : vscode.l10n.t(
            "pi is answering: the repair ({0}) waits for its next turn boundary (shown as pending until pi applied it).",
            counts,
          ),
    );
    await this.services.sessions.refresh();
    return {
      kind: "repaired",
      file,
      appended: routed.kind === "applied" ? routed.entries.length : 0,
      errorsBefore: plan.report.errors,
      errorsAfter: after.errors,
      live: routed.kind,
    };
  }

  /** The preview: what is appended, entry by entry, and what the doctor says afterwards. */
  private async preview(plan: SessionRepairPlan, changed: boolean, name: string, byPi = false): Promise<boolean> {
    type Item = vscode.QuickPickItem & { append?: boolean };
    const entries = plan.repair.entries;
    const items: Item[] = [
      {
        label: vscode.l10n.t(
          "$(check) Append {0}",
          pluralText(entries.length, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
        ),
        description: byPi
          ? vscode.l10n.t("the running pi appends them itself (live bridge); nothing is rewritten")
          : vscode.l10n.t(
              "after line {0}; the earlier bytes stay as they are",
              plan.session.records[plan.session.records.length - 1]?.line ?? 0,
            ),
        detail: afterText(plan),
        append: true,
      },
      { label: vscode.l10n.t("$(close) Cancel"), description: vscode.l10n.t("nothing is written"), append: false },
      { label: vscode.l10n.t("What is appended"), kind: vscode.QuickPickItemKind.Separator },
    ];
    for (const e of entries) {
      const fix = plan.repair.fixes.find((x) => x.entries.includes(e));
      items.push({
        label: `$(add) ${iconLabelText(entryWords(e, plan.session))}`,
        description: fix ? healthTitle(fix.finding.code) : "",
        detail: short(JSON.stringify(e), DETAIL_MAX),
      });
    }
    const pick = await vscode.window.showQuickPick(safePickItems(items), {
      title: vscode.l10n.t(
        "{0}Repair {1}: append {2}?",
        changed ? vscode.l10n.t("The session changed — ") : "",
        visibleText(name),
        pluralText(entries.length, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
      ),
      placeHolder: vscode.l10n.t("One append after the last line; nothing is rewritten"),
      ignoreFocusOut: true,
    });
    return pick?.append === true;
  }

  /** Show a finding: its entry in the Pi Session tree, else its file at the line. */
  private async show(file: string, f: HealthFinding): Promise<void> {
    if (f.entryId && f.source === "session" && (await this.services.tree.reveal(f.entryId))) return;
    const target = f.file ?? file;
    const options: vscode.TextDocumentShowOptions = { preview: true };
    if (f.line !== undefined && f.line >= 1 && target === file)
      options.selection = new vscode.Range(f.line - 1, 0, f.line - 1, 0);
    await vscode.commands.executeCommand("vscode.open", vscode.Uri.file(target), options);
  }

  private fileOf(arg: unknown): string | undefined {
    if (typeof arg === "string" && arg) return path.resolve(arg);
    if (arg instanceof vscode.Uri && arg.scheme === "file") return arg.fsPath;
    return this.services.sessions.current?.file;
  }
}
