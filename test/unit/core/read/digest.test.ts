/**
 * The content digest the write path checks (`digest.ts`): SHA-256 of exactly the committed bytes
 * (up to the last `\n`), computed while reading — for a plain open, a torn final line, a BOM, lines
 * crossing the 2 MB read chunks, and after refreshes (small synchronous appends, large streamed
 * ones, a completed torn line, a rewrite) — equal to a hash of the file's bytes taken afterwards.
 */

import { strict as assert } from "node:assert";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { ContentDigest, digestOfPrefix } from "../../../../src/core/read/digest";
import { SessionFile } from "../../../../src/core/read/session";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-digest-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (bytes: Buffer | string) => {
  const p = path.join(tmp, `${n++}.jsonl`);
  fs.writeFileSync(p, bytes);
  return p;
};
const sha = (b: Buffer) => crypto.createHash("sha256").update(b).digest("hex");
const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n';
const entry = (id: string, text = "x") =>
  `${JSON.stringify({ type: "message", id, parentId: null, timestamp: "t", message: { role: "user", content: text } })}\n`;

/** The digest must be the hash of the file's first committedBytes bytes. */
function check(s: SessionFile, p: string): void {
  const bytes = fs.readFileSync(p);
  const d = s.contentDigest;
  assert.ok(d, "a digest");
  assert.equal(d.bytes, s.committedBytes);
  assert.equal(d.sha256, sha(bytes.subarray(0, s.committedBytes)));
}

describe("content digest of the committed bytes", () => {
  it("only when asked for: the UI's opens compute none", async () => {
    const p = file(header + entry("a"));
    assert.equal((await SessionFile.open(p)).contentDigest, undefined);
    check(await SessionFile.open(p, { digest: true }), p);
  });

  it("a torn final line is not part of it; a BOM is", async () => {
    const torn = file(header + entry("a") + '{"type":"message","id":"b"');
    const s = await SessionFile.open(torn, { digest: true });
    assert.ok(s.size > s.committedBytes);
    check(s, torn);
    const bom = file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(header + entry("a"))]));
    check(await SessionFile.open(bom, { digest: true }), bom);
  });

  it("lines across the 2 MB read chunks, and a final line longer than a chunk", async () => {
    const big = "y".repeat(3 * 1024 * 1024);
    const p = file(header + entry("a", big) + entry("b") + entry("c", big.slice(0, 2 * 1024 * 1024 - 7)));
    check(await SessionFile.open(p, { digest: true }), p);
    const longTorn = file(header + entry("a") + `{"type":"message","id":"z","x":"${big}`);
    check(await SessionFile.open(longTorn, { digest: true }), longTorn);
  });

  it("follows refreshes: small and large appends, a completed torn line, a rewrite", async () => {
    const p = file(header + entry("a") + '{"type":"mess');
    const s = await SessionFile.open(p, { digest: true });
    check(s, p);
    fs.appendFileSync(p, `age","id":"b","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n`);
    await s.refresh();
    assert.equal(s.records.length, 2);
    check(s, p);
    fs.appendFileSync(p, entry("c"));
    await s.refresh(); // synchronous path
    check(s, p);
    fs.appendFileSync(p, entry("d", "z".repeat(3 * 1024 * 1024))); // streamed path
    await s.refresh();
    check(s, p);
    fs.writeFileSync(p, header + entry("q")); // shorter: read again from scratch
    const r = await s.refresh();
    assert.equal(r.reopened, true);
    check(s, p);
  });

  it("digestOfPrefix hashes exactly the first bytes of a file, undefined when it is shorter", () => {
    const bytes = crypto.randomBytes(5 * 1024 * 1024 + 17);
    const p = file(bytes);
    const fd = fs.openSync(p, "r");
    try {
      for (const k of [0, 1, 4096, 2 * 1024 * 1024, 2 * 1024 * 1024 + 1, bytes.length])
        assert.equal(digestOfPrefix(fd, k), sha(bytes.subarray(0, k)));
      assert.equal(digestOfPrefix(fd, bytes.length + 1), undefined);
    } finally {
      fs.closeSync(fd);
    }
  });

  it("ContentDigest: any split of the bytes into chunks gives the same digest", () => {
    const bytes = Buffer.from(header + entry("a") + entry("b", "ü".repeat(100)) + "tail without newline");
    const committed = bytes.lastIndexOf(0x0a) + 1;
    for (let trial = 0; trial < 200; trial++) {
      const d = new ContentDigest();
      let at = 0;
      while (at < bytes.length) {
        const len = 1 + Math.floor(Math.random() * 40);
        d.feed(bytes.subarray(at, at + len));
        at += len;
      }
      assert.deepEqual(d.result(), { bytes: committed, sha256: sha(bytes.subarray(0, committed)) });
    }
    const gap = new ContentDigest();
    gap.feed(bytes.subarray(0, committed));
    gap.continueAt(committed + 1);
    assert.equal(gap.result(), undefined, "fed with a gap: no digest");
  });
});
