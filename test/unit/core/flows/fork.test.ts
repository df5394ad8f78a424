/**
 * Fork Session Here / Clone Session on files (src/core/flows/fork.ts): the new file next to the
 * source (pi's name, header, `parentSession`), the source's bytes untouched, pi's refusals in pi's
 * words, sources pi would not open as they are, and the careful create (never over an existing
 * file, a failed write leaves nothing behind, the new file counts as our own write).
 * pi itself judges the contents in test/conformance/fork.test.ts.
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import {
  createSessionFile,
  forkEntries,
  forkSession,
  ForkSourceError,
  headerCwd,
  NothingToForkError,
  planFork,
} from "../../../../src/core/flows/fork";
import { SessionWriteError } from "../../../../src/core/flows/write";
import { isOwnLastWrite, ownWriteChecker } from "../../../../src/core/access/ownWrites";
import { ForkTargetError } from "../../../../src/core/rules/fork";
import { SessionFile } from "../../../../src/core/read/session";
import { FIXTURES } from "../../../support/paths";
import { SessionBuilder } from "../../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-fork-"));
const mounts: string[] = [];
after(() => {
  for (const m of mounts) execFileSync("umount", [m], { stdio: "ignore" });
  fs.rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
/** `text` as a session file in a folder of its own (forks land next to it). */
function sessionFile(text: string | Buffer, dir?: string): string {
  const folder = dir ?? fs.mkdtempSync(path.join(tmp, "s-"));
  const file = path.join(folder, `source-${n++}.jsonl`);
  fs.writeFileSync(file, text);
  return file;
}

function lines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** u1 → a1 → (label on u1) → u2 → a2 → u3, cwd /work/project. */
function conversation(): string {
  return new SessionBuilder("/work/project")
    .user("u1", "first question")
    .assistant("a1", { text: "first answer" })
    .label("l1", "u1", "start")
    .user("u2", [
      { type: "text", text: "second " },
      { type: "text", text: "question" },
    ])
    .assistant("a2", { text: "second answer" })
    .user("u3", "third question")
    .jsonl();
}

describe("forkSession", () => {
  it("before a user message: pi's /fork — the path before it, its text given back, a new file next to the source", async () => {
    const file = sessionFile(conversation());
    const before = fs.readFileSync(file);
    const now = new Date("2026-12-01T10:11:12.345Z");
    const r = await forkSession(file, "u2", { now });
    assert.ok(fs.readFileSync(file).equals(before), "the source is untouched");
    assert.equal(r.position, "before");
    assert.equal(r.selectedText, "second question");
    assert.equal(path.dirname(r.file), path.dirname(file));
    assert.match(path.basename(r.file), /^2026-12-01T10-11-12-345Z_[0-9a-f-]{36}\.jsonl$/);
    assert.equal(path.basename(r.file), `2026-12-01T10-11-12-345Z_${r.sessionId}.jsonl`);
    const written = lines(r.file);
    assert.deepEqual(written[0], {
      type: "session",
      version: 3,
      id: r.sessionId,
      timestamp: "2026-12-01T10:11:12.345Z",
      cwd: "/work/project",
      parentSession: file,
    });
    // u1, a1 (the label entry l1 leaves the path), then u1's label re-created
    assert.deepEqual(
      written.slice(1).map((e) => [e.type, e.id, e.parentId]),
      [
        ["message", "u1", null],
        ["message", "a1", "u1"],
        ["label", r.leafId, "a1"],
      ],
    );
    assert.equal(written[3]!.label, "start");
    assert.equal(written[3]!.targetId, "u1");
    assert.equal(r.pathLeafId, "a1");
    assert.deepEqual([r.pathCount, r.labelCount], [2, 1]);
    assert.equal(r.bytes, fs.statSync(r.file).size);
    // untouched entries are the source's lines, byte for byte
    const sourceLines = before.toString("utf8").split("\n");
    const forkLines = fs.readFileSync(r.file, "utf8").split("\n");
    assert.equal(forkLines[1], sourceLines[1]);
    assert.equal(forkLines[2], sourceLines[2]);
    // the new file is our own write: its fresh time is not someone having it open
    const s = fs.statSync(r.file);
    assert.equal(isOwnLastWrite(r.file, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino }), true);
    // and it reads as a pi session whose leaf is the last label
    const read = await SessionFile.open(r.file);
    assert.equal(read.header?.parentSession, file);
    assert.equal(read.leafId, r.leafId);
    assert.deepEqual(read.diagnostics, []);
  });

  it("at any other entry, and Clone (null) at the file's leaf", async () => {
    const file = sessionFile(conversation());
    const at = await forkSession(file, "a2");
    assert.equal(at.position, "at");
    assert.equal(at.selectedText, undefined);
    assert.deepEqual(
      lines(at.file)
        .slice(1)
        .map((e) => e.id),
      ["u1", "a1", "u2", "a2", at.leafId],
    );
    const clone = await forkSession(file, null);
    assert.equal(clone.entryId, "u3");
    assert.equal(clone.position, "at");
    assert.deepEqual(
      lines(clone.file)
        .slice(1, -1)
        .map((e) => e.id),
      ["u1", "a1", "u2", "a2", "u3"],
    );
    assert.notEqual(clone.file, at.file);
    // created by us: no pi started it (the process table's rules leave it alone until someone writes)
    const stat = fs.statSync(clone.file);
    assert.equal(ownWriteChecker()(clone.file, stat), "created");
    assert.equal(ownWriteChecker()(file, fs.statSync(file)), undefined, "the source is only read");
    assert.notEqual(clone.sessionId, at.sessionId);
  });

  it("a fork of a fork names the fork as its parent; a long pi session keeps its name and compactions", async () => {
    const file = sessionFile(fs.readFileSync(path.join(FIXTURES, "pi-1.6.0/long.jsonl")));
    const clone = await forkSession(file, null);
    const again = await forkSession(clone.file, null);
    assert.equal(lines(again.file)[0]!.parentSession, clone.file);
    const source = await SessionFile.open(file);
    const copy = await SessionFile.open(again.file);
    assert.equal(copy.name, source.name);
    assert.ok(copy.name);
    assert.deepEqual(
      copy.records.filter((r) => r.type === "compaction").map((r) => [r.id, r.firstKeptEntryId]),
      source.records.filter((r) => r.type === "compaction").map((r) => [r.id, r.firstKeptEntryId]),
    );
  });

  it("refuses what pi refuses, in pi's words, writing nothing", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "refuse-"));
    const file = sessionFile(conversation(), dir);
    const listing = () => fs.readdirSync(dir).sort();
    const was = listing();
    await assert.rejects(forkSession(file, "nope"), new ForkTargetError("Invalid entry ID for forking"));
    await assert.rejects(forkSession(file, "a1", { position: "before" }), /Invalid entry ID for forking/);
    // the first user message: pi starts an empty session and writes no file
    await assert.rejects(forkSession(file, "u1"), (e: unknown) => {
      assert.ok(e instanceof NothingToForkError);
      assert.equal(e.selectedText, "first question");
      return true;
    });
    // a user message whose parent is missing: pi's createBranchedSession throws
    const orphan = sessionFile(new SessionBuilder("/w").user("u9", "x", "gone").jsonl(), dir);
    await assert.rejects(forkSession(orphan, "u9"), new ForkTargetError("Entry gone not found"));
    // an empty session: pi's /clone has no current entry
    const empty = sessionFile(new SessionBuilder("/w").jsonl(), dir);
    await assert.rejects(
      forkSession(empty, null),
      new ForkTargetError("Cannot clone session: no current entry selected"),
    );
    // only setup entries on the path: pi keeps such a session in memory
    const setup = sessionFile(new SessionBuilder("/w").model("m", "p", "m").system("s").user("u", "q").jsonl(), dir);
    await assert.rejects(forkSession(setup, "s"), NothingToForkError);
    await assert.rejects(forkSession(setup, "u"), /holds no message yet/);
    assert.deepEqual(listing(), [...was, path.basename(orphan), path.basename(empty), path.basename(setup)].sort());
  });

  it("refuses sources pi would not open as they are", async () => {
    const good = conversation();
    const bom = sessionFile(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(good)]));
    await assert.rejects(
      forkSession(bom, "a1"),
      (e: unknown) => e instanceof ForkSourceError && /byte order mark/.test(e.message),
    );
    const v2 = sessionFile(good.replace('"version":3', '"version":2'));
    await assert.rejects(forkSession(v2, "a1"), /format version 2: pi rewrites/);
    const notSession = sessionFile('{"type":"message","id":"x"}\n');
    await assert.rejects(forkSession(notSession, "x"), /is not a pi session/);
    const noCwd = sessionFile(good.replace('"cwd":"/work/project"', '"cwd":"relative/dir"'));
    await assert.rejects(forkSession(noCwd, "a1"), /no absolute working directory \(cwd "relative\/dir"\)/);
    const cycle = sessionFile(
      new SessionBuilder("/w").user("x", "q", "y").assistant("y", { text: "a", parent: "x" }).jsonl(),
    );
    await assert.rejects(forkSession(cycle, "y"), /parent cycle/);
  });

  it("headerCwd: pi's resolvePath of the header's cwd", () => {
    assert.equal(headerCwd("/a/b/../c/"), "/a/c");
    assert.equal(headerCwd("~", "/home/me"), "/home/me");
    assert.equal(headerCwd("~/src", "/home/me"), "/home/me/src");
    assert.equal(headerCwd("file:///srv/x%20y"), "/srv/x y");
    assert.equal(headerCwd("rel"), undefined);
    assert.equal(headerCwd(""), undefined);
    assert.equal(headerCwd(undefined), undefined);
  });

  it("the new file keeps the source's permission bits", async () => {
    const file = sessionFile(conversation());
    fs.chmodSync(file, 0o640);
    const r = await forkSession(file, "a1");
    assert.equal(fs.statSync(r.file).mode & 0o777, 0o640 & ~process.umask());
  });
});

describe("createSessionFile", () => {
  it("never overwrites: an existing file (or a link at the name) is left alone", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "excl-"));
    const file = path.join(dir, "x.jsonl");
    fs.writeFileSync(file, "theirs\n");
    await assert.rejects(
      createSessionFile(file, [{ type: "session" }]),
      (e: unknown) =>
        e instanceof SessionWriteError && e.restored && e.code === "EEXIST" && /already exists/.test(e.message),
    );
    assert.equal(fs.readFileSync(file, "utf8"), "theirs\n");
    const target = path.join(dir, "target");
    const link = path.join(dir, "link.jsonl");
    fs.symlinkSync(target, link);
    await assert.rejects(createSessionFile(link, [{ type: "session" }]), /already exists/);
    assert.equal(fs.existsSync(target), false, "nothing created through the link");
  });

  it("writes pi's lines and returns their size", async () => {
    const file = path.join(fs.mkdtempSync(path.join(tmp, "w-")), "y.jsonl");
    const bytes = await createSessionFile(file, [{ type: "session", id: "é" }, { a: 1 }]);
    assert.equal(fs.readFileSync(file, "utf8"), '{"type":"session","id":"é"}\n{"a":1}\n');
    assert.equal(bytes, Buffer.byteLength('{"type":"session","id":"é"}\n{"a":1}\n'));
  });

  it("writes what it is given as it comes, in pieces, and removes the file when the lines fail", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "w-"));
    const big = path.join(dir, "big.jsonl");
    const text = "x".repeat(100_000);
    function* many(): Generator<object> {
      for (let i = 0; i < 50; i++) yield { i, text };
    }
    const bytes = await createSessionFile(big, many());
    assert.equal(bytes, fs.statSync(big).size);
    assert.ok(bytes > 5_000_000, "several pieces");
    const back = fs.readFileSync(big, "utf8").split("\n");
    assert.equal(back.length, 51);
    assert.deepEqual(JSON.parse(back[49]!), { i: 49, text });
    // the source changed under the lines (after a first piece reached the disk): no file is left
    const failed = path.join(dir, "failed.jsonl");
    function* failing(): Generator<object> {
      for (let i = 0; i < 20; i++) yield { i, text };
      throw new Error("line 3 of the source changed since it was read");
    }
    await assert.rejects(
      createSessionFile(failed, failing()),
      /^Error: line 3 of the source changed since it was read$/,
    );
    assert.equal(fs.existsSync(failed), false);
  });

  const noRoot = process.platform !== "linux" || process.getuid?.() !== 0;
  it(
    "a disk that fills up mid-write leaves no file behind and says so",
    { skip: noRoot && "needs root on Linux (a small tmpfs)" },
    async () => {
      const dir = fs.mkdtempSync(path.join(tmp, "full-"));
      try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
      } catch {
        return; // no mount rights in this container
      }
      mounts.push(dir);
      // a source that fits, a fork that does not
      const source = sessionFile(
        new SessionBuilder("/w")
          .user("u", "q")
          .assistant("a", { text: "x".repeat(40_000) })
          .jsonl(),
        dir,
      );
      const was = fs.readdirSync(dir);
      const before = fs.readFileSync(source);
      await assert.rejects(forkSession(source, "a"), (e: unknown) => {
        assert.ok(e instanceof SessionWriteError, String(e));
        assert.equal(e.code, "ENOSPC");
        assert.equal(e.restored, true);
        assert.match(e.message, /The new file was removed again\. Nothing was written\.$/);
        return true;
      });
      assert.deepEqual(fs.readdirSync(dir), was, "no file left behind");
      assert.ok(fs.readFileSync(source).equals(before));
    },
  );
});

describe("planFork", () => {
  it("plans without writing", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "plan-"));
    const file = sessionFile(conversation(), dir);
    const plan = await planFork(file, "u3");
    assert.deepEqual(fs.readdirSync(dir), [path.basename(file)]);
    assert.equal(plan.selectedText, "third question");
    const entries = [...forkEntries(plan)];
    assert.deepEqual(
      entries.map((e) => e.id),
      ["u1", "a1", "u2", "a2", entries[4]!.id],
    );
    assert.deepEqual([plan.pathCount, plan.pathLeafId, plan.labelCount], [4, "a2", 1]);
    assert.equal(plan.header.parentSession, file);
  });
});
