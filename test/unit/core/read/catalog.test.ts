/**
 * The session catalog's cache file (`SessionCatalog.save` / `load`): what one listing saves, the
 * next process answers from the cache without reading the sessions again; the file is written in
 * pieces (`SAVE_PIECE_CHARS`), and the pieces join into exactly one JSON line per complete session
 * after the version line.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { listSessionFiles, SessionCatalog } from "../../../../src/core/read/catalog";
import { SessionBuilder } from "../../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-catalog-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** `count` small sessions in `dir`, each with a first user message of `textChars` characters. */
function writeSessions(dir: string, count: number, textChars: number): void {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    const b = new SessionBuilder({ id, cwd: "/work/p", timestamp: "2026-11-01T00:00:00.000Z" });
    fs.writeFileSync(path.join(dir, `s${i}.jsonl`), b.user("a1", `task ${i} ${"é".repeat(textChars)}`).jsonl());
  }
}

describe("SessionCatalog cache file", () => {
  it("saves every complete session (in pieces) and a new catalog answers from it without reading", async () => {
    const dir = path.join(tmp, "sessions");
    const count = 400; // ≈ 400 × 350 characters: several 64 k pieces
    writeSessions(dir, count, 80);
    const cacheFile = path.join(tmp, "cache", "catalog.jsonl");
    const files = await listSessionFiles([dir]);
    assert.equal(files.length, count);

    const first = new SessionCatalog({ cacheFile });
    await first.load();
    const listed = await first.list(files);
    assert.equal(listed.length, count);
    assert.equal(first.stats.fullReads, count);
    await first.save();

    const text = fs.readFileSync(cacheFile, "utf8");
    assert.ok(text.length > 2 * 64 * 1024, `cache of ${text.length} characters spans several pieces`);
    assert.ok(text.endsWith("}\n"));
    const lines = text.split("\n");
    assert.equal(lines[0], "pi-context-session-catalog 2");
    assert.equal(lines.at(-1), "");
    const saved = lines.slice(1, -1).map((l) => JSON.parse(l) as { file: string; firstMessage?: string });
    assert.equal(saved.length, count);
    assert.deepEqual(new Set(saved.map((s) => s.file)), new Set(files.map((f) => f.file)));
    const s7 = saved.find((s) => s.file.endsWith(`${path.sep}s7.jsonl`));
    assert.equal(s7?.firstMessage, `task 7 ${"é".repeat(80)}`);
    assert.equal(fs.statSync(cacheFile).mode & 0o777, 0o600);
    assert.deepEqual(
      fs.readdirSync(path.dirname(cacheFile)),
      ["catalog.jsonl"],
      "no temporary file is left beside the cache",
    );

    const second = new SessionCatalog({ cacheFile });
    await second.load();
    const again = await second.list(files);
    assert.deepEqual(second.stats, { hits: count, fullReads: 0, incrementalReads: 0, bytesRead: 0 });
    assert.deepEqual(
      again.map((i) => [i.file, i.firstMessage]),
      listed.map((i) => [i.file, i.firstMessage]),
    );
  });

  it("an empty listing saves the version line alone", async () => {
    const dir = path.join(tmp, "empty");
    writeSessions(dir, 1, 1);
    const cacheFile = path.join(tmp, "empty-cache.jsonl");
    const catalog = new SessionCatalog({ cacheFile });
    await catalog.list(await listSessionFiles([dir]));
    catalog.retain([]);
    await catalog.save();
    assert.equal(fs.readFileSync(cacheFile, "utf8"), "pi-context-session-catalog 2\n");
  });
});
