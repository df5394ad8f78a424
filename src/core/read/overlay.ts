/**
 * A session plus entries not written yet: what the file would look like after an append, for
 * previews (tokens, pairing, compaction) without touching the file.
 *
 * The planned entries get records like read ones (`buildRecord`) at the end of the file order, so
 * every rule (`buildProjection`, `estimateProjectedContextTokens`, `prepareCompaction`,
 * `analyzePairing`, …) works on the overlay as it would on the file read back. Their bodies come
 * from memory; all other bodies from the underlying session.
 */

import { buildRecord, type EntryRecord } from "./entries";
import type { SessionEntry } from "../types";

/** What the rules need of a session: records, the id map, the file leaf and body reads. */
export interface SessionView {
  readonly records: readonly EntryRecord[];
  readonly byId: ReadonlyMap<string, EntryRecord>;
  /** The leaf pi opens the file at: the last entry in file order, or null. */
  readonly leafId: string | null;
  /** The entry's full body. @throws when it cannot be read (e.g. `StaleSessionError`). */
  readEntry(record: EntryRecord): SessionEntry;
}

/**
 * The session as it would be with `entries` appended (in order; the last becomes the leaf).
 * @param entries complete entries with ids (planned ids may be placeholders: only uniqueness matters).
 * @throws Error when an entry is not a usable entry object (no string id).
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
