/**
 * The doctor's findings in the words of the surfaces (src/viewModel/health.ts, problems.ts): the
 * gauge's health badge and its `$(error)` text, the panel's problems (ids, files, lines, related
 * entries, repair kinds), and what a tree row shows about its entry.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { findingsByEntry, healthBadge, HEALTH_TITLES, rowHealth } from "../../../src/viewModel/health";
import { problemsOf } from "../../../src/viewModel/problems";
import { SessionBuilder } from "../../support/session-builder";
import { doctorOf } from "../../support/doctor";

const broken = () =>
  new SessionBuilder()
    .user("u1", "q")
    .assistant("a1", { calls: [{ id: "c1" }] })
    .user("u2", "interject")
    .result("t1", "c1", "out")
    .assistant("a2", { text: "x", usage: 10 });

describe("health view models", () => {
  it("the badge: counts with icons, repairable, the command link; no problems", () => {
    const { report } = doctorOf(broken().jsonl());
    assert.equal(
      healthBadge(report),
      "**Session health:** $(error) 1 error — 1 repairable · [Check Session Health…](command:piContext.checkHealth)",
    );
    assert.equal(
      healthBadge(
        doctorOf(new SessionBuilder().user("u1", "q").assistant("a1", { text: "a", usage: 5 }).jsonl()).report,
      ),
      "**Session health:** $(pass) no problems found",
    );
  });

  it("the gauge: $(error) in the text, the badge and the findings in the tooltip, the error in the label", () => {
    const { session, analysis } = doctorOf(broken().jsonl());
    const v = buildGaugeView({
      session: { file: "/s.jsonl", analysis, pinned: false, updatedAt: 0, modifiedAt: session.mtimeMs },
      margin: 1000,
    });
    assert.match(v.text, /^\$\(error\) π /);
    assert.ok(v.tooltip.includes("**Session health:** $(error) 1 error — 1 repairable"), v.tooltip);
    assert.ok(v.tooltip.includes("- $(error) **Tool result separated from its call** — tool result t1"), v.tooltip);
    assert.match(v.ariaLabel, /session health: 1 error/);
  });

  it("problems: the doctor's order, ids p0…, the session file for entries and lines, related entries, repair kind", () => {
    const { report } = doctorOf(broken().jsonl(), { settings: { compaction: { reserveTokens: "x" } } });
    const problems = problemsOf(report, "/s.jsonl");
    assert.deepEqual(
      problems.map((p) => [p.id, p.severity, p.code, p.title, p.entryId, p.relatedIds, p.line, p.repair, p.source]),
      [
        [
          "p0",
          "error",
          "separated-result",
          "Tool result separated from its call",
          "t1",
          ["a1", "u2"],
          5,
          "context-edit",
          "session",
        ],
        [
          "p1",
          "warning",
          "invalid-setting",
          "Invalid pi setting",
          undefined,
          undefined,
          undefined,
          undefined,
          "settings",
        ],
      ],
    );
    assert.equal(problems[0]!.file, "/s.jsonl");
    assert.match(problems[1]!.file!, /settings\.json$/);
  });

  it("tree rows: the entry's own finding, involvement in another's, several", () => {
    const { report } = doctorOf(broken().jsonl());
    const byEntry = findingsByEntry(report);
    assert.deepEqual([...byEntry.keys()].sort(), ["a1", "t1", "u2"]);
    const t1 = rowHealth("t1", byEntry.get("t1")!)!;
    assert.equal(t1.severity, "error");
    assert.equal(t1.badge, "✖ Tool result separated from its call");
    assert.match(t1.lines[0]!.text, /^Tool result separated from its call: tool result t1/);
    assert.equal(rowHealth("a1", byEntry.get("a1")!)!.badge, "✖ Tool result separated from its call (involved)");
    // an entry with two findings: its own and one it is involved in
    const two = doctorOf(
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }, { id: "c2" }] })
        .user("u2", "interject")
        .result("t1", "c1", "out")
        .assistant("a2", { text: "x", usage: 10 })
        .jsonl(),
    ).report;
    const a1 = rowHealth("a1", findingsByEntry(two).get("a1")!)!;
    assert.equal(a1.badge, "✖ 2 problems");
    assert.deepEqual(
      a1.lines.map((l) => [l.severity, l.text.split(":")[0]]),
      [
        ["error", "Tool result separated from its call (involved)"],
        ["info", "Tool call without result"],
      ],
    );
    assert.equal(rowHealth("zz", []), undefined);
  });

  it("every code has a title", () => {
    for (const [code, title] of Object.entries(HEALTH_TITLES)) assert.ok(title && title !== code, code);
  });
});
