/**
 * Applying a trim request (`TrimRequestItem[]`) to the current session, from every trim surface
 * (the QuickPick, the tree's context menu, the panel): plan with the pairing-safe planner, preview
 * (`preview.ts`), then write —
 *
 * - a running pi with the live bridge appends the edits itself (`services.liveBridge.routeContextEdit`):
 *   at once while idle, at its next turn boundary while it answers (then the items show as pending).
 *   While pi answers, items of the run it works on (from the last user message on) are refused:
 *   its tool calls may still wait for their results;
 * - nobody has it open: the write flow (`core/flows/contextEdit.ts`): access check, change check,
 *   one append; re-planned (and asked again) when the file changed under the preview;
 * - else refused (`services.access`), before any question where the caller routes first ({@link TrimCommand.route}).
 *
 * Nothing is written on Escape, a refusal of every item, or an error (said once, in the log too).
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import * as path from "node:path";
import { planContextEdits, runContextEditFlow, type ContextEditPlan } from "../core/flows/contextEdit";
import type { ContextEditDraft } from "../core/rules/contextEdit";
import type { ContextEditAction } from "../core/rules/editPlan";
import type { SessionFile } from "../core/read/session";
import { openSession } from "../core/read/store";
import { analyzeLoaded, type Analysis } from "../core/rules/analyze";
import { ACTIONS } from "../core/access/route";
import type { ActionRoute, Services, TrimCommandOutcome } from "../services";
import { formatCount as n, pluralText } from "../shared/format";
import type { TrimPreviewModel, TrimRequestItem } from "../shared/trim";
import * as notify from "../ui/notify";
import type { Prompter } from "../ui/prompter";
import { entryWordsOf } from "../viewModel/treeText";
import { trimActions } from "../viewModel/trimActions";
import { runningTurnIds } from "../viewModel/trimList";
import { sessionTrimPreview, trimVerb } from "../viewModel/trimPreview";
import { confirmTrim } from "./preview";
import * as l10n from "@vscode/l10n";

/** Options of {@link TrimCommand.apply}. */
export interface TrimApplyOptions {
  /** The session file (default: the current session). */
  file?: string;
  /** Write without the preview (scripts, tests). */
  skipPreview?: boolean;
  /**
   * The drafts a preview elsewhere (the panel) showed and the user accepted: the quick-pick preview
   * is skipped when the plan made now has exactly these drafts, and shown otherwise.
   */
  confirmedDrafts?: readonly ContextEditDraft[];
  /** No result notification (tests). */
  quiet?: boolean;
  /** *Anyway* after a refusal whose evidence is only probable or possible. */
  force?: boolean;
}

function sameDrafts(a: readonly ContextEditDraft[], b: readonly ContextEditDraft[] | undefined): boolean {
  return b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** Why nothing is written for a plan without edits, in one sentence. */
function nothingText(preview: TrimPreviewModel): string {
  if (preview.refused.length > 0)
    return l10n.t("Nothing was written: {0}", preview.refused.map((r) => `${r.targetId}: ${r.message}`).join(" "));
  const count = preview.unchanged.length;
  return count === 1
    ? l10n.t("Nothing to change: 1 item already shows what was asked. Nothing was written.")
    : l10n.t("Nothing to change: {0} items already show what was asked. Nothing was written.", n(count));
}

/** A written trim in words, by what it did: "Trimmed …", "Restored items in …" (the context grew), "Edited …". */
function resultText(
  verb: "trim" | "restore" | "edit",
  title: string,
  before: number,
  after: number,
  edits: string,
  byPi: boolean,
): string {
  const change =
    after > before
      ? l10n.t("{0} → {1} tokens (adds {2})", n(before), n(after), n(after - before))
      : l10n.t("{0} → {1} tokens", n(before), n(after));
  if (byPi)
    return verb === "restore"
      ? l10n.t("pi restored items in {0}: {1}, {2} appended by pi.", title, change, edits)
      : verb === "edit"
        ? l10n.t("pi edited the context of {0}: {1}, {2} appended by pi.", title, change, edits)
        : l10n.t("pi trimmed {0}: {1}, {2} appended by pi.", title, change, edits);
  return verb === "restore"
    ? l10n.t("Restored items in {0}: {1} (pi's estimate), {2} written.", title, change, edits)
    : verb === "edit"
      ? l10n.t("Edited the context of {0}: {1} (pi's estimate), {2} written.", title, change, edits)
      : l10n.t("Trimmed {0}: {1} (pi's estimate), {2} written.", title, change, edits);
}

/** The trim command of one window (see the file comment). */
export class TrimCommand {
  /**
   * @param undo takes back exactly `editIds` of `file` ("Pi Context: Undo Last Context Edit",
   *   `undo.ts`), offered by the result notification.
   */
  constructor(
    private readonly services: Services,
    private readonly prompter: Prompter,
    private readonly undo?: (file: string, editIds: string[]) => Promise<unknown>,
  ) {}

  /** The result notification of a written trim, with "Undo" for exactly these entries. */
  private offerUndo(file: string, editIds: string[], text: string): void {
    const undo = this.undo;
    if (!undo) {
      void notify.info(text);
      return;
    }
    const label = l10n.t("Undo");
    void notify.info(text, label).then((choice) => {
      if (choice === label) void undo(file, editIds);
    });
  }

  private analysisOf(session: SessionFile): Analysis {
    const current = this.services.sessions.current;
    if (current && current.session === session) return current.analysis;
    return analyzeLoaded(session, {
      agentDir: this.services.sessions.agentDir(),
      projectSettings: this.services.config().projectSettings,
      pi: this.services.pi.current,
    });
  }

  private title(file: string): string {
    // the session's label as every surface names it (pi's rule); a file not shown: its name
    const current = this.services.sessions.current;
    return current?.file === file ? `"${current.label}"` : path.basename(file);
  }

  /**
   * The route of a trim of `file` (`services.access`), asked before the items are picked: a
   * refusal is shown, with *Anyway* running `retry`.
   */
  route(file: string, force: boolean, retry: () => void): Promise<ActionRoute> {
    return this.services.access.route(file, ACTIONS.contextEdit, { force, retry });
  }

  /** Plan, preview and write `items` (see the file comment). */
  async apply(items: readonly TrimRequestItem[], options: TrimApplyOptions = {}): Promise<TrimCommandOutcome> {
    const file = options.file ?? this.services.sessions.current?.file;
    if (!file) {
      void notify.info(l10n.t("no pi session to trim."));
      return { kind: "error", errorKind: "no-session", message: l10n.t("No pi session.") };
    }
    if (items.length === 0) return { kind: "nothing", file, message: l10n.t("Nothing was selected.") };
    try {
      const current = this.services.sessions.current;
      const session = current?.file === file ? current.session : await openSession(file);
      const actions = trimActions(session, items);
      const retry = () => void this.apply(items, { ...options, force: true });
      let route = await this.route(file, options.force === true, retry);
      if (route.kind === "bridge") {
        const live = await this.applyLive(file, actions, options);
        if (live) return live;
        route = await this.route(file, options.force === true, retry); // the bridge went away: nothing was sent
      }
      if (route.kind === "refuse") return { kind: "error", file, errorKind: "live", message: route.message };
      if (route.kind === "bridge")
        return {
          kind: "error",
          file,
          errorKind: "bridge-unavailable",
          message: l10n.t("The live bridge does not answer."),
        };
      return await this.applyFile(file, actions, { ...options, force: route.forced });
    } catch (error) {
      return this.failed(file, error);
    }
  }

  private failed(file: string, error: unknown): TrimCommandOutcome {
    const failure = notify.reportFlowFailure(this.services.log, {
      operation: "trim",
      logPrefix: "trim",
      file,
      error,
      configActions: [],
      refused: (e) => this.services.access.showRefusal(e, file),
    });
    return failure.kind === "cancelled"
      ? { kind: "declined", file, stage: "preview" }
      : { kind: "error", file, errorKind: failure.errorKind, message: failure.message };
  }

  /** The write flow on the file (no live bridge serves it). */
  private async applyFile(
    file: string,
    actions: ContextEditAction[],
    options: TrimApplyOptions,
  ): Promise<TrimCommandOutcome> {
    const log = this.services.log;
    const outcome = await runContextEditFlow(file, actions, this.services.access.flowOptions(options.force === true), {
      confirm: async (plan, changed) =>
        options.skipPreview ||
        (!changed && sameDrafts(plan.preparation.drafts, options.confirmedDrafts)) ||
        confirmTrim(this.prompter, this.preview(plan), { title: this.title(file), changed }),
    });
    if (outcome.kind === "declined") return { kind: "declined", file, stage: "preview" };
    if (outcome.kind === "nothing") {
      const message = nothingText(this.preview(outcome.plan));
      if (!options.quiet) void notify.info(message);
      return { kind: "nothing", file, message };
    }
    const r = outcome.result;
    const before = outcome.plan.preparation.baselineTokens;
    // written; a failed read back only costs the exact number: the planned estimate stands in
    const tokensAfter = r.tokensAfter ?? outcome.plan.preparation.tokensAfter.tokens;
    if (r.readBackError) log.warn(`trim ${file}: written, but the file could not be read back: ${r.readBackError}`);
    log.info(
      `trim ${file}: wrote ${r.entries.map((e) => `${e.id} → ${e.targetId}`).join(", ")}; ${before} → ${tokensAfter} tokens`,
    );
    const failureBefore = outcome.plan.preparation.estimateFailureBefore;
    const failureAfter = r.estimateFailureAfter;
    if (!options.quiet)
      this.offerUndo(
        file,
        r.entries.map((e) => e.id),
        failureBefore || failureAfter
          ? // pi has no number on one side: say so instead of calling ours pi's
            l10n.t(
              "Trimmed {0}: {1} → {2}, {3} written. {4}",
              this.title(file),
              failureBefore ? l10n.t("pi had no estimate") : l10n.t("{0} tokens", n(before)),
              failureAfter ? l10n.t("pi has no estimate") : l10n.t("{0} tokens (pi's estimate)", n(tokensAfter)),
              pluralText(r.entries.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
              `${estimateFailureText((failureAfter ?? failureBefore)!)}.`,
            )
          : resultText(
              trimVerb(this.preview(outcome.plan)),
              this.title(file),
              before,
              tokensAfter,
              pluralText(r.entries.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
              false,
            ),
      );
    return {
      kind: "edited",
      file,
      entries: r.entries.map((e) => ({ id: e.id, targetId: e.targetId })),
      tokensBefore: before,
      tokensAfter,
    };
  }

  private preview(plan: ContextEditPlan): TrimPreviewModel {
    return sessionTrimPreview(
      plan.session,
      plan.preparation,
      this.analysisOf(plan.session).inspect,
      this.services.config().warning.margin,
    );
  }

  /**
   * A running pi with the live bridge applies the edits (see the file comment).
   * @returns undefined when the bridge went away before anything was sent (the file flow runs).
   */
  private async applyLive(
    file: string,
    actions: ContextEditAction[],
    options: TrimApplyOptions,
  ): Promise<TrimCommandOutcome | undefined> {
    // at pi's own leaf, asked now: after a bare navigation in pi its branch is not the file's last
    // line, and its last state push may be a turn behind
    const live = await this.services.liveBridge.livePosition(file);
    const plan = await planContextEdits(file, actions, {
      guardSeconds: 0,
      procRoot: null,
      ...(live?.leafId !== undefined ? { leafId: live.leafId } : {}),
    });
    const preview = this.preview(plan);
    const streaming = live !== undefined && live.activity !== "idle";
    if (plan.preparation.edits.length === 0) {
      const message = nothingText(preview);
      if (!options.quiet) void notify.info(message);
      return { kind: "nothing", file, message };
    }
    if (streaming) {
      const running = runningTurnIds(plan.preparation.projection);
      const inRun = plan.preparation.edits.filter((e) => running.has(e.targetId)).map((e) => e.targetId);
      if (inRun.length > 0) {
        const message = l10n.t(
          "pi is answering the latest message now; {0} of that run ({1}) can be edited once pi has finished. Nothing was written.",
          pluralText(inRun.length, l10n.t("{0} item"), l10n.t("{0} items")),
          inRun.map((id) => entryWordsOf(id, plan.session)).join(", "),
        );
        void notify.warn(message);
        return { kind: "error", file, errorKind: "busy", message };
      }
    }
    const pi = live ? l10n.t("pi {0} (pid {1})", live.piVersion, live.pid) : l10n.t("the running pi");
    if (
      !options.skipPreview &&
      !sameDrafts(plan.preparation.drafts, options.confirmedDrafts) &&
      !(await confirmTrim(this.prompter, preview, { title: this.title(file), live: { pi, streaming } }))
    )
      return { kind: "declined", file, stage: "preview" };
    const routed = await this.services.liveBridge.routeContextEdit(
      file,
      plan.preparation.drafts,
      plan.preparation.leafId,
    );
    if (!routed) return undefined; // the bridge went away: nothing was sent
    const source = routed.kind === "error" ? undefined : { pid: routed.live.pid, piVersion: routed.live.piVersion };
    if (routed.kind === "error") return { kind: "error", file, errorKind: routed.errorKind, message: routed.message };
    if (routed.kind === "queued") {
      if (!options.quiet)
        void notify.info(
          l10n.t(
            "pi is answering: {0} wait for its next turn boundary (shown as pending until pi applied them).",
            pluralText(routed.targetIds.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
          ),
        );
      return { kind: "pending", file, batchId: routed.batchId, targetIds: routed.targetIds, live: source! };
    }
    const after = this.services.sessions.current;
    const tokensAfter =
      after?.file === file
        ? (this.services.liveBridge.liveAnalysis(after)?.analysis.inspect.contextTokens ??
          after.analysis.inspect.contextTokens)
        : plan.preparation.tokensAfter.tokens;
    if (!options.quiet)
      this.offerUndo(
        file,
        routed.entries.map((e) => e.id),
        resultText(
          trimVerb(preview),
          this.title(file),
          plan.preparation.baselineTokens,
          tokensAfter,
          pluralText(routed.entries.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
          true,
        ),
      );
    return {
      kind: "edited",
      file,
      entries: routed.entries,
      tokensBefore: plan.preparation.baselineTokens,
      tokensAfter,
      live: source!,
    };
  }
}
