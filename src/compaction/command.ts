/**
 * "Pi Context: Compact Session…" (`piContext.compact`): pi's `/compact [instructions]` from VS Code, with a
 * preview before any token is spent, a cancellable streaming progress notification, and the summary
 * diff afterwards. The flow itself is `core/compact.ts` (shared with `pi-context compact`).
 *
 * Order (nothing is asked that a later check would make pointless):
 *   1. the session (argument, else the current one, else a pick);
 *   2. the route (`services.access`): a running pi with the live bridge compacts itself
 *      (instructions, then `liveBridge/routes.ts`); a pi that may have it open without one refuses
 *      before anything is typed (with *Anyway* where the evidence allows it);
 *   4. prepare (pi's `prepareCompaction`): "Nothing to compact" is said right away;
 *   5. the optional custom instructions;
 *   6. the preview (needs no API key: counting is local);
 *   7. on "Compact now": an OpenAI-compatible server that needs a key and has none asks for it in a
 *      password box (stored in SecretStorage) and the same compaction continues; a server that
 *      answers HTTP 401/403 gets the same box and the request is retried;
 *   8. summarize (progress notification, Cancel), append, summary diff.
 *
 * With the user's own pi as the summarizer (`summarizers/select.ts` `usesPi`), steps 6–8 are
 * `withPi.ts`: the same preview, then pi compacts the idle session itself and writes its own entry.
 *
 * `piContext.compact(file?, options?)`: `file` = a session path or URI (default: the current
 * session); `options.instructions` skips the instructions box; `options.skipPreview` skips the
 * preview; `options.keepFrom` = "Compact up to here" (`upToHere.ts`): the cut at that entry, checked
 * against pi's valid cut points before anything is asked. Resolves with a {@link CompactCommandOutcome} (the panel and the tests read it).
 * `piContext.cancelCompaction` cancels a running summary (same as the notification's Cancel).
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
  type PlanFit,
} from "../core/flows/compact";
import { ACTIONS } from "../core/access/route";
import { describeChange } from "../core/flows/watch";
import { SummarizerError } from "../core/flows/summarizer";
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
  /**
   * *Anyway* after a refusal whose evidence is only probable or possible (`core/access/route.ts`):
   * go ahead once; a pi with the live bridge on the session still stops it.
   */
  force?: boolean;
  /** "Compact up to here": keep from this entry on (pi's `firstKeptEntryId`) instead of pi's own cut. */
  keepFrom?: string;
  /**
   * `configured`: summarize with the configured summarizer even when a running pi has the session
   * with its live bridge — that pi then appends our summary as its compaction (bridge 1.3.0+), e.g.
   * after pi's own compaction failed.
   */
  summarizer?: "configured";
}

async function pickSession(services: Services): Promise<string | undefined> {
  const current = (): string | undefined => services.sessions.current?.file;
  if (current()) return current();
  // right after start-up the first scan may still run: listSessions waits for it, then the
  // session it found is the current one (no "Which session?" for a workspace that has one)
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
      return await compactFile(file, options, controller);
    } catch (error) {
      return report(services, file, error, options, compact);
    } finally {
      setRunning(undefined);
    }
  };

  const compactFile = async (
    file: string,
    options: CompactCommandOptions,
    controller: AbortController,
  ): Promise<CompactCommandOutcome> => {
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
      retry: () => void compact(file, { ...options, force: true }),
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
    // the user's pi cuts where we ask only through the live bridge loaded into it, and only when its
    // own /compact has something to summarize: said now, before the instructions
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
    // the preview counts locally: no key needed yet (readySummarizer asks after "Compact now")
    const summarizer = await services.summarizers.get({ allowMissingKey: true });
    services.log.info(
      `compact ${file}: summarizer ${summarizer.label}${instructions.trim() ? `, instructions ${JSON.stringify(instructions.trim())}` : ""}`,
    );
    let askedForKey = false;
    let previewedProblem = false;
    const outcome = await runCompactionFlow(
      file,
      summarizer,
      {
        ...planOptions,
        maxOutputTokens: plan.options.maxOutputTokens,
        ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}),
        ...(keepFrom !== undefined ? { keepFrom } : {}),
        plan,
      },
      {
        signal: controller.signal,
        onPlan: (p, fit) =>
          services.log.info(
            `compact ${file}: tokensBefore ${p.preview.tokensBefore}, firstKeptEntryId ${p.preview.firstKeptEntryId}, split ${p.preview.isSplitTurn}, summarized ${p.preview.summarizedEntryIds.length}+${p.preview.turnPrefixEntryIds.length} entries, request ≈${fit.inputTokens} tokens`,
          ),
        ...(skipPreview
          ? {}
          : {
              confirm: (p: CompactionPlan, fit: PlanFit, changed: boolean) => {
                previewedProblem = fit.problem !== undefined;
                return confirmPreview(p, previewOfSummarizer(summarizer, fit, p), changed);
              },
            }),
        ...(skipPreview ? {} : { reviewDraft: (p: CompactionPlan, d: CompactionDraft) => reviewSummary(p, d) }),
        ...(live ? { commit: (p: CompactionPlan, d: CompactionDraft) => commitInPi(services, p, d) } : {}),
        onSessionChanged: (stage) => {
          const text = describeChange(stage);
          services.log.info(`compact ${file}: ${text}; preparing again`);
          // the new preview's title says it too; a stopped or discarded summary gets a toast
          if (stage !== "preview") void notify.info(vscode.l10n.t("{0}. Preparing the compaction again.", text));
        },
        beforeSummarize: async (s) => {
          askedForKey = s.needsApiKey === true;
          return services.summarizers.ready(s);
        },
        onUnauthorized: async (error, s) => {
          services.log.warn(`compact ${file}: ${error.message}`);
          askedForKey = true;
          return services.summarizers.withNewKey(s, error);
        },
        around: (task) =>
          Promise.resolve(
            vscode.window.withProgress(
              {
                location: vscode.ProgressLocation.Notification,
                title: vscode.l10n.t("Compacting {0}", planTitle(plan)),
                cancellable: true,
              },
              (progress, token) => {
                token.onCancellationRequested(() => controller.abort());
                const stream = streamingProgress(
                  progress,
                  vscode.l10n.t("receiving the summary"),
                  vscode.l10n.t("summarizing with {0}…", summarizer.label),
                );
                return task({
                  signal: controller.signal,
                  onPhase: (p, i, count) => {
                    const phase =
                      count > 1
                        ? `${p === "history" ? "history" : vscode.l10n.t("split-turn prefix")} (${i}/${count}) `
                        : "";
                    stream.restart(vscode.l10n.t("{0}summarizing with {1}…", phase, summarizer.label), phase);
                  },
                  onText: stream.onText,
                });
              },
            ),
          ),
      },
    ).catch((error: unknown) => {
      // a request that does not fit: the preview said why and what to change — no second message
      if (previewedProblem && error instanceof SummarizerError && error.kind === "too-large") return error;
      throw error;
    });
    if (outcome instanceof SummarizerError) {
      services.log.warn(`compact ${file}: ${outcome.message}`);
      return { kind: "error", file, errorKind: "too-large", message: outcome.message };
    }
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
      message: compactedText(r, label, live ? summarizer.label : undefined),
    });
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

/** The toast after a compaction was written (by us, or by the running pi: `byPiWith` = our summarizer's name). */
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
 * pi's own compaction failed (e.g. its summary hit the model's output limit, pi #9512): one warning
 * with pi's reason, and the ways on — our summarizer (the running pi appends its summary) or pi's
 * model again with instructions (e.g. a shorter summary).
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
