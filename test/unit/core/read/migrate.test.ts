/** The header and pi's v1 → v2 → v3 migrations in memory (`src/core/read/migrate.ts`). */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { EntryRecord } from "../../../../src/core/read/entries";
import { isHeader, migrateMessageRole, migrateV1Entry, syntheticId, toHeader } from "../../../../src/core/read/migrate";

describe("migrate", () => {
  it("recognises pi's header (type session with a string id) and keeps its known fields", () => {
    assert.equal(isHeader({ type: "session", id: "s" }), true);
    assert.equal(isHeader({ type: "session", id: 1 }), false);
    assert.equal(isHeader(null), false);
    assert.deepEqual(toHeader({ type: "session", id: "s", version: 2, cwd: "/w", extra: 1, timestamp: 5 }), {
      type: "session",
      id: "s",
      version: 2,
      cwd: "/w",
    });
  });

  it("v2 → v3: hookMessage becomes custom, only on messages", () => {
    const m = { type: "message", message: { role: "hookMessage" } };
    migrateMessageRole(m);
    assert.equal(m.message.role, "custom");
    const other = { type: "custom_message", message: { role: "hookMessage" } };
    migrateMessageRole(other);
    assert.equal(other.message.role, "hookMessage");
  });

  it("v1 → v2: stable synthetic ids, and a re-read entry gets the index's id, parent and first kept id", () => {
    assert.equal(syntheticId(0), "00000000");
    assert.equal(syntheticId(255), "000000ff");
    const record = { id: "00000003", parentId: "00000002", type: "compaction", firstKeptEntryId: "00000001" };
    const value: Record<string, unknown> = { type: "compaction", firstKeptEntryIndex: 1, summary: "s" };
    migrateV1Entry(value, record as EntryRecord);
    assert.deepEqual(value, {
      type: "compaction",
      summary: "s",
      id: "00000003",
      parentId: "00000002",
      firstKeptEntryId: "00000001",
    });
  });
});
