/**
 * Tool-call pairing (core/rules/pairing.ts): every row of pi-ai's transformMessages table in
 * /work/notes (c.mjs) plus edits, on hand-made sessions. The same rules are checked against pi-ai
 * itself on random trees in test/conformance/context-edit.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { buildProjection } from "../../../../src/core/rules/context";
import {
  analyzePairing,
  describeFinding,
  toolCallLinks,
  type PairingFinding,
} from "../../../../src/core/rules/pairing";
import { SessionBuilder } from "../../../support/session-builder";

function pairing(b: SessionBuilder) {
  const session = SessionFile.fromBytes(b.jsonl());
  return analyzePairing(buildProjection(session), session);
}

/** `kind result<-call (separator)` per finding. */
function shapes(findings: PairingFinding[]): string[] {
  return findings.map(
    (f) =>
      `${f.kind} ${f.resultEntryId ?? "-"}<-${f.callEntryId ?? "-"}${f.separatorEntryId ? ` (${f.separatorEntryId})` : ""}${f.filler ? " filler" : ""}`,
  );
}

describe("pairing: pi-ai's transformMessages second pass", () => {
  it("a well-paired turn has no findings", () => {
    const b = new SessionBuilder()
      .system("s")
      .user("u1", "q")
      .assistant("a1", { text: "t", calls: [{ id: "c1" }, { id: "c2" }] })
      .result("r1", "c1", "R1")
      .result("r2", "c2", "R2")
      .assistant("a2", { text: "done" });
    assert.deepEqual(pairing(b), { findings: [], errors: 0, fillers: 0 });
  });

  it("(1) a tool result whose call is in no earlier assistant: orphan-result, error", () => {
    const report = pairing(new SessionBuilder().user("u1", "q").result("r1", "zz", "R").assistant("a1"));
    assert.deepEqual(shapes(report.findings), ["orphan-result r1<--"]);
    assert.equal(report.errors, 1);
    assert.equal(report.findings[0]!.severity, "error");
    assert.equal(report.findings[0]!.toolName, "read");
  });

  it("(2a/2b/2c) calls without a result: pi-ai fills 'No result provided' (info) where the call is closed", () => {
    const a = pairing(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }, { id: "c2", name: "bash" }] })
        .result("r1", "c1", "R")
        .user("u2", "next"),
    );
    assert.deepEqual(shapes(a.findings), ["missing-result -<-a1 (u2) filler"]);
    assert.deepEqual(
      { ...a.findings[0], kind: a.findings[0]!.kind },
      {
        kind: "missing-result",
        severity: "info",
        toolCallId: "c2",
        toolName: "bash",
        callEntryId: "a1",
        separatorEntryId: "u2",
        filler: true,
      },
    );
    assert.deepEqual([a.errors, a.fillers], [0, 1]);
    const atEnd = pairing(new SessionBuilder().user("u1", "q").assistant("a1", { calls: [{ id: "c1" }] }));
    assert.deepEqual(shapes(atEnd.findings), ["missing-result -<-a1 filler"]);
    const nextAssistant = pairing(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }] })
        .assistant("a2"),
    );
    assert.deepEqual(shapes(nextAssistant.findings), ["missing-result -<-a1 (a2) filler"]);
  });

  it("(3a/3b) a user-like message between a call and its result: a filler there and the real result orphaned", () => {
    for (const [name, add] of [
      ["user", (b: SessionBuilder) => b.user("x", "interject")],
      ["custom", (b: SessionBuilder) => b.custom("x", "note")],
      ["bash", (b: SessionBuilder) => b.bash("x", "ls", "a b")],
    ] as const) {
      const b = new SessionBuilder().user("u1", "q").assistant("a1", { calls: [{ id: "c1" }] });
      add(b);
      const report = pairing(b.result("r1", "c1", "R"));
      assert.deepEqual(shapes(report.findings), ["separated-result r1<-a1 (x) filler"], name);
      assert.deepEqual([report.errors, report.fillers], [1, 1], name);
    }
  });

  it("a bash command excluded from context (!!) and a system message are transparent", () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }] })
      .bash("x", "ls", "a b", true)
      .system("s2")
      .result("r1", "c1", "R");
    assert.deepEqual(pairing(b).findings, []);
  });

  it("(4a) a failed assistant is dropped, its result stays: dropped-call-result; (4b) aborted likewise", () => {
    for (const stopReason of ["error", "aborted"]) {
      const report = pairing(
        new SessionBuilder()
          .user("u1", "q")
          .assistant("a1", { calls: [{ id: "c1" }], stopReason })
          .result("r1", "c1", "R")
          .user("u2", "again"),
      );
      assert.deepEqual(shapes(report.findings), ["dropped-call-result r1<-a1"], stopReason);
    }
  });

  it("(4c) length / toolUse / stop / deferred assistants are sent", () => {
    for (const stopReason of ["length", "toolUse", "stop", "deferred"]) {
      const report = pairing(
        new SessionBuilder()
          .user("u1", "q")
          .assistant("a1", { calls: [{ id: "c1" }], stopReason })
          .result("r1", "c1", "R"),
      );
      assert.deepEqual(report.findings, [], stopReason);
    }
  });

  it("a failed assistant between a call and its result closes the call: the result comes after the filler", () => {
    const report = pairing(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }] })
        .assistant("e1", { stopReason: "error" })
        .result("r1", "c1", "R"),
    );
    assert.deepEqual(shapes(report.findings), ["separated-result r1<-a1 (e1) filler"]);
  });

  it("two results after a failed assistant closed the call: one filler, the second result a duplicate (seed -1136789131)", () => {
    const report = pairing(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }] })
        .assistant("e1", { stopReason: "aborted" })
        .result("r1", "c1", "R")
        .result("r2", "c1", "R again"),
    );
    assert.deepEqual(shapes(report.findings), ["separated-result r1<-a1 (e1) filler", "duplicate-result r2<-a1"]);
    assert.equal(report.fillers, 1);
    assert.equal(report.errors, 2);
  });

  it("a second result for the same call: duplicate-result", () => {
    const report = pairing(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }] })
        .result("r1", "c1", "R")
        .result("r2", "c1", "R again"),
    );
    assert.deepEqual(shapes(report.findings), ["duplicate-result r2<-a1"]);
  });

  it("edits: a string replacement drops the calls (orphans), calls kept pair, an omitted call orphans, an omitted result is filled", () => {
    const base = () =>
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { text: "long text", calls: [{ id: "c1", arguments: { path: "a.ts" } }] })
        .result("r1", "c1", "R")
        .assistant("a2", { text: "ok" });
    assert.deepEqual(shapes(pairing(base().edit("x", "a1", { content: "short" })).findings), ["orphan-result r1<--"]);
    const kept = {
      content: [
        { type: "text", text: "short" },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } },
      ],
    };
    assert.deepEqual(pairing(base().edit("x", "a1", kept)).findings, []);
    assert.deepEqual(shapes(pairing(base().edit("x", "a1", null)).findings), ["orphan-result r1<--"]);
    assert.deepEqual(shapes(pairing(base().edit("x", "r1", null)).findings), ["missing-result -<-a1 (a2) filler"]);
    // a replacement may also add a call (no result: a filler)
    const added = { content: [{ type: "toolCall", id: "c9", name: "edit", arguments: {} }] };
    assert.deepEqual(shapes(pairing(base().edit("x", "a2", added)).findings), ["missing-result -<-a2 filler"]);
  });

  it("calls summarized away by a compaction orphan their kept results", () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }] })
      .result("r1", "c1", "R")
      .compaction("k1", "r1");
    const report = pairing(b);
    // the compaction summary (a user message) comes first, then the orphaned result
    assert.deepEqual(shapes(report.findings), ["orphan-result r1<--"]);
  });

  it("describes findings in one line", () => {
    const report = pairing(new SessionBuilder().user("u1", "q").result("r1", "zz", "R"));
    assert.equal(
      describeFinding(report.findings[0]!),
      "tool result r1 (read zz) answers no call in the context: providers reject the request",
    );
  });
});

describe("tool-call links", () => {
  it("a result belongs to the nearest earlier assistant whose original or sent calls include its id, omitted ones too", () => {
    const b = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }] })
      .result("r1", "c1", "R")
      .assistant("a2", { calls: [{ id: "c2" }, { id: "c3" }] })
      .result("r2", "c2", "R")
      .result("r3", "c3", "R")
      .result("r4", "zz", "orphan")
      .edit("x1", "a2", null)
      .edit("x2", "a1", { content: "no calls any more" });
    const session = SessionFile.fromBytes(b.jsonl());
    const links = toolCallLinks(buildProjection(session).entries, session);
    assert.deepEqual(Object.fromEntries(links.ownerOf), { r1: "a1", r2: "a2", r3: "a2" });
    assert.deepEqual(Object.fromEntries(links.resultsOf), { a1: ["r1"], a2: ["r2", "r3"] });
  });
});
