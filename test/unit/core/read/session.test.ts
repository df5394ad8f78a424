import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile, StaleSessionError } from "../../../../src/core/read/session";
import { getPath, structureDiagnostics } from "../../../../src/core/rules/tree";
import { buildProjection } from "../../../../src/core/rules/context";
import { estimateTokens } from "../../../../src/core/read/estimate";
import { estimateProjectedContextTokens } from "../../../../src/core/rules/tokens";
import { FIXTURES } from "../../../support/paths";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-session-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const header = { type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" };
function user(id: string, parentId: string | null, text: string): object {
  return {
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
  };
}
function assistant(id: string, parentId: string, text: string, total: number): object {
  return {
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:02.000Z",
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      api: "x",
      provider: "p",
      model: "m",
      usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total },
      stopReason: "stop",
      timestamp: 2,
    },
  };
}
const line = (o: object): string => `${JSON.stringify(o)}\n`;
let n = 0;
function file(content: string | Buffer): string {
  const p = path.join(tmp, `s${n++}.jsonl`);
  fs.writeFileSync(p, content);
  return p;
}

describe("SessionFile reading", () => {
  it("reports the torn final record of case 09 and the fused line, with line numbers and sizes", async () => {
    const torn = await SessionFile.open(path.join(FIXTURES, "cases/09-truncated-final-line/session.jsonl"));
    assert.deepEqual(
      torn.records.map((r) => r.id),
      ["u1", "a1", "u2"],
    );
    assert.equal(torn.leafId, "u2");
    const d = torn.diagnostics.find((x) => x.code === "truncated-final-line");
    assert.ok(d);
    assert.match(d.message, /^truncated final record at line 5 \(164 bytes\)/);
    assert.equal(d.offset, 973);
    const fused = await SessionFile.open(path.join(FIXTURES, "cases/09-truncated-final-line/session-fused.jsonl"));
    assert.deepEqual(
      fused.records.map((r) => r.id),
      ["u1", "a1", "u2"],
    );
    const f = fused.diagnostics.find((x) => x.code === "malformed-line");
    assert.ok(f);
    assert.match(f.message, /^unparseable line 5 \(350 bytes\)/);
  });

  it("never modifies the file it reads (torn tail, v1 file)", async () => {
    for (const rel of [
      "cases/09-truncated-final-line/session.jsonl",
      "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl",
    ]) {
      const p = path.join(FIXTURES, rel);
      const before = fs.readFileSync(p);
      const stat = fs.statSync(p);
      await SessionFile.open(p);
      assert.ok(fs.readFileSync(p).equals(before));
      assert.equal(fs.statSync(p).mtimeMs, stat.mtimeMs);
    }
  });

  it("accepts a BOM and CRLF line ends, skips blank lines, and says that pi would not open a BOM file", async () => {
    const text = `\ufeff${JSON.stringify(header)}\r\n\r\n${JSON.stringify(user("u1", null, "hi"))}\r\n   \n${JSON.stringify(assistant("a1", "u1", "ok", 50))}\r\n`;
    const s = await SessionFile.open(file(text));
    assert.equal(s.header?.id, "s1");
    assert.deepEqual(
      s.records.map((r) => r.id),
      ["u1", "a1"],
    );
    assert.equal(s.records[1]!.line, 5);
    assert.deepEqual(
      s.diagnostics.map((d) => d.code),
      ["bom"],
    );
  });

  it("treats a file whose first parsed line is not a header as not a pi session", async () => {
    const s = await SessionFile.open(file(`garbage\n${line(user("u1", null, "x"))}${line(header)}`));
    assert.equal(s.invalid, true);
    assert.equal(s.records.length, 0);
    assert.equal(s.diagnostics.at(-1)!.code, "not-a-session");
    assert.match(s.diagnostics.at(-1)!.message, /line 2/);
  });

  it("ignores later headers, keeps unknown types, reports duplicate ids (last wins) and falsy/non-object lines", async () => {
    const text =
      line(header) +
      line(user("u1", null, "a")) +
      line({ ...header, id: "other" }) +
      line({ type: "future_thing", id: "f1", parentId: "u1", timestamp: "t" }) +
      "null\n[1,2]\n" +
      line(user("u1", "f1", "dup")) +
      line({ type: "label", parentId: "u1", timestamp: "t", targetId: "u1", label: "x" });
    const s = await SessionFile.open(file(text));
    assert.deepEqual(
      s.records.map((r) => r.id),
      ["u1", "f1", "u1"],
    );
    assert.equal(s.byId.get("u1")!.line, 7);
    const codes = s.diagnostics.map((d) => d.code);
    assert.deepEqual(codes, [
      "extra-header",
      "unknown-type",
      "not-an-entry",
      "not-an-object",
      "duplicate-id",
      "missing-id",
    ]);
    assert.equal(s.leafId, "u1");
  });

  it("reports missing parents and parent cycles, and paths never hang on a cycle", async () => {
    const text =
      line(header) +
      line(user("a", "c", "1")) +
      line(user("b", "a", "2")) +
      line(user("c", "b", "3")) +
      line(user("d", "zzz", "4")) +
      line(user("e", "e", "5")) +
      line(user("f", "a", "6"));
    const s = await SessionFile.open(file(text));
    const diags = structureDiagnostics(s);
    assert.deepEqual(diags.map((d) => d.code).sort(), ["missing-parent", "parent-cycle", "parent-cycle"]);
    const cyclePath = getPath(s, "f");
    assert.deepEqual(
      cyclePath.path.map((e) => e.id),
      ["b", "c", "a", "f"],
    );
    assert.equal(cyclePath.cycleAt, "a");
    const self = getPath(s, "e");
    assert.deepEqual(
      self.path.map((e) => e.id),
      ["e"],
    );
    assert.equal(getPath(s, "d").missingParent, "zzz");
    // The projection and token accounting work on the cut path too.
    const projection = buildProjection(s, "f");
    assert.equal(estimateProjectedContextTokens(projection, s).tokens, 4);
  });

  it("migrates v1 in memory: linear chain, firstKeptEntryIndex (header counted) → id, nothing written", async () => {
    const p = path.join(FIXTURES, "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl");
    const s = await SessionFile.open(p);
    assert.equal(s.fileVersion, 1);
    const ids = s.records.map((r) => r.id);
    assert.equal(ids.length, 6);
    s.records.forEach((r, i) => assert.equal(r.parentId, i === 0 ? null : ids[i - 1]));
    const compaction = s.records.find((r) => r.type === "compaction")!;
    assert.equal(compaction.firstKeptEntryId, ids[2]);
    const full = s.readEntry(compaction) as unknown as Record<string, unknown>;
    assert.equal(full.firstKeptEntryId, ids[2]);
    assert.equal("firstKeptEntryIndex" in full, false);
    assert.ok(s.diagnostics.some((d) => d.code === "old-version"));
  });

  it("migrates v2 hookMessage to custom in memory", async () => {
    const text =
      line({ ...header, version: 2 }) +
      line({
        type: "message",
        id: "h",
        parentId: null,
        timestamp: "t",
        message: { role: "hookMessage", customType: "x", content: "hello!!", display: true, timestamp: 1 },
      });
    const s = await SessionFile.open(file(text));
    assert.equal(s.records[0]!.role, "custom");
    assert.equal(s.records[0]!.tokens, 2);
    assert.equal((s.readEntry(s.records[0]!) as { message: { role: string } }).message.role, "custom");
  });

  it("counts tokens of long lines exactly like pi's estimateTokens on the parsed message", async () => {
    const big = 'x"y\\z é 😀\n'.repeat(5000);
    const message = {
      role: "toolResult",
      toolCallId: "c",
      toolName: "read",
      content: [
        { type: "text", text: big },
        { type: "image", data: "A".repeat(200000), mimeType: "image/png" },
      ],
      isError: false,
      timestamp: 3,
    };
    const call = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: big },
        { type: "toolCall", id: "c", name: "write", arguments: { path: "a.txt", content: big } },
      ],
      api: "x",
      provider: "p",
      model: "m",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
      stopReason: "toolUse",
      timestamp: 2,
    };
    const text =
      line(header) +
      line(user("u1", null, big)) +
      line({ type: "message", id: "a1", parentId: "u1", timestamp: "t", message: call }) +
      line({ type: "message", id: "t1", parentId: "a1", timestamp: "t", message });
    const s = await SessionFile.open(file(text));
    assert.equal(s.records[0]!.tokens, estimateTokens({ role: "user", content: [{ type: "text", text: big }] }));
    assert.equal(s.records[1]!.tokens, estimateTokens(call));
    assert.equal(s.records[2]!.tokens, estimateTokens(message));
    assert.deepEqual(s.records[1]!.fileOps, [{ kind: "write", path: "a.txt" }]);
    assert.equal(s.records[2]!.images, 1);
    assert.equal(s.records[0]!.preview, 'x"y\\z é 😀');
  });
});

describe("SessionFile tailing", () => {
  it("reads appended lines only, keeps a torn line pending until completed, and includes a complete unterminated line like pi", async () => {
    const p = file(line(header) + line(user("u1", null, "hello")));
    const s = await SessionFile.open(p);
    assert.deepEqual(
      s.records.map((r) => r.id),
      ["u1"],
    );
    const a1 = JSON.stringify(assistant("a1", "u1", "answer", 100));
    fs.appendFileSync(p, a1.slice(0, 40));
    let r = await s.refresh();
    assert.equal(r.added.length, 0);
    assert.equal(s.diagnostics.at(-1)!.code, "truncated-final-line");
    fs.appendFileSync(p, a1.slice(40));
    r = await s.refresh();
    // Complete JSON without a newline: pi parses it, so do we (provisionally).
    assert.deepEqual(
      r.added.map((e) => e.id),
      ["a1"],
    );
    assert.equal(s.leafId, "a1");
    assert.equal(s.diagnostics.filter((d) => d.code === "truncated-final-line").length, 0);
    fs.appendFileSync(p, `\n${line(user("u2", "a1", "next"))}`);
    r = await s.refresh();
    assert.deepEqual(
      s.records.map((e) => e.id),
      ["u1", "a1", "u2"],
    );
    assert.equal(r.reopened, false);
    assert.equal(s.records[2]!.line, 4);
    assert.equal(s.committedBytes, fs.statSync(p).size);
    const unchanged = await s.refresh();
    assert.equal(unchanged.changed, false);
  });

  it("re-reads from scratch when the file shrank or was rewritten", async () => {
    const p = file(line(header) + line(user("u1", null, "hello")) + line(user("u2", "u1", "more")));
    const s = await SessionFile.open(p);
    fs.writeFileSync(p, line(header) + line(user("x1", null, "other")));
    let r = await s.refresh();
    assert.equal(r.reopened, true);
    assert.deepEqual(
      s.records.map((e) => e.id),
      ["x1"],
    );
    // Same size, different bytes (pi's migration rewrite keeps the inode).
    const content = line({ ...header, id: "s2" }) + line(user("y1", null, "other"));
    fs.writeFileSync(p, content);
    r = await s.refresh();
    assert.equal(r.reopened, true);
    assert.equal(s.header?.id, "s2");
  });

  it("readEntry returns the full entry and notices a rewritten line", async () => {
    const p = file(line(header) + line(user("u1", null, "hello")));
    const s = await SessionFile.open(p);
    const entry = s.readEntry(s.records[0]!) as unknown as { message: { content: { text: string }[] } };
    assert.equal(entry.message.content[0]!.text, "hello");
    fs.writeFileSync(p, line(header) + line(user("zz", null, "hello")));
    assert.throws(() => s.readEntry(s.records[0]!), StaleSessionError);
  });

  it("readEntry: one descriptor per synchronous run of reads, closed when the task ends; later runs open the path again", async () => {
    const p = file(line(header) + line(user("u1", null, "one")) + line(user("u2", "u1", "two")));
    const s = await SessionFile.open(p);
    const open = () => (process.platform === "linux" ? fs.readdirSync("/proc/self/fd").length : 0);
    const before = open();
    const texts = [];
    for (let i = 0; i < 50; i++)
      for (const r of s.records)
        texts.push(
          (s.readEntry(r) as unknown as { message: { content: { text: string }[] } }).message.content[0]!.text,
        );
    assert.equal(texts.length, 100);
    assert.deepEqual(texts.slice(0, 2), ["one", "two"]);
    if (process.platform === "linux") assert.equal(open(), before + 1); // one descriptor for the whole run
    await Promise.resolve();
    assert.equal(open(), before); // closed when the task ended
    // a file replaced at the path (a new inode) is what the next run reads: its line is not that entry
    const replacement = `${p}.new`;
    fs.writeFileSync(replacement, line(header) + line(user("zz", null, "one")) + line(user("u2", "zz", "two")));
    fs.renameSync(replacement, p);
    assert.throws(() => s.readEntry(s.records[0]!), StaleSessionError);
  });

  it("streams files larger than one read chunk with lines across chunk borders", async () => {
    const parts = [line(header)];
    let parent: string | null = null;
    for (let i = 0; i < 1500; i++) {
      const id = `e${i}`;
      parts.push(line(user(id, parent, `${i} `.repeat(1000 + (i % 7) * 333))));
      parent = id;
    }
    const p = file(parts.join(""));
    assert.ok(fs.statSync(p).size > 8 * 1024 * 1024);
    const s = await SessionFile.open(p);
    assert.equal(s.records.length, 1500);
    assert.equal(s.diagnostics.length, 0);
    assert.equal(getPath(s, s.leafId).path.length, 1500);
    const inMemory = SessionFile.fromBytes(fs.readFileSync(p));
    assert.deepEqual(
      inMemory.records.map((r) => [r.id, r.offset, r.tokens]),
      s.records.map((r) => [r.id, r.offset, r.tokens]),
    );
  });
});
