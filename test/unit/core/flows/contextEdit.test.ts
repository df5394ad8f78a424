/**
 * The context-edit write flow (core/flows/contextEdit.ts) on temp files: one append of chained
 * entries in pi's format, tokens read back, nothing written when there is nothing to write, when
 * declined, for a live session, an old or torn file, and the re-plan when the file changed.
 * Also the shared re-plan loop (core/flows/replan.ts).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import {
  commitContextEdits,
  MAX_EDIT_ATTEMPTS,
  planContextEdits,
  runContextEditFlow,
  type ContextEditOptions,
} from "../../../../src/core/flows/contextEdit";
import { LiveSessionError } from "../../../../src/core/access/words";
import { KEEPS_CHANGING, REPLAN, withReplanning, writeOrReplan } from "../../../../src/core/flows/replan";
import { SessionChangedError, UnsafeSessionWriteError } from "../../../../src/core/flows/write";
import { SessionFile } from "../../../../src/core/read/session";
import { buildProjection } from "../../../../src/core/rules/context";
import { estimateProjectedContextTokens } from "../../../../src/core/rules/tokens";
import { FIXTURES } from "../../../support/paths";
import { SessionBuilder } from "../../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-edit-flow-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const options: ContextEditOptions = { guardSeconds: 0, procRoot: null };

let n = 0;
/** A session file (mtime an hour ago, so the live guard's time check passes). */
function write(content: string): string {
  const file = path.join(tmp, `s${n++}.jsonl`);
  fs.writeFileSync(file, content);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

function turn(): string {
  return new SessionBuilder()
    .system("s")
    .user("u1", "question")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", arguments: { path: "src/a.ts" } }], usage: 500 })
    .result("r1", "c1", "x".repeat(4000))
    .assistant("a2", { text: "done", usage: 1800 })
    .jsonl();
}

function lines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const pendingLine = (id: string, parentId: string) =>
  `${JSON.stringify({ type: "label", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", targetId: "u1", label: "pi wrote" })}\n`;

describe("context edit flow: writing", () => {
  it("all edits of a batch in one append, chained off the leaf, in pi's format; tokens read back", async () => {
    const file = write(turn());
    const before = fs.readFileSync(file);
    const plan = await planContextEdits(
      file,
      [
        { action: "omit", targetId: "a1" },
        { action: "replace", targetId: "u1", content: "q" },
      ],
      options,
    );
    const now = new Date("2026-12-01T10:00:00.000Z");
    const result = await commitContextEdits(plan, () => now);
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before), "existing bytes untouched");
    const appended = after.subarray(before.length).toString("utf8");
    assert.equal(appended, result.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    assert.equal(result.bytesAfter, after.length);
    assert.equal(result.bytesAfter - result.bytesBefore, plan.preparation.bytes);
    const written = lines(file).slice(-3);
    assert.deepEqual(
      written.map((e) => [e.parentId, e.targetId, e.replacement]),
      [
        ["a2", "r1", null],
        [written[0]!.id, "a1", null],
        [written[1]!.id, "u1", { content: "q" }],
      ],
    );
    for (const e of written) {
      assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "targetId", "replacement"]);
      assert.match(e.id as string, /^[0-9a-f]{8}$/);
      assert.equal(e.timestamp, "2026-12-01T10:00:00.000Z");
    }
    assert.equal(new Set(written.map((e) => e.id)).size, 3);
    assert.equal(result.leafId, written[2]!.id);
    const reread = await SessionFile.open(file);
    assert.equal(result.tokensAfter, estimateProjectedContextTokens(buildProjection(reread), reread).tokens);
    assert.equal(result.tokensAfter, plan.preparation.tokensAfter.tokens);
    assert.equal(result.tokensBefore, 1800);
    assert.deepEqual(result.pairingAfter, { findings: [], errors: 0, fillers: 0 });
  });

  it("nothing to write: no append, outcome 'nothing'; declined: nothing written", async () => {
    const file = write(turn());
    const before = fs.readFileSync(file);
    const nothing = await runContextEditFlow(file, [{ action: "restore", targetId: "u1" }], options);
    assert.equal(nothing.kind, "nothing");
    assert.deepEqual(nothing.plan.preparation.unchanged, [{ action: "restore", targetId: "u1" }]);
    const committed = await commitContextEdits(nothing.plan);
    assert.deepEqual([committed.entries, committed.bytesAfter], [[], before.length]);
    const declined = await runContextEditFlow(file, [{ action: "omit", targetId: "r1" }], options, {
      confirm: async () => false,
    });
    assert.equal(declined.kind, "declined");
    assert.ok(fs.readFileSync(file).equals(before));
  });

  it("refuses a live session (recent write) and writes nothing; pi has no command for this, so none is offered", async () => {
    const file = write(turn());
    fs.utimesSync(file, new Date(), new Date());
    const before = fs.readFileSync(file);
    await assert.rejects(
      runContextEditFlow(file, [{ action: "omit", targetId: "r1" }], { ...options, guardSeconds: 60 }),
      (error: unknown) => {
        assert.ok(error instanceof LiveSessionError);
        assert.match(
          error.message,
          /^Refusing to edit the context of this session while pi may have it open: the session file was written \d+ s ago/,
        );
        assert.match(error.message, /Quit pi, wait until the session is idle, then try again\./);
        assert.match(error.message, /If you know no pi has this session open, "Edit Anyway" goes ahead\./);
        return true;
      },
    );
    const plan = await planContextEdits(file, [{ action: "omit", targetId: "r1" }], { ...options, guardSeconds: 60 });
    assert.equal(plan.access.strength, "possible");
    await assert.rejects(commitContextEdits(plan), LiveSessionError);
    assert.ok(fs.readFileSync(file).equals(before));
  });

  it("our own last edit is no recent write while the file is unchanged since: restore at once; any other write counts again", async () => {
    const file = write(turn());
    const guarded = { ...options, guardSeconds: 60 };
    const first = await runContextEditFlow(file, [{ action: "omit", targetId: "r1" }], guarded);
    assert.equal(first.kind, "edited");
    const restore = await planContextEdits(file, [{ action: "restore", targetId: "r1" }], guarded);
    assert.equal(restore.access.strength, "none", "written by us a moment ago, nothing since");
    assert.equal(restore.access.ownLastWrite, true);
    assert.equal((await commitContextEdits(restore)).entries.length, 1);
    // somebody else (pi) appends: the recent write counts again
    fs.appendFileSync(
      file,
      `${JSON.stringify({ type: "custom", id: "zz", parentId: null, timestamp: new Date().toISOString(), customType: "x" })}\n`,
    );
    const after = await planContextEdits(file, [{ action: "omit", targetId: "r1" }], guarded);
    assert.equal(after.access.strength, "possible");
    assert.equal(after.access.evidence[0]!.kind, "recent-write");
  });

  it("refuses files we never write: v1 sessions and torn final lines", async () => {
    for (const rel of [
      "cases/09-truncated-final-line/session.jsonl",
      "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl",
    ]) {
      const file = write(fs.readFileSync(path.join(FIXTURES, rel), "utf8"));
      await assert.rejects(planContextEdits(file, [], options), UnsafeSessionWriteError);
    }
  });
});

describe("context edit flow: the file changed under us", () => {
  it("commit after a change: SessionChangedError, nothing written; the flow re-plans on the new leaf and asks again", async () => {
    const file = write(turn());
    const plan = await planContextEdits(file, [{ action: "omit", targetId: "r1" }], options);
    fs.appendFileSync(file, pendingLine("zz000001", "a2"));
    const size = fs.statSync(file).size;
    await assert.rejects(commitContextEdits(plan), SessionChangedError);
    assert.equal(fs.statSync(file).size, size);

    const file2 = write(turn());
    const seen: { leaf: string | null; changed: boolean }[] = [];
    const outcome = await runContextEditFlow(file2, [{ action: "omit", targetId: "r1" }], options, {
      confirm: async (p, changed) => {
        seen.push({ leaf: p.preparation.leafId, changed });
        if (seen.length === 1) fs.appendFileSync(file2, pendingLine("zz000002", "a2"));
        return true;
      },
    });
    assert.deepEqual(seen, [
      { leaf: "a2", changed: false },
      { leaf: "zz000002", changed: true },
    ]);
    assert.equal(outcome.kind, "edited");
    assert.equal(lines(file2).at(-1)!.parentId, "zz000002");
  });

  it(`keeps changing: gives up after ${MAX_EDIT_ATTEMPTS} attempts without writing`, async () => {
    const file = write(turn());
    let k = 0;
    await assert.rejects(
      runContextEditFlow(file, [{ action: "omit", targetId: "r1" }], options, {
        confirm: async () => {
          fs.appendFileSync(file, pendingLine(`zz00000${k}`, k === 0 ? "a2" : `zz00000${k - 1}`));
          k++;
          return true;
        },
      }),
      (error: unknown) => error instanceof SessionChangedError && error.message === KEEPS_CHANGING,
    );
    assert.equal(k, MAX_EDIT_ATTEMPTS);
    assert.ok(lines(file).every((e) => e.type !== "context_edit"));
  });
});

describe("the shared re-plan loop", () => {
  it("re-runs on REPLAN with changed = true, up to the limit; a write's SessionChangedError re-plans except the last time", async () => {
    const seen: string[] = [];
    const result = await withReplanning(3, async (a) => {
      seen.push(`${a.number}:${a.changed}:${a.last}`);
      return a.number < 3 ? REPLAN : "done";
    });
    assert.equal(result, "done");
    assert.deepEqual(seen, ["1:false:false", "2:true:false", "3:true:true"]);
    await assert.rejects(
      withReplanning(2, async () => REPLAN),
      (e: unknown) => e instanceof SessionChangedError && e.message === KEEPS_CHANGING,
    );
    const changed = new SessionChangedError("changed");
    assert.equal(
      await writeOrReplan({ number: 1, changed: false, last: false }, () => {
        throw changed;
      }),
      REPLAN,
    );
    await assert.rejects(
      writeOrReplan({ number: 3, changed: true, last: true }, () => {
        throw changed;
      }),
      (e: unknown) => e === changed,
    );
    await assert.rejects(
      writeOrReplan({ number: 1, changed: false, last: false }, () => {
        throw new Error("other");
      }),
      /other/,
    );
  });
});
