/**
 * The compaction preview of "Pi: Compact Session…": the quick pick (tokens before → after, what is
 * summarised and kept, who summarises) and its "Show details" Markdown document — the same for
 * pi-context's summarizers and for the user's own pi (see {@link PreviewSummarizer}).
 */

import * as vscode from "vscode";
import type { CompactionPlan, PlanFit } from "../core/flows/compact";
import type { Summarizer } from "../core/flows/summarizer";
import { priceCompactionPlan, type CompactionPrice } from "../core/flows/planPrice";
import { readModelsConfig } from "../core/rules/models";
import { sessionLabel } from "../core/rules/sessionLabel";
import { priceDetail, priceHeadline, priceLines } from "../viewModel/compactionPrice";
import { formatCount as n, formatTokenRange, tokensText } from "../shared/format";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";
import { iconLabelText, visibleText } from "../shared/untrusted";
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
      ? `${r.toolNames.join(", ")} call`
      : r.toolName
        ? `${r.toolName} result`
        : id;
  const who =
    r.type === "message" ? (r.role === "user" ? "your message " : r.role === "assistant" ? "the answer " : "") : "";
  return `${who}${text}`;
}

/**
 * Who will summarise, as the preview shows it: pi-context's summarizer with its counted requests,
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
   * would be summarised, says why and what to change, and offers no "Compact now".
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
    detailsLine: `${summarizer.label} — ${fit.history && fit.turnPrefix ? "2 requests" : "1 request"}, ≈${n(fit.inputTokens)} input tokens (counted with ${fit.history?.countedWith ?? fit.turnPrefix?.countedWith})${summarizer.contextWindow ? `, window ${n(summarizer.contextWindow)}` : ""}${fit.history?.outputReduced || fit.turnPrefix?.outputReduced ? ", output limit lowered to fit" : ""}.`,
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
  return plan.customInstructions ? `; focus: ${short(plan.customInstructions, 80)}` : "";
}

/** The numbers of a request that does not fit, short: "request ≈712,004 tokens, window 128,000". */
function fitNumbers(fit: PlanFit): string {
  const s = [fit.history?.shortfall, fit.turnPrefix?.shortfall].find((x) => x !== undefined);
  return s ? `request ≈${n(s.inputTokens)} tokens, window ${n(s.window)}` : "";
}

/** The preview as markdown (the "Show details" document). */
export function previewMarkdown(plan: CompactionPlan, by: PreviewSummarizer): string {
  const p = plan.preparation;
  const v = plan.preview;
  const ids = (list: string[]) => (list.length ? list.map((id) => `\`${id}\``).join(", ") : "(none)");
  const files = (list: string[]) => (list.length ? list.map((f) => `- \`${f}\``).join("\n") : "- (none)");
  const lines = [
    `# Compaction preview — ${planTitle(plan)}`,
    "",
    ...(by.problem ? ["## ⚠ The summary request does not fit the summarizer", "", by.problem.message, ""] : []),
    `Session file: \`${plan.file}\`  `,
    `Leaf: \`${p.leafId}\` · keepRecentTokens ${n(p.settings.keepRecentTokens)} · reserveTokens ${n(p.settings.reserveTokens)}`,
    "",
    "| | tokens |",
    "|---|---:|",
    `| before (pi's estimate) | ${n(v.tokensBefore)} |`,
    `| summarized messages | ≈${n(v.summarizedTokens)} |`,
    `| kept messages | ≈${n(v.keptTokens)} |`,
    `| system checkpoint | ≈${n(p.checkpointTokens)} |`,
    `| new summary (guess, from what is summarized; file lists exact) | ${formatTokenRange(plan.estimatedSummaryRange)} |`,
    `| **after (estimate)** | **${afterText(plan)}** |`,
    "",
    `**Summarized:** ${v.summarizedEntryIds.length} entries${v.turnPrefixEntryIds.length ? ` + ${v.turnPrefixEntryIds.length} entries of the split turn's prefix` : ""}${p.previousSummary ? `, updating the summary of compaction \`${p.previousCompactionId}\`` : ""}.`,
    "",
    `**Kept:** ${v.keptEntryCount} entries from \`firstKeptEntryId\` = \`${v.firstKeptEntryId}\`${v.keptExceedsKeepRecent ? " (more than keepRecentTokens: a tool call and its results stay together)" : ""}.`,
    "",
    `**Split turn:** ${v.isSplitTurn ? `yes — the turn starting at \`${v.turnStartEntryId}\` is cut; its prefix is summarized separately and merged like pi does.` : "no"}`,
    "",
    `**Custom instructions:** ${plan.customInstructions ? plan.customInstructions : "(none)"}`,
    "",
    `**Summarizer:** ${by.detailsLine}`,
    "",
    ...(by.price ? ["## Cost", ...priceLines(by.price).map((line) => `- ${line}`), ""] : []),
    "## Read files",
    files(v.readFiles),
    "",
    "## Modified files",
    files(v.modifiedFiles),
    "",
    "## Entries",
    `Summarized: ${ids(v.summarizedEntryIds)}`,
    "",
    ...(v.turnPrefixEntryIds.length ? [`Split-turn prefix: ${ids(v.turnPrefixEntryIds)}`, ""] : []),
    `Kept: ${ids(p.keptEntries.map((e) => e.record.id))}`,
    "",
  ];
  return lines.join("\n");
}

let previewCounter = 0;

/** Show the preview; resolves true to compact. */
export async function confirmPreview(plan: CompactionPlan, by: PreviewSummarizer, changed: boolean): Promise<boolean> {
  const v = plan.preview;
  const count = v.summarizedEntryIds.length + v.turnPrefixEntryIds.length;
  const summarized = `${count} ${count === 1 ? "entry" : "entries"}`;
  const kept = `${v.keptEntryCount} ${v.keptEntryCount === 1 ? "entry" : "entries"}`;
  const files = [...v.modifiedFiles.map((f) => `✎ ${f}`), ...v.readFiles.map((f) => f)];
  const needsKey = by.needsApiKey;
  const tooLarge = by.problem !== undefined;
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "go" | "details" | "cancel" | "settings" };
    const details: Item = {
      action: "details",
      label: "$(preview) Show details",
      description: `keeps ${kept} from ${entryWords(plan, v.firstKeptEntryId)}`,
      detail: `Files: ${files.length ? files.slice(0, 6).join(", ") + (files.length > 6 ? `, … (${files.length})` : "") : "(none)"} — open the full preview`,
    };
    const items: Item[] = by.problem
      ? [
          {
            action: "details",
            label: `$(warning) Does not fit ${iconLabelText(by.name)}'s window`,
            description: by.problem.numbers,
            detail: `Would summarize ${summarized} (≈${tokensText(v.summarizedTokens)})${focusText(plan)}. Show details for what to change — nothing is sent.`,
          },
          details,
          {
            action: "settings",
            label: "$(settings-gear) Open Summarizer Settings",
            detail: "The model and its context window (piContext.summarizer.*).",
          },
          { action: "cancel", label: "$(close) Close", detail: "Nothing is sent, nothing is written." },
        ]
      : [
          {
            action: "go",
            label: "$(check) Compact now",
            description: `${n(v.tokensBefore)} → ${afterText(plan)} tokens · ${by.name}`,
            detail: `${needsKey ? "Asks for the API key, then summarizes" : "Summarizes"} ${summarized} (≈${tokensText(v.summarizedTokens)}${plan.preparation.previousSummary ? " + the previous summary" : ""})${v.isSplitTurn ? "; the turn is split" : ""}${focusText(plan)}.`,
          },
          ...(by.price
            ? [
                {
                  action: "details" as const,
                  label: `$(credit-card) ${priceHeadline(by.price)}`,
                  detail: `${priceDetail(by.price)} — open the full preview`,
                },
              ]
            : []),
          details,
          { action: "cancel", label: "$(close) Cancel", detail: "Nothing is sent, nothing is written." },
        ];
    const pick = await vscode.window.showQuickPick(safePickItems(items), {
      title: `${changed ? "The session changed — new preview. " : ""}Compact ${visibleText(planTitle(plan))}?${tooLarge ? " The request does not fit the summarizer" : ""}`,
      placeHolder: `tokens ${n(v.tokensBefore)} → ${afterText(plan)} · summarize ${summarized} · keep ${kept} · split turn: ${v.isSplitTurn ? "yes" : "no"}`,
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
