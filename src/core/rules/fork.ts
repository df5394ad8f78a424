/**
 * pi's `/fork` and `/clone` on entries: where the new session ends and what it holds.
 *
 * Source: pi 1.6.0 `dist/core/agent-session-runtime.js` `AgentSessionRuntime.fork` (the position
 * rule: a user message is forked *before* it and its text goes back to the editor; `/clone` and an
 * extension's `position: "at"` keep the entry) and `dist/core/session-manager.js`
 * `SessionManager.createBranchedSession` (the path without its label entries, re-chained; a
 * compaction's `firstKeptEntryId` moved off a dropped label; the labels of the path re-created at
 * its end; a new header with `parentSession`), `newSession`, `_hasConversation`; pi-ai's `uuidv7`.
 */

import { randomBytes } from "node:crypto";
import type { EntryRecord } from "../read/entries";
import { CURRENT_SESSION_VERSION } from "../types";

/** Where the new session ends relative to the chosen entry (pi's `fork(entryId, { position })`). */
export type ForkPosition = "before" | "at";

/** A parsed session entry as written (any type; keys in the file's order). */
export type RawEntry = Record<string, unknown>;

/** Thrown for an entry pi cannot fork at, with pi's own message. */
export class ForkTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForkTargetError";
  }
}

/** Where a fork ends: pi's `targetLeafId`. */
export interface ForkTarget {
  /** The entry the user chose. */
  entryId: string;
  position: ForkPosition;
  /** The last entry of the new session's path; null: before the first entry (pi starts an empty session). */
  leafId: string | null;
}

/**
 * pi's position rule for `entry`: `auto` forks a user message before it (pi's `/fork`) and any
 * other entry at it (pi's `/clone`, `position: "at"`); `before` accepts only a user message.
 * @throws {ForkTargetError} "Invalid entry ID for forking" (pi's words) for an unknown entry or
 *   `before` on anything but a user message.
 */
export function forkTarget(
  entry: Pick<EntryRecord, "id" | "type" | "role" | "parentId"> | undefined,
  position: ForkPosition | "auto" = "auto",
): ForkTarget {
  if (!entry) throw new ForkTargetError("Invalid entry ID for forking");
  const isUser = entry.type === "message" && entry.role === "user";
  const where = position === "auto" ? (isUser ? "before" : "at") : position;
  if (where === "at") return { entryId: entry.id, position: "at", leafId: entry.id };
  if (!isUser) throw new ForkTargetError("Invalid entry ID for forking");
  return { entryId: entry.id, position: "before", leafId: entry.parentId };
}

/**
 * The text pi puts back into the editor after forking before a user message (pi's
 * `extractUserMessageText`: a string as is, else the text parts joined without separator).
 */
export function forkMessageText(entry: RawEntry): string {
  const content = (entry.message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p): p is { type: "text"; text: string } => {
      const part = p as { type?: unknown; text?: unknown } | null;
      return part?.type === "text" && typeof part.text === "string";
    })
    .map((p) => p.text)
    .join("");
}

/**
 * pi's labels of a session (`_buildIndex`): label entries in file order, a truthy `label` sets the
 * target's label and its time, anything else clears it. The map's order is pi's (a cleared and
 * set again label moves to the end), which is the order `createBranchedSession` re-creates them in.
 * @param labelEntries every `label` entry of the file, in file order.
 */
export function labelsOf(labelEntries: Iterable<RawEntry>): Map<unknown, { label: unknown; timestamp: unknown }> {
  const labels = new Map<unknown, { label: unknown; timestamp: unknown }>();
  for (const e of labelEntries) {
    if (e.label) labels.set(e.targetId, { label: e.label, timestamp: e.timestamp });
    else labels.delete(e.targetId);
  }
  return labels;
}

/** The new session's first line (pi's header key order; `parentSession` = the source file). */
export interface ForkHeader {
  type: "session";
  version: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession: string;
}

/**
 * pi's `createBranchedSession(leafId)` over the path's entries, one entry at a time (the path of a
 * large session is read and written without holding it in memory):
 * - label entries leave the path; every other entry gets the previous kept entry as its parent
 *   (`{...entry, parentId}`: the key stays where it was);
 * - a compaction whose `firstKeptEntryId` named a dropped label names the entry that followed it;
 * - then, for each label of the session (pi's map order) whose target is on the path: a label
 *   entry with a fresh id, chained after the path, with the label's own time.
 * The path's entries come first (none of them a label), then the re-created labels.
 * @param path the entries from the root to the fork's leaf, as written (pi's `getBranch`).
 * @param labels {@link labelsOf} the whole file.
 * @param newId pi's `generateId` over the ids taken so far.
 */
export function* branchedEntries(
  path: Iterable<RawEntry>,
  labels: ReadonlyMap<unknown, { label: unknown; timestamp: unknown }>,
  newId: (taken: ReadonlySet<string>) => string,
): Generator<RawEntry> {
  const replacementByLabelId = new Map<unknown, unknown>();
  const pendingLabelIds: unknown[] = [];
  const onPath = new Set<unknown>();
  const taken = new Set<string>();
  let parentId: unknown = null;
  for (const entry of path) {
    if (entry.type === "label") {
      pendingLabelIds.push(entry.id);
      continue;
    }
    for (const labelId of pendingLabelIds) replacementByLabelId.set(labelId, entry.id);
    pendingLabelIds.length = 0;
    yield entry.type === "compaction"
      ? {
          ...entry,
          parentId,
          firstKeptEntryId:
            entry.firstKeptEntryId === entry.id
              ? entry.id
              : (replacementByLabelId.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId),
        }
      : { ...entry, parentId };
    parentId = entry.id;
    onPath.add(entry.id);
    if (typeof entry.id === "string") taken.add(entry.id);
  }
  // pi: `lastEntryId || null`
  let labelParent: unknown = parentId || null;
  for (const [targetId, { label, timestamp }] of labels) {
    if (!onPath.has(targetId)) continue;
    const id = newId(taken);
    taken.add(id);
    yield { type: "label", id, parentId: labelParent, timestamp, targetId, label };
    labelParent = id;
  }
}

/**
 * pi's `_hasConversation`: a session file is written only once it holds a user or assistant
 * message (before that pi keeps it in memory, and a fork of such a path leaves no file).
 */
export function hasConversation(entries: Iterable<Pick<EntryRecord, "type" | "role">>): boolean {
  for (const e of entries) if (e.type === "message" && (e.role === "user" || e.role === "assistant")) return true;
  return false;
}

/**
 * A time-ordered UUIDv7 like pi-ai's `uuidv7` (pi's session ids): 48 bits of `nowMs`, version 7,
 * the RFC 4122 variant, random bits elsewhere.
 */
export function sessionIdV7(nowMs: number, random: Buffer = randomBytes(16)): string {
  const bytes = Buffer.from(random.subarray(0, 16));
  let t = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** pi's new session file name: `<ISO time with : and . as ->_<session id>.jsonl`. */
export function sessionFileName(timestamp: string, sessionId: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

/** A new session's header, pi's key order (`newSession` / `createBranchedSession`). */
export function forkHeader(sessionId: string, timestamp: string, cwd: string, parentSession: string): ForkHeader {
  return { type: "session", version: CURRENT_SESSION_VERSION, id: sessionId, timestamp, cwd, parentSession };
}
