/**
 * The review of a summary our summarizer just wrote, before it is written: when the summary lost
 * file paths, commands, identifiers or numbers of what it summarized (and the kept part does not
 * have them either), say so and let the user write it anyway, summarize again asking to keep them
 * (or with their own instructions), look at the list, or discard it. Nothing lost: written without
 * asking. Escape discards (nothing is written; the request was already spent).
 */

import * as vscode from "vscode";
import type { CompactionDraft, CompactionPlan, DraftReview } from "../core/flows/compact";
import { preparationLostItems, type LostReport } from "../core/rules/lostItems";
import { formatCount } from "../shared/format";
import { visibleText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";
import { keepInstructions, lostMarkdown, lostSummary } from "../viewModel/lostItems";

let counter = 0;

/** Instructions for the next attempt: the user's own (if any), then the ask to keep the lost items. */
function withKeep(plan: CompactionPlan, report: LostReport): string {
  return [plan.customInstructions, keepInstructions(report)].filter(Boolean).join("\n\n");
}

/** The review ({@link FlowCallbacks.reviewDraft}). */
export async function reviewSummary(plan: CompactionPlan, draft: CompactionDraft): Promise<DraftReview> {
  let report: LostReport;
  try {
    report = preparationLostItems(plan.preparation, draft.summary, plan.session, plan.session.cwd);
  } catch {
    return { action: "write" };
  }
  if (report.items.length === 0) return { action: "write" };
  const said = lostSummary(report.totals);
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "write" | "keep" | "own" | "show" | "discard" };
    const items: Item[] = [
      { action: "write", label: vscode.l10n.t("$(check) Write this summary"), description: said },
      {
        action: "keep",
        label: vscode.l10n.t("$(refresh) Summarize again, asking to keep them"),
        detail: keepInstructions(report, 12),
      },
      { action: "own", label: vscode.l10n.t("$(edit) Summarize again with my instructions…") },
      {
        action: "show",
        label: vscode.l10n.t("$(list-unordered) Show what it lost"),
        detail: vscode.l10n.t("Each item with the entry it came from"),
      },
      {
        action: "discard",
        label: vscode.l10n.t("$(close) Discard"),
        detail: vscode.l10n.t("Nothing is written (the summary request was already sent)."),
      },
    ];
    const pick = await vscode.window.showQuickPick(safePickItems(items), {
      title:
        report.items.length === 1
          ? vscode.l10n.t("The new summary lost 1 item of what it summarized")
          : vscode.l10n.t("The new summary lost {0} items of what it summarized", formatCount(report.items.length)),
      placeHolder: visibleText(said),
      ignoreFocusOut: true,
    });
    if (!pick || pick.action === "discard") return { action: "discard" };
    if (pick.action === "write") return { action: "write" };
    if (pick.action === "keep") return { action: "retry", instructions: withKeep(plan, report) };
    if (pick.action === "own") {
      const text = await vscode.window.showInputBox({
        title: vscode.l10n.t("Summarize Again — Custom Instructions"),
        prompt: vscode.l10n.t("What the summary should focus on and keep (like /compact <instructions>)."),
        value: withKeep(plan, report),
        ignoreFocusOut: true,
      });
      if (text !== undefined) return { action: "retry", instructions: text };
      continue;
    }
    const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/Lost items ${++counter}.md` });
    setVirtualDocument(uri, lostMarkdown(report, vscode.l10n.t("What the new summary lost")));
    await vscode.commands
      .executeCommand("markdown.showPreview", uri)
      .then(undefined, () => vscode.window.showTextDocument(uri, { preview: true }));
  }
}
