/**
 * `context_edit` entries exactly as pi 1.6.0 accepts, normalises and writes them, plus the short
 * note pi-context puts in place of a removed tool output.
 *
 * Source: pi 1.6.0 `dist/core/session-manager.js` — `SessionManager.appendContextEdit(targetId,
 * replacement)` (checks in this order: replacement shape, target exists, target on the active
 * branch `getBranch()`, target editable; string content of assistant/toolResult targets becomes one
 * text block; entry `{type, id, parentId: leaf, timestamp, targetId, replacement}`, which becomes
 * the leaf) and `projectContextEntry` (how an edit changes the target's messages; applied in
 * `context.ts` / `serialize.ts`). pi does not check that the target is still in the model context:
 * an edit of an entry a compaction summarized is accepted and has no effect.
 */

import type { EntryRecord } from "../read/entries";
import type { EntryIndex } from "./tree";
import type { ContextEditEntry } from "../types";
import { formatCount } from "../../shared/format";

/** The roles whose content an edit can replace (a `custom_message` entry counts as `custom`). */
export type EditableRole = "user" | "assistant" | "toolResult" | "custom";

/** `replacement` of a `context_edit`: `null` omits the target, otherwise its new `content`. */
export type ContextEditReplacement = ContextEditEntry["replacement"];

/** The content a replacement carries: a string, or content blocks (text, image, thinking, toolCall). */
export type ContextEditContent = NonNullable<ContextEditReplacement>["content"];

/** pi's `ContextEditEntryDraft` (an extension's boundary draft): what to append, without id/parent/time. */
export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  replacement: ContextEditReplacement;
}

/** Why pi's `appendContextEdit` refuses (in the order pi checks). */
export type PiEditRefusal = "invalid-replacement" | "not-found" | "not-on-branch" | "not-editable";

/** pi's error messages, verbatim. */
export const PI_EDIT_ERRORS: Record<PiEditRefusal, (targetId: string) => string> = {
  "invalid-replacement": () => "Context edit replacement must be null or contain string/array content",
  "not-found": (id) => `Entry ${id} not found`,
  "not-on-branch": (id) => `Entry ${id} is not on the active branch`,
  "not-editable": (id) => `Entry ${id} does not contribute editable model content`,
};

/**
 * The editable role of an entry: `custom_message` entries, and `message` entries with role
 * user/assistant/toolResult (pi's `appendContextEdit` rule). System messages, bashExecution,
 * compactions, branch summaries, labels, context edits… are not editable.
 */
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

/** Result of {@link checkContextEditTarget}. */
export type TargetCheck =
  { ok: true; record: EntryRecord; role: EditableRole } | { ok: false; code: PiEditRefusal; message: string };

/**
 * Would pi's `appendContextEdit(targetId, replacement)` accept this edit at the leaf whose path is
 * `pathIds`? Same checks, same order, same messages as pi.
 * @param index the session (pi's `byId`: with duplicate ids the last entry wins).
 * @param pathIds ids of the active branch (our `Projection.path`).
 */
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

/**
 * pi's write-time normalisation: a string replacement of an assistant or tool result becomes
 * `[{type: "text", text}]`; user and custom targets keep the string; arrays are stored as given.
 */
export function normalizeReplacement(role: EditableRole, replacement: ContextEditReplacement): ContextEditReplacement {
  if (replacement === null) return null;
  if ((role === "assistant" || role === "toolResult") && typeof replacement.content === "string")
    return { content: [{ type: "text", text: replacement.content }] };
  return { content: replacement.content };
}

/**
 * The content a target's messages carry after an edit with this (stored) replacement, as pi's
 * `projectContextEntry` computes it (a string becomes one text block for assistant/toolResult).
 */
export function projectedContent(role: EditableRole, content: ContextEditContent): ContextEditContent {
  return (role === "assistant" || role === "toolResult") && typeof content === "string"
    ? [{ type: "text", text: content }]
    : content;
}

/** Input of {@link buildContextEditEntry}. */
export interface ContextEditEntryInput {
  id: string;
  /** The leaf the edit hangs off (it becomes the new leaf). */
  parentId: string | null;
  /** ISO timestamp. */
  timestamp: string;
  targetId: string;
  /** Already normalised ({@link normalizeReplacement}). */
  replacement: ContextEditReplacement;
}

/** The `context_edit` entry in pi's key order: `type, id, parentId, timestamp, targetId, replacement`. */
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

/**
 * Entries for a batch of drafts appended at `leafId`, as pi's `appendContextEdit` called once per
 * draft would write them: the first hangs off the leaf, each next one off the previous edit.
 * @param newId returns a fresh id not used in the file nor by an earlier entry of the batch.
 */
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

/** Argument names that say what a tool call worked on, in the order they are looked for. */
const SUBJECT_ARGUMENTS = ["path", "file_path", "filePath", "command", "pattern", "url", "query"];
const SUBJECT_MAX = 80;

/**
 * What a tool call worked on, from its arguments: the first string among `path`, `file_path`,
 * `filePath`, `command`, `pattern`, `url`, `query`, whitespace collapsed, cut to 80 characters (…).
 * @returns undefined when there is no such argument.
 */
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

/** What {@link resultNote} says about a removed tool output. */
export interface ResultNoteInput {
  /** The tool's name (`read`, `bash`, …). */
  toolName?: string;
  /** What it worked on ({@link toolCallSubject}). */
  subject?: string;
  /** pi's estimate of the removed output, in tokens. */
  tokens: number;
}

/**
 * The note that replaces a removed tool output, so the call keeps a result:
 * `[pi-context: output of read src/a.ts removed — 12,345 tokens]`.
 */
export function resultNote(input: ResultNoteInput): string {
  const what = [input.toolName || "tool", input.subject].filter(Boolean).join(" ");
  return `[pi-context: output of ${what} removed — ${formatCount(input.tokens)} tokens]`;
}
