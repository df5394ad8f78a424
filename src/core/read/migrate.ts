/**
 * The session header and pi's format migrations (pi 1.6.0 `session-manager.js`), applied in
 * memory only — pi-context never writes a session file:
 * - v1 → v2: every entry gets an id and is chained to the previous one; a compaction's
 *   `firstKeptEntryIndex` (an index into the parsed lines, header included) becomes
 *   `firstKeptEntryId`;
 * - v2 → v3: message role `hookMessage` became `custom`.
 */

import type { EntryRecord } from "./entries";
import type { SessionHeader } from "../types";

/** Whether a parsed line is a session header (`type: "session"` with a string id), as pi checks the first line. */
export function isHeader(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "session" &&
    typeof (value as { id?: unknown }).id === "string"
  );
}

/** The header fields pi-context keeps (of a value {@link isHeader} accepted). */
export function toHeader(value: unknown): SessionHeader {
  const v = value as Record<string, unknown>;
  const header: SessionHeader = { type: "session", id: v.id as string };
  if (typeof v.version === "number") header.version = v.version;
  if (typeof v.timestamp === "string") header.timestamp = v.timestamp;
  if (typeof v.cwd === "string") header.cwd = v.cwd;
  if (typeof v.parentSession === "string") header.parentSession = v.parentSession;
  return header;
}

/**
 * The format version pi 1.6.0 migrates from: `header.version ?? 1`, compared with numbers as
 * JavaScript compares (`"3" >= 3`, `[3] >= 3`, `true < 2`); `NaN` (e.g. `"abc"`) matches no
 * migration. Mirrors `migrateToCurrentVersion` in `session-manager.js`.
 */
export function piVersion(version: unknown): number {
  return Number(version ?? 1);
}

/** pi's v2 → v3 migration: message role `hookMessage` became `custom`. */
export function migrateMessageRole(value: Record<string, unknown>): void {
  const message = value.message as { role?: unknown } | undefined;
  if (value.type === "message" && message && typeof message === "object" && message.role === "hookMessage")
    message.role = "custom";
}

/** Deterministic ids for migrated v1 entries (pi draws random ones; ours stay stable across reloads). */
export function syntheticId(parsedIndex: number): string {
  return parsedIndex.toString(16).padStart(8, "0");
}

/**
 * pi's v1 → v2 migration of an entry re-read from a v1 file: the id and parent the index gave it,
 * and for a compaction `firstKeptEntryId` instead of `firstKeptEntryIndex`.
 */
export function migrateV1Entry(value: Record<string, unknown>, record: EntryRecord): void {
  value.id = record.id;
  value.parentId = record.parentId;
  if (record.type === "compaction") {
    delete value.firstKeptEntryIndex;
    if (record.firstKeptEntryId !== undefined) value.firstKeptEntryId = record.firstKeptEntryId;
  }
}
