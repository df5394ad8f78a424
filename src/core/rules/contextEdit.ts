/**
 * `context_edit` entries as pi 1.6.0's `appendContextEdit` accepts, normalises and writes them. pi does
 * not check the target is still in the context: an edit of a summarized entry is accepted and inert.
 */

import type { EntryRecord } from "../read/entries";
import type { EntryIndex } from "./tree";
import type { ContextEditEntry } from "../types";
import { formatCount } from "../../shared/format";

/** A `custom_message` entry counts as `custom`. */
export type EditableRole = "user" | "assistant" | "toolResult" | "custom";

/** `null` omits the target, otherwise its new `content`. */
export type ContextEditReplacement = ContextEditEntry["replacement"];

export type ContextEditContent = NonNullable<ContextEditReplacement>["content"];

/** pi's `ContextEditEntryDraft`: what to append, without id/parent/time. */
export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  replacement: ContextEditReplacement;
}

/** In the order pi checks. */
export type PiEditRefusal = "invalid-replacement" | "not-found" | "not-on-branch" | "not-editable";

/** pi's error messages, verbatim. */
export const PI_EDIT_ERRORS: Record<PiEditRefusal, (targetId: string) => string> = {
  "invalid-replacement": () => "Context edit replacement must be null or contain string/array content",
  "not-found": (id) => `Entry ${id} not found`,
  "not-on-branch": (id) => `Entry ${id} is not on the active branch`,
  "not-editable": (id) => `Entry ${id} does not contribute editable model content`,
};

/** `custom_message` and user/assistant/toolResult `message` entries (pi's `appendContextEdit` rule). */
export function editableRole(record: EntryRecord): EditableRole | undefined {
  if (record.type === "custom_message") return "custom";
  if (record.type !== "message") return undefined;
  return record.role === "user" || record.role === "assistant" || record.role === "toolResult"
    ? record.role
    : undefined;
}

/** pi's replacement check: `null`, or an object with a string or array `content`. */
export function isValidReplacement(value: unknown): value is ContextEditReplacement {
  if (value === null) return true;
  if (typeof value !== "object" || !("content" in value)) return false;
  const content = (value as { content: unknown }).content;
  return typeof content === "string" || Array.isArray(content);
}

export type TargetCheck =
  { ok: true; record: EntryRecord; role: EditableRole } | { ok: false; code: PiEditRefusal; message: string };

/** pi's `appendContextEdit` checks, same order and messages; `index` as pi's `byId` (last duplicate wins). */
export function checkContextEditTarget(
  index: EntryIndex,
  pathIds: ReadonlySet<string>,
  targetId: string,
  replacement: unknown,
): TargetCheck {
  const refuse = (code: PiEditRefusal): TargetCheck => ({ ok: false, code, message: PI_EDIT_ERRORS[code](targetId) });
  if (!isValidReplacement(replacement)) return refuse("invalid-replacement");
  const record = index.byId.get(targetId);
  if (!record) return refuse("not-found");
  if (!pathIds.has(targetId)) return refuse("not-on-branch");
  const role = editableRole(record);
  if (!role) return refuse("not-editable");
  return { ok: true, record, role };
}

/** pi's write-time rule: a string for an assistant or tool result becomes `[{type: "text", text}]`. */
export function normalizeReplacement(role: EditableRole, replacement: ContextEditReplacement): ContextEditReplacement {
  if (replacement === null) return null;
  if ((role === "assistant" || role === "toolResult") && typeof replacement.content === "string")
    return { content: [{ type: "text", text: replacement.content }] };
  return { content: replacement.content };
}

/** pi's `projectContextEntry` content for a stored replacement. */
export function projectedContent(role: EditableRole, content: ContextEditContent): ContextEditContent {
  return (role === "assistant" || role === "toolResult") && typeof content === "string"
    ? [{ type: "text", text: content }]
    : content;
}

export interface ContextEditEntryInput {
  id: string;
  /** The edit becomes the new leaf. */
  parentId: string | null;
  timestamp: string;
  targetId: string;
  /** Already normalised ({@link normalizeReplacement}). */
  replacement: ContextEditReplacement;
}

/** pi's key order: `type, id, parentId, timestamp, targetId, replacement`. */
export function buildContextEditEntry(input: ContextEditEntryInput): ContextEditEntry {
  return {
    type: "context_edit",
    id: input.id,
    parentId: input.parentId,
    timestamp: input.timestamp,
    targetId: input.targetId,
    replacement: input.replacement,
  };
}

/** A draft's line in bytes (with its newline) at `index` of a batch after `leafId`: 8-character ids. */
export function draftLineBytes(draft: ContextEditDraft, index: number, leafId: string | null): number {
  const entry = buildContextEditEntry({
    id: "00000000",
    parentId: index === 0 ? leafId : "00000000",
    timestamp: "2026-01-01T00:00:00.000Z",
    targetId: draft.targetId,
    replacement: draft.replacement,
  });
  return Buffer.byteLength(JSON.stringify(entry)) + 1;
}

/** As pi's `appendContextEdit` once per draft writes them: each off the previous one, the first off `leafId`. */
export function chainContextEdits(
  drafts: readonly ContextEditDraft[],
  options: { leafId: string | null; newId: (reserved: ReadonlySet<string>) => string; timestamp: string },
): ContextEditEntry[] {
  const reserved = new Set<string>();
  let parentId = options.leafId;
  return drafts.map((draft) => {
    const id = options.newId(reserved);
    reserved.add(id);
    const entry = buildContextEditEntry({
      id,
      parentId,
      timestamp: options.timestamp,
      targetId: draft.targetId,
      replacement: draft.replacement,
    });
    parentId = id;
    return entry;
  });
}

const SUBJECT_ARGUMENTS = ["path", "file_path", "filePath", "command", "pattern", "url", "query"];
const SUBJECT_MAX = 80;

/** The first string argument of {@link SUBJECT_ARGUMENTS}, whitespace collapsed, cut to 80 characters. */
export function toolCallSubject(args: unknown): string | undefined {
  if (!args || typeof args !== "object") return undefined;
  for (const key of SUBJECT_ARGUMENTS) {
    const value = (args as Record<string, unknown>)[key];
    if (typeof value !== "string") continue;
    const text = value.replace(/\s+/g, " ").trim();
    if (!text) continue;
    return text.length > SUBJECT_MAX ? `${text.slice(0, SUBJECT_MAX - 1)}…` : text;
  }
  return undefined;
}

export interface ResultNoteInput {
  toolName?: string;
  subject?: string;
  /** pi's estimate, in tokens. */
  tokens: number;
}

/**
 * Replaces a removed tool output so the call keeps a result:
 * `[pi-context: output of read src/a.ts removed — 12,345 tokens]`.
 */
export function resultNote(input: ResultNoteInput): string {
  const what = [input.toolName || "tool", input.subject].filter(Boolean).join(" ");
  return `[pi-context: output of ${what} removed — ${formatCount(input.tokens)} tokens]`;
}
