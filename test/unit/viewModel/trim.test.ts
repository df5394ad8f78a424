/**
 * Context surgery's view models on the trim session (`test/support/trim-session.ts`): the list and
 * its suggestions with the tokens each saves, request → planner actions, the preview (tokens,
 * gauge, auto-compaction distance, prompt-cache effect, cost formula), the edit marks of the tree
 * and the committed fixture.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import { describe, it } from "node:test";
import { withAppended, type SessionView } from "../../../src/core/read/overlay";
import { SessionFile } from "../../../src/core/read/session";
import { estimateTokens } from "../../../src/core/read/estimate";
import { buildProjection } from "../../../src/core/rules/context";
import { chainContextEdits } from "../../../src/core/rules/contextEdit";
import { prepareContextEdits } from "../../../src/core/rules/editPlan";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { formatDollars } from "../../../src/shared/format";
import { defaultNote, imagesNote, trimActions } from "../../../src/viewModel/trimActions";
import { trimEconomics } from "../../../src/viewModel/trimCost";
import {
  buildTrimList,
  describeEntries,
  editMarks,
  runningTurnIds,
  suggestionSavings,
} from "../../../src/viewModel/trimList";
import { buildTrimPreview, trimHeadline, trimPreviewLines, trimVerb } from "../../../src/viewModel/trimPreview";
import type { TrimPreviewModel } from "../../../src/shared/trim";
import { TRIM_AGENT_DIR, TRIM_FIXTURE, trimSession } from "../../support/trim-session";

const session = () => SessionFile.fromBytes(trimSession().jsonl());
/** pi's estimate of a tool result whose content is `text` (one text block). */
const noteTokens = (text: string) => estimateTokens({ role: "toolResult", content: [{ type: "text", text }] } as never);

describe("trim list", () => {
  it("lists the model-visible items largest first, with kind, call, tokens, age and flags", () => {
    const s = session();
    const list = buildTrimList(s);
    assert.equal(list.leafId, "a10");
    assert.equal(list.itemCount, 21, "every context entry but the system prompt");
    assert.equal(list.editedCount, 0);
    assert.deepEqual(
      list.items.slice(0, 5).map((i) => [i.entryId, i.kind, i.tool, i.tokens, i.turnsAgo, i.failed, i.images]),
      [
        ["r6", "toolResult", "bash: npm run test:all", 6000, 1, false, 0],
        ["r4", "toolResult", "read: src/parser.ts", 1500, 3, false, 0],
        ["r1", "toolResult", "read: src/parser.ts", 1500, 3, false, 0],
        ["r5", "toolResult", 'screenshot: {"url":"http://localhost:3000"}', 1212, 2, false, 1],
        ["r2", "toolResult", "bash: npm test", 754, 3, true, 0],
      ],
    );
    assert.equal(list.items.find((i) => i.entryId === "a8")!.failed, true, "an aborted answer");
    // an answer of tool calls only: its calls once, no text repeating them ("→ bash → bash")
    const a7 = list.items.find((i) => i.entryId === "a7")!;
    assert.deepEqual([a7.tool, a7.text], ["→ bash", ""]);
    const a1 = list.items.find((i) => i.entryId === "a1")!;
    assert.deepEqual([a1.tool, a1.text], ["→ read, bash", "Let me look at the parser and run the tests."]);
    assert.equal(list.items.find((i) => i.entryId === "u4")!.text, "Run only the parser tests instead");
    assert.ok(list.items.every((i) => i.editable));
    assert.equal(list.pureTokens, list.items.reduce((sum, i) => sum + i.tokens, 0) + s.byId.get("s")!.systemTokens);
    assert.equal(buildTrimList(s, { limit: 3 }).items.length, 3);
    assert.equal(buildTrimList(s, { limit: 3 }).itemCount, 21);
  });

  it("suggests each kind once, with the tokens the planner says it saves", () => {
    const s = session();
    const list = buildTrimList(s);
    assert.deepEqual(
      list.suggestions.map((x) => [x.kind, x.title, x.actions.map((a) => `${a.entryId}:${a.choice}`)]),
      [
        ["superseded-read", "1 older read of files read again later", ["r1:default"]],
        ["image", "1 item with images", ["r5:strip-images"]],
        ["large-result", "1 tool result of 4.0k+ tokens", ["r6:default"]],
        ["failed-output", "1 output of failed tool calls", ["r2:default"]],
        ["abandoned-retry", "2 answers of abandoned attempts", ["a7:remove", "a8:remove"]],
      ],
    );
    const saved = Object.fromEntries(list.suggestions.map((x) => [x.kind, x.tokensSaved]));
    const tok = (id: string) => s.byId.get(id)!.tokens;
    // a note replaces a result: its tokens minus the note's
    assert.equal(
      saved["superseded-read"],
      1500 - noteTokens("[pi-context: output of read src/parser.ts removed — 1,500 tokens]"),
    );
    assert.equal(
      saved["large-result"],
      6000 - noteTokens("[pi-context: output of bash npm run test:all removed — 6,000 tokens]"),
    );
    assert.equal(
      saved["failed-output"],
      754 - noteTokens("[pi-context: output of bash npm test removed — 754 tokens]"),
    );
    // the image goes, the text stays with a note
    const text = "Screenshot of http://localhost:3000 (1280x800)";
    assert.equal(saved.image, 1212 - Math.ceil((text.length + imagesNote(1).length) / 4));
    // an abandoned run's answers go with their tool results
    assert.equal(saved["abandoned-retry"], tok("a7") + tok("a8") + tok("r6"));
  });

  it("marks edited items (note shown), never suggests them, and reads their original size", () => {
    const s = session();
    const prep = prepareContextEdits(
      s,
      trimActions(s, [
        { entryId: "r1", choice: "default" },
        { entryId: "u2", choice: "remove" },
        { entryId: "a4", choice: "note", note: "short answer" },
      ]),
    );
    const entries = chainContextEdits(prep.drafts, {
      leafId: prep.leafId,
      newId: (r) => `e${r.size}`,
      timestamp: "2026-01-02T00:00:00.000Z",
    });
    const edited = withAppended(s, entries);
    const list = buildTrimList(edited, { cwd: "/tmp/trim-project" });
    assert.equal(list.leafId, "e2");
    assert.equal(list.editedCount, 3);
    const by = new Map(list.items.map((i) => [i.entryId, i]));
    assert.deepEqual(by.get("r1")!.edit, {
      kind: "replaced",
      editId: "e2", // written last: hides first, then shows (issue 43)
      note: "[pi-context: output of read src/parser.ts removed — 1,500 tokens]",
      originalTokens: 1500,
    });
    assert.deepEqual(by.get("u2")!.edit, { kind: "removed", editId: "e0", originalTokens: s.byId.get("u2")!.tokens });
    assert.equal(by.get("u2")!.tokens, 0);
    assert.equal(by.get("a4")!.edit!.note, "short answer");
    assert.ok(!list.suggestions.some((x) => x.actions.some((a) => a.entryId === "r1")), "r1 is not suggested again");
    const marks = editMarks(edited);
    assert.equal(marks.get("r1")!.edit!.kind, "replaced");
    assert.equal(marks.get("u1")!.editable, true);
    assert.equal(marks.get("u1")!.edit, undefined);
    assert.equal(marks.has("s"), false, "system messages are not editable");
    assert.equal(editMarks(edited), marks, "memoised per projection");
  });

  it("a restored item is no longer marked (its latest edit shows the original content), a re-edit is", () => {
    let s: SessionView = session();
    let n = 0;
    const apply = (items: Parameters<typeof trimActions>[1]) => {
      const prep = prepareContextEdits(s, trimActions(s, items));
      const entries = chainContextEdits(prep.drafts, {
        leafId: prep.leafId,
        newId: () => `e${n++}`,
        timestamp: "2026-01-02T00:00:00.000Z",
      });
      s = withAppended(s, entries);
      return entries.length;
    };
    assert.equal(
      apply([
        { entryId: "r2", choice: "note", note: "npm test failed" },
        { entryId: "u2", choice: "remove" },
      ]),
      2,
    );
    assert.equal(editMarks(s).get("r2")!.edit!.note, "npm test failed");
    assert.equal(
      apply([
        { entryId: "r2", choice: "restore" },
        { entryId: "u2", choice: "restore" },
      ]),
      2,
    );
    const restored = editMarks(s);
    assert.equal(restored.get("r2")!.edit, undefined, "restored: shown as the original");
    assert.equal(restored.get("u2")!.edit, undefined);
    assert.equal(restored.get("r2")!.editable, true);
    const list = buildTrimList(s, { cwd: "/tmp/trim-project" });
    assert.equal(list.editedCount, 0);
    assert.equal(apply([{ entryId: "r2", choice: "note", note: "again" }]), 1);
    assert.equal(editMarks(s).get("r2")!.edit!.note, "again");
  });

  it("the running turn starts at the last user message; entries are described by their call", () => {
    const s = session();
    assert.deepEqual([...runningTurnIds(buildProjection(s))], ["u4", "a9", "r7", "a10"]);
    assert.deepEqual(
      [...describeEntries(s, ["r6", "u4", "nope"])],
      [
        ["r6", "bash: npm run test:all"],
        ["u4", "Run only the parser tests instead"],
      ],
    );
  });

  it("the committed fixture is this builder's output", () => {
    assert.equal(fs.readFileSync(TRIM_FIXTURE, "utf8"), trimSession().jsonl());
  });
});

describe("trim actions", () => {
  it("maps every choice to the planner's action", () => {
    const s = session();
    assert.deepEqual(
      trimActions(s, [
        { entryId: "r1", choice: "default" },
        { entryId: "u1", choice: "remove" },
        { entryId: "r2", choice: "restore" },
        { entryId: "u2", choice: "note" },
        { entryId: "r4", choice: "note" },
        { entryId: "a4", choice: "note", note: "kept short" },
        { entryId: "r5", choice: "strip-images" },
        { entryId: "u3", choice: "strip-images" },
      ]),
      [
        { action: "omit", targetId: "r1" },
        { action: "omit", targetId: "u1" },
        { action: "restore", targetId: "r2" },
        { action: "replace", targetId: "u2", content: "[pi-context: user message removed — 9 tokens]" },
        { action: "omit", targetId: "r4" },
        { action: "replace", targetId: "a4", content: "kept short" },
        {
          action: "replace",
          targetId: "r5",
          content: [
            { type: "text", text: "Screenshot of http://localhost:3000 (1280x800)" },
            { type: "text", text: "[pi-context: 1 image removed]" },
          ],
        },
        { action: "omit", targetId: "u3" },
      ],
    );
    assert.equal(
      defaultNote(s.byId.get("a4")!),
      `[pi-context: assistant message removed — ${s.byId.get("a4")!.tokens} tokens]`,
    );
    assert.deepEqual(trimActions(undefined, [{ entryId: "x", choice: "note" }]), [{ action: "omit", targetId: "x" }]);
  });
});

describe("trim preview", () => {
  const analysisOf = (s: SessionFile) => analyzeLoaded(s, { agentDir: TRIM_AGENT_DIR });

  it("tokens now → after, the gauge and auto-compaction after, the cache effect, cascades, refusals", () => {
    const s = session();
    const inspect = analysisOf(s).inspect;
    assert.equal(inspect.contextTokens, 11900);
    assert.equal(inspect.threshold, 12000);
    const prep = prepareContextEdits(
      s,
      trimActions(s, [
        { entryId: "r4", choice: "default" },
        { entryId: "a7", choice: "remove" },
        { entryId: "s", choice: "remove" },
      ]),
    );
    const p = buildTrimPreview(prep, inspect);
    assert.deepEqual(
      p.edits.map((e) => [e.targetId, e.effect, e.cascade, e.cause]),
      // in the order they are written: what hides first (results before their assistant), then the note
      [
        ["r6", "omit", true, "removed with the assistant message that called it (a7)"],
        ["a7", "omit", false, "requested"],
        ["r4", "note", false, "requested"],
      ],
    );
    assert.deepEqual(p.refused, [
      { targetId: "s", code: "not-editable", message: "Entry s does not contribute editable model content" },
    ]);
    assert.equal(p.tokensNow, 11900);
    assert.equal(p.methodNow, "usage+estimate");
    assert.equal(p.pureTokensNow, prep.pureTokensBefore);
    assert.equal(p.tokensAfter, prep.tokensAfter.tokens);
    assert.equal(
      p.tokensSaved,
      1500 -
        noteTokens("[pi-context: output of read src/parser.ts removed — 1,500 tokens]") +
        s.byId.get("a7")!.tokens +
        6000,
    );
    assert.equal(p.window, 16000);
    assert.equal(p.untilCompactionNow, 100);
    assert.equal(p.untilCompactionAfter, 12000 - p.tokensAfter);
    assert.equal(p.percentAfter, (p.tokensAfter / 16000) * 100);
    assert.equal(p.compactsAfter, false);
    assert.equal(p.levelAfter, "normal");
    // the cached prefix ends before r4: system + everything before it
    const before = ["u1", "a1", "r1", "r2", "a2", "r3", "a3"].reduce((sum, id) => sum + s.byId.get(id)!.tokens, 0);
    assert.deepEqual(p.cache, {
      earliestEntryId: "r4",
      cachedTokens: s.byId.get("s")!.systemTokens + before,
      resentTokens: p.tokensAfter - (s.byId.get("s")!.systemTokens + before),
    });
    assert.equal(p.cost, null);
    assert.match(p.priceNote!, /prices are not known/);
    assert.equal(p.bytes, prep.bytes);
    assert.equal(p.restoreBytes, 0);
    const lines = trimPreviewLines(p);
    assert.match(
      lines[0]!,
      /^Appends 3 context edits in one write \([\d,]+ bytes\), 1 of them to keep tool calls and results paired\.$/,
    );
    assert.match(
      lines[1]!,
      /^Context [\d,]+ → [\d,]+ tokens \(saves [\d,]+\) by pi's estimate \(chars\/4\)\. pi shows 11,900 now \(provider usage \+ estimate\)/,
    );
    assert.match(
      lines[2]!,
      /^Gauge 74\.4% → \d+\.\d% of 16k; [\d,]+ tokens until auto-compaction after \(100 now\)\.$/,
    );
    // past the threshold now: "540 over now", not "-540 now" (trial)
    assert.match(
      trimPreviewLines({ ...p, untilCompactionNow: -540 })[2]!,
      /until auto-compaction after \(540 over now\)\.$/,
    );
    assert.ok(lines.includes("Also removed: tool result r6 — removed with the assistant message that called it (a7)."));
    assert.ok(lines.includes("Refused s: Entry s does not contribute editable model content"));
  });

  it("nothing to write (every request refused or already in place): the context is unchanged, no saving is made up", () => {
    const s = session();
    const inspect = analysisOf(s).inspect;
    const prep = prepareContextEdits(s, [
      { action: "omit", targetId: "zz" },
      { action: "omit", targetId: "s" },
    ]);
    assert.equal(prep.edits.length, 0);
    assert.notEqual(
      prep.pureTokensBefore,
      inspect.contextTokens,
      "the two estimates differ here, so a diff would show",
    );
    const p = buildTrimPreview(prep, inspect);
    assert.equal(p.tokensSaved, 0);
    assert.equal(p.tokensAfter, 11900);
    assert.equal(p.baselineTokens, 11900, "now = after: both pi's usage-based number");
    assert.deepEqual(trimPreviewLines(p), [
      "Nothing would be written.",
      "Context unchanged (11,900 tokens).",
      "Refused zz: Entry zz not found",
      "Refused s: Entry s does not contribute editable model content",
    ]);
  });

  it("Restore original of unedited items writes nothing: now = after (pi's number), saves 0, in every preview", () => {
    const s = session();
    const inspect = analysisOf(s).inspect;
    const items = ["r1", "r4", "u2"].map((entryId) => ({ entryId, choice: "restore" as const }));
    const prep = prepareContextEdits(s, trimActions(s, items));
    assert.equal(prep.edits.length, 0);
    assert.deepEqual(
      prep.unchanged.map((a) => a.targetId),
      ["r1", "r4", "u2"],
    );
    assert.notEqual(prep.pureTokensBefore, prep.tokensAfter.tokens, "the two estimates differ on this session");
    assert.equal(prep.baselineTokens, prep.tokensAfter.tokens);
    assert.equal(prep.baselineTokens, inspect.contextTokens);
    const p = buildTrimPreview(prep, inspect);
    assert.deepEqual([p.baselineTokens, p.tokensAfter, p.tokensSaved], [11900, 11900, 0]);
    assert.equal(trimHeadline(p), "Context unchanged (11,900 tokens)");
    // a suggestion whose actions change nothing saves nothing (not the gap between the two estimates)
    assert.equal(suggestionSavings(s, items), 0);
  });

  it("what a plan does as a verb: restore when every requested edit restores, trim when none does, edit for both", () => {
    const e = (effect: string, cascade = false) => ({ effect, cascade }) as TrimPreviewModel["edits"][number];
    assert.equal(trimVerb({ edits: [e("note"), e("omit", true)] }), "trim");
    assert.equal(trimVerb({ edits: [e("restore"), e("restore", true)] }), "restore");
    assert.equal(trimVerb({ edits: [e("restore"), e("omit")] }), "edit");
    assert.equal(trimVerb({ edits: [e("omit"), e("restore", true)] }), "trim", "a cascade is not what was asked");
    assert.equal(trimVerb({ edits: [] }), "trim");
  });

  it("a restore says what it costs in file bytes; prices give the cost of the cache effect", () => {
    const s0 = session();
    const first = prepareContextEdits(s0, [{ action: "omit", targetId: "r6" }]);
    const s = withAppended(
      s0,
      chainContextEdits(first.drafts, { leafId: "a10", newId: () => "e0", timestamp: "2026-01-02T00:00:00.000Z" }),
    );
    const prep = prepareContextEdits(s, [{ action: "restore", targetId: "r6" }]);
    const p = buildTrimPreview(prep, analysisOf(s0).inspect, {
      prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      cache: "warm",
    });
    assert.equal(p.edits[0]!.effect, "restore");
    assert.ok(p.restoreBytes > 24000, `${p.restoreBytes}`);
    assert.equal(p.restoreBytes, p.bytes);
    assert.ok(p.tokensSaved < 0, "a restore adds tokens");
    assert.ok(
      trimPreviewLines(p).some(
        (l) =>
          l ===
          `Restoring writes the original content into the session file again: ${p.restoreBytes.toLocaleString("en-US")} bytes.`,
      ),
    );
    const B = p.pureTokensNow;
    const A = p.tokensAfter;
    const R = p.cache!.resentTokens;
    const r = 0.3 / 1e6;
    const w = 3.75 / 1e6;
    assert.ok(Math.abs(p.cost!.oneOffExtra - (R * w + (A - R) * r - B * r + (B - A) * r)) < 1e-12);
    assert.ok(Math.abs(p.cost!.perRequestSaving - (B - A) * r) < 1e-12);
    assert.equal(p.cost!.breakEvenRequests, null, "a restore never pays off in tokens saved");
    const costLine = trimPreviewLines(p).find((l) => l.startsWith("Cost: "));
    assert.ok(costLine?.endsWith(" more per request."), `a restore costs more per request: ${costLine}`);
    assert.ok(!costLine!.includes("−") && !costLine!.includes("less"), costLine);
    assert.equal(
      costLine,
      `Cost: ${formatDollars(p.cost!.oneOffExtra)} once on the next request, then ${formatDollars(-p.cost!.perRequestSaving)} more per request.`,
    );
    assert.match(costLine!, /^Cost: -?\$\d+\.\d{3,} once on the next request, then \$\d+\.\d{3,} more per request\.$/);
  });
});

describe("trim cost", () => {
  const prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
  it("a trim late in a warm prefix pays off at once; an early one after some requests; without a cache at once", () => {
    // 100k → 60k, only the last 2k re-written: 2k·3.75 + 58k·0.3 < 100k·0.3, cheaper already on the next request
    const late = trimEconomics({
      tokensBefore: 100_000,
      tokensAfter: 60_000,
      rewrittenTokens: 2_000,
      prices,
      cache: "warm",
    });
    assert.equal(late.breakEvenRequests, 1);
    assert.ok(late.perRequestSaving > 0);
    // 100k → 90k with all 90k re-written: 90k·(3.75 − 0.3) extra once, saves 10k·0.3 per request
    const early = trimEconomics({
      tokensBefore: 100_000,
      tokensAfter: 90_000,
      rewrittenTokens: 90_000,
      prices,
      cache: "warm",
    });
    assert.ok(Math.abs(early.oneOffExtra - (90_000 * (3.75 - 0.3)) / 1e6) < 1e-9);
    assert.ok(Math.abs(early.perRequestSaving - (10_000 * 0.3) / 1e6) < 1e-12);
    // first request: without 100k·r, with 90k·w → n = 1 + ceil((90k·w − 100k·r) / (10k·r))
    assert.equal(early.breakEvenRequests, 1 + Math.ceil((90_000 * 3.75 - 100_000 * 0.3) / (10_000 * 0.3)));
    const none = trimEconomics({
      tokensBefore: 100_000,
      tokensAfter: 90_000,
      rewrittenTokens: 90_000,
      prices,
      cache: "none",
    });
    assert.equal(none.warmRate.kind, "input");
    assert.equal(none.breakEvenRequests, 1);
    const cold = trimEconomics({
      tokensBefore: 100_000,
      tokensAfter: 90_000,
      rewrittenTokens: 90_000,
      prices,
      cache: "cold",
    });
    assert.equal(cold.breakEvenRequests, 1, "an expired cache is re-written anyway");
  });
});
