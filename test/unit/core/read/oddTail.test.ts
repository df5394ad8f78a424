/**
 * `SessionFile.oddTail` (issue 43, kind 4): the last line pi keeps when it is not an entry with a
 * string id, kept up to date through incremental reads — an unterminated last line counts
 * provisionally (pi parses it) and is undone when the refresh reads it again.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { ODD_TAIL_ID } from "../../../../src/core/read/oddTail";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-odd-tail-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const HEADER = '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}';
const U1 = '{"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}';
const U2 = '{"type":"message","id":"u2","parentId":"u1","timestamp":"t","message":{"role":"user","content":"yo"}}';

describe("SessionFile.oddTail", () => {
  it("each kind of last line pi makes its leaf without a string id; none for a normal one or a line pi skips", () => {
    const cases: [string, string | undefined, boolean][] = [
      ["42", "42 (a number)", false],
      ["[]", "an array", false],
      ['"text"', '"text" (a string)', false],
      ["true", "true (a boolean)", false],
      ['{"type":"leaf","targetId":"u1"}', "an entry with no id", false],
      ['{"type":"custom","id":{"x":1},"parentId":"u1"}', 'an entry with an object id {"x":1}', true],
      ['{"type":"custom","id":7,"parentId":"u1"}', "an entry with a number id 7", true],
      ['{"type":"custom","id":"","parentId":"u1"}', 'an entry with the id "" (empty)', false],
      [U2, undefined, false],
      ["null", undefined, false], // pi skips falsy JSON: u1 stays the leaf
      ['{"type":"session","version":3,"id":"x"}', undefined, false], // pi's leaf skips header lines
      ["{broken", undefined, false],
    ];
    for (const [last, what, truthy] of cases) {
      const session = SessionFile.fromBytes(`${HEADER}\n${U1}\n${last}\n`);
      assert.equal(session.oddTail?.what, what, last);
      if (what === undefined) continue;
      assert.equal(session.oddTail!.truthyId, truthy, last);
      assert.equal(session.oddTail!.line, 3);
      if (last.includes('"parentId":"u1"')) assert.equal(session.oddTail!.record.parentId, "u1");
      if (!last.includes('"id":""')) assert.equal(session.oddTail!.record.id, ODD_TAIL_ID);
    }
  });

  it("through refreshes: an unterminated odd line counts until a normal entry follows; a later odd line counts again", async () => {
    const file = path.join(tmp, "s.jsonl");
    fs.writeFileSync(file, `${HEADER}\n${U1}\n42`);
    const session = await SessionFile.open(file);
    assert.equal(session.oddTail?.what, "42 (a number)", "pi parses an unterminated last line");
    fs.appendFileSync(file, `\n${U2}\n`);
    await session.refresh();
    assert.equal(session.oddTail, undefined);
    assert.equal(session.leafId, "u2");
    fs.appendFileSync(file, '{"type":"leaf"}\n');
    await session.refresh();
    assert.equal((session.oddTail as { what: string } | undefined)?.what, "an entry with no id");
    fs.appendFileSync(file, U2.replace('"u2"', '"u3"').replace('"parentId":"u1"', '"parentId":"u2"'));
    await session.refresh();
    assert.equal(session.oddTail, undefined, "an unterminated normal entry is pi's leaf too");
  });
});
