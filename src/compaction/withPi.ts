/**
 * "Pi Context: Compact Session…" by the user's own pi (`piContext.summarizer.provider` `pi`, or `auto`
 * with a pi found and no OpenAI-compatible summarizer configured): the same preview (made by us,
 * before anything starts), then pi runs headless on the idle session and compacts it with its own
 * prompts, model, API key and extensions (`core/flows/piCompact.ts`), with a progress notification
 * whose Cancel sends pi an RPC `abort`. pi writes its own entry; pi-context writes nothing. The
 * summary diff and the result message are the ones of the file-based flow.
 */

import * as vscode from "vscode";
import type { CompactionPlan, PlanOptions } from "../core/flows/compact";
import { runPiCompactionFlow } from "../core/flows/piCompact";
import { pricePiCompactionPlan } from "../core/flows/planPrice";
import { piSourceText } from "../core/pi/locate";
import type { CompactCommandOutcome, Services } from "../services";
import { formatCount as n, localisedRecord } from "../shared/format";
import { confirmPreview, planTitle, type PreviewSummarizer } from "./preview";
import { reportCompacted } from "./result";

/** pi's progress events in words. */
const EVENT_TEXT: Readonly<Record<string, string>> = localisedRecord({
  compaction_start: () => vscode.l10n.t("pi is summarizing…"),
  summarization_retry_start: () => vscode.l10n.t("pi retries the summary request…"),
  compaction_end: () => vscode.l10n.t("pi is writing its compaction entry…"),
});

/**
 * Compact `plan.file` with the user's pi (after the instructions box; `plan` carries them).
 * @throws what {@link runPiCompactionFlow} throws, `NoNodeForPiError`, or an Error when no pi is found.
 */
export async function compactWithUserPi(
  services: Services,
  plan: CompactionPlan,
  options: { skipPreview: boolean; controller: AbortController; planOptions: Omit<PlanOptions, "maxOutputTokens"> },
): Promise<CompactCommandOutcome> {
  const file = plan.file;
  const runtime = await services.pi.runtime();
  const install = runtime.install;
  const version = install.version;
  const by: PreviewSummarizer = {
    name: vscode.l10n.t("your pi {0}", version),
    detailsLine: vscode.l10n.t(
      "your pi {0} ({1}, Node {2} at {3}) — pi compacts with its own prompts, model and API key (`pi --mode rpc --session …` on the idle session) and appends its own compaction entry; pi-context writes nothing.",
      version,
      piSourceText(install),
      runtime.nodeVersion,
      runtime.node,
    ),
    needsApiKey: false,
  };
  services.log.info(
    `compact ${file}: by the user's pi ${version} (${install.cliPath}, Node ${runtime.nodeVersion} ${runtime.node})${plan.customInstructions ? `, instructions ${JSON.stringify(plan.customInstructions)}` : ""}`,
  );
  let report: ((text: string) => void) | undefined;
  const outcome = await runPiCompactionFlow(
    file,
    {
      ...options.planOptions,
      maxOutputTokens: plan.options.maxOutputTokens,
      ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}),
      runtime,
      plan,
    },
    {
      signal: options.controller.signal,
      ...(options.skipPreview
        ? {}
        : {
            // priced per plan: a plan made again after a change has other requests
            confirm: (p: CompactionPlan, changed: boolean) =>
              confirmPreview(p, { ...by, price: pricePiCompactionPlan(p, Date.now()) }, changed),
          }),
      onEvent: (e) => {
        const text = e.type ? EVENT_TEXT[e.type] : undefined;
        if (text) report?.(text);
        if (e.type === "summarization_retry_start")
          services.log.info(`compact ${file}: pi retries (${JSON.stringify(e)})`);
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
              token.onCancellationRequested(() => options.controller.abort());
              report = (message) => progress.report({ message });
              report(vscode.l10n.t("starting your pi {0}…", version));
              return task(options.controller.signal);
            },
          ),
        ),
    },
  );
  if (outcome.kind === "declined") {
    services.log.info(`compact ${file}: declined at the preview`);
    return { kind: "declined", file, stage: "preview" };
  }
  const r = outcome.result;
  const label = planTitle(outcome.plan);
  services.log.info(
    `compact ${file}: pi ${version} wrote compaction ${r.entry.id} with ${r.pi.model ?? "its model"} (${n(r.bytesBefore)} → ${n(r.bytesAfter)} bytes), tokens ${n(r.tokensBefore)} → ${n(r.tokensAfter)}`,
  );
  return reportCompacted(services, {
    file,
    label,
    entryId: r.entry.id,
    previousCompactionId: r.previousCompactionId,
    tokensBefore: r.tokensBefore,
    tokensAfter: r.tokensAfter,
    firstKeptEntryId: r.pi.firstKeptEntryId,
    message: vscode.l10n.t(
      "your pi {0} compacted {1} — {2} → {3} tokens (pi's estimate). pi sees it the next time it opens the session.",
      version,
      label,
      n(r.tokensBefore),
      n(r.tokensAfter),
    ),
    by: "pi",
  });
}
