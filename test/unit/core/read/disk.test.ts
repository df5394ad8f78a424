/** Reading session files from disk (`src/core/read/disk.ts`): full reads, streaming, rewrite probes. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { FileProbes, readFullySync, streamChunks } from "../../../../src/core/read/disk";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-disk-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function file(content: string | Buffer): string {
  const p = path.join(tmp, `f${n++}`);
  fs.writeFileSync(p, content);
  return p;
}

describe("disk", () => {
  it("reads a byte range in full, and less at the end of the file", () => {
    const fd = fs.openSync(file("0123456789"), "r");
    try {
      const buf = Buffer.alloc(4);
      assert.equal(readFullySync(fd, buf, 3), 4);
      assert.equal(buf.toString(), "3456");
      assert.equal(readFullySync(fd, buf, 8), 2);
      assert.equal(buf.subarray(0, 2).toString(), "89");
    } finally {
      fs.closeSync(fd);
    }
  });

  it("streams a file larger than one chunk from an offset, in order", async () => {
    const content = Buffer.alloc(5 * 1024 * 1024 + 7, "a");
    content.write("start", 3);
    const handle = await fs.promises.open(file(content), "r");
    try {
      const parts: Buffer[] = [];
      const end = await streamChunks(handle, 3, (chunk) => parts.push(Buffer.from(chunk)));
      assert.equal(end, content.length);
      assert.ok(parts.length >= 3);
      assert.ok(Buffer.concat(parts).equals(content.subarray(3)));
    } finally {
      await handle.close();
    }
  });

  it("notices a rewritten head or tail, not an append", async () => {
    const p = file('{"type":"session"}\n{"a":1}\n');
    const committed = fs.statSync(p).size;
    const probes = new FileProbes();
    const handle = await fs.promises.open(p, "r");
    await probes.capture(handle, committed);
    await handle.close();
    const matches = () => {
      const fd = fs.openSync(p, "r");
      try {
        return probes.matches(fd, committed);
      } finally {
        fs.closeSync(fd);
      }
    };
    fs.appendFileSync(p, '{"b":2}\n');
    assert.equal(matches(), true);
    fs.writeFileSync(p, '{"type":"sessiON"}\n{"a":1}\n{"b":2}\n');
    assert.equal(matches(), false);
    fs.writeFileSync(p, '{"type":"session"}\n{"a":9}\n{"b":2}\n');
    assert.equal(matches(), false);
    probes.clear();
    assert.equal(matches(), true);
  });
});
