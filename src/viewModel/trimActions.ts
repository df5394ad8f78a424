/**
 * A user's request → the planner's actions (`core/rules/editPlan.ts`), one rule set for every
 * surface. `default`/`remove`: a tool result whose call is sent keeps a note (never orphaned);
 * `restore`: the original again (pi has no "unedit": a new edit wins).
 */

import type { EntryRecord } from "../core/read/entries";
import type { ContextEditContent } from "../core/rules/contextEdit";
import type { ContextEditAction } from "../core/rules/editPlan";
import { entryToContextMessages } from "../core/rules/serialize";
import type { SessionView } from "../core/read/overlay";
import { formatCount, localisedRecord, plural } from "../shared/format";
import * as l10n from "@vscode/l10n";
import type { TrimItemKind, TrimRequestItem } from "../shared/trim";

/** English: part of the note written into the session, which the model reads. */
export const TRIM_KIND_WORDS: Record<TrimItemKind, string> = {
  user: "user message",
  assistant: "assistant message",
  toolResult: "tool result",
  custom: "custom message",
  bashExecution: "bash execution",
  system: "system prompt",
  compactionSummary: "compaction summary",
  branchSummary: "branch summary",
  other: "entry",
};

/** Each kind in the user's language, for the surfaces (pickers, previews); the notes written into the session use {@link TRIM_KIND_WORDS}. */
export const TRIM_KIND_LABELS: Readonly<Record<TrimItemKind, string>> = localisedRecord({
  user: () => l10n.t("user message"),
  assistant: () => l10n.t("assistant message"),
  toolResult: () => l10n.t("tool result"),
  custom: () => l10n.t("custom message"),
  bashExecution: () => l10n.t("bash execution"),
  system: () => l10n.t("system prompt"),
  compactionSummary: () => l10n.t("compaction summary"),
  branchSummary: () => l10n.t("branch summary"),
  other: () => l10n.t("entry"),
});

/** The kind of a record as a context item. */
export function trimKindOf(record: EntryRecord): TrimItemKind {
  if (record.type === "custom_message") return "custom";
  if (record.type === "compaction") return "compactionSummary";
  if (record.type === "branch_summary") return "branchSummary";
  if (record.type !== "message") return "other";
  switch (record.role) {
    case "user":
    case "assistant":
    case "toolResult":
    case "custom":
    case "bashExecution":
    case "system":
      return record.role;
    default:
      return "other";
  }
}

/** `[pi-context: user message removed — 1,234 tokens]`. */
export function defaultNote(record: EntryRecord): string {
  return `[pi-context: ${TRIM_KIND_WORDS[trimKindOf(record)]} removed — ${formatCount(record.tokens)} tokens]`;
}

/** The note that stands in for removed images: `[pi-context: 2 images removed]`. */
export function imagesNote(count: number): string {
  return `[pi-context: ${plural(count, "image")} removed]`;
}

/** Longest note accepted from a user (characters). */
export const MAX_NOTE_LENGTH = 100_000;

/** In request order; unknown entries pass on (the planner refuses them with pi's message). */
export function trimActions(session: SessionView | undefined, items: readonly TrimRequestItem[]): ContextEditAction[] {
  return items.map((item): ContextEditAction => {
    const targetId = item.entryId;
    const record = session?.byId.get(targetId);
    switch (item.choice) {
      case "default":
      case "remove":
        return { action: "omit", targetId };
      case "restore":
        return { action: "restore", targetId };
      case "note": {
        if (item.note !== undefined && item.note.trim() !== "")
          return { action: "replace", targetId, content: item.note.slice(0, MAX_NOTE_LENGTH) };
        if (!record || trimKindOf(record) === "toolResult") return { action: "omit", targetId };
        return { action: "replace", targetId, content: defaultNote(record) };
      }
      case "strip-images": {
        const content = session && record ? withoutImages(session, record) : undefined;
        return content ? { action: "replace", targetId, content } : { action: "omit", targetId };
      }
    }
  });
}

export function withoutImages(session: SessionView, record: EntryRecord): ContextEditContent | undefined {
  let content: unknown;
  try {
    content = (entryToContextMessages(session.readEntry(record))[0] as { content?: unknown } | undefined)?.content;
  } catch {
    return undefined;
  }
  if (!Array.isArray(content)) return undefined;
  const blocks = content as { type?: unknown }[];
  const images = blocks.filter((b) => b && b.type === "image").length;
  if (images === 0) return undefined;
  const kept = blocks.filter((b) => !(b && b.type === "image"));
  return [...kept, { type: "text", text: imagesNote(images) }] as ContextEditContent;
}
