/**
 * The compaction preview of "Pi: Compact Session…": the quick pick (tokens before → after, what is
 * summarised and kept, who summarises) and its "Show details" Markdown document — the same for
 * pi-context's summarizers and for the user's own pi (see {@link PreviewSummarizer}).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import type { CompactionPlan, PlanFit } from "../core/flows/compact";
import type { Summarizer } from "../core/flows/summarizer";
import { priceCompactionPlan, type CompactionPrice } from "../core/flows/planPrice";
import { readModelsConfig } from "../core/rules/models";
import { priceDetail, priceHeadline, priceLines } from "../viewModel/compactionPrice";
import { formatCount as n } from "../shared/format";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";

/** One line, at most `max` characters (an ellipsis marks a cut). */
function short(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/**
 * How a session is named in titles and messages: its `session_info` name, else the first words of
 * its first user message, else the file name — quoted, never a bare id.
 */
export function sessionTitle(
  info: { name?: string | undefined; firstMessage?: string | undefined },
  file: string,
): string {
  if (info.name) return `"${short(info.name, 60)}"`;
  if (info.firstMessage) return `"${short(info.firstMessage, 40)}"`;
  return path.basename(file, ".jsonl");
}

/** The session of a plan, named for titles (see {@link sessionTitle}). */
export function planTitle(plan: CompactionPlan): string {
  const first = plan.session.records.find((r) => r.type === "message" && r.role === "user" && r.preview);
  return sessionTitle({ name: plan.session.name, firstMessage: first?.preview }, plan.file);
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
  };
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
    `Session file: \`${plan.file}\`  `,
    `Leaf: \`${p.leafId}\` · keepRecentTokens ${n(p.settings.keepRecentTokens)} · reserveTokens ${n(p.settings.reserveTokens)}`,
    "",
    "| | tokens |",
    "|---|---:|",
    `| before (pi's estimate) | ${n(v.tokensBefore)} |`,
    `| summarized messages | ≈${n(v.summarizedTokens)} |`,
    `| kept messages | ≈${n(v.keptTokens)} |`,
    `| system checkpoint | ≈${n(p.checkpointTokens)} |`,
    `| new summary (guess) | ≈${n(plan.estimatedSummaryTokens)} |`,
    `| **after (estimate)** | **≈${n(plan.estimatedTokensAfter)}** |`,
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
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "go" | "details" | "cancel" };
    const items: Item[] = [
      {
        action: "go",
        label: "$(check) Compact now",
        description: `${n(v.tokensBefore)} → ≈${n(plan.estimatedTokensAfter)} tokens · ${by.name}`,
        detail: `${needsKey ? "Asks for the API key, then summarizes" : "Summarizes"} ${summarized} (≈${n(v.summarizedTokens)} tokens${plan.preparation.previousSummary ? " + the previous summary" : ""})${v.isSplitTurn ? "; the turn is split" : ""}.`,
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
      {
        action: "details",
        label: "$(preview) Show details",
        description: `keeps ${kept} from ${entryWords(plan, v.firstKeptEntryId)}`,
        detail: `Files: ${files.length ? files.slice(0, 6).join(", ") + (files.length > 6 ? `, … (${files.length})` : "") : "(none)"} — open the full preview`,
      },
      { action: "cancel", label: "$(close) Cancel", detail: "Nothing is sent, nothing is written." },
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: `${changed ? "The session changed — new preview. " : ""}Compact ${planTitle(plan)}?`,
      placeHolder: `tokens ${n(v.tokensBefore)} → ≈${n(plan.estimatedTokensAfter)} · summarize ${summarized} · keep ${kept} · split turn: ${v.isSplitTurn ? "yes" : "no"}`,
      ignoreFocusOut: true,
    });
    if (!pick || pick.action === "cancel") return false;
    if (pick.action === "go") return true;
    const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/Compaction preview ${++previewCounter}.md` });
    setVirtualDocument(uri, previewMarkdown(plan, by));
    await vscode.commands
      .executeCommand("markdown.showPreview", uri)
      .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
  }
}
