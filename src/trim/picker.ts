/**
 * "Pi Context: Trim Context…": the trim list as a multi-select quick pick — suggestions first (each with
 * the tokens it saves), then the largest items in the context (kind, tokens by pi's estimate, age,
 * a short text; edited items marked with their note) — then what to do with the picked items and,
 * for one item replaced by a note, the note itself (editable). Returns the request; the preview and
 * the write are `command.ts`'s.
 */

import * as vscode from "vscode";
import type { SessionFile } from "../core/read/session";
import { prepareContextEdits } from "../core/rules/editPlan";
import { contentText } from "../core/rules/serialize";
import { formatCount as n, formatTokens, pluralText } from "../shared/format";
import type { TrimChoice, TrimItem, TrimListModel, TrimRequestItem, TrimSuggestion } from "../shared/trim";
import { iconLabelText } from "../shared/untrusted";
import type { Prompter } from "../ui/prompter";
import { defaultNote, MAX_NOTE_LENGTH, TRIM_KIND_LABELS } from "../viewModel/trimActions";

/** Items listed in the quick pick (largest first). */
export const PICK_LIMIT = 300;

/** The codicon of an item kind. */
export function itemIcon(item: Pick<TrimItem, "kind" | "images">): string {
  if (item.images > 0) return "file-media";
  switch (item.kind) {
    case "user":
      return "account";
    case "assistant":
      return "sparkle";
    case "toolResult":
      return "tools";
    case "custom":
      return "extensions";
    case "bashExecution":
      return "terminal";
    case "compactionSummary":
      return "fold";
    case "branchSummary":
      return "git-merge";
    default:
      return "comment";
  }
}

/** `3 turns ago`, `this turn`. */
export function ageText(item: Pick<TrimItem, "turnsAgo">): string {
  return item.turnsAgo === 0
    ? vscode.l10n.t("this turn")
    : vscode.l10n.t("{0} ago", pluralText(item.turnsAgo, vscode.l10n.t("{0} turn"), vscode.l10n.t("{0} turns")));
}

/** An item's state in words: `removed from the context`, `note: …`, or "". */
export function editText(item: Pick<TrimItem, "edit">): string {
  if (!item.edit) return "";
  return item.edit.kind === "removed" ? vscode.l10n.t("removed from the context") : `replaced: ${item.edit.note ?? ""}`;
}

type Row = vscode.QuickPickItem & { suggestion?: TrimSuggestion; item?: TrimItem };

/**
 * Ask which items to trim. Not editable items are listed (they take tokens too) but picking them
 * asks nothing for them (the planner would refuse them with pi's reason, shown in the preview).
 * @returns the picked suggestions and items (both empty: Enter with nothing ticked), or undefined (Escape).
 */
export async function pickItems(
  prompter: Prompter,
  list: TrimListModel,
  title: string,
): Promise<{ suggestions: TrimSuggestion[]; items: TrimItem[] } | undefined> {
  const rows: Row[] = [];
  if (list.suggestions.length) {
    rows.push({ label: vscode.l10n.t("Suggestions"), kind: vscode.QuickPickItemKind.Separator });
    for (const s of list.suggestions)
      rows.push({
        label: `$(lightbulb) ${iconLabelText(s.title)}`,
        description: vscode.l10n.t("saves {0} tokens", n(s.tokensSaved)),
        detail: iconLabelText(s.detail),
        suggestion: s,
      });
  }
  // VS Code draws a separator's label on the right of its group's first row, beside that row's
  // description: a short label keeps the row's tokens and age visible (trial 5); the counts lead
  // the placeholder (on screen, and read, whatever row has the focus; the "2 Selected" badge
  // covers the placeholder's end)
  rows.push({ label: vscode.l10n.t("Largest items"), kind: vscode.QuickPickItemKind.Separator });
  for (const item of list.items.slice(0, PICK_LIMIT)) {
    const state = editText(item);
    rows.push({
      // a short label, so the tokens and age (the description) stay visible beside a long message
      label: `$(${item.edit ? (item.edit.kind === "removed" ? "trash" : "note") : itemIcon(item)}) ${iconLabelText(shortLabel(item.tool ?? item.text ?? item.entryId))}`,
      description: vscode.l10n.t(
        "{0} tokens · {1}{2}",
        n(item.tokens),
        ageText(item),
        item.failed ? vscode.l10n.t(" · failed") : "",
      ),
      detail: iconLabelText(
        [
          `${TRIM_KIND_LABELS[item.kind]} ${item.entryId}`,
          state,
          item.tool && item.text ? item.text : "",
          item.editable ? "" : vscode.l10n.t("not editable: {0}", item.notEditable ?? ""),
        ]
          .filter(Boolean)
          .join(" — "),
      ),
      item,
    });
  }
  const picked = await prompter.pickMany(rows, {
    title: vscode.l10n.t("Trim the context of {0}", title),
    placeholder: vscode.l10n.t(
      "In context: {0}, {1} tokens · pick suggestions or items (Space), then Enter",
      pluralText(list.itemCount, vscode.l10n.t("{0} item"), vscode.l10n.t("{0} items")),
      formatTokens(list.pureTokens),
    ),
  });
  if (!picked) return undefined;
  return {
    suggestions: picked.flatMap((r) => (r.suggestion ? [r.suggestion] : [])),
    items: picked.flatMap((r) => (r.item ? [r.item] : [])),
  };
}

/** One line of at most {@link LABEL_MAX} characters (an ellipsis marks a cut; the detail has more). */
function shortLabel(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > LABEL_MAX ? `${line.slice(0, LABEL_MAX - 1).trimEnd()}…` : line;
}
const LABEL_MAX = 48;

/** Ask what to do with picked items; undefined = Escape. */
export async function pickChoice(prompter: Prompter, items: readonly TrimItem[]): Promise<TrimChoice | undefined> {
  type ChoiceRow = vscode.QuickPickItem & { choice: TrimChoice };
  const edited = items.some((i) => i.edit);
  const rows: ChoiceRow[] = [
    {
      choice: "default",
      label: vscode.l10n.t("$(check) Trim"),
      detail: vscode.l10n.t(
        "Tool results become a short note (tool, what it worked on, size); everything else is removed.",
      ),
    },
    {
      choice: "remove",
      label: vscode.l10n.t("$(trash) Remove from context"),
      detail: vscode.l10n.t(
        "Removed from what pi sends. An assistant message takes its tool results with it; a tool result keeps a note while its call is sent.",
      ),
    },
    {
      choice: "note",
      label: vscode.l10n.t("$(note) Replace with a note…"),
      detail:
        items.length === 1
          ? vscode.l10n.t("Replace the content with a note you can edit.")
          : vscode.l10n.t("Replace each item's content with a short note saying what was there."),
    },
  ];
  if (edited)
    rows.push({
      choice: "restore",
      label: vscode.l10n.t("$(history) Restore original"),
      detail: vscode.l10n.t("Bring the original content back (writes it into the session file again)."),
    });
  const pick = await prompter.pick(rows, {
    title: vscode.l10n.t(
      "{0}: what should happen?",
      pluralText(items.length, vscode.l10n.t("{0} item"), vscode.l10n.t("{0} items")),
    ),
    placeholder: vscode.l10n.t("Nothing is written before the preview"),
  });
  return pick?.choice;
}

/** The note a single item gets by default: the planner's note for a tool result, else {@link defaultNote}. */
export function suggestedNote(session: SessionFile, entryId: string): string {
  const record = session.byId.get(entryId);
  if (!record) return "";
  if (record.role === "toolResult") {
    try {
      const plan = prepareContextEdits(session, [{ action: "omit", targetId: entryId }]);
      const edit = plan.edits.find((e) => e.targetId === entryId && e.effect === "note");
      if (edit && edit.replacement) return contentText(edit.replacement.content, "\n");
    } catch {
      // fall back to the generic note
    }
  }
  return defaultNote(record);
}

/** The note box for one item (prefilled); undefined = Escape. */
export function askNote(prompter: Prompter, value: string, what: string): Promise<string | undefined> {
  return prompter.input({
    title: vscode.l10n.t("Replace {0} with a note", what),
    prompt: vscode.l10n.t("The model sees this text instead of the content (Enter to accept, Escape to cancel)."),
    value,
    validate: (v) =>
      v.trim() === ""
        ? vscode.l10n.t("A note cannot be empty (use Remove from context instead).")
        : v.length > MAX_NOTE_LENGTH
          ? vscode.l10n.t("At most {0} characters.", n(MAX_NOTE_LENGTH))
          : undefined,
  });
}

/** The request for picked suggestions (their own choices) and items (`choice`, `note` for one item). */
export function requestOf(
  suggestions: readonly TrimSuggestion[],
  items: readonly TrimItem[],
  choice: TrimChoice | undefined,
  note?: string,
): TrimRequestItem[] {
  const out = new Map<string, TrimRequestItem>();
  for (const s of suggestions) for (const a of s.actions) out.set(a.entryId, a);
  for (const i of items)
    out.set(i.entryId, { entryId: i.entryId, choice: choice ?? "default", ...(note !== undefined ? { note } : {}) });
  return [...out.values()];
}
