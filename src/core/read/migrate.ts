/**
 * pi 1.6.0's format migrations, in memory only (pi-context never rewrites a session file): v1 → v2
 * gives ids and `firstKeptEntryId`; v2 → v3 renames role `hookMessage` to `custom`.
 */

import type { EntryRecord } from "./entries";
import type { SessionHeader } from "../types";

export function isHeader(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "session" &&
    typeof (value as { id?: unknown }).id === "string"
  );
}

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
 * pi's `header.version ?? 1`, compared with numbers as JavaScript does (`"3" >= 3`); `NaN` matches no
 * migration (`migrateToCurrentVersion`).
 */
export function piVersion(version: unknown): number {
  return Number(version ?? 1);
}

export function migrateMessageRole(value: Record<string, unknown>): void {
  const message = value.message as { role?: unknown } | undefined;
  if (value.type === "message" && message && typeof message === "object" && message.role === "hookMessage")
    message.role = "custom";
}

/** Deterministic, unlike pi's random ones, so ids stay stable across reloads. */
export function syntheticId(parsedIndex: number): string {
  return parsedIndex.toString(16).padStart(8, "0");
}

/** pi's v1 → v2 migration of a re-read entry: id, parent and `firstKeptEntryId` from the index. */
export function migrateV1Entry(value: Record<string, unknown>, record: EntryRecord): void {
  value.id = record.id;
  value.parentId = record.parentId;
  if (record.type === "compaction") {
    delete value.firstKeptEntryIndex;
    if (record.firstKeptEntryId !== undefined) value.firstKeptEntryId = record.firstKeptEntryId;
  }
}
