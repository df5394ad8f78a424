/** A session plus planned entries: what the file would be after an append, for previews that never write. */

import { buildRecord, type EntryRecord } from "./entries";
import type { SessionEntry } from "../types";

export interface SessionView {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
  /** The last entry in file order, or null. */
  readonly leafId: string | null;
  /** @throws when it cannot be read (e.g. `StaleSessionError`). */
  readEntry(record: EntryRecord): SessionEntry;
}

/**
 * The session with `entries` appended (the last becomes the leaf); placeholder ids need only be unique.
 * @throws Error when an entry has no string id.
 */
export function withAppended(session: SessionView, entries: readonly SessionEntry[]): SessionView {
  const records = [...session.records];
  const byId = new Map(session.byId);
  const bodies = new Map<EntryRecord, SessionEntry>();
  for (const entry of entries) {
    const byteLength = Buffer.byteLength(JSON.stringify(entry));
    const record = buildRecord(entry, { index: records.length, line: -1, offset: -1, byteLength });
    if (!("id" in record)) throw new Error(`internal error: planned entry is not an entry (${record.message})`);
    records.push(record);
    byId.set(record.id, record);
    bodies.set(record, entry);
  }
  const last = records[records.length - 1];
  return {
    records,
    byId,
    leafId: last ? last.id : null,
    readEntry: (record) => bodies.get(record) ?? session.readEntry(record),
  };
}
