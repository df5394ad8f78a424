/**
 * pi 1.6.0's `/fork` and `/clone` on entries (`AgentSessionRuntime.fork`,
 * `SessionManager.createBranchedSession`): where the new session ends and what it holds.
 */

import { randomBytes } from "node:crypto";
import type { EntryRecord } from "../read/entries";
import { CURRENT_SESSION_VERSION } from "../types";

/** pi's `fork(entryId, { position })`. */
export type ForkPosition = "before" | "at";

/** A parsed session entry as written (keys in the file's order). */
export type RawEntry = Record<string, unknown>;

/** Carries pi's own message. */
export class ForkTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForkTargetError";
  }
}

/** pi's `targetLeafId`. */
export interface ForkTarget {
  entryId: string;
  position: ForkPosition;
  /** Null: before the first entry (pi starts an empty session). */
  leafId: string | null;
}

/**
 * pi's position rule: `auto` forks before a user message (`/fork`), at any other entry (`/clone`).
 * @throws {ForkTargetError} "Invalid entry ID for forking" for an unknown entry or `before` on a non-user message.
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

/** pi's `extractUserMessageText`: a string as is, else the text parts joined without separator. */
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

/** pi's `_buildIndex` labels in pi's map order (a re-set label moves to the end), the order forks re-create them in. */
export function labelsOf(labelEntries: Iterable<RawEntry>): Map<unknown, { label: unknown; timestamp: unknown }> {
  const labels = new Map<unknown, { label: unknown; timestamp: unknown }>();
  for (const e of labelEntries) {
    if (e.label) labels.set(e.targetId, { label: e.label, timestamp: e.timestamp });
    else labels.delete(e.targetId);
  }
  return labels;
}

/** pi's header key order; `parentSession` = the source file. */
export interface ForkHeader {
  type: "session";
  version: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession: string;
}

/**
 * pi's `createBranchedSession(leafId)` as a stream (large paths are not held in memory): label entries
 * leave the path, the rest are re-chained (`{...entry, parentId}` keeps key order), a `firstKeptEntryId`
 * on a dropped label moves to the next entry, and the path's labels are re-created at the end.
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

/** pi's `_hasConversation`: pi writes a file only once it holds a user or assistant message. */
export function hasConversation(entries: Iterable<Pick<EntryRecord, "type" | "role">>): boolean {
  for (const e of entries) if (e.type === "message" && (e.role === "user" || e.role === "assistant")) return true;
  return false;
}

/** A UUIDv7 like pi-ai's `uuidv7` (pi's session ids). */
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

/** pi's key order (`newSession` / `createBranchedSession`). */
export function forkHeader(sessionId: string, timestamp: string, cwd: string, parentSession: string): ForkHeader {
  return { type: "session", version: CURRENT_SESSION_VERSION, id: sessionId, timestamp, cwd, parentSession };
}
