import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import {
  appendEntries,
  completeFinalLine,
  expectationOf,
  finalLineExpectation,
  newEntryId,
  tornLineBytes,
  SessionChangedError,
  UnsafeSessionWriteError,
} from "../../../../src/core/flows/write";
import { buildLabelEntry } from "../../../../src/core/rules/branch";
import { FIXTURES } from "../../../support/paths";
// the module object itself (the namespace import above only has getters), so a test can wrap `writeSync`
import nodeFs = require("node:fs");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-write-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function copy(rel: string): string {
  const p = path.join(tmp, `${n++}-${path.basename(rel)}`);
  fs.copyFileSync(path.join(FIXTURES, rel), p);
  return p;
}

describe("the single write path", () => {
  it("appends whole lines after the last byte read, in pi's format, and nothing else changes", async () => {
    const p = copy("pi-1.6.0/tree.jsonl");
    const before = fs.readFileSync(p);
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    const id = newEntryId(s.byId);
    const label = buildLabelEntry({
      id,
      parentId: s.leafId,
      timestamp: "2026-11-30T10:00:00.000Z",
      targetId: s.records[0]!.id,
      label: "start",
    });
    const size = appendEntries(expectation, [label]);
    const after = fs.readFileSync(p);
    assert.ok(after.subarray(0, before.length).equals(before), "existing bytes untouched");
    assert.equal(after.subarray(before.length).toString(), `${JSON.stringify(label)}\n`);
    assert.equal(size, after.length);
    await s.refresh();
    assert.equal(s.leafId, id);
    assert.equal(s.labels.get(s.records[0]!.id)?.label, "start");
  });

  it("refuses when someone appended since we read (size changed) and writes nothing", async () => {
    const p = copy("pi-1.6.0/tree.jsonl");
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    fs.appendFileSync(p, '{"type":"label","id":"zz","parentId":null,"timestamp":"t","targetId":"x"}\n');
    const mid = fs.readFileSync(p);
    assert.throws(() => appendEntries(expectation, [{ type: "custom", id: "q" }]), SessionChangedError);
    assert.ok(fs.readFileSync(p).equals(mid));
  });

  it("refuses when the file was rewritten with the same size", async () => {
    const p = copy("pi-1.6.0/tree.jsonl");
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    const bytes = fs.readFileSync(p);
    bytes[bytes.length - 5] = bytes[bytes.length - 5] === 0x31 ? 0x32 : 0x31;
    fs.writeFileSync(p, bytes);
    assert.throws(() => appendEntries(expectation, [{ type: "custom", id: "q" }]), SessionChangedError);
    assert.ok(fs.readFileSync(p).equals(bytes));
  });

  it("refuses to write after a torn final line, to v1 files, and to files that are not sessions", async () => {
    for (const rel of [
      "cases/09-truncated-final-line/session.jsonl",
      "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl",
    ]) {
      const p = copy(rel);
      const bytes = fs.readFileSync(p);
      const s = await SessionFile.open(p, { digest: true });
      assert.throws(() => expectationOf(s), UnsafeSessionWriteError);
      assert.ok(fs.readFileSync(p).equals(bytes));
    }
    const notSession = path.join(tmp, "not.jsonl");
    fs.writeFileSync(notSession, '{"hello":1}\n');
    assert.throws(() => expectationOf(SessionFile.fromBytes(fs.readFileSync(notSession))), UnsafeSessionWriteError);
  });

  it("refuses a header version that is not a number pi reads as ≥ 3 (pi rewrites those files on open), and accepts what pi reads as 3", async () => {
    const line = (version: string): string =>
      `{"type":"session","version":${version},"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n` +
      '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n';
    for (const [version, why] of [
      ['"three"', /not a number/],
      ['{"v":3}', /not a number/],
      ['"3x"', /not a number/],
      ['"2"', /version 2/],
      ["true", /version 1/],
      ["null", /version 1/],
    ] as const) {
      const p = path.join(tmp, `${n++}-version.jsonl`);
      fs.writeFileSync(p, line(version));
      const bytes = fs.readFileSync(p);
      const s = await SessionFile.open(p, { digest: true });
      assert.throws(
        () => expectationOf(s),
        (e: unknown) => e instanceof UnsafeSessionWriteError && why.test(e.message) && /rewrites/.test(e.message),
        `version ${version}`,
      );
      assert.ok(fs.readFileSync(p).equals(bytes), `version ${version}: file untouched`);
    }
    // pi compares `version >= 3` (ToNumber): "3" and 4 are current, no rewrite, so writing is safe.
    for (const version of ['"3"', "4", "3"]) {
      const p = path.join(tmp, `${n++}-version.jsonl`);
      fs.writeFileSync(p, line(version));
      const s = await SessionFile.open(p, { digest: true });
      assert.equal(expectationOf(s).size, fs.statSync(p).size, `version ${version}`);
    }
  });

  it("never re-creates a deleted file", async () => {
    const p = copy("pi-1.6.0/tree.jsonl");
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    fs.unlinkSync(p);
    assert.throws(() => appendEntries(expectation, [{ type: "custom", id: "q" }]), /ENOENT/);
    assert.equal(fs.existsSync(p), false);
  });

  it("draws fresh 8-hex ids that avoid existing and reserved ids", () => {
    const existing = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = newEntryId(existing);
      assert.match(id, /^[0-9a-f]{8}$/);
      assert.equal(existing.has(id), false);
      existing.add(id);
    }
    const full = newEntryId({ has: () => true });
    assert.match(full, /^[0-9a-f-]{36}$/);
  });
});

/**
 * Another writer acting in the moment between the change check and our write (no lock exists
 * between pi and us): `fs.writeSync` is wrapped so that the other writer's operation runs right
 * before our first byte goes out, or right after our write — what a second process does when its
 * timing falls there (the conformance write-race test hits it by chance; here it is certain).
 */
describe("the one append that is not an entry: pi's newline after a last line without one", () => {
  const torn = (tail: string) => {
    const p = copy("pi-1.6.0/tree.jsonl");
    fs.appendFileSync(p, tail);
    return p;
  };

  it("a fragment: exactly one newline after it, the file then takes entries again", async () => {
    const fragment = '{"type":"message","id":"half","par';
    const p = torn(fragment);
    const before = fs.readFileSync(p);
    const s = await SessionFile.open(p, { digest: true });
    assert.equal(tornLineBytes(s), fragment.length);
    assert.throws(() => expectationOf(s), /incomplete line .*pi-context doctor --end-line/s);
    const size = completeFinalLine(finalLineExpectation(s));
    const after = fs.readFileSync(p);
    assert.ok(after.equals(Buffer.concat([before, Buffer.from("\n")])));
    assert.equal(size, after.length);
    const again = await SessionFile.open(p, { digest: true });
    assert.equal(tornLineBytes(again), undefined);
    assert.equal(again.diagnostics.find((d) => d.code === "malformed-line")?.lineBytes, fragment.length);
    assert.doesNotThrow(() => expectationOf(again));
  });

  it("a whole entry without its newline: one newline, the entry stays", async () => {
    const entry = JSON.stringify({
      type: "label",
      id: "lb",
      parentId: null,
      timestamp: "t",
      targetId: "x",
      label: "y",
    });
    const p = torn(entry);
    const s = await SessionFile.open(p, { digest: true });
    const records = s.records.length;
    completeFinalLine(finalLineExpectation(s));
    const again = await SessionFile.open(p);
    assert.equal(again.records.length, records);
    assert.equal(again.committedBytes, again.size);
  });

  it("refuses a complete last line, a changed or rewritten file, and files the write path never touches", async () => {
    const whole = copy("pi-1.6.0/tree.jsonl");
    await assert.rejects(
      async () => finalLineExpectation(await SessionFile.open(whole, { digest: true })),
      UnsafeSessionWriteError,
    );
    // grown since it was read: the fragment is no longer the one read
    const grown = torn('{"type":"mess');
    const s = await SessionFile.open(grown, { digest: true });
    fs.appendFileSync(grown, 'age"');
    assert.throws(() => finalLineExpectation(s), SessionChangedError);
    // the planned newline refused after a change under the write handle: nothing written
    const moved = torn('{"type":"mess');
    const m = await SessionFile.open(moved, { digest: true });
    const expectation = finalLineExpectation(m);
    fs.appendFileSync(moved, "x");
    const mid = fs.readFileSync(moved);
    assert.throws(() => completeFinalLine(expectation), SessionChangedError);
    assert.ok(fs.readFileSync(moved).equals(mid));
    // v1 and BOM files: pi rewrites or skips them; no newline of ours
    const bom = path.join(tmp, "bom.jsonl");
    fs.writeFileSync(bom, `\uFEFF${fs.readFileSync(copy("pi-1.6.0/tree.jsonl"), "utf8")}{"ty`);
    const b = await SessionFile.open(bom, { digest: true });
    assert.equal(tornLineBytes(b), undefined);
    assert.throws(() => finalLineExpectation(b), UnsafeSessionWriteError);
  });
});

describe("the single write path: a change at the moment we write", () => {
  const theirLine = '{"type":"custom","customType":"race","id":"race0001","parentId":null,"timestamp":"t"}\n';
  const ours = { type: "custom", customType: "ours", id: "ours0001", parentId: null, timestamp: "t" };
  const oursLine = `${JSON.stringify(ours)}\n`;

  /** Run `append` with `other` applied once, just before (or after) our first `writeSync` on `fd`. */
  function withOtherWriter<T>(when: "before" | "after", other: () => void, append: () => T): T {
    const original = nodeFs.writeSync;
    let done = false;
    nodeFs.writeSync = ((...args: Parameters<typeof fs.writeSync>) => {
      if (!done && when === "before") {
        done = true;
        other();
      }
      const result = (original as (...a: unknown[]) => number)(...args);
      if (!done && when === "after") {
        done = true;
        other();
      }
      return result;
    }) as typeof fs.writeSync;
    try {
      return append();
    } finally {
      nodeFs.writeSync = original;
    }
  }

  async function planned(): Promise<{ p: string; bytes: Buffer; expectation: ReturnType<typeof expectationOf> }> {
    const p = copy("pi-1.6.0/tree.jsonl");
    const s = await SessionFile.open(p, { digest: true });
    return { p, bytes: fs.readFileSync(p), expectation: expectationOf(s) };
  }

  it("a truncation just before our write: our entry is cut off again, the file is exactly as they left it", async () => {
    const { p, bytes, expectation } = await planned();
    const cut = bytes.indexOf(0x0a, Math.floor(bytes.length / 2)) + 1;
    assert.ok(cut > 0 && cut < bytes.length);
    let caught: unknown;
    try {
      withOtherWriter(
        "before",
        () => fs.truncateSync(p, cut),
        () => appendEntries(expectation, [ours]),
      );
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof SessionChangedError, String(caught));
    assert.match(caught.message, /changed at the moment we wrote \([\d,]+ → [\d,]+ bytes before our entry\)/);
    assert.match(caught.message, /removed again/);
    assert.ok(fs.readFileSync(p).equals(bytes.subarray(0, cut)), "the file is their truncation, byte for byte");
  });

  it("an append just before our write: ours is cut off again, theirs stays", async () => {
    const { p, bytes, expectation } = await planned();
    assert.throws(
      () =>
        withOtherWriter(
          "before",
          () => fs.appendFileSync(p, theirLine),
          () => appendEntries(expectation, [ours]),
        ),
      SessionChangedError,
    );
    assert.ok(fs.readFileSync(p).equals(Buffer.concat([bytes, Buffer.from(theirLine)])));
  });

  it("a rename-replace just before our write: said, and the session (the new file) holds nothing of ours", async () => {
    const { p, bytes, expectation } = await planned();
    const replacement = Buffer.concat([bytes, Buffer.from(theirLine)]);
    const from = `${p}.new`;
    fs.writeFileSync(from, replacement);
    assert.throws(
      () =>
        withOtherWriter(
          "before",
          () => fs.renameSync(from, p),
          () => appendEntries(expectation, [ours]),
        ),
      (error: unknown) => error instanceof SessionChangedError && /replaced or removed/.test(error.message),
    );
    assert.ok(fs.readFileSync(p).equals(replacement));
  });

  it("an append just after our write: ours stands where it was planned, theirs after it, nothing is cut", async () => {
    const { p, bytes, expectation } = await planned();
    const size = withOtherWriter(
      "after",
      () => fs.appendFileSync(p, theirLine),
      () => appendEntries(expectation, [ours]),
    );
    assert.equal(size, bytes.length + oursLine.length);
    assert.ok(fs.readFileSync(p).equals(Buffer.concat([bytes, Buffer.from(oursLine), Buffer.from(theirLine)])));
  });

  it("a truncation just after our write: their cut stands, ours is not put back", async () => {
    const { p, bytes, expectation } = await planned();
    const cut = bytes.indexOf(0x0a, Math.floor(bytes.length / 2)) + 1;
    withOtherWriter(
      "after",
      () => fs.truncateSync(p, cut),
      () => appendEntries(expectation, [ours]),
    );
    assert.ok(fs.readFileSync(p).equals(bytes.subarray(0, cut)));
  });
});
