/**
 * The compaction preview of "Pi Context: Compact Session…": the quick pick (tokens before → after, what is
 * summarized and kept, who summarizes) and its "Show details" Markdown document — the same for
 * pi-context's summarizers and for the user's own pi (see {@link PreviewSummarizer}).
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import * as vscode from "vscode";
import type { CompactionPlan, PlanFit } from "../core/flows/compact";
import type { Summarizer } from "../core/flows/summarizer";
import { priceCompactionPlan, type CompactionPrice } from "../core/flows/planPrice";
import { readModelsConfig } from "../core/rules/models";
import { sessionLabel } from "../core/rules/sessionLabel";
import { beforeAfterText, planBeforeAfter, priceLines, pricePickRow } from "../viewModel/compactionPrice";
import { formatCount as n, formatTokenRange, tokensText } from "../shared/format";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";
import { iconLabelText, markdownCode, markdownText, visibleText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";

/** One line, at most `max` characters (an ellipsis marks a cut). */
function short(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/**
 * How a session is named in titles and messages: its label (pi's rule, `sessionLabel`: name, else
 * the first user message), quoted — the same label every surface shows.
 */
export function sessionTitle(label: string): string {
  return `"${label}"`;
}

/** The label of each file being compacted (set when the command starts; titles of its steps read it). */
const labels = new Map<string, string>();

/** Remember the label of `file` for the titles of this compaction's steps; returns it. */
export function setPlanLabel(file: string, label: string): string {
  labels.set(file, label);
  return label;
}

/** The session of a plan, named for titles (see {@link sessionTitle}). */
export function planTitle(plan: CompactionPlan): string {
  return sessionTitle(labels.get(plan.file) ?? sessionLabel({ name: plan.session.name }));
}

/** The first words of an entry, for "keep from …" (its id only when it has no text). */
function entryWords(plan: CompactionPlan, id: string): string {
  const r = plan.session.byId.get(id);
  if (!r) return id;
  const text = r.preview
    ? `"${short(r.preview, 28)}"`
    : r.toolNames?.length
      ? vscode.l10n.t("{0} call", r.toolNames.join(", "))
      : r.toolName
        ? vscode.l10n.t("{0} result", r.toolName)
        : id;
  const who =
    r.type === "message"
      ? r.role === "user"
        ? vscode.l10n.t("your message ")
        : r.role === "assistant"
          ? vscode.l10n.t("the answer ")
          : ""
      : "";
  return `${who}${text}`;
}

/**
 * Who will summarize, as the preview shows it: pi-context's summarizer with its counted requests,
 * or the user's own pi (which builds its requests itself).
 */
export interface PreviewSummarizer {
  /** Short name for the quick pick (`gpt-4o-mini`, `your pi 1.5.2`). */
  name: string;
  /** The "Summarizer:" line of the details document. */
  detailsLine: string;
  /** True when "Compact now" first asks for an API key. */
  needsApiKey: boolean;
  /** The plan priced (`core/flows/planPrice.ts`), when the summary request's prices can be known. */
  price?: CompactionPrice;
  /**
   * The summary request does not fit the summarizer (`PlanFit.problem`): the preview still shows what
   * would be summarized, says why and what to change, and offers no "Compact now".
   */
  problem?: { message: string; numbers: string };
}

/** The plan priced now (summary request, savings per later request, break-even; `core/flows/planPrice.ts`). */
export function planPrice(plan: CompactionPlan, fit: PlanFit, summarizer: Summarizer): CompactionPrice {
  return priceCompactionPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir));
}

/** {@link PreviewSummarizer} of one of pi-context's summarizers, with the fitted requests, priced. */
export function previewOfSummarizer(summarizer: Summarizer, fit: PlanFit, plan: CompactionPlan): PreviewSummarizer {
  return {
    price: planPrice(plan, fit, summarizer),
    name: summarizer.modelName ?? summarizer.label,
    detailsLine: vscode.l10n.t(
      "{0} — {1}, ≈{2} input tokens (counted with {3}){4}{5}.",
      summarizer.label,
      fit.history && fit.turnPrefix ? vscode.l10n.t("2 requests") : vscode.l10n.t("1 request"),
      n(fit.inputTokens),
      String(fit.history?.countedWith ?? fit.turnPrefix?.countedWith),
      summarizer.contextWindow ? vscode.l10n.t(", window {0}", n(summarizer.contextWindow)) : "",
      fit.history?.outputReduced || fit.turnPrefix?.outputReduced ? vscode.l10n.t(", output limit lowered to fit") : "",
    ),
    needsApiKey: summarizer.needsApiKey === true,
    ...(fit.problem ? { problem: { message: fit.problem.message, numbers: fitNumbers(fit) } } : {}),
  };
}

/** "≈4,373–4,625": the after-estimate's range (see `CompactionPlan.estimatedTokensAfterRange`). */
function afterText(plan: CompactionPlan): string {
  return formatTokenRange(plan.estimatedTokensAfterRange);
}

/** "; focus: …" for custom instructions (as the live bridge's preview says it), else "". */
function focusText(plan: CompactionPlan): string {
  return plan.customInstructions ? vscode.l10n.t("; focus: {0}", short(plan.customInstructions, 80)) : "";
}

/** The numbers of a request that does not fit, short: "request ≈712,004 tokens, window 128,000". */
function fitNumbers(fit: PlanFit): string {
  const s = [fit.history?.shortfall, fit.turnPrefix?.shortfall].find((x) => x !== undefined);
  return s ? vscode.l10n.t("request ≈{0} tokens, window {1}", n(s.inputTokens), n(s.window)) : "";
}

/** The preview as markdown (the "Show details" document); session text is escaped (`shared/untrusted.ts`). */
export function previewMarkdown(plan: CompactionPlan, by: PreviewSummarizer): string {
  const p = plan.preparation;
  const v = plan.preview;
  const none = vscode.l10n.t("(none)");
  const ids = (list: string[]) => (list.length ? list.map((id) => markdownCode(id)).join(", ") : none);
  const files = (list: string[]) => (list.length ? list.map((f) => `- ${markdownCode(f)}`).join("\n") : `- ${none}`);
  const entries = (count: number) => (count === 1 ? vscode.l10n.t("1 entry") : vscode.l10n.t("{0} entries", count));
  const lines = [
    `# ${vscode.l10n.t("Compaction preview — {0}", markdownText(planTitle(plan)))}`,
    "",
    ...(by.problem
      ? [
          `## ⚠ ${vscode.l10n.t("The summary request does not fit the summarizer")}`,
          "",
          markdownText(by.problem.message),
          "",
        ]
      : []),
    `${vscode.l10n.t("Session file: {0}", markdownCode(plan.file))}  `,
    vscode.l10n.t(
      "{0} · keepRecentTokens {1} · reserveTokens {2}",
      vscode.l10n.t("Leaf: {0}", markdownCode(p.leafId)),
      n(p.settings.keepRecentTokens),
      n(p.settings.reserveTokens),
    ),
    "",
    `| | ${vscode.l10n.t("tokens")} |`,
    "|---|---:|",
    v.estimateFailure
      ? `| ${vscode.l10n.t("before (pi has no estimate: {0})", markdownText(estimateFailureText(v.estimateFailure)))} | ≈${n(v.tokensBefore)} |`
      : `| ${vscode.l10n.t("before (pi's estimate)")} | ${n(v.tokensBefore)} |`,
    `| ${vscode.l10n.t("summarized messages")} | ≈${n(v.summarizedTokens)} |`,
    `| ${vscode.l10n.t("kept messages")} | ≈${n(v.keptTokens)} |`,
    `| ${vscode.l10n.t("system checkpoint")} | ≈${n(p.checkpointTokens)} |`,
    `| ${vscode.l10n.t("new summary (guess, from what is summarized; file lists exact)")} | ${formatTokenRange(plan.estimatedSummaryRange)} |`,
    `| **${vscode.l10n.t("after (estimate)")}** | **${afterText(plan)}** |`,
    "",
    `**${vscode.l10n.t("Summarized:")}** ${entries(v.summarizedEntryIds.length)}${v.turnPrefixEntryIds.length ? ` + ${vscode.l10n.t("{0} of the split turn's prefix", entries(v.turnPrefixEntryIds.length))}` : ""}${p.previousSummary ? `, ${vscode.l10n.t("updating the summary of compaction {0}", markdownCode(p.previousCompactionId ?? ""))}` : ""}.`,
    "",
    `**${vscode.l10n.t("Kept:")}** ${vscode.l10n.t("{0} from `firstKeptEntryId` = {1}", entries(v.keptEntryCount), markdownCode(v.firstKeptEntryId))}${v.keptExceedsKeepRecent ? ` ${vscode.l10n.t("(more than keepRecentTokens: a tool call and its results stay together)")}` : ""}.`,
    "",
    `**${vscode.l10n.t("Cut:")}** ${
      plan.options.keepFrom === undefined
        ? vscode.l10n.t("where keepRecentTokens puts it (pi's /compact).")
        : vscode.l10n.t(
            "at the chosen entry {0} (Compact up to here): everything before it is summarized, it and everything after it stay.",
            markdownCode(plan.options.keepFrom),
          )
    }`,
    "",
    `**${vscode.l10n.t("Split turn:")}** ${v.isSplitTurn ? vscode.l10n.t("yes — the turn starting at {0} is cut; its prefix is summarized separately and merged like pi does.", markdownCode(v.turnStartEntryId ?? "")) : vscode.l10n.t("no")}`,
    "",
    `**${vscode.l10n.t("Custom instructions:")}** ${plan.customInstructions ? markdownText(plan.customInstructions) : none}`,
    "",
    `**${vscode.l10n.t("Summarizer:")}** ${markdownText(by.detailsLine)}`,
    "",
    ...(by.price
      ? [`## ${vscode.l10n.t("Cost")}`, ...priceLines(by.price).map((line) => `- ${markdownText(line)}`), ""]
      : []),
    `## ${vscode.l10n.t("Read files")}`,
    files(v.readFiles),
    "",
    `## ${vscode.l10n.t("Modified files")}`,
    files(v.modifiedFiles),
    "",
    `## ${vscode.l10n.t("Entries")}`,
    vscode.l10n.t("Summarized: {0}", ids(v.summarizedEntryIds)),
    "",
    ...(v.turnPrefixEntryIds.length ? [vscode.l10n.t("Split-turn prefix: {0}", ids(v.turnPrefixEntryIds)), ""] : []),
    vscode.l10n.t("Kept: {0}", ids(p.keptEntries.map((e) => e.record.id))),
    "",
  ];
  return lines.join("\n");
}

let previewCounter = 0;

/** The Cost row ({@link pricePickRow}); picking it opens the details document. */
function priceItem(price: CompactionPrice): vscode.QuickPickItem & { action: "details" } {
  const row = pricePickRow(price);
  return { action: "details", label: row.label, detail: vscode.l10n.t("{0} — open the full preview", row.detail) };
}

/** Show the preview; resolves true to compact. */
export async function confirmPreview(plan: CompactionPlan, by: PreviewSummarizer, changed: boolean): Promise<boolean> {
  const v = plan.preview;
  const count = v.summarizedEntryIds.length + v.turnPrefixEntryIds.length;
  const entries = (k: number) => (k === 1 ? vscode.l10n.t("1 entry") : vscode.l10n.t("{0} entries", k));
  const summarized = entries(count);
  const kept = entries(v.keptEntryCount);
  const files = [...v.modifiedFiles.map((f) => `✎ ${f}`), ...v.readFiles.map((f) => f)];
  const needsKey = by.needsApiKey;
  const tooLarge = by.problem !== undefined;
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "go" | "details" | "cancel" | "settings" };
    const details: Item = {
      action: "details",
      label: `$(preview) ${vscode.l10n.t("Show details")}`,
      description: vscode.l10n.t("keeps {0} from {1}", kept, entryWords(plan, v.firstKeptEntryId)),
      detail: vscode.l10n.t(
        "Files: {0} — open the full preview",
        files.length
          ? files.slice(0, 6).join(", ") + (files.length > 6 ? `, … (${files.length})` : "")
          : vscode.l10n.t("(none)"),
      ),
    };
    const items: Item[] = by.problem
      ? [
          {
            action: "details",
            label: `$(warning) ${vscode.l10n.t("Does not fit {0}'s window", iconLabelText(by.name))}`,
            description: by.problem.numbers,
            detail: vscode.l10n.t(
              "Would summarize {0} (≈{1}){2}. Show details for what to change — nothing is sent.",
              summarized,
              tokensText(v.summarizedTokens),
              focusText(plan),
            ),
          },
          details,
          {
            action: "settings",
            label: `$(settings-gear) ${vscode.l10n.t("Open Summarizer Settings")}`,
            detail: vscode.l10n.t("The model and its context window (piContext.summarizer.*)."),
          },
          {
            action: "cancel",
            label: `$(close) ${vscode.l10n.t("Close")}`,
            detail: vscode.l10n.t("Nothing is sent, nothing is written."),
          },
        ]
      : [
          {
            action: "go",
            label: `$(check) ${vscode.l10n.t("Compact now")}`,
            description: vscode.l10n.t("{0} · {1}", beforeAfterText(planBeforeAfter(plan)), by.name),
            detail: `${(needsKey
              ? (a: string, b: string, c: string) =>
                  vscode.l10n.t("Asks for the API key, then summarizes {0} (≈{1}{2})", a, b, c)
              : (a: string, b: string, c: string) => vscode.l10n.t("Summarizes {0} (≈{1}{2})", a, b, c))(
              summarized,
              tokensText(v.summarizedTokens),
              plan.preparation.previousSummary ? vscode.l10n.t(" + the previous summary") : "",
            )}${v.isSplitTurn ? vscode.l10n.t("; the turn is split") : ""}${focusText(plan)}.`,
          },
          ...(by.price ? [priceItem(by.price)] : []),
          details,
          {
            action: "cancel",
            label: `$(close) ${vscode.l10n.t("Cancel")}`,
            detail: vscode.l10n.t("Nothing is sent, nothing is written."),
          },
        ];
    const pick = await vscode.window.showQuickPick(safePickItems(items), {
      title: `${changed ? `${vscode.l10n.t("The session changed — new preview.")} ` : ""}${
        plan.options.keepFrom === undefined
          ? vscode.l10n.t("Compact {0}?", visibleText(planTitle(plan)))
          : vscode.l10n.t(
              "Compact {0} up to {1}?",
              visibleText(planTitle(plan)),
              visibleText(entryWords(plan, plan.options.keepFrom)),
            )
      }${tooLarge ? ` ${vscode.l10n.t("The request does not fit the summarizer")}` : ""}`,
      placeHolder: vscode.l10n.t(
        "tokens {0} → {1} · summarize {2} · keep {3} · split turn: {4}",
        v.estimateFailure ? vscode.l10n.t("(pi has no estimate)") : n(v.tokensBefore),
        afterText(plan),
        summarized,
        kept,
        v.isSplitTurn ? vscode.l10n.t("yes") : vscode.l10n.t("no"),
      ),
      ignoreFocusOut: true,
    });
    if (!pick || pick.action === "cancel") return false;
    if (pick.action === "go") return true;
    if (pick.action === "settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
      return false;
    }
    const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/Compaction preview ${++previewCounter}.md` });
    setVirtualDocument(uri, previewMarkdown(plan, by));
    await vscode.commands
      .executeCommand("markdown.showPreview", uri)
      .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
  }
}
