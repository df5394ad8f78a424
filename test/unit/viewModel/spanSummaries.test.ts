/**
 * Scoped summaries ("Summarize these messages") in the panel's summaries: listed where their edit
 * is on the path, with the span they replace, in context or not, and "what it lost" — the paths,
 * commands, identifiers and numbers of the span that neither the summary nor the rest of the
 * context contain (the same analysis as a compaction's).
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { SessionFile } from "../../../src/core/read/session";
import { spanSummaryOf } from "../../../src/core/rules/lostItems";
import { planSpan, spanDrafts, spanNote, type SpanPlan } from "../../../src/core/rules/spanSummary";
import { buildProjection } from "../../../src/core/rules/context";
import { buildSummaries } from "../../../src/viewModel/summaries";
import { SessionBuilder } from "../../support/session-builder";

function base(): SessionBuilder {
  return new SessionBuilder()
    .user("u1", "the tests fail in src/parser.ts")
    .assistant("a1", {
      text: "running them",
      calls: [{ id: "c1", name: "bash", arguments: { command: "npm test -- parser" } }],
    })
    .result("r1", "c1", "3 failing", "bash")
    .assistant("a2", { text: "parseHeader returns 404 for an empty line" })
    .user("u2", "fix it")
    .assistant("a3", { text: "done" });
}

/** The base session with the span u1…a2 summarized as `summary` (the drafts appended like the flow does). */
function summarized(summary: string, extra?: (b: SessionBuilder) => void): SessionFile {
  const b = base();
  const session = SessionFile.fromBytes(b.jsonl());
  const plan = planSpan(session, "u1", "a2") as SpanPlan;
  spanDrafts(plan, spanNote(plan, summary), session).forEach((d, i) => b.edit(`e${i}`, d.targetId, d.replacement));
  extra?.(b);
  return SessionFile.fromBytes(b.jsonl());
}

describe("scoped summaries in the panel", () => {
  it("are listed with the span they replace, and what they lost (the span's command, path, identifier and number)", () => {
    const session = summarized("## Goal\nFix the parser tests.");
    const projection = buildProjection(session);
    const summaries = buildSummaries(projection, session, session);
    assert.deepEqual(
      summaries.map((s) => [s.type, s.entryId, s.inContext, s.span]),
      [
        [
          "span_summary",
          "e0",
          true,
          { targetId: "u1", count: 4, tokens: summaries[0]!.span!.tokens, fromId: "u1", toId: "a2" },
        ],
      ],
    );
    assert.equal(summaries[0]!.body, "## Goal\nFix the parser tests.");
    const lost = summaries[0]!.lost!;
    assert.deepEqual(
      lost.items.map((i) => [i.kind, i.text]).sort(),
      [
        ["command", "npm test -- parser"],
        ["identifier", "parseHeader"],
        ["number", "404"],
        ["path", "src/parser.ts"],
      ].sort(),
    );
    // without the reader (a panel built without bodies): not listed; without the session: no lost
    assert.deepEqual(buildSummaries(projection), []);
    assert.equal(buildSummaries(projection, undefined, session)[0]!.lost, undefined);
  });

  it("a summary that keeps them loses nothing; a restored span is no longer in context", () => {
    const keeps = summarized("## Goal\nFix src/parser.ts: `npm test -- parser` fails, parseHeader returns 404.");
    assert.deepEqual(buildSummaries(buildProjection(keeps), keeps, keeps)[0]!.lost!.items, []);
    const restored = summarized("## Goal\nx", (b) =>
      b.edit("back", "u1", { content: "the tests fail in src/parser.ts" }),
    );
    const [s] = buildSummaries(buildProjection(restored), restored, restored);
    assert.equal(s!.inContext, false);
    assert.equal(spanSummaryOf(restored, restored.byId.get("back")!), undefined, "a plain edit is no summary");
  });
});
