/**
 * The session doctor (src/core/health/): one test per kind of finding, on purpose-built sessions
 * (test/support/session-builder.ts), asserting the code, severity, the entries involved, what the
 * message says pi and providers do, and the repair offered. pi's own verdicts on the repairable
 * kinds are checked in test/conformance/doctor.test.ts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionBuilder } from "../../../support/session-builder";
import { appended, codes, doctorOf, repairOf, withCode } from "../../../support/doctor";

const base = () => new SessionBuilder().user("u1", "question").assistant("a1", { text: "answer", usage: 50 });

describe("doctor: tool pairing in what pi sends", () => {
  it("orphan-result: a result whose call no earlier answer made — error, omitted by a context edit", () => {
    const { report } = doctorOf(base().result("t1", "zz", "out").assistant("a2", { text: "x" }).jsonl());
    const [f] = withCode(report, "orphan-result");
    assert.ok(f);
    assert.equal(f.severity, "error");
    assert.equal(f.entryId, "t1");
    assert.equal(f.line, 4);
    assert.match(f.message, /providers reject the whole request/);
    assert.match(f.message, /No tool call found for function call output/);
    assert.deepEqual(f.repair && f.repair.kind === "context-edit" && f.repair.action, {
      action: "omit",
      targetId: "t1",
    });
    assert.equal(report.errors, 1);
  });

  it("dropped-call-result: the result of a failed answer's call — error, related to that answer", () => {
    const b = base()
      .user("u2", "again")
      .assistant("a2", { calls: [{ id: "c1" }], stopReason: "error" })
      .result("t1", "c1", "out")
      .assistant("a3", { text: "ok" });
    const [f] = withCode(doctorOf(b.jsonl()).report, "dropped-call-result");
    assert.ok(f);
    assert.equal(f.entryId, "t1");
    assert.deepEqual(f.relatedIds, ["a2"]);
    assert.match(f.message, /pi-ai drops failed \(error\/aborted\) answers/);
  });

  it("separated-result: a message between a call and its result — error, names the call and the message", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .custom("cm", "an extension's note")
      .result("t1", "c1", "out");
    const [f] = withCode(doctorOf(b.jsonl()).report, "separated-result");
    assert.ok(f);
    assert.deepEqual([f.entryId, ...f.relatedIds], ["t1", "a2", "cm"]);
    assert.match(f.message, /custom message cm \(line 5\) comes between them/);
    assert.match(f.repair!.description, /the call keeps pi-ai's "No result provided"/);
  });

  it("duplicate-result: a second result for one call — error on the second", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .result("t1", "c1", "one")
      .result("t2", "c1", "two");
    const { report } = doctorOf(b.jsonl());
    assert.deepEqual(
      codes(report).filter((c) => c.includes("result")),
      ["error:duplicate-result@t2"],
    );
  });

  it("two results after a failed answer closed the call: the first separated, the second a duplicate (rules/pairing, seed -1136789131)", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .assistant("e1", { stopReason: "aborted" })
      .result("r1", "c1", "R")
      .result("r2", "c1", "R again")
      .assistant("a3", { text: "end" });
    const d = doctorOf(b.jsonl());
    assert.deepEqual(
      codes(d.report).filter((c) => c.includes("result")),
      ["error:separated-result@r1", "error:duplicate-result@r2"],
    );
    const after = doctorOf(appended(b.jsonl(), repairOf(d))).report;
    assert.deepEqual(
      codes(after).filter((c) => c.startsWith("error:")),
      [],
    );
  });

  it("missing-result: a call without a result — info (pi-ai fills it), no repair", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1", name: "bash" }] })
      .user("u2", "next");
    const [f] = withCode(doctorOf(b.jsonl()).report, "missing-result");
    assert.ok(f);
    assert.equal(f.severity, "info");
    assert.equal(f.entryId, "a2");
    assert.deepEqual(f.relatedIds, ["u2"]);
    assert.match(f.message, /pi-ai sends "No result provided"/);
    assert.equal(f.repair, null);
  });

  it("missing-result: not for the calls of a turn in progress (the end of the context), until something follows without their results", () => {
    const running = base()
      .assistant("a2", {
        calls: [
          { id: "c1", name: "bash" },
          { id: "c2", name: "read" },
        ],
      })
      .result("t1", "c1", "out");
    assert.deepEqual(withCode(doctorOf(running.jsonl()).report, "missing-result"), [], "c2 is still running");
    const stopped = running.user("u2", "go on");
    const [f] = withCode(doctorOf(stopped.jsonl()).report, "missing-result");
    assert.equal(f?.entryId, "a2");
    assert.deepEqual(f?.relatedIds, ["u2"]);
  });

  it("a well-paired session has no pairing findings", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .result("t1", "c1", "out")
      .assistant("a3", { text: "ok" });
    assert.deepEqual(codes(doctorOf(b.jsonl()).report), []);
  });
});

describe("doctor: references", () => {
  it("missing-parent: the orphan subtree is its own root; a warning when the current branch starts there", () => {
    const b = base().user("o1", "lost", "gone").assistant("o2", { text: "x" }).user("o3", "more");
    const [f] = withCode(doctorOf(b.jsonl()).report, "missing-parent");
    assert.ok(f);
    assert.equal(f.severity, "warning");
    assert.equal(f.entryId, "o1");
    assert.match(
      f.message,
      /names parent gone, which is not in the file: it and its 2 later entries form a separate tree/,
    );
    assert.match(f.message, /The current branch starts there: pi sends nothing from before it/);
    // off the current branch: info
    const off = base().user("o1", "lost", "gone").user("u9", "back", "a1");
    assert.deepEqual(
      withCode(doctorOf(off.jsonl()).report, "missing-parent").map((x) => [x.severity, x.entryId]),
      [["info", "o1"]],
    );
  });

  it("parent-cycle off the branch: a warning naming the cycle's entries", () => {
    const b = base().user("x", "x", "y").user("y", "y", "x").user("u2", "on", "a1");
    const { report } = doctorOf(b.jsonl());
    const [f] = withCode(report, "parent-cycle");
    assert.ok(f);
    assert.equal(f.severity, "warning");
    assert.deepEqual([f.entryId, ...f.relatedIds].sort(), ["x", "y"]);
    assert.equal(withCode(report, "path-cycle").length, 0);
  });

  it("path-cycle: the leaf's branch loops — error, a leaf marker on the newest clean entry", () => {
    const b = base().user("u2", "fine").user("x", "x", "y").user("y", "y", "x");
    const { report } = doctorOf(b.jsonl());
    const [f] = withCode(report, "path-cycle");
    assert.ok(f);
    assert.equal(f.severity, "error");
    assert.equal(f.entryId, "y");
    assert.match(f.message, /pi 1\.6\.0 follows parentId from the leaf without end/);
    assert.deepEqual(f.repair, {
      kind: "leaf-marker",
      targetId: "u2",
      description: "append a pi-context/leaf marker on user message u2 (line 4): pi resumes there instead of looping",
    });
    assert.equal(withCode(report, "parent-cycle").length, 0, "the cycle is reported once");
  });

  it("duplicate-id: the later entry wins; tree-hang when the duplicates make a loop in pi's getTree", () => {
    const plain = base().user("X", "first").user("X", "second", "a1").user("u3", "leaf");
    const d1 = doctorOf(plain.jsonl()).report;
    assert.deepEqual(
      withCode(d1, "duplicate-id").map((f) => [f.severity, f.entryId, f.line]),
      [["warning", "X", 5]],
    );
    assert.match(withCode(d1, "duplicate-id")[0]!.message, /pi keeps the later entry/);
    assert.equal(withCode(d1, "tree-hang").length, 0);
    // X (parent a1), Q (parent X), X again (parent Q): pi's node X hangs under a1 and under Q, Q under X.
    const loop = base().user("X", "first").user("Q", "q").user("X", "again", "Q").user("u9", "leaf", "a1");
    const d2 = doctorOf(loop.jsonl()).report;
    const [hang] = withCode(d2, "tree-hang");
    assert.ok(hang);
    assert.equal(hang.severity, "error");
    assert.deepEqual([hang.entryId, ...hang.relatedIds].sort(), ["Q", "X"]);
    assert.match(hang.message, /getTree\) walks them forever/);
    assert.match(hang.message, /Opening and prompting still work/, "the current branch (u9 → a1) does not loop");
    assert.equal(hang.repair, null);
    // the same loop with the leaf on it: opening hangs too, and the message does not say otherwise
    const onPath = base().user("X", "first").user("Q", "q").user("X", "again", "Q");
    const d3 = doctorOf(onPath.jsonl()).report;
    assert.equal(withCode(d3, "path-cycle").length, 1);
    const [hang3] = withCode(d3, "tree-hang");
    assert.ok(hang3);
    assert.doesNotMatch(hang3.message, /still work/);
    assert.match(hang3.message, /opening the session hangs as well \(see path-cycle/);
  });

  it("context edits: target missing, off the branch, not editable (omission warns), invalid replacement (error, restore)", () => {
    const b = base()
      .user("side", "other branch", "u1")
      .user("u2", "main", "a1")
      .bash("bx", "ls", "files")
      .edit("e1", "nowhere", null)
      .edit("e2", "side", null)
      .edit("e3", "bx", null)
      .edit("e4", "u2", { content: "fine" })
      .edit("e5", "a1", { text: "wrong shape" });
    const { report } = doctorOf(b.jsonl());
    const rows = report.findings
      .filter((f) => f.code.startsWith("edit-"))
      .map((f) => [f.code, f.severity, f.entryId, ...f.relatedIds]);
    assert.deepEqual(rows, [
      ["edit-invalid-replacement", "error", "e5", "a1"],
      ["edit-target-not-editable", "warning", "e3", "bx"],
      ["edit-target-missing", "info", "e1"],
      ["edit-target-off-path", "info", "e2", "side"],
    ]);
    const invalid = withCode(report, "edit-invalid-replacement")[0]!;
    assert.deepEqual(invalid.repair?.kind === "context-edit" && invalid.repair.action, {
      action: "restore",
      targetId: "a1",
    });
    assert.match(withCode(report, "edit-target-missing")[0]!.message, /"Entry nowhere not found"/);
    assert.match(withCode(report, "edit-target-off-path")[0]!.message, /"Entry side is not on the active branch"/);
    // a later valid edit of the same target supersedes the invalid one
    const fixed = doctorOf(b.edit("e6", "a1", { content: [{ type: "text", text: "ok" }] }).jsonl()).report;
    assert.equal(withCode(fixed, "edit-invalid-replacement").length, 0);
  });

  it("firstKeptEntryId: not before the compaction on the branch (warning), or on a tool result (warning + the orphan)", () => {
    const missing = base().user("u2", "q").compaction("c1", "elsewhere").user("u3", "after");
    const [m] = withCode(doctorOf(missing.jsonl()).report, "first-kept-missing");
    assert.ok(m);
    assert.equal(m.entryId, "c1");
    assert.match(m.message, /keeps from elsewhere, which is not in the file: pi finds nothing to keep/);

    const onResult = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .result("t1", "c1", "out")
      .assistant("a3", { text: "done" })
      .compaction("k1", "t1")
      .user("u3", "after");
    const { report } = doctorOf(onResult.jsonl());
    assert.deepEqual(
      withCode(report, "first-kept-tool-result").map((f) => [f.entryId, f.relatedIds]),
      [["k1", ["t1"]]],
    );
    assert.deepEqual(
      codes(report).filter((c) => c.startsWith("error")),
      ["error:orphan-result@t1"],
    );
  });

  it("branch-summary-from-missing: info; pi's 'root' and existing ids are fine", () => {
    const b = base()
      .branchSummary("bs1", "gone", "s")
      .branchSummary("bs2", "root", "s")
      .branchSummary("bs3", "u1", "s");
    const found = withCode(doctorOf(b.jsonl()).report, "branch-summary-from-missing");
    assert.deepEqual(
      found.map((f) => [f.severity, f.entryId]),
      [["info", "bs1"]],
    );
    assert.match(found[0]!.message, /not sent to the model/);
  });
});

describe("doctor: failures at the end of the branch", () => {
  const failing = (errorMessage: string, n = 1, tail?: (b: SessionBuilder) => void) => {
    const b = base().user("u2", "do it");
    for (let i = 0; i < n; i++) {
      b.assistant(`f${i}`, { stopReason: "error", errorMessage });
      if (i < n - 1) b.edit(`e${i}`, `f${i}`, null);
    }
    tail?.(b);
    return b.jsonl();
  };

  it("context-overflow by pi-ai's patterns: error when pi cannot recover by itself (auto-compaction off)", () => {
    const text = '400: {"message":"This model\'s maximum context length is 16000 tokens. However, ..."}';
    const off = doctorOf(failing(text), { settings: { compaction: { enabled: false } } }).report;
    const [f] = withCode(off, "context-overflow");
    assert.ok(f);
    assert.equal(f.severity, "error");
    assert.equal(f.entryId, "f0");
    assert.match(f.message, /Auto-compaction is off \(compaction\.enabled: false in .*settings\.json\)/);
    assert.match(f.message, /compact now \(Pi Context: Compact Session…, or pi-context compact\)/);
    // nothing to compact with the defaults (keepRecentTokens 20000 covers everything): still an error
    assert.equal(withCode(doctorOf(failing(text)).report, "context-overflow")[0]!.severity, "error");
    // with something to compact pi compacts before the next prompt: a warning, compaction offered
    const can = doctorOf(failing(text), { settings: { compaction: { keepRecentTokens: 1 } } }).report;
    const [w] = withCode(can, "context-overflow");
    assert.equal(w!.severity, "warning");
    assert.match(w!.message, /Before the next prompt pi omits this attempt and runs an overflow compaction/);
    assert.equal(w!.repair?.kind, "compaction");
    // a compaction after the failure: resolved
    const resolved = failing(text, 1, (b) => b.edit("ez", "f0", null).compaction("k", "u2"));
    assert.equal(withCode(doctorOf(resolved).report, "context-overflow").length, 0);
  });

  it("context-overflow, silent: a successful answer whose input is over the window", () => {
    const b = base()
      .user("u2", "q")
      .assistant("s1", { stopReason: "stop", text: "ok", usage: { input: 900, cacheRead: 200 } });
    const [f] = withCode(doctorOf(b.jsonl(), { window: 1000 }).report, "context-overflow");
    assert.ok(f);
    assert.match(f.message, /its usage \(1100 input tokens\) is over the context window of 1000/);
    assert.equal(withCode(doctorOf(b.jsonl(), { window: 2000 }).report, "context-overflow").length, 0);
  });

  it("rate limits that mention tokens are not overflows (pi-ai's NON_OVERFLOW_PATTERNS)", () => {
    const { report } = doctorOf(failing("Rate limit: too many tokens per minute"));
    assert.equal(withCode(report, "context-overflow").length, 0);
    assert.match(withCode(report, "last-answer-error")[0]!.message, /pi retries errors like this itself/);
  });

  it("repeated-failures: several failed attempts in a row (pi's retries), the last one named", () => {
    const { report } = doctorOf(failing("503: upstream overloaded", 3));
    const [f] = withCode(report, "repeated-failures");
    assert.ok(f);
    assert.equal(f.severity, "warning");
    assert.equal(f.entryId, "f2");
    assert.deepEqual(f.relatedIds, ["f1", "f0"]);
    assert.match(f.message, /^3 answers in a row failed/);
    assert.match(f.message, /"503: upstream overloaded"/);
  });

  it("last-answer-error: what pi does and what to do depends on the error (quota, retryable, other)", () => {
    const quota = withCode(
      doctorOf(failing('429 {"error":{"code":"insufficient_quota"}}')).report,
      "last-answer-error",
    );
    assert.match(quota[0]!.message, /quota, budget or plan limit: pi does not retry it/);
    const other = withCode(doctorOf(failing("401 invalid api key")).report, "last-answer-error");
    assert.match(other[0]!.message, /pi does not retry this kind of error/);
    assert.match(other[0]!.message, /pi-ai drops failed answers from what it sends and pi ignores their usage/);
  });

  it("last-answer-aborted: info; a later prompt or a good answer clears the tail findings", () => {
    const b = base().user("u2", "q").assistant("ab", { stopReason: "aborted" });
    assert.deepEqual(
      withCode(doctorOf(b.jsonl()).report, "last-answer-aborted").map((f) => [f.severity, f.entryId]),
      [["info", "ab"]],
    );
    assert.equal(withCode(doctorOf(b.user("u3", "go on").jsonl()).report, "last-answer-aborted").length, 0);
    const retried = failing("503 overloaded", 1, (x) => x.edit("ez", "f0", null).assistant("ok", { text: "fine" }));
    assert.deepEqual(
      codes(doctorOf(retried).report).filter((c) => /answer|failures|overflow/.test(c)),
      [],
    );
  });
});

describe("doctor: the file", () => {
  it("bom: error (pi cannot open it); the rest of the file is still checked", () => {
    const { report } = doctorOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(base().jsonl())]));
    const [f] = withCode(report, "bom");
    assert.ok(f);
    assert.equal(f.severity, "error");
    assert.equal(f.line, 1);
    assert.match(f.message, /pi 1\.6\.0 cannot parse its header/);
  });

  it("not-a-session: error", () => {
    assert.deepEqual(codes(doctorOf('{"type":"message","id":"x"}\n').report).slice(0, 1), ["error:not-a-session"]);
  });

  it("lines pi skips, with their line numbers (the reading diagnostic's code)", () => {
    const lines = base().jsonl().split("\n");
    lines.splice(2, 0, '{"type":"message","id":"br', "null", '{"type":"message"}');
    const found = doctorOf(lines.join("\n")).report.findings.filter((f) => f.line !== undefined && f.line < 6);
    assert.deepEqual(
      found.map((f) => [f.code, f.line]),
      [
        ["malformed-line", 3],
        ["not-an-entry", 4],
        ["missing-id", 5],
      ],
    );
    assert.match(found[0]!.message, /^unparseable line 3 .*pi skips this line too/);
  });

  it("truncated-final-line: a warning that says pi repairs it on open and pi-context will not append", () => {
    const text = base().jsonl() + '{"type":"message","id":"a2","parentId":"a1","message":{"role":"assist';
    const [f] = withCode(doctorOf(text).report, "truncated-final-line");
    assert.ok(f);
    assert.equal(f.line, 4);
    assert.match(f.message, /pi-context appends nothing after an incomplete line/);
  });

  it("old-version: pi rewrites v1/v2 files in place when it opens them", () => {
    const v2 = base().jsonl().replace('"version":3', '"version":2');
    const [f] = withCode(doctorOf(v2).report, "old-version");
    assert.ok(f);
    assert.equal(f.severity, "warning");
    assert.match(f.message, /rewrites this file in place when it opens it .* keeps no backup/);
  });

  it("extra-header and unknown-type: info", () => {
    const b = base().entry("w1", "weird_entry", {});
    const text = b.jsonl() + '{"type":"session","version":3,"id":"again"}\n';
    assert.deepEqual(
      codes(doctorOf(text).report).filter((c) => /header|type/.test(c)),
      ["info:unknown-type@w1", "info:extra-header"],
    );
  });

  it("large-entry: a huge line (in the context: its tokens; a warning when it is a quarter of the window)", () => {
    const b = base()
      .assistant("a2", { calls: [{ id: "c1" }] })
      .result("big", "c1", "x".repeat(40000));
    const small = doctorOf(b.jsonl(), { largeEntryBytes: 10000, window: 1000000 }).report;
    const [f] = withCode(small, "large-entry");
    assert.ok(f);
    assert.equal(f.severity, "info");
    assert.match(f.message, /tool result big \(read, line 5\) is 0\.0 MB on one line.*in the context \(≈10,000 tokens/);
    assert.match(f.message, /Removing it from the context with a context edit/);
    const heavy = doctorOf(b.jsonl(), { largeEntryBytes: 10000, window: 30000 }).report;
    assert.equal(withCode(heavy, "large-entry")[0]!.severity, "warning");
  });

  it("slow-load: a file pi parses at every open", () => {
    const { report } = doctorOf(base().jsonl(), { slowLoadBytes: 100 });
    const [f] = withCode(report, "slow-load");
    assert.ok(f);
    assert.match(f.message, /pi 1\.6\.0 reads and parses every line at every open/);
  });
});

describe("doctor: settings for this model", () => {
  it("reserve-exceeds-window: error (pi compacts after every answer), with the file it is set in", () => {
    const { report } = doctorOf(base().jsonl(), { window: 16000, settings: { compaction: { reserveTokens: 16000 } } });
    const [f] = withCode(report, "reserve-exceeds-window");
    assert.ok(f);
    assert.equal(f.severity, "error");
    assert.equal(f.source, "settings");
    assert.match(f.file!, /settings\.json$/);
    assert.match(f.message, /threshold \(window − reserveTokens\) is 0, so pi compacts after every answer/);
  });

  it("keep-exceeds-threshold: warning", () => {
    const { report } = doctorOf(base().jsonl(), {
      window: 16000,
      settings: { compaction: { reserveTokens: 4000, keepRecentTokens: 12000 } },
    });
    assert.deepEqual(codes(report), ["warning:keep-exceeds-threshold"]);
  });

  it("unknown-window: warning naming the model", () => {
    const [f] = withCode(doctorOf(base().jsonl(), { window: 0 }).report, "unknown-window");
    assert.ok(f);
    assert.match(f.message, /does not know the context window of p\/m/);
  });

  it('setting-not-boolean: compaction.enabled "false" (a string) leaves pi\'s auto-compaction on; said, with the file', () => {
    for (const value of ["false", "no", 1]) {
      const { report } = doctorOf(base().jsonl(), { window: 16000, settings: { compaction: { enabled: value } } });
      const [f] = withCode(report, "setting-not-boolean");
      assert.ok(f, String(value));
      assert.equal(f.severity, "warning");
      assert.match(f.file!, /settings\.json$/);
      assert.match(
        f.message,
        /compaction\.enabled is .* not true or false: pi tests it for truth, so auto-compaction is on/,
      );
    }
    // 0 and "" are falsy: pi's auto-compaction is off, also worth saying
    const [off] = withCode(
      doctorOf(base().jsonl(), { window: 16000, settings: { compaction: { enabled: 0 } } }).report,
      "setting-not-boolean",
    );
    assert.match(off!.message, /so auto-compaction is off/);
    for (const value of [true, false, undefined])
      assert.equal(
        withCode(
          doctorOf(base().jsonl(), { window: 16000, settings: { compaction: { enabled: value } } }).report,
          "setting-not-boolean",
        ).length,
        0,
      );
  });

  it("unknown-window with an invalid models.json: blames the file, not a missing entry", () => {
    const { report } = doctorOf(base().jsonl(), { window: 0, modelsJson: "{ not json" });
    const [f] = withCode(report, "unknown-window");
    assert.match(f!.message, /models\.json is invalid, so pi ignores the whole file/);
    assert.doesNotMatch(f!.message, /add it with its contextWindow/);
  });

  it("invalid-setting and models-json: warnings from what the gauge already reports", () => {
    const { report } = doctorOf(base().jsonl(), {
      settings: { compaction: { reserveTokens: -5 } },
      modelsJson: "{ not json",
    });
    assert.deepEqual(
      report.findings.filter((f) => f.source !== "session").map((f) => [f.code, f.source]),
      [
        ["unknown-window", "settings"],
        ["invalid-setting", "settings"],
        ["models-json", "models"],
      ],
    );
    assert.match(
      withCode(report, "invalid-setting")[0]!.message,
      /pi 1\.6\.0 throws this error when it reads the setting/,
    );
  });
});
