/**
 * "Pi Context: Undo Last Context Edit" (`piContext.trim.undo [options]`): takes back the last batch
 * of context edits (`core/flows/undoEdit.ts`) after a preview that says which way — the leaf moves
 * back before the edit (one short line; the edit stays in the file on a side branch), or new edits
 * show each item as before (when something came after the edit, or a running pi appends them) —
 * and what it appends in bytes, against what *Restore original* would append. Offered by the
 * trim's result notification ("Undo", with the ids it wrote) and in the palette (the last batch).
 *
 * A running pi with the live bridge appends the re-targeting edits itself (`routeContextEdit`).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { runUndoFlow, planUndo, type UndoPlan } from "../core/flows/undoEdit";
import { buildProjection } from "../core/rules/context";
import { isNothingToUndo, type UndoPreparation, type UndoTarget } from "../core/rules/undoEdit";
import type { Services } from "../services";
import { formatCount as n, pluralText } from "../shared/format";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import type { Prompter } from "../ui/prompter";
import { describeEntries, runningTurnIds } from "../viewModel/trimList";
import { trimKindOf, TRIM_KIND_LABELS } from "../viewModel/trimActions";

/** Options of `piContext.trim.undo` (all optional). */
export interface UndoCommandOptions {
  /** The session file (default: the current session). */
  file?: string;
  /** The `context_edit` ids to take back (what a trim just wrote); default: the last batch on the branch. */
  editIds?: string[];
  /** Write without the preview (tests). */
  skipPreview?: boolean;
  /** No result notification (tests). */
  quiet?: boolean;
  /** The user chose *Anyway* after a refusal. */
  force?: boolean;
}

/** What `piContext.trim.undo` resolves with. */
export type UndoCommandOutcome =
  | {
      kind: "undone";
      file: string;
      way: UndoPreparation["way"];
      /** The appended entries' ids. */
      entries: string[];
      tokensBefore: number;
      tokensAfter: number;
      /** Set when the running pi appended them (live bridge). */
      live?: { pid: number; piVersion: string };
    }
  | { kind: "nothing"; file?: string; message: string }
  | { kind: "declined"; file: string }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** What a target shows again, in words. */
function backText(t: UndoTarget): string {
  switch (t.back) {
    case "original":
      return vscode.l10n.t("its original content again");
    case "omit":
      return vscode.l10n.t("removed again, as before");
    case "replace":
      return vscode.l10n.t("its earlier replacement again");
  }
}

/** Which way, and what it appends, in one sentence (the preview's first row). */
export function undoWayText(p: UndoPreparation): string {
  const restore =
    p.restoreBytes > p.bytes ? vscode.l10n.t(" Restore original would append {0} bytes.", n(p.restoreBytes)) : "";
  return p.way === "leaf"
    ? vscode.l10n.t(
        "Moves the session's leaf back before the edit: appends 1 line ({0} bytes); the edit stays in the file on a side branch.{1}",
        n(p.bytes),
        restore,
      )
    : vscode.l10n.t(
        "Appends {0} ({1} bytes) that show each item as it was before the edit.{2}",
        pluralText(p.drafts.length, vscode.l10n.t("{0} context edit"), vscode.l10n.t("{0} context edits")),
        n(p.bytes),
        restore,
      );
}

/** The undo command of one window (see the file comment). */
export class UndoCommand {
  constructor(
    private readonly services: Services,
    private readonly prompter: Prompter,
  ) {}

  private title(file: string): string {
    const current = this.services.sessions.current;
    return current?.file === file ? `"${current.label}"` : path.basename(file);
  }

  /** Preview and write the undo (see the file comment). */
  async run(options: UndoCommandOptions = {}): Promise<UndoCommandOutcome> {
    const file = options.file ?? this.services.sessions.current?.file;
    if (!file) {
      if (!options.quiet) void notify.info(vscode.l10n.t("no pi session to undo a context edit in."));
      return { kind: "error", errorKind: "no-session", message: vscode.l10n.t("No pi session.") };
    }
    const editIds = options.editIds ? { editIds: options.editIds } : {};
    try {
      // the route of a context edit: a running pi with the bridge appends the undo, else our flow
      const retry = () => void this.run({ ...options, file, force: true });
      let route = await this.services.access.route(file, ACTIONS.contextEdit, { force: options.force === true, retry });
      if (route.kind === "bridge") {
        const live = await this.runLive(file, editIds, options);
        if (live) return live;
        route = await this.services.access.route(file, ACTIONS.contextEdit, { force: options.force === true, retry });
      }
      if (route.kind === "refuse") return { kind: "error", file, errorKind: "live", message: route.message };
      if (route.kind === "bridge")
        return {
          kind: "error",
          file,
          errorKind: "bridge-unavailable",
          message: vscode.l10n.t("The live bridge does not answer."),
        };
      const flow = { ...this.services.access.flowOptions(route.forced), ...editIds };
      const outcome = await runUndoFlow(file, flow, async (plan, changed) =>
        options.skipPreview ? true : this.confirm(plan, plan.preparation, changed),
      );
      if (outcome.kind === "nothing") return this.nothing(file, outcome.reason, options);
      if (outcome.kind === "declined") return { kind: "declined", file };
      const r = outcome.result;
      const prep = outcome.plan.preparation as UndoPreparation;
      const tokensAfter = r.tokensAfter ?? prep.tokensAfter.tokens;
      this.services.log.info(
        `undo ${file}: ${r.way} — wrote ${r.entries.map((e) => e.id).join(", ")} (${r.bytesAfter - r.bytesBefore} bytes); ${r.tokensBefore} → ${tokensAfter} tokens`,
      );
      if (!options.quiet)
        void notify.info(
          r.way === "leaf"
            ? vscode.l10n.t(
                "Undid the last context edit of {0}: the leaf is back before it ({1} → {2} tokens).",
                this.title(file),
                n(r.tokensBefore),
                n(tokensAfter),
              )
            : vscode.l10n.t(
                "Undid the last context edit of {0}: {1} → {2} tokens, {3} written.",
                this.title(file),
                n(r.tokensBefore),
                n(tokensAfter),
                pluralText(r.entries.length, vscode.l10n.t("{0} context edit"), vscode.l10n.t("{0} context edits")),
              ),
        );
      return {
        kind: "undone",
        file,
        way: r.way,
        entries: r.entries.map((e) => e.id),
        tokensBefore: r.tokensBefore,
        tokensAfter,
      };
    } catch (error) {
      const failure = notify.reportFlowFailure(this.services.log, {
        operation: vscode.l10n.t("Undo"),
        logPrefix: "undo",
        file,
        error,
        configActions: [],
        refused: (e) => this.services.access.showRefusal(e, file),
      });
      return failure.kind === "cancelled"
        ? { kind: "declined", file }
        : { kind: "error", file, errorKind: failure.errorKind, message: failure.message };
    }
  }

  private nothing(file: string, reason: string, options: UndoCommandOptions): UndoCommandOutcome {
    const message = vscode.l10n.t("Nothing to undo: {0}", reason);
    if (!options.quiet) void notify.info(message);
    return { kind: "nothing", file, message };
  }

  /**
   * A running pi with the live bridge appends the re-targeting edits (see the file comment).
   * @returns undefined when the bridge went away before anything was sent (the file flow runs).
   */
  private async runLive(
    file: string,
    editIds: { editIds?: string[] },
    options: UndoCommandOptions,
  ): Promise<UndoCommandOutcome | undefined> {
    // at pi's own leaf, asked now (its last state push may be a turn behind)
    const live = await this.services.liveBridge.livePosition(file);
    const plan = await planUndo(file, {
      ...editIds,
      guardSeconds: 0,
      procRoot: null,
      retargetOnly: true,
      ...(live?.leafId !== undefined ? { leafId: live.leafId } : {}),
    });
    const prep = plan.preparation;
    if (isNothingToUndo(prep)) return this.nothing(file, prep.reason, options);
    if (live && live.activity !== "idle") {
      const running = runningTurnIds(buildProjection(plan.session, prep.leafId));
      const inRun = prep.targets.map((t) => t.targetId).filter((id) => running.has(id));
      if (inRun.length > 0) {
        const message = vscode.l10n.t(
          "pi is answering the latest message now; the edit of its run ({0}) can be undone once pi has finished. Nothing was written.",
          inRun.join(", "),
        );
        void notify.warn(message);
        return { kind: "error", file, errorKind: "busy", message };
      }
    }
    if (!options.skipPreview && !(await this.confirm(plan, prep, false))) return { kind: "declined", file };
    const routed = await this.services.liveBridge.routeContextEdit(file, prep.drafts, prep.leafId);
    if (!routed) return undefined;
    if (routed.kind === "error") return { kind: "error", file, errorKind: routed.errorKind, message: routed.message };
    const source = { pid: routed.live.pid, piVersion: routed.live.piVersion };
    if (routed.kind === "queued") {
      if (!options.quiet)
        void notify.info(
          vscode.l10n.t("pi is answering: the undo waits for its next turn boundary (shown as pending until then)."),
        );
      return {
        kind: "undone",
        file,
        way: "retarget",
        entries: [],
        tokensBefore: prep.tokensBefore.tokens,
        tokensAfter: prep.tokensAfter.tokens,
        live: source,
      };
    }
    if (!options.quiet)
      void notify.info(
        vscode.l10n.t(
          "pi undid the last context edit of {0}: {1} appended by pi.",
          this.title(file),
          pluralText(routed.entries.length, vscode.l10n.t("{0} context edit"), vscode.l10n.t("{0} context edits")),
        ),
      );
    return {
      kind: "undone",
      file,
      way: "retarget",
      entries: routed.entries.map((e) => e.id),
      tokensBefore: prep.tokensBefore.tokens,
      tokensAfter: prep.tokensAfter.tokens,
      live: source,
    };
  }

  /** The preview quick pick; true for "Undo now". */
  private async confirm(plan: UndoPlan, prep: UndoPreparation, changed: boolean): Promise<boolean> {
    type Row = vscode.QuickPickItem & { action?: "go" | "cancel" };
    const texts = describeEntries(
      plan.session,
      prep.targets.map((t) => t.targetId),
    );
    const tokens = vscode.l10n.t("Context {0} → {1} tokens", n(prep.tokensBefore.tokens), n(prep.tokensAfter.tokens));
    const rows: Row[] = [
      {
        action: "go",
        label: vscode.l10n.t("$(discard) Undo now"),
        description: tokens,
        detail: iconLabelText(undoWayText(prep)),
      },
      { label: vscode.l10n.t("What comes back"), kind: vscode.QuickPickItemKind.Separator },
      ...prep.targets.map((t): Row => {
        const record = plan.session.byId.get(t.targetId);
        return {
          label: `$(history) ${iconLabelText(texts.get(t.targetId) ?? t.targetId)}`,
          description: backText(t),
          detail: iconLabelText(
            `${record ? TRIM_KIND_LABELS[trimKindOf(record)] : ""} ${t.targetId} — ${
              t.now === "omit" ? vscode.l10n.t("removed by the edit") : vscode.l10n.t("replaced by the edit")
            }`,
          ),
        };
      }),
      { label: vscode.l10n.t("Effect"), kind: vscode.QuickPickItemKind.Separator },
      {
        label: `$(info) ${tokens}`,
        detail:
          prep.way === "leaf"
            ? vscode.l10n.t("pi's numbers are those before the edit again (its last answer's usage).")
            : vscode.l10n.t("pi counts from chars/4 until its next answer (the branch holds context edits)."),
      },
      { action: "cancel", label: vscode.l10n.t("$(close) Cancel"), detail: vscode.l10n.t("Nothing is written.") },
    ];
    const pick = await this.prompter.pick(rows, {
      title: vscode.l10n.t(
        "{0}Undo the last context edit of {1}?",
        changed ? vscode.l10n.t("The session changed — new preview. ") : "",
        this.title(plan.file),
      ),
      placeholder: tokens,
      keepOpen: (row) => row.action === undefined,
    });
    return pick?.action === "go";
  }
}
