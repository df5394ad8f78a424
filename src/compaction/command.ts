/**
 * "Pi Context: Compact Session…" (`piContext.compact`): pi's `/compact [instructions]` from VS Code —
 * a preview before any token is spent, a cancellable streaming progress, the summary diff afterwards.
 * The flow itself is `core/flows/compact.ts` (shared with `pi-context compact`).
 *
 * Order (nothing is asked that a later check would make pointless): the session (argument, current,
 * else a pick); the route (`services.access`: a running pi with the live bridge compacts itself, one
 * without it refuses before anything is typed, with *Anyway* where the evidence allows); prepare
 * ("Nothing to compact" right away); the instructions; the preview (no API key needed: counting is
 * local); on "Compact now" the key box when a server needs one or answers 401/403; summarize, append,
 * diff. With the user's own pi as summarizer, preview and compaction are `withPi.ts`.
 *
 * `piContext.compact(file?, options?)` (`file`: a session path or URI, default the current session)
 * resolves with a {@link CompactCommandOutcome}; `piContext.cancelCompaction` cancels a running summary.
 */

import { estimateFailureText, type EstimateFailure } from "../core/rules/estimateFailure";
import * as vscode from "vscode";
import {
  compactionWrittenBy,
  InvalidCutPointError,
  NothingToCompactError,
  planCompaction,
  providedCompactionOf,
  runCompactionFlow,
  withInstructions,
  type CompactionDraft,
  type CompactionPlan,
  type FlowCallbacks,
  type FlowOutcome,
  type PlanFit,
  type PlanOptions,
  type SummarizeCallbacks,
} from "../core/flows/compact";
import { ACTIONS } from "../core/access/route";
import { describeChange } from "../core/flows/watch";
import { SummarizerError, type Summarizer } from "../core/flows/summarizer";
import { UnsafeSessionWriteError } from "../core/flows/write";
import { sessionLabel } from "../core/rules/sessionLabel";
import { reviewSummary } from "./review";
import type { ActionRoute, CompactCommandOutcome, DeclinedStage, LiveCompactionFailure, Services } from "../services";
import { formatCount as n, withPeriod } from "../shared/format";
import { iconLabelText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";
import * as notify from "../ui/notify";
import { streamingProgress } from "../ui/progress";
import { confirmPreview, planTitle, previewOfSummarizer, sessionTitle, setPlanLabel } from "./preview";
import { reportCompacted } from "./result";
import { compactWithUserPi } from "./withPi";
import { assertPiCanCut, checkCutInPi, compactUpToHereWithUserPi, PiCannotCutError } from "./upToHerePi";

/** Options of `piContext.compact` (each one given skips its question). */
export interface CompactCommandOptions {
  instructions?: string;
  skipPreview?: boolean;
  /** *Anyway* after a refusal on probable or possible evidence: go ahead once (a live bridge still stops it). */
  force?: boolean;
  /** "Compact up to here": keep from this entry on (pi's `firstKeptEntryId`) instead of pi's own cut. */
  keepFrom?: string;
  /** Our summarizer even when a running pi has the session with its live bridge: that pi appends our summary. */
  summarizer?: "configured";
}

async function pickSession(services: Services): Promise<string | undefined> {
  const current = (): string | undefined => services.sessions.current?.file;
  if (current()) return current();
  // right after start-up listSessions waits for the first scan: its session is then the current one
  const sessions = await services.sessions.listSessions();
  if (current()) return current();
  if (sessions.length === 0) {
    void notify.info(vscode.l10n.t("no pi session found for this workspace."));
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    safePickItems(
      sessions.map((s) => ({
        label: iconLabelText(sessionLabel(s)),
        description: new Date(s.mtimeMs).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" }),
        detail: s.file,
        file: s.file,
      })),
    ),
    { title: vscode.l10n.t("Pi Context: Compact Session — Which Session?"), ignoreFocusOut: true },
  );
  return pick?.file;
}

/** The instructions box (`/compact <instructions>`); undefined = Escape. */
function askInstructions(title: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: vscode.l10n.t("Compact {0} — Custom Instructions", title),
    prompt: vscode.l10n.t(
      "Optional: what the summary should focus on (like /compact <instructions>). Press Enter without text for none.",
    ),
    placeHolder: vscode.l10n.t("e.g. keep the details of the parser refactoring"),
    ignoreFocusOut: true,
  });
}

/** `piContext.compact` as a function: `(file?, options?)` → the outcome (see the file comment). */
export type CompactFunction = (fileArg?: unknown, optionsArg?: unknown) => Promise<CompactCommandOutcome>;

/**
 * Register `piContext.compact` and `piContext.cancelCompaction`.
 * @returns the compact function, for the commands that compact a chosen way (`upToHere.ts`).
 */
export function registerCompaction(services: Services): CompactFunction {
  let running: AbortController | undefined;
  const setRunning = (controller: AbortController | undefined) => {
    running = controller;
    void vscode.commands.executeCommand("setContext", "piContext.compacting", controller !== undefined);
  };

  const compact = async (fileArg?: unknown, optionsArg?: unknown): Promise<CompactCommandOutcome> => {
    if (running) {
      void notify.info(vscode.l10n.t("a compaction is already running."));
      return { kind: "busy" };
    }
    const options: CompactCommandOptions =
      optionsArg && typeof optionsArg === "object" ? (optionsArg as CompactCommandOptions) : {};
    let file: string | undefined =
      fileArg instanceof vscode.Uri ? fileArg.fsPath : typeof fileArg === "string" ? fileArg : undefined;
    file ??= await pickSession(services);
    if (!file) return { kind: "declined", stage: "session" };
    const controller = new AbortController();
    setRunning(controller);
    try {
      return await compactFile({ services, file, options, controller, compact });
    } catch (error) {
      return report(services, file, error, options, compact);
    } finally {
      setRunning(undefined);
    }
  };

  // pi's own compaction failed in a running pi (live bridge): say why, offer ours or other instructions
  services.context.subscriptions.push(
    services.liveBridge.onDidCompactionFail((failure) => void offerAfterFailure(services, failure, compact)),
  );

  services.commands.add({
    "piContext.compact": compact,
    "piContext.cancelCompaction": () => {
      if (!running) return false;
      running.abort();
      return true;
    },
  });
  return compact;
}

/** One run of `piContext.compact` on a file. */
interface CompactRun {
  services: Services;
  file: string;
  options: CompactCommandOptions;
  controller: AbortController;
  /** `piContext.compact` itself, for the retries a refusal offers. */
  compact: CompactFunction;
}

/** What the summarizing steps share once the route and the plan are settled. */
interface SummarizeRun extends CompactRun {
  plan: CompactionPlan;
  planOptions: Omit<PlanOptions, "maxOutputTokens">;
  instructions: string;
  skipPreview: boolean;
  keepFrom: string | undefined;
  /** A running pi appends our summary (its live bridge). */
  live: boolean;
}

/** Route, plan, instructions, then the user's pi or our summarizer compacts (the file comment's order). */
async function compactFile(run: CompactRun): Promise<CompactCommandOutcome> {
  const { services, file, options, controller } = run;
  const config = services.config();
  const skipPreview = options.skipPreview ?? config.compaction.skipPreview;
  let given = typeof options.instructions === "string" ? options.instructions : undefined;
  const current = services.sessions.current;
  const info = await services.sessions.sessionInfo(file);
  const title = sessionTitle(setPlanLabel(file, current?.file === file ? current.label : sessionLabel(info ?? {})));

  const keepFrom = typeof options.keepFrom === "string" ? options.keepFrom : undefined;
  const routed = await routeCompaction(services, file, options, {
    title,
    skipPreview,
    controller,
    retry: () => void run.compact(file, { ...options, force: true }),
  });
  if ("outcome" in routed) return routed.outcome;
  const { route, live } = routed;
  given ??= routed.given;

  // prepare: "Nothing to compact" now, not after the instructions and the key
  const planOptions = {
    agentDir: services.sessions.agentDir(),
    projectSettings: config.projectSettings,
    // a running pi appends our summary itself: the plan is not refused for it having the session open
    ...(live ? { guardSeconds: 0, procRoot: null, force: false } : services.access.flowOptions(route.forced)),
    surface: "vscode" as const,
    pi: services.pi.current,
  };
  const prepared = await planCompaction(file, {
    ...planOptions,
    maxOutputTokens: config.summarizer.openai.maxOutputTokens,
    ...(keepFrom !== undefined ? { keepFrom } : {}),
  });
  // the user's pi cuts where we ask only through its live bridge, and only when its own /compact has
  // something to summarize: said now, before the instructions
  if (route.summarizer === "user-pi" && keepFrom !== undefined) assertPiCanCut(prepared);
  if (prepared.writeBlocker) throw new UnsafeSessionWriteError(prepared.writeBlocker); // before any question

  const instructions = given ?? (await askInstructions(planTitle(prepared)));
  if (instructions === undefined) return { kind: "declined", file, stage: "instructions" };
  const plan = withInstructions(prepared, instructions);
  // the user's own pi summarizes (setting `pi`, or `auto` with a pi and no summarizer configured here)
  if (route.summarizer === "user-pi" && !live && options.summarizer !== "configured")
    return keepFrom !== undefined
      ? compactUpToHereWithUserPi(services, plan, { skipPreview, controller })
      : compactWithUserPi(services, plan, { skipPreview, controller, planOptions });
  return summarizeAndWrite({ ...run, plan, planOptions, instructions, skipPreview, keepFrom, live: live === true });
}

/** Our summarizer: preview, summary (with progress), review, append; then the outcome. */
async function summarizeAndWrite(run: SummarizeRun): Promise<CompactCommandOutcome> {
  const { services, file, plan, instructions, keepFrom } = run;
  // the preview counts locally: no key needed yet (readySummarizer asks after "Compact now")
  const summarizer = await services.summarizers.get({ allowMissingKey: true });
  services.log.info(
    `compact ${file}: summarizer ${summarizer.label}${instructions.trim() ? `, instructions ${JSON.stringify(instructions.trim())}` : ""}`,
  );
  const seen = { askedForKey: false, previewedProblem: false };
  const outcome = await runCompactionFlow(
    file,
    summarizer,
    {
      ...run.planOptions,
      maxOutputTokens: plan.options.maxOutputTokens,
      ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}),
      ...(keepFrom !== undefined ? { keepFrom } : {}),
      plan,
    },
    flowCallbacks(run, summarizer, seen),
  ).catch((error: unknown) => {
    // a request that does not fit: the preview said why and what to change — no second message
    if (seen.previewedProblem && error instanceof SummarizerError && error.kind === "too-large") return error;
    throw error;
  });
  if (outcome instanceof SummarizerError) {
    services.log.warn(`compact ${file}: ${outcome.message}`);
    return { kind: "error", file, errorKind: "too-large", message: outcome.message };
  }
  return flowOutcome(run, outcome, summarizer, seen.askedForKey);
}

/** The flow's questions and reports: log, preview, review, session changes, the API key, the progress. */
function flowCallbacks(
  run: SummarizeRun,
  summarizer: Summarizer,
  seen: { askedForKey: boolean; previewedProblem: boolean },
): FlowCallbacks {
  const { services, file, skipPreview } = run;
  return {
    signal: run.controller.signal,
    onPlan: (p, fit) =>
      services.log.info(
        `compact ${file}: tokensBefore ${p.preview.tokensBefore}, firstKeptEntryId ${p.preview.firstKeptEntryId}, split ${p.preview.isSplitTurn}, summarized ${p.preview.summarizedEntryIds.length}+${p.preview.turnPrefixEntryIds.length} entries, request ≈${fit.inputTokens} tokens`,
      ),
    ...(skipPreview
      ? {}
      : {
          confirm: (p: CompactionPlan, fit: PlanFit, changed: boolean) => {
            seen.previewedProblem = fit.problem !== undefined;
            return confirmPreview(p, previewOfSummarizer(summarizer, fit, p), changed);
          },
        }),
    ...(skipPreview ? {} : { reviewDraft: (p: CompactionPlan, d: CompactionDraft) => reviewSummary(p, d) }),
    ...(run.live ? { commit: (p: CompactionPlan, d: CompactionDraft) => commitInPi(services, p, d) } : {}),
    onSessionChanged: (stage) => {
      const text = describeChange(stage);
      services.log.info(`compact ${file}: ${text}; preparing again`);
      // the new preview's title says it too; a stopped or discarded summary gets a toast
      if (stage !== "preview") void notify.info(vscode.l10n.t("{0}. Preparing the compaction again.", text));
    },
    beforeSummarize: async (s) => {
      seen.askedForKey = s.needsApiKey === true;
      return services.summarizers.ready(s);
    },
    onUnauthorized: async (error, s) => {
      services.log.warn(`compact ${file}: ${error.message}`);
      seen.askedForKey = true;
      return services.summarizers.withNewKey(s, error);
    },
    around: (task) => withSummaryProgress(run, summarizer, task),
  };
}

/** The cancellable notification that streams the summary while `task` runs. */
function withSummaryProgress<T>(
  run: SummarizeRun,
  summarizer: Summarizer,
  task: (callbacks: SummarizeCallbacks) => Promise<T>,
): Promise<T> {
  return Promise.resolve(
    vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t("Compacting {0}", planTitle(run.plan)),
        cancellable: true,
      },
      (progress, token) => {
        token.onCancellationRequested(() => run.controller.abort());
        const stream = streamingProgress(
          progress,
          vscode.l10n.t("receiving the summary"),
          vscode.l10n.t("summarizing with {0}…", summarizer.label),
        );
        return task({
          signal: run.controller.signal,
          onPhase: (p, i, count) => {
            const phase =
              count > 1 ? `${p === "history" ? "history" : vscode.l10n.t("split-turn prefix")} (${i}/${count}) ` : "";
            stream.restart(vscode.l10n.t("{0}summarizing with {1}…", phase, summarizer.label), phase);
          },
          onText: stream.onText,
        });
      },
    ),
  );
}

/** The flow's end as the command's outcome: declined (where; said when it needs saying) or written. */
async function flowOutcome(
  run: SummarizeRun,
  outcome: FlowOutcome,
  summarizer: Summarizer,
  askedForKey: boolean,
): Promise<CompactCommandOutcome> {
  const { services, file } = run;
  if (outcome.kind === "declined" && outcome.stage === "review") {
    services.log.info(`compact ${file}: the summary was discarded after the review`);
    void notify.info(vscode.l10n.t("the summary was discarded — nothing was written."));
    return { kind: "declined", file, stage: "review" };
  }
  if (outcome.kind === "declined") {
    const stage: DeclinedStage = outcome.stage === "summarizer" ? "api-key" : "preview";
    services.log.info(`compact ${file}: declined at the ${stage === "api-key" ? "API key box" : "preview"}`);
    if (stage === "api-key") void notify.info(vscode.l10n.t("no API key entered — nothing was sent or written."));
    return { kind: "declined", file, stage };
  }
  const r = outcome.result;
  const label = planTitle(outcome.plan);
  services.log.info(
    `compact ${file}: wrote compaction ${r.entry.id} (${n(r.bytesBefore)} → ${n(r.bytesAfter)} bytes), tokens ${n(r.tokensBefore)} → ${r.tokensAfter === null ? "?" : n(r.tokensAfter)}${askedForKey ? " (after asking for the API key)" : ""}`,
  );
  if (r.readBackError)
    services.log.warn(`compact ${file}: written, but the file could not be read back: ${r.readBackError}`);
  return reportCompacted(services, {
    file,
    label,
    entryId: r.entry.id,
    previousCompactionId: r.previousCompactionId,
    tokensBefore: r.tokensBefore,
    tokensAfter: r.tokensAfter,
    firstKeptEntryId: r.entry.firstKeptEntryId,
    message: compactedText(r, label, run.live ? summarizer.label : undefined),
  });
}

/**
 * The route of a compaction, before anything is typed (`services.access`): the running pi compacts
 * through its live bridge (after the instructions box), our file flow runs, or the refusal was shown.
 * @returns the outcome when the compaction ended here, else our file route and the instructions typed so far.
 */
async function routeCompaction(
  services: Services,
  file: string,
  options: CompactCommandOptions,
  context: { title: string; skipPreview: boolean; controller: AbortController; retry: () => void },
): Promise<
  { outcome: CompactCommandOutcome } | { route: Extract<ActionRoute, { kind: "file" }>; given?: string; live?: true }
> {
  const routeOptions = { force: options.force === true, retry: context.retry };
  const keepFrom = typeof options.keepFrom === "string" ? options.keepFrom : undefined;
  const action = keepFrom === undefined ? ACTIONS.compact : ACTIONS.compactUpToHere;
  let route = await services.access.route(file, action, routeOptions);
  let given = typeof options.instructions === "string" ? options.instructions : undefined;
  // our summarizer, and the running pi appends the summary (its bridge takes it) at pi's own cut
  if (route.kind === "bridge" && options.summarizer === "configured" && keepFrom === undefined)
    return {
      route: { kind: "file", access: route.access, forced: false, summarizer: "configured" },
      live: true,
      ...(given !== undefined ? { given } : {}),
    };
  if (route.kind === "bridge") {
    // the cut is checked on the file before anything is asked (the running pi checks it again)
    if (keepFrom !== undefined) await checkCutInPi(services, file, keepFrom);
    given ??= await askInstructions(context.title);
    if (given === undefined) return { outcome: { kind: "declined", file, stage: "instructions" } };
    const live = await services.liveBridge.routeCompaction(file, given, {
      signal: context.controller.signal,
      skipPreview: context.skipPreview,
      ...(keepFrom !== undefined ? { keepFrom } : {}),
    });
    if (live) return { outcome: live };
    route = await services.access.route(file, action, routeOptions); // pi went away meanwhile
  }
  if (route.kind === "refuse")
    return { outcome: { kind: "error", file, errorKind: "live", message: route.message, actions: route.actions } };
  if (route.kind === "bridge")
    return {
      outcome: { kind: "error", file, errorKind: "bridge-unavailable", message: notify.bridgeSilent(route.pid) },
    };
  return { route, ...(given !== undefined ? { given } : {}) };
}

/** The toast after a compaction was written (`byPiWith`: our summarizer's name when the running pi wrote it). */
function compactedText(
  r: {
    entry: { id: string };
    tokensBefore: number;
    tokensAfter: number | null;
    readBackError?: string;
    estimateFailureBefore?: EstimateFailure;
    estimateFailureAfter?: EstimateFailure;
  },
  label: string,
  byPiWith: string | undefined,
): string {
  return r.tokensAfter === null
    ? vscode.l10n.t(
        "compacted {0} (wrote compaction {1}), but the file could not be read back afterwards: {2}",
        label,
        r.entry.id,
        withPeriod(r.readBackError ?? vscode.l10n.t("unknown error")),
      )
    : r.estimateFailureBefore || r.estimateFailureAfter
      ? // pi has no number on one side: never call pi-context's count pi's
        vscode.l10n.t(
          "compacted {0} — {1} → {2}. {3}. pi sees it the next time it opens the session.",
          label,
          r.estimateFailureBefore
            ? vscode.l10n.t("pi had no estimate")
            : vscode.l10n.t("{0} tokens", n(r.tokensBefore)),
          r.estimateFailureAfter
            ? vscode.l10n.t("pi has no estimate")
            : vscode.l10n.t("{0} tokens (pi's estimate)", n(r.tokensAfter)),
          estimateFailureText((r.estimateFailureAfter ?? r.estimateFailureBefore)!),
        )
      : byPiWith !== undefined
        ? vscode.l10n.t(
            "compacted {0} with {1} — {2} → {3} tokens; the running pi appended the summary itself.",
            label,
            byPiWith,
            n(r.tokensBefore),
            n(r.tokensAfter),
          )
        : vscode.l10n.t(
            "compacted {0} — {1} → {2} tokens (pi's estimate). pi sees it the next time it opens the session.",
            label,
            n(r.tokensBefore),
            n(r.tokensAfter),
          );
}

/**
 * pi's own compaction failed (e.g. its summary hit the output limit, pi #9512): one warning with pi's
 * reason, offering our summarizer (the running pi appends its summary) or pi's model with instructions.
 */
async function offerAfterFailure(
  services: Services,
  failure: LiveCompactionFailure,
  compact: (file: unknown, options: CompactCommandOptions) => Promise<CompactCommandOutcome>,
): Promise<void> {
  const current = services.sessions.current;
  const label = sessionTitle(
    current?.file === failure.file
      ? current.label
      : sessionLabel((await services.sessions.sessionInfo(failure.file).catch(() => undefined)) ?? {}),
  );
  const what =
    failure.reason === "threshold"
      ? vscode.l10n.t("its auto-compaction at the threshold")
      : failure.reason === "overflow"
        ? vscode.l10n.t("its compaction after the context overflowed")
        : vscode.l10n.t("/compact");
  const configured = await services.summarizers
    .get({ allowMissingKey: true })
    .then((s) => s.label)
    .catch(() => undefined);
  const withOther = configured
    ? vscode.l10n.t("Compact with {0}…", configured)
    : vscode.l10n.t("Compact with Another Summarizer…");
  const withInstructions = vscode.l10n.t("Compact with Instructions…");
  const choice = await notify.warn(
    vscode.l10n.t(
      "pi {0} (pid {1}) could not compact {2} ({3}): {4}",
      failure.piVersion,
      failure.pid,
      label,
      what,
      failure.errorMessage ?? vscode.l10n.t("pi gave no reason"),
    ),
    withOther,
    withInstructions,
  );
  if (choice === withOther) await compact(failure.file, { summarizer: "configured" });
  else if (choice === withInstructions) await compact(failure.file, {});
}

/**
 * The commit of a compaction whose summary the running pi appends (`summarizer: "configured"` on a
 * live session): sent through its bridge, then read back from the file.
 */
async function commitInPi(services: Services, plan: CompactionPlan, draft: CompactionDraft) {
  const written = await services.liveBridge.routeCompactionSummary(
    plan.file,
    providedCompactionOf(plan, draft),
    plan.preparation.leafId,
  );
  if (!written)
    throw new Error(
      vscode.l10n.t("pi's live bridge went away before the summary was sent. Nothing was written; compact again."),
    );
  return compactionWrittenBy(plan, written.entryId, written.bytesBefore);
}

/** Tell the user what happened (one message, never a loop) and return the outcome. */
function report(
  services: Services,
  file: string,
  error: unknown,
  options: CompactCommandOptions,
  rerun: (file: string, options: CompactCommandOptions) => Promise<CompactCommandOutcome>,
): CompactCommandOutcome {
  if (error instanceof NothingToCompactError) {
    services.log.warn(`compact ${file}: ${error.name}: ${error.message}`);
    void notify.info(withPeriod(error.message));
    return { kind: "nothing", file, message: error.message };
  }
  if (error instanceof InvalidCutPointError) {
    services.log.warn(`compact ${file}: ${error.name}: ${error.message}`);
    // the nearest entries pi can keep from, one click each
    const offers = error.nearest.map((id) => vscode.l10n.t("Keep from {0}", id));
    void notify.warn(error.message, ...offers).then((choice) => {
      const id = choice === undefined ? undefined : error.nearest[offers.indexOf(choice)];
      if (id !== undefined) void rerun(file, { ...options, keepFrom: id });
    });
    return { kind: "error", file, errorKind: "invalid-cut", message: error.message };
  }
  if (error instanceof PiCannotCutError) {
    services.log.warn(`compact ${file}: ${error.message}`);
    void notify.warn(error.message);
    return { kind: "error", file, errorKind: "pi-cannot-cut", message: error.message };
  }
  return notify.reportFlowFailure(services.log, {
    operation: "compaction",
    logPrefix: "compact",
    file,
    error,
    configActions: [vscode.l10n.t("Open Settings")],
    setApiKey: () => services.actions.setApiKey(),
    refused: (e) => services.access.showRefusal(e, file, () => void rerun(file, { ...options, force: true })),
  });
}
