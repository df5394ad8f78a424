/**
 * "Pi: Compact Session…" (`piContext.compact`): pi's `/compact [instructions]` from VS Code, with a
 * preview before any token is spent, a cancellable streaming progress notification, and the summary
 * diff afterwards. The flow itself is `core/compact.ts` (shared with `pi-context compact`).
 *
 * `piContext.compact(file?, options?)`: `file` = a session path or URI (default: the current
 * session); `options.instructions` skips the instructions box; `options.skipPreview` skips the
 * preview. Resolves with a {@link CompactCommandOutcome} (the panel and the tests read it).
 * `piContext.cancelCompaction` cancels a running summary (same as the notification's Cancel).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { NothingToCompactError, runCompactionFlow, type CompactionPlan, type PlanFit } from "./core/compact";
import { formatTokens } from "./core/inspect";
import { LiveSessionError } from "./core/live";
import { isCancellation, SummarizerError, type Summarizer } from "./core/summarizer";
import { SessionChangedError, UnsafeSessionWriteError } from "./core/write";
import type { Services } from "./services";
import { getSummarizer, registerApiKeyCommands } from "./summarizers";
import { openSummaryDiff, registerSummaryDocuments, setVirtualDocument, SUMMARY_SCHEME } from "./summaryDocuments";

/** What `piContext.compact` resolves with. */
export type CompactCommandOutcome =
  | { kind: "compacted"; file: string; entryId: string; previousCompactionId?: string; tokensBefore: number; tokensAfter: number; firstKeptEntryId: string }
  | { kind: "declined" | "cancelled" | "nothing"; file?: string; message?: string }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** Options of the command. */
export interface CompactCommandOptions {
  instructions?: string;
  skipPreview?: boolean;
}

const n = (v: number) => v.toLocaleString("en-US");

/** The preview as markdown (the "Show details" document). */
export function previewMarkdown(plan: CompactionPlan, fit: PlanFit, summarizer: Summarizer): string {
  const p = plan.preparation;
  const v = plan.preview;
  const ids = (list: string[]) => (list.length ? list.map((id) => `\`${id}\``).join(", ") : "(none)");
  const files = (list: string[]) => (list.length ? list.map((f) => `- \`${f}\``).join("\n") : "- (none)");
  const lines = [
    `# Compaction preview — ${plan.session.name ?? path.basename(plan.file)}`,
    "",
    `Session file: \`${plan.file}\`  `,
    `Leaf: \`${p.leafId}\` · keepRecentTokens ${n(p.settings.keepRecentTokens)} · reserveTokens ${n(p.settings.reserveTokens)}`,
    "",
    "| | tokens |",
    "|---|---:|",
    `| before (pi's estimate) | ${n(v.tokensBefore)} |`,
    `| summarised messages | ≈${n(v.summarizedTokens)} |`,
    `| kept messages | ≈${n(v.keptTokens)} |`,
    `| system checkpoint | ≈${n(p.checkpointTokens)} |`,
    `| new summary (guess) | ≈${n(plan.estimatedSummaryTokens)} |`,
    `| **after (estimate)** | **≈${n(plan.estimatedTokensAfter)}** |`,
    "",
    `**Summarised:** ${v.summarizedEntryIds.length} entries${v.turnPrefixEntryIds.length ? ` + ${v.turnPrefixEntryIds.length} entries of the split turn's prefix` : ""}${p.previousSummary ? `, updating the summary of compaction \`${p.previousCompactionId}\`` : ""}.`,
    "",
    `**Kept:** ${v.keptEntryCount} entries from \`firstKeptEntryId\` = \`${v.firstKeptEntryId}\`${v.keptExceedsKeepRecent ? " (more than keepRecentTokens: a tool call and its results stay together)" : ""}.`,
    "",
    `**Split turn:** ${v.isSplitTurn ? `yes — the turn starting at \`${v.turnStartEntryId}\` is cut; its prefix is summarised separately and merged like pi does.` : "no"}`,
    "",
    `**Custom instructions:** ${plan.customInstructions ? plan.customInstructions : "(none)"}`,
    "",
    `**Summariser:** ${summarizer.label} — ${fit.history && fit.turnPrefix ? "2 requests" : "1 request"}, ≈${n(fit.inputTokens)} input tokens (counted with ${fit.history?.countedWith ?? fit.turnPrefix?.countedWith})${summarizer.contextWindow ? `, window ${n(summarizer.contextWindow)}` : ""}${fit.history?.outputReduced || fit.turnPrefix?.outputReduced ? ", output limit lowered to fit" : ""}.`,
    "",
    "## Read files",
    files(v.readFiles),
    "",
    "## Modified files",
    files(v.modifiedFiles),
    "",
    "## Entries",
    `Summarised: ${ids(v.summarizedEntryIds)}`,
    "",
    ...(v.turnPrefixEntryIds.length ? [`Split-turn prefix: ${ids(v.turnPrefixEntryIds)}`, ""] : []),
    `Kept: ${ids(p.keptEntries.map((e) => e.record.id))}`,
    "",
  ];
  return lines.join("\n");
}

function sessionLabel(plan: CompactionPlan): string {
  return plan.session.name ? `"${plan.session.name}"` : path.basename(plan.file);
}

let previewCounter = 0;

/** Show the preview; resolves true to compact. */
async function confirmPreview(plan: CompactionPlan, fit: PlanFit, summarizer: Summarizer, changed: boolean): Promise<boolean> {
  const v = plan.preview;
  const summarised = `${v.summarizedEntryIds.length + v.turnPrefixEntryIds.length} entries`;
  const files = [...v.modifiedFiles.map((f) => `✎ ${f}`), ...v.readFiles.map((f) => f)];
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "go" | "details" | "cancel" };
    const items: Item[] = [
      {
        action: "go",
        label: "$(fold) Compact now",
        description: `${n(v.tokensBefore)} → ≈${n(plan.estimatedTokensAfter)} tokens`,
        detail: `Summarise ${summarised} (≈${n(v.summarizedTokens)} tokens${plan.preparation.previousSummary ? ", updating the previous summary" : ""}) with ${summarizer.label}; keep ${v.keptEntryCount} entries from ${v.firstKeptEntryId}${v.isSplitTurn ? "; split turn" : ""}.`,
      },
      {
        action: "details",
        label: "$(preview) Show details",
        detail: `Files: ${files.length ? files.slice(0, 6).join(", ") + (files.length > 6 ? `, … (${files.length})` : "") : "(none)"} — open the full preview`,
      },
      { action: "cancel", label: "$(close) Cancel", detail: "Nothing is sent, nothing is written." },
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: `${changed ? "The session changed — new preview. " : ""}Compact ${sessionLabel(plan)}?`,
      placeHolder: `tokens ${n(v.tokensBefore)} → ≈${n(plan.estimatedTokensAfter)} · summarise ${summarised} · keep from ${v.firstKeptEntryId} · split turn: ${v.isSplitTurn ? "yes" : "no"}`,
      ignoreFocusOut: true,
    });
    if (!pick || pick.action === "cancel") return false;
    if (pick.action === "go") return true;
    const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/compaction-preview-${++previewCounter}.md` });
    setVirtualDocument(uri, previewMarkdown(plan, fit, summarizer));
    await vscode.commands.executeCommand("markdown.showPreview", uri).then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
  }
}

async function pickSession(services: Services): Promise<string | undefined> {
  const current = services.sessions.current;
  if (current) return current.file;
  const sessions = await services.sessions.listSessions();
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage("pi Context: no pi session found for this workspace.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.name ?? s.firstMessage ?? path.basename(s.file), description: new Date(s.mtimeMs).toLocaleString(), detail: s.file, file: s.file })),
    { title: "Pi: Compact Session — which session?" },
  );
  return pick?.file;
}

/** Register `piContext.compact`, `piContext.cancelCompaction`, the API key commands and the summary documents. */
export function registerCompaction(services: Services): void {
  registerApiKeyCommands(services);
  registerSummaryDocuments(services);
  let running: AbortController | undefined;
  const setRunning = (controller: AbortController | undefined) => {
    running = controller;
    void vscode.commands.executeCommand("setContext", "piContext.compacting", controller !== undefined);
  };

  const compact = async (fileArg?: unknown, optionsArg?: unknown): Promise<CompactCommandOutcome> => {
    if (running) {
      void vscode.window.showInformationMessage("pi Context: a compaction is already running.");
      return { kind: "busy" };
    }
    const options: CompactCommandOptions = optionsArg && typeof optionsArg === "object" ? (optionsArg as CompactCommandOptions) : {};
    let file: string | undefined = fileArg instanceof vscode.Uri ? fileArg.fsPath : typeof fileArg === "string" ? fileArg : undefined;
    file ??= await pickSession(services);
    if (!file) return { kind: "declined" };
    let instructions = typeof options.instructions === "string" ? options.instructions : undefined;
    if (instructions === undefined) {
      instructions = await vscode.window.showInputBox({
        title: `Pi: Compact Session — ${path.basename(file)}`,
        prompt: "Optional: what the summary should focus on (like /compact <instructions>). Leave empty for none.",
        placeHolder: "e.g. keep the details of the parser refactoring",
        ignoreFocusOut: true,
      });
      if (instructions === undefined) return { kind: "declined", file };
    }
    const controller = new AbortController();
    setRunning(controller);
    const config = services.config();
    const skipPreview = options.skipPreview ?? config.compaction.skipPreview;
    try {
      // live bridge hook: a running pi with the bridge compacts itself (liveBridge.ts); else our flow + live guard
      const live = await services.liveBridge?.routeCompaction(file, instructions, { signal: controller.signal, skipPreview });
      if (live) return live;
      const summarizer = await getSummarizer(services);
      services.log.info(`compact ${file}: summariser ${summarizer.label}${instructions ? `, instructions ${JSON.stringify(instructions)}` : ""}`);
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { agentDir: services.sessions.agentDir(), projectSettings: config.projectSettings, guardSeconds: config.liveSession.guardSeconds, ...(instructions ? { customInstructions: instructions } : {}) },
        {
          signal: controller.signal,
          onPlan: (plan, fit) =>
            services.log.info(
              `compact ${file}: tokensBefore ${plan.preview.tokensBefore}, firstKeptEntryId ${plan.preview.firstKeptEntryId}, split ${plan.preview.isSplitTurn}, summarised ${plan.preview.summarizedEntryIds.length}+${plan.preview.turnPrefixEntryIds.length} entries, request ≈${fit.inputTokens} tokens`,
            ),
          ...(skipPreview ? {} : { confirm: (plan: CompactionPlan, fit: PlanFit, changed: boolean) => confirmPreview(plan, fit, summarizer, changed) }),
          around: (task) =>
            Promise.resolve(
              vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Compacting ${path.basename(file!)}`, cancellable: true }, (progress, token) => {
                token.onCancellationRequested(() => controller.abort());
                let received = 0;
                let lastReport = 0;
                let phase = "";
                progress.report({ message: `summarising with ${summarizer.label}…` });
                return task({
                  signal: controller.signal,
                  onPhase: (p, i, count) => {
                    phase = count > 1 ? `${p === "history" ? "history" : "split-turn prefix"} (${i}/${count}) ` : "";
                    received = 0;
                    progress.report({ message: `${phase}summarising with ${summarizer.label}…` });
                  },
                  onText: (delta) => {
                    received += delta.length;
                    const now = Date.now();
                    if (now - lastReport > 200) {
                      lastReport = now;
                      progress.report({ message: `${phase}receiving summary… ≈${formatTokens(Math.ceil(received / 4))} tokens` });
                    }
                  },
                });
              }),
            ),
        },
      );
      if (outcome.kind === "declined") {
        services.log.info(`compact ${file}: declined at the preview`);
        return { kind: "declined", file };
      }
      const r = outcome.result;
      services.log.info(`compact ${file}: wrote compaction ${r.entry.id} (${r.bytesBefore} → ${r.bytesAfter} bytes), tokens ${r.tokensBefore} → ${r.tokensAfter}`);
      void services.sessions.refresh().catch(() => undefined);
      await openSummaryDiff(file, r.previousCompactionId, r.entry.id).catch((error: unknown) => services.log.warn(`summary diff: ${String(error)}`));
      void vscode.window
        .showInformationMessage(`pi Context: compacted ${sessionLabel(outcome.plan)} — ${n(r.tokensBefore)} → ${n(r.tokensAfter)} tokens (pi's estimate). pi sees it the next time it opens the session.`, "Show Summary Diff")
        .then((choice) => (choice ? openSummaryDiff(file!, r.previousCompactionId, r.entry.id) : undefined));
      return { kind: "compacted", file, entryId: r.entry.id, ...(r.previousCompactionId ? { previousCompactionId: r.previousCompactionId } : {}), tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter, firstKeptEntryId: r.entry.firstKeptEntryId };
    } catch (error) {
      return report(services, file, error);
    } finally {
      setRunning(undefined);
    }
  };

  services.context.subscriptions.push(
    vscode.commands.registerCommand("piContext.compact", compact),
    vscode.commands.registerCommand("piContext.cancelCompaction", () => {
      if (!running) return false;
      running.abort();
      return true;
    }),
  );
}

/** Tell the user what happened (one message, never a loop) and return the outcome. */
function report(services: Services, file: string, error: unknown): CompactCommandOutcome {
  const message = error instanceof Error ? error.message : String(error);
  services.log.warn(`compact ${file}: ${error instanceof Error ? error.name : "error"}: ${message}`);
  if (isCancellation(error)) {
    void vscode.window.showInformationMessage("pi Context: compaction cancelled. Nothing was written.");
    return { kind: "cancelled", file, message };
  }
  if (error instanceof NothingToCompactError) {
    void vscode.window.showInformationMessage(`pi Context: ${message}`);
    return { kind: "nothing", file, message };
  }
  if (error instanceof LiveSessionError) {
    void vscode.window.showWarningMessage(`pi Context: ${message}`);
    return { kind: "error", file, errorKind: "live", message };
  }
  if (error instanceof SummarizerError && error.kind === "config") {
    void vscode.window.showErrorMessage(`pi Context: ${message}`, "Set API Key…", "Open Settings").then((choice) => {
      if (choice === "Set API Key…") void vscode.commands.executeCommand("piContext.setApiKey");
      else if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
    });
    return { kind: "error", file, errorKind: "config", message };
  }
  const kind = error instanceof SummarizerError ? error.kind : error instanceof SessionChangedError ? "changed" : error instanceof UnsafeSessionWriteError ? "unsafe" : "error";
  const suffix = /[Nn]othing was (written|sent)/.test(message) ? "" : " Nothing was written.";
  void vscode.window.showErrorMessage(`pi Context: compaction failed: ${message}${suffix}`);
  return { kind: "error", file, errorKind: kind, message };
}
