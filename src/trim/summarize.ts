/**
 * "Pi Context: Summarize These Messages…" (`piContext.summarizeSpan(arg?, selection?, options?)`): a span
 * of pi's context replaced by one summary (`core/flows/spanSummary.ts`), and "Restore Summarized
 * Messages" (`piContext.trim.restoreSpan(target)`), which brings a summarized span back.
 *
 * - From the Pi Session tree: the rows selected (the view allows several) give the span, from the
 *   first to the last; with one row the other end is asked. From the palette both ends are asked.
 *   Programmatic: `(fromId, toId, {instructions?, skipPreview?, force?})`.
 * - The route first (`services.access`, `ACTIONS.summarize`): a refusal is shown before anything is
 *   asked; a running pi with the live bridge appends the edits itself (planned at its leaf).
 * - Then the instructions box, the preview (`viewModel/spanPreview.ts`: what is summarized, the
 *   widening, tokens before → after, cache effect, price, break-even), the summary by the configured
 *   summarizer (pi has no command that summarizes part of its context, so also when the user's pi
 *   summarizes compactions: the preview says who writes it), progress with Cancel, one append.
 */

import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { priceSpanPlan } from "../core/flows/planPrice";
import {
  fitSpanPlan,
  planSpanSummary,
  runSpanSummaryFlow,
  SpanRefusedError,
  withSpanInstructions,
  type SpanFit,
  type SpanSummaryPlan,
} from "../core/flows/spanSummary";
import { completeSummary, SummarizerError, type Summarizer } from "../core/flows/summarizer";
import { readModelsConfig } from "../core/rules/models";
import { buildProjection } from "../core/rules/context";
import { spanDrafts, spanNote } from "../core/rules/spanSummary";
import { entryIdOf } from "../core/treeModel/elements";
import type { ActionRoute, Services, SummarizeCommandOutcome, TrimCommandOutcome } from "../services";
import { formatCount as n, formatTokenRange, pluralText } from "../shared/format";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import type { Prompter } from "../ui/prompter";
import { streamingProgress } from "../ui/progress";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";
import { pricePickRow } from "../viewModel/compactionPrice";
import { buildSpanPreview, spanPreviewLines } from "../viewModel/spanPreview";
import { describeRecord, KIND_NAMES } from "../viewModel/treeText";
import { oneLine } from "../viewModel/treeTextLines";
import { editMarks, runningTurnIds } from "../viewModel/trimList";
import type { TrimCommand } from "./command";

/** Options of `piContext.summarizeSpan` (each one given skips its question). */
export interface SummarizeOptions {
  instructions?: string;
  skipPreview?: boolean;
  /** *Anyway* after a refusal whose evidence is only probable or possible. */
  force?: boolean;
}

let detailsCounter = 0;

/** The span's ends from the command's arguments: a tree row and the selection, or two ids. */
function endsOf(arg: unknown, second: unknown): string[] {
  if (Array.isArray(second)) {
    const ids = second.map(entryIdOf).filter((id): id is string => id !== undefined);
    if (ids.length > 0) return ids;
  }
  const first = entryIdOf(arg);
  const other = typeof second === "string" ? second : undefined;
  return [first, other].filter((id): id is string => id !== undefined);
}

/** The selected rows in context order (the span runs from the earliest to the latest). */
function spanEnds(session: Parameters<typeof buildProjection>[0], ids: string[]): string[] {
  if (ids.length < 2) return ids;
  const position = new Map(buildProjection(session).entries.map((e, i) => [e.record.id, i]));
  const sorted = [...ids].sort((a, b) => (position.get(a) ?? -1) - (position.get(b) ?? -1));
  return [sorted[0]!, sorted[sorted.length - 1]!];
}

/** The command of one window. */
export class SummarizeCommand {
  private running: AbortController | undefined;

  constructor(
    private readonly services: Services,
    private readonly prompter: Prompter,
  ) {}

  /** The visible messages of the current context, newest first, as pick rows. */
  private messageRows(exclude?: string): (vscode.QuickPickItem & { id: string })[] {
    const current = this.services.sessions.current;
    if (!current) return [];
    return buildProjection(current.session)
      .entries.filter((e) => e.roles.some((r) => r !== "system") && e.record.type !== "compaction")
      .filter((e) => e.record.id !== exclude)
      .reverse()
      .map((e) => {
        const d = describeRecord(e.record);
        return {
          id: e.record.id,
          label: iconLabelText(oneLine(`${KIND_NAMES[d.kind]}: ${d.text}`, 100)),
          description: e.record.id,
        };
      });
  }

  private async pickEnd(title: string, exclude?: string): Promise<string | undefined> {
    const pick = await this.prompter.pick(this.messageRows(exclude), {
      title,
      placeholder: vscode.l10n.t("The span runs from one message to another, in either order"),
    });
    return pick?.id;
  }

  /** `piContext.summarizeSpan` (see the file comment). */
  async run(arg?: unknown, second?: unknown, optionsArg?: unknown): Promise<SummarizeCommandOutcome> {
    const current = this.services.sessions.current;
    if (!current) {
      void notify.info(vscode.l10n.t("no pi session to summarize."));
      return { kind: "error", errorKind: "no-session", message: vscode.l10n.t("No pi session.") };
    }
    if (this.running) {
      void notify.info(vscode.l10n.t("a summary is already being written."));
      return { kind: "busy" };
    }
    const options: SummarizeOptions =
      optionsArg && typeof optionsArg === "object" && !Array.isArray(optionsArg)
        ? (optionsArg as SummarizeOptions)
        : {};
    const file = current.file;
    const retry = () => void this.run(arg, second, { ...options, force: true });
    const route = await this.services.access.route(file, ACTIONS.summarize, { force: options.force === true, retry });
    if (route.kind === "refuse") return { kind: "error", file, errorKind: "live", message: route.message };
    const ends = spanEnds(current.session, endsOf(arg, second));
    let from: string | undefined = ends[0];
    let to: string | undefined = ends.length > 1 ? ends[ends.length - 1] : undefined;
    from ??= await this.pickEnd(vscode.l10n.t("Pi Context: Summarize These Messages — From Which Message?"));
    if (!from) return { kind: "declined", file, stage: "span" };
    to ??= await this.pickEnd(
      vscode.l10n.t("Pi Context: Summarize These Messages — From {0} to Which Message?", from),
      from,
    );
    if (!to) return { kind: "declined", file, stage: "span" };
    const controller = new AbortController();
    this.running = controller;
    try {
      return await this.summarize(file, from, to, route, options, controller);
    } catch (error) {
      return this.failed(file, error, () => void this.run(arg, second, { ...options, force: true }));
    } finally {
      this.running = undefined;
    }
  }

  /** Cancel the summary being written (the progress notification's Cancel does the same). */
  cancel(): boolean {
    if (!this.running) return false;
    this.running.abort();
    return true;
  }

  private async summarize(
    file: string,
    from: string,
    to: string,
    route: ActionRoute,
    options: SummarizeOptions,
    controller: AbortController,
  ): Promise<SummarizeCommandOutcome> {
    const config = this.services.config();
    const live = route.kind === "bridge" ? await this.services.liveBridge.livePosition(file) : undefined;
    const planOptions = {
      agentDir: this.services.sessions.agentDir(),
      projectSettings: config.projectSettings,
      ...(route.kind === "file"
        ? this.services.access.flowOptions(route.forced)
        : { guardSeconds: 0, procRoot: null as null }),
      surface: "vscode" as const,
      pi: this.services.pi.current,
      maxOutputTokens: config.summarizer.openai.maxOutputTokens,
      ...(live ? { leafId: live.leafId } : {}),
    };
    const planned = await planSpanSummary(file, from, to, planOptions);
    const given = typeof options.instructions === "string" ? options.instructions : undefined;
    const instructions =
      given ??
      (await this.prompter.input({
        title: vscode.l10n.t("Summarize These Messages — Custom Instructions"),
        prompt: vscode.l10n.t("Optional: what the summary should focus on. Press Enter without text for none."),
      }));
    if (instructions === undefined) return { kind: "declined", file, stage: "instructions" };
    const plan = withSpanInstructions(planned, instructions);
    const summarizer = await this.services.summarizers.get({ allowMissingKey: true });
    const byUserPi = route.kind === "file" && route.summarizer === "user-pi";
    const pi = live ? vscode.l10n.t("pi {0} (pid {1})", live.piVersion, live.pid) : undefined;
    const confirm = (p: SpanSummaryPlan, fit: SpanFit, changed: boolean) =>
      options.skipPreview && !fit.problem
        ? Promise.resolve(true)
        : this.confirm(p, fit, summarizer, { changed, byUserPi, ...(pi ? { pi } : {}) });
    this.services.log.info(
      `summarize ${file}: ${plan.span.fromId}…${plan.span.toId} (${plan.span.messages.length} messages) with ${summarizer.label}${live ? ` through pi ${live.pid}` : ""}`,
    );
    if (live) return this.summarizeInPi(plan, summarizer, confirm, live, controller);
    const outcome = await runSpanSummaryFlow(
      file,
      from,
      to,
      summarizer,
      { ...planOptions, plan, ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}) },
      {
        signal: controller.signal,
        confirm,
        beforeSummarize: (s) => this.services.summarizers.ready(s),
        onUnauthorized: (error, s) => this.services.summarizers.withNewKey(s, error),
        around: (task) => this.withProgress(plan, summarizer, controller, (signal, onText) => task({ signal, onText })),
      },
    );
    if (outcome.kind === "declined")
      return { kind: "declined", file, stage: outcome.stage === "summarizer" ? "api-key" : "preview" };
    const r = outcome.result;
    const tokensAfter = r.tokensAfter ?? r.edits.tokensAfter.tokens;
    void notify.info(
      vscode.l10n.t(
        "Summarized {0}: {1} → {2} tokens (pi's estimate); {3} carries the summary. Restore Summarized Messages brings them back.",
        pluralText(outcome.plan.span.messages.length, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
        n(outcome.plan.edits.pureTokensBefore),
        n(tokensAfter),
        outcome.plan.span.targetId,
      ),
    );
    return {
      kind: "summarized",
      file,
      entries: r.entries.map((e) => ({ id: e.id, targetId: e.targetId })),
      targetId: outcome.plan.span.targetId,
      fromId: outcome.plan.span.fromId,
      toId: outcome.plan.span.toId,
      tokensBefore: outcome.plan.edits.pureTokensBefore,
      tokensAfter,
    };
  }

  /** The running pi appends the edits; the summary is ours (see the file comment). */
  private async summarizeInPi(
    plan: SpanSummaryPlan,
    summarizer: Summarizer,
    confirm: (p: SpanSummaryPlan, fit: SpanFit, changed: boolean) => Promise<boolean>,
    live: { leafId: string | null; activity: string; pid: number; piVersion: string },
    controller: AbortController,
  ): Promise<SummarizeCommandOutcome> {
    const file = plan.file;
    // while pi answers, the run it works on may still wait for tool results: not part of a span
    if (live.activity !== "idle") {
      const running = runningTurnIds(plan.span.projection);
      const inRun = plan.span.messages.map((e) => e.record.id).filter((id) => running.has(id));
      if (inRun.length > 0) {
        const message = vscode.l10n.t(
          "pi is answering the latest message now; the span reaches into that run ({0}). Summarize it once pi has finished. Nothing was written.",
          inRun.join(", "),
        );
        void notify.warn(message);
        return { kind: "error", file, errorKind: "busy", message };
      }
    }
    const fit = await fitSpanPlan(plan, summarizer, controller.signal);
    const go = await confirm(plan, fit, false);
    if (fit.problem) throw fit.problem;
    if (!go) return { kind: "declined", file, stage: "preview" };
    const ready = await this.services.summarizers.ready(summarizer);
    if (!ready) return { kind: "declined", file, stage: "api-key" };
    const text = await this.withProgress(plan, ready, controller, async (signal, onText) => {
      const result = await completeSummary(ready, fit.request.request, "Scoped summary", {
        ...(signal ? { signal } : {}),
        onText,
      });
      return result.text;
    });
    const drafts = spanDrafts(plan.span, spanNote(plan.span, text), plan.session);
    const routed = await this.services.liveBridge.routeContextEdit(file, drafts, live.leafId);
    if (!routed)
      return {
        kind: "error",
        file,
        errorKind: "bridge-unavailable",
        message: vscode.l10n.t("The live bridge does not answer."),
      };
    if (routed.kind === "error") return { kind: "error", file, errorKind: routed.errorKind, message: routed.message };
    const source = { pid: routed.live.pid, piVersion: routed.live.piVersion };
    if (routed.kind === "queued") {
      void notify.info(
        vscode.l10n.t(
          "pi is answering: the summary waits for its next turn boundary (shown as pending until pi applied it).",
        ),
      );
      return { kind: "pending", file, batchId: routed.batchId, targetIds: routed.targetIds, live: source };
    }
    void notify.info(
      vscode.l10n.t(
        "pi appended the summary of {0} ({1}).",
        pluralText(plan.span.messages.length, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
        plan.span.targetId,
      ),
    );
    return {
      kind: "summarized",
      file,
      entries: routed.entries,
      targetId: plan.span.targetId,
      fromId: plan.span.fromId,
      toId: plan.span.toId,
      tokensBefore: plan.edits.pureTokensBefore,
      tokensAfter: null,
      live: source,
    };
  }

  private withProgress<T>(
    plan: SpanSummaryPlan,
    summarizer: Summarizer,
    controller: AbortController,
    task: (signal: AbortSignal | undefined, onText: (delta: string) => void) => Promise<T>,
  ): Promise<T> {
    return Promise.resolve(
      vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t(
            "Summarizing {0}",
            pluralText(plan.span.messages.length, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
          ),
          cancellable: true,
        },
        (progress, token) => {
          token.onCancellationRequested(() => controller.abort());
          const stream = streamingProgress(
            progress,
            vscode.l10n.t("receiving the summary"),
            vscode.l10n.t("summarizing with {0}…", summarizer.label),
          );
          return task(controller.signal, stream.onText);
        },
      ),
    );
  }

  /** The preview quick pick; resolves true for "Summarize now". */
  private async confirm(
    plan: SpanSummaryPlan,
    fit: SpanFit,
    summarizer: Summarizer,
    options: { changed: boolean; byUserPi: boolean; pi?: string },
  ): Promise<boolean> {
    const price = priceSpanPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir));
    const preview = buildSpanPreview(plan, plan.analysis.inspect, price);
    const lines = spanPreviewLines(preview);
    const who = vscode.l10n.t(
      "written by {0}{1}{2}",
      summarizer.label,
      options.byUserPi ? vscode.l10n.t(" (your pi has no command that summarizes part of its context)") : "",
      options.pi ? vscode.l10n.t("; {0} appends the edits", options.pi) : "",
    );
    type Row = vscode.QuickPickItem & { action?: "go" | "details" | "cost" | "cancel" };
    const cost = pricePickRow(price);
    const rows: Row[] = [
      ...(fit.problem
        ? [
            {
              action: "details" as const,
              label: `$(warning) ${vscode.l10n.t("Does not fit {0}'s window", iconLabelText(summarizer.label))}`,
              detail: iconLabelText(fit.problem.message),
            },
          ]
        : [
            {
              action: "go" as const,
              label: vscode.l10n.t("$(check) Summarize now"),
              description: vscode.l10n.t(
                "{0} → {1} tokens · {2}",
                n(preview.tokensBefore),
                formatTokenRange(preview.tokensAfter),
                iconLabelText(summarizer.modelName ?? summarizer.label),
              ),
              detail: iconLabelText(`${lines[0]} ${who}.`),
            },
          ]),
      { action: "cost", label: cost.label, detail: iconLabelText(cost.detail) },
      {
        action: "details",
        label: `$(preview) ${vscode.l10n.t("Show details")}`,
        detail: vscode.l10n.t("The whole preview and the messages summarized"),
      },
      ...lines
        .slice(1, -1)
        .map((line): Row => ({ label: `$(info) ${iconLabelText(oneLine(line, 90))}`, detail: iconLabelText(line) })),
      {
        action: "cancel",
        label: vscode.l10n.t("$(close) Cancel"),
        detail: vscode.l10n.t("Nothing is sent, nothing is written."),
      },
    ];
    for (;;) {
      const pick = await this.prompter.pick(rows, {
        title: vscode.l10n.t(
          "{0}Summarize {1} ({2} … {3})?",
          options.changed ? vscode.l10n.t("The session changed — new preview. ") : "",
          pluralText(preview.messageCount, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
          preview.fromId,
          preview.toId,
        ),
        placeholder: vscode.l10n.t(
          "tokens {0} → {1} · the next request re-sends ≈{2} uncached",
          n(preview.tokensBefore),
          formatTokenRange(preview.tokensAfter),
          n(preview.resentTokens),
        ),
        keepOpen: (row) => row.action === undefined || row.action === "cost",
      });
      if (!pick || pick.action === "cancel") return false;
      if (pick.action === "go") return true;
      const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/Summary preview ${++detailsCounter}.md` });
      const messages = plan.span.messages.map(
        (e) => `- \`${e.record.id}\` ${oneLine(describeRecord(e.record).text, 100).replace(/[\\`*_[\]<>]/g, "\\$&")}`,
      );
      setVirtualDocument(
        uri,
        [
          `# ${vscode.l10n.t("Summarize these messages — preview")}`,
          "",
          ...lines.map((l) => `- ${l.replace(/[\\`*_[\]<>]/g, "\\$&")}`),
          "",
          `## ${vscode.l10n.t("Messages summarized")}`,
          ...messages,
          "",
        ].join("\n"),
      );
      await vscode.commands
        .executeCommand("markdown.showPreview", uri)
        .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
      if (fit.problem) return false;
    }
  }

  private failed(file: string, error: unknown, rerun: () => void): SummarizeCommandOutcome {
    if (error instanceof SpanRefusedError) {
      this.services.log.warn(`summarize ${file}: ${error.message}`);
      void notify.warn(error.message);
      return { kind: "error", file, errorKind: `span-${error.code}`, message: error.message };
    }
    if (error instanceof SummarizerError && error.kind === "too-large")
      return { kind: "error", file, errorKind: "too-large", message: error.message };
    const failure = notify.reportFlowFailure(this.services.log, {
      operation: "summary",
      logPrefix: "summarize",
      file,
      error,
      configActions: [vscode.l10n.t("Open Settings")],
      refused: (e) => this.services.access.showRefusal(e, file, rerun),
    });
    return failure.kind === "cancelled"
      ? { kind: "cancelled", file, message: failure.message }
      : { kind: "error", file, errorKind: failure.errorKind, message: failure.message };
  }
}

/**
 * Restore a summarized span: every message from the note's first entry to its last, back as it was
 * (the trim command's restore, one append; a running pi appends it itself).
 */
function restoreSpan(
  services: Services,
  trim: TrimCommand,
  arg: unknown,
  options: { skipPreview?: boolean },
): Promise<TrimCommandOutcome> {
  const current = services.sessions.current;
  const id = entryIdOf(arg);
  if (!current || !id)
    return Promise.resolve({
      kind: "nothing",
      file: current?.file ?? "",
      message: vscode.l10n.t("No entry was given."),
    });
  const session = current.session;
  const mark = editMarks(session).get(id);
  const note = mark?.edit?.span;
  if (!note)
    return Promise.resolve({
      kind: "nothing",
      file: current.file,
      message: vscode.l10n.t("Entry {0} does not carry a summary of messages.", id),
    });
  const entries = buildProjection(session).entries;
  const first = entries.findIndex((e) => e.record.id === note.fromId);
  const last = entries.findIndex((e) => e.record.id === note.toId);
  const span = first >= 0 && last >= first ? entries.slice(first, last + 1) : [];
  const items = span
    .filter((e) => editMarks(session).get(e.record.id)?.edit)
    .map((e) => ({ entryId: e.record.id, choice: "restore" as const }));
  return trim.apply(items, { file: current.file, ...(options.skipPreview ? { skipPreview: true } : {}) });
}

/**
 * Register `piContext.summarizeSpan`, `piContext.cancelSummary` and `piContext.trim.restoreSpan`.
 * @returns the command (tests read its prompts through the trim API's prompter).
 */
export function registerSummarize(services: Services, trim: TrimCommand, prompter: Prompter): SummarizeCommand {
  const command = new SummarizeCommand(services, prompter);
  services.commands.add({
    "piContext.summarizeSpan": (arg?: unknown, second?: unknown, options?: unknown) =>
      command.run(arg, second, options),
    "piContext.cancelSummary": () => command.cancel(),
    "piContext.trim.restoreSpan": (arg?: unknown, optionsArg?: unknown) =>
      restoreSpan(
        services,
        trim,
        arg,
        optionsArg && typeof optionsArg === "object" && !Array.isArray(optionsArg) ? optionsArg : {},
      ),
  });
  return command;
}
