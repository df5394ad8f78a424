/**
 * "Compact up to here" (`prepareCompactionAt`): at pi's own cut point it is pi's `prepareCompaction`
 * (every shared fixture, at every entry of its path where pi would compact); at other entries it
 * follows pi's rules (message-less entries kept with the cut, split turn, previous summary, file
 * lists, `tokensBefore`); entries pi would not cut at are refused with the nearest valid ones.
 * pi itself loads what is written from it in test/conformance/compact-up-to-here.test.ts.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import {
  isInvalidCut,
  isPrepared,
  prepareCompaction,
  prepareCompactionAt,
  validCutPoints,
  type CompactionPreparation,
} from "../../../../src/core/rules/compaction";
import { buildProjection } from "../../../../src/core/rules/context";
import { FIXTURES } from "../../../support/paths";
import { SessionBuilder } from "../../../support/session-builder";

const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };

/** The comparable part of a preparation (ids instead of projected entries). */
function shape(p: CompactionPreparation) {
  return {
    firstKeptEntryId: p.firstKeptEntryId,
    summarized: p.messagesToSummarize.map((e) => e.record.id),
    turnPrefix: p.turnPrefixMessages.map((e) => e.record.id),
    isSplitTurn: p.isSplitTurn,
    turnStartEntryId: p.turnStartEntryId,
    tokensBefore: p.tokensBefore,
    previousSummary: p.previousSummary,
    previousCompactionId: p.previousCompactionId,
    readFiles: p.readFiles,
    modifiedFiles: p.modifiedFiles,
    kept: p.keptEntries.map((e) => e.record.id),
    keptTokens: p.keptTokens,
    summarizedTokens: p.summarizedTokens,
    checkpointTokens: p.checkpointTokens,
    leafId: p.leafId,
  };
}

describe("prepareCompactionAt at pi's own cut point is pi's prepareCompaction", () => {
  for (const name of ["long", "split", "overflow", "tree"]) {
    it(`${name}.jsonl, at every entry of every leaf's path where pi would compact (keepRecentTokens 20000 and 2000)`, () => {
      const session = SessionFile.fromBytes(fs.readFileSync(path.join(FIXTURES, "pi-1.6.0", `${name}.jsonl`)));
      let compared = 0;
      for (const keepRecentTokens of [20000, 2000]) {
        const settings = { ...SETTINGS, keepRecentTokens };
        for (const leaf of session.records) {
          const own = prepareCompaction(session, settings, session, leaf.id);
          if (!isPrepared(own)) continue;
          const chosen = prepared(
            prepareCompactionAt(session, settings, session, own.firstKeptEntryId, { leafId: leaf.id }),
          );
          assert.deepEqual(shape(chosen), shape(own), `${name} leaf ${leaf.id}`);
          compared++;
        }
      }
      assert.ok(compared >= 3, `${name}: only ${compared} leaves compared`);
    });
  }
});

/**
 * s (system), u1, a1 (read a.ts: c1), r1, a2, model change m, u2, a3 (edit b.ts: c3), r3, a4 (text), u3.
 */
function session(): SessionFile {
  const b = new SessionBuilder()
    .system("s")
    .user("u1", "first question")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", name: "read", arguments: { path: "a.ts" } }] })
    .result("r1", "c1", "contents of a")
    .assistant("a2", { text: "a.ts is fine" })
    .model("m", "p", "m2")
    .user("u2", "second question")
    .assistant("a3", { text: "editing", calls: [{ id: "c3", name: "edit", arguments: { path: "b.ts" } }] })
    .result("r3", "c3", "edited")
    .assistant("a4", { text: "b.ts is edited" })
    .user("u3", "third question");
  return SessionFile.fromBytes(b.jsonl());
}

function at(s: SessionFile, id: string): ReturnType<typeof prepareCompactionAt> {
  return prepareCompactionAt(s, SETTINGS, s, id);
}

/** The preparation, or a failed assertion naming what came back. */
function prepared(result: ReturnType<typeof prepareCompactionAt>): CompactionPreparation {
  assert.ok(!("reason" in result), JSON.stringify(result));
  return result;
}

describe("prepareCompactionAt at a chosen entry", () => {
  it("at a user message: everything before it summarized, the model change before it kept with it (pi's pull-back)", () => {
    const p = prepared(at(session(), "u2"));
    assert.equal(p.firstKeptEntryId, "m");
    // pi's rule, mirrored: the pulled-back cut (the model change) starts no turn, so the turn
    // before it is a split turn's prefix and the history part is empty
    assert.equal(p.isSplitTurn, true);
    assert.equal(p.turnStartEntryId, "u1");
    assert.deepEqual(p.messagesToSummarize, []);
    assert.deepEqual(
      p.turnPrefixMessages.map((e) => e.record.id),
      ["u1", "a1", "r1", "a2"],
    );
    assert.deepEqual(
      p.keptEntries.map((e) => e.record.id),
      ["m", "u2", "a3", "r3", "a4", "u3"],
    );
    assert.deepEqual(p.readFiles, ["a.ts"]);
    assert.deepEqual(p.modifiedFiles, []);
    // pi's estimate at the leaf, whatever the cut
    const own = prepareCompaction(session(), { ...SETTINGS, keepRecentTokens: 1 }, session());
    const ownPrep = prepared(own);
    assert.equal(p.tokensBefore, ownPrep.tokensBefore);
  });

  it("at the model change itself: the same cut (it names the user message after it)", () => {
    const p = prepared(at(session(), "m"));
    assert.equal(p.firstKeptEntryId, "m");
  });

  it("at an assistant mid-turn: the turn is split (history before the turn, the turn's prefix apart), file ops of both", () => {
    const p = prepared(at(session(), "a4"));
    assert.equal(p.firstKeptEntryId, "a4");
    assert.equal(p.isSplitTurn, true);
    assert.equal(p.turnStartEntryId, "u2");
    assert.deepEqual(
      p.messagesToSummarize.map((e) => e.record.id),
      ["u1", "a1", "r1", "a2"],
    );
    assert.deepEqual(
      p.turnPrefixMessages.map((e) => e.record.id),
      ["u2", "a3", "r3"],
    );
    assert.deepEqual(p.readFiles, ["a.ts"]);
    assert.deepEqual(p.modifiedFiles, ["b.ts"]);
  });

  it("at a tool result: refused, with the nearest valid entries before and after", () => {
    const p = at(session(), "r3");
    assert.ok(isInvalidCut(p));
    assert.equal(p.code, "tool-result");
    assert.deepEqual(p.nearest, ["a3", "a4"]);
  });

  it("at the first message: nothing before it to summarize", () => {
    const p = at(session(), "u1");
    assert.deepEqual(p, { reason: "nothing-to-compact" });
  });

  it("unknown and off-branch entries, the system message, an omitted one; the leaf a compaction", () => {
    const s = session();
    const unknown = at(s, "nope");
    assert.ok(isInvalidCut(unknown));
    assert.equal(unknown.code, "unknown");
    assert.deepEqual(unknown.nearest, []);
    const system = at(s, "s");
    assert.ok(isInvalidCut(system));
    assert.equal(system.code, "system");
    assert.deepEqual(system.nearest, ["u1"]);

    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { text: "x" })
      .user("u2", "q2")
      .assistant("a2", { text: "y" })
      .user("side", "other branch", "a1")
      .user("u3", "q3", "a2")
      .edit("e1", "a2", null)
      .label("l1", "u1", "start");
    const t = SessionFile.fromBytes(b.jsonl());
    const off = at(t, "side");
    assert.ok(isInvalidCut(off));
    assert.equal(off.code, "off-branch");
    // the omitted assistant is message-less now: it names the next cut point (u3), pulled back to it
    const omitted = prepared(at(t, "a2"));
    assert.equal(omitted.firstKeptEntryId, "a2");
    assert.equal(omitted.isSplitTurn, true);
    assert.deepEqual(
      [...omitted.messagesToSummarize, ...omitted.turnPrefixMessages].map((e) => e.record.id),
      ["u1", "a1", "u2"],
    );
    // a label at the end names nothing
    const label = at(t, "l1");
    assert.ok(isInvalidCut(label));
    assert.equal(label.code, "no-message");
    assert.deepEqual(label.nearest, ["u3"]);

    const c = new SessionBuilder().user("u1", "q").assistant("a1", { text: "x" }).compaction("c1", "a1");
    assert.deepEqual(at(SessionFile.fromBytes(c.jsonl()), "a1"), { reason: "already-compacted" });
  });

  it("after a compaction: from its kept range on, the previous summary passed along; entries it summarized are refused", () => {
    const b = new SessionBuilder()
      .user("u1", "q1")
      .assistant("a1", { text: "x" })
      .user("u2", "q2")
      .assistant("a2", { text: "y" })
      .compaction("c1", "u2", "the old summary")
      .user("u3", "q3")
      .assistant("a3", { text: "z" })
      .user("u4", "q4");
    const s = SessionFile.fromBytes(b.jsonl());
    const p = prepared(at(s, "u4"));
    assert.equal(p.previousSummary, "the old summary");
    assert.equal(p.previousCompactionId, "c1");
    assert.deepEqual(
      p.messagesToSummarize.map((e) => e.record.id),
      ["u2", "a2", "u3", "a3"],
    );
    const old = at(s, "a1");
    assert.ok(isInvalidCut(old));
    assert.equal(old.code, "summarized");
    assert.deepEqual(old.nearest, ["u2"]);
    assert.deepEqual(validCutPoints(s), ["u2", "a2", "u3", "a3", "u4"]);
    // the kept range's first entry: nothing before it since the compaction
    assert.deepEqual(at(s, "u2"), { reason: "nothing-to-compact" });
    assert.equal(buildProjection(s).leafId, "u4");
  });
});
