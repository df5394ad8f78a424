/** Our summariser prompts: pi's request layouts and section structure, in our own words. */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  BRANCH_SUMMARY_PREAMBLE,
  branchSummaryText,
  buildBranchSummaryRequest,
  buildHistoryRequest,
  buildTurnPrefixRequest,
  COMPACTION_INSTRUCTIONS,
  COMPACTION_UPDATE_INSTRUCTIONS,
  mergeSplitTurn,
  SUMMARY_SYSTEM_PROMPT,
  TURN_PREFIX_INSTRUCTIONS,
} from "../../../../src/core/flows/prompts";
import { checkSummaryResult, combineUsage, SummarizerError } from "../../../../src/core/flows/summarizer";
import { countTiktokens, fitRequest, MIN_SUMMARY_OUTPUT_TOKENS } from "../../../../src/core/flows/fit";
import type { Summarizer } from "../../../../src/core/flows/summarizer";

const HEADINGS = [
  "## Goal",
  "## Constraints & Preferences",
  "## Progress",
  "### Done",
  "### In Progress",
  "### Blocked",
  "## Key Decisions",
  "## Next Steps",
  "## Critical Context",
];

function headingsIn(text: string): string[] {
  return text.split("\n").filter((l) => /^#{2,3} /.test(l));
}

describe("prompts", () => {
  it("compaction instructions ask for pi's headings in pi's order (first and update variant)", () => {
    assert.deepEqual(headingsIn(COMPACTION_INSTRUCTIONS), HEADINGS);
    assert.deepEqual(headingsIn(COMPACTION_UPDATE_INSTRUCTIONS), HEADINGS);
    assert.match(COMPACTION_UPDATE_INSTRUCTIONS, /<previous-summary>/);
    assert.match(COMPACTION_UPDATE_INSTRUCTIONS, /"In Progress" to "Done"/);
  });

  it("history request: <conversation> tags, first-time instructions, no previous summary", () => {
    const r = buildHistoryRequest({ conversation: "[User]: hi", maxOutputTokens: 500 });
    assert.equal(r.systemPrompt, SUMMARY_SYSTEM_PROMPT);
    assert.equal(r.maxOutputTokens, 500);
    assert.equal(r.prompt, `<conversation>\n[User]: hi\n</conversation>\n\n${COMPACTION_INSTRUCTIONS}`);
  });

  it("history request with previous summary and custom instructions: pi's order", () => {
    const r = buildHistoryRequest({
      conversation: "[User]: more",
      previousSummary: "## Goal\nold",
      customInstructions: "  the parser  ",
      maxOutputTokens: 1,
    });
    assert.equal(
      r.prompt,
      `<conversation>\n[User]: more\n</conversation>\n\n<previous-summary>\n## Goal\nold\n</previous-summary>\n\n${COMPACTION_UPDATE_INSTRUCTIONS}\n\nAdditional focus: the parser`,
    );
  });

  it("turn-prefix request: # Conversation / # Instructions layout and its own headings", () => {
    const r = buildTurnPrefixRequest({
      conversation: "[User]: do it",
      customInstructions: "tests",
      maxOutputTokens: 2,
    });
    assert.equal(
      r.prompt,
      `# Conversation\n[User]: do it\n\n# Instructions\n${TURN_PREFIX_INSTRUCTIONS}\n\nAdditional focus: tests`,
    );
    assert.deepEqual(headingsIn(TURN_PREFIX_INSTRUCTIONS), [
      "## Original Request",
      "## Progress So Far",
      "## Context Needed to Continue",
    ]);
  });

  it("branch summary: headings without Critical Context, preamble, replaceInstructions", () => {
    const r = buildBranchSummaryRequest({ conversation: "c", maxOutputTokens: 3 });
    assert.deepEqual(headingsIn(r.prompt), HEADINGS.slice(0, -1));
    assert.match(r.prompt, /^<conversation>\nc\n<\/conversation>\n\n/);
    assert.match(
      buildBranchSummaryRequest({ conversation: "c", customInstructions: "x", maxOutputTokens: 3 }).prompt,
      /\n\nAdditional focus: x$/,
    );
    assert.equal(
      buildBranchSummaryRequest({
        conversation: "c",
        customInstructions: "only this",
        replaceInstructions: true,
        maxOutputTokens: 3,
      }).prompt,
      "<conversation>\nc\n</conversation>\n\nonly this",
    );
    assert.equal(branchSummaryText("## Goal"), `${BRANCH_SUMMARY_PREAMBLE}## Goal`);
    assert.equal(
      BRANCH_SUMMARY_PREAMBLE,
      "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n",
    );
  });

  it("split-turn merge is pi's literal separator", () => {
    assert.equal(mergeSplitTurn("H", "P"), "H\n\n---\n\n**Turn Context (split turn):**\n\nP");
  });
});

describe("summary checks and usage", () => {
  it("checkSummaryResult refuses length, tool calls and empty answers", () => {
    assert.throws(
      () => checkSummaryResult({ text: "x", stopReason: "length" }, "S"),
      (e: SummarizerError) => e.kind === "length",
    );
    assert.throws(
      () => checkSummaryResult({ text: "x", stopReason: "toolUse" }, "S"),
      (e: SummarizerError) => e.kind === "tool-call",
    );
    assert.throws(
      () => checkSummaryResult({ text: " \n", stopReason: "stop" }, "S"),
      (e: SummarizerError) => e.kind === "empty",
    );
    checkSummaryResult({ text: "ok", stopReason: "stop" }, "S");
  });

  it("combineUsage sums field-wise like pi", () => {
    const a = {
      input: 1,
      output: 2,
      cacheRead: 3,
      cacheWrite: 4,
      totalTokens: 10,
      cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3, totalFromProvider: true },
    };
    const b = {
      input: 10,
      output: 20,
      cacheRead: 30,
      cacheWrite: 40,
      reasoning: 5,
      totalTokens: 100,
      cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, total: 3 },
    };
    const c = combineUsage(a, b);
    assert.deepEqual(c, {
      input: 11,
      output: 22,
      cacheRead: 33,
      cacheWrite: 44,
      reasoning: 5,
      totalTokens: 110,
      cost: { input: 1.1, output: 2.2, cacheRead: 0, cacheWrite: 0, total: 3.3, totalFromProvider: false },
    });
    assert.equal("cacheWrite1h" in c, false);
  });
});

describe("fitRequest", () => {
  const fake = (contextWindow: number | undefined, countTokens?: Summarizer["countTokens"]): Summarizer => ({
    provider: "test",
    label: "test-model",
    contextWindow,
    maxOutputTokens: 4000,
    ...(countTokens ? { countTokens } : {}),
    summarize: async () => ({ text: "", stopReason: "stop" }),
  });
  const request = { systemPrompt: "You summarise.", prompt: "word ".repeat(1000), maxOutputTokens: 4000 };

  it("counts with tiktoken (o200k_base)", () => {
    assert.equal(countTiktokens("hello world"), 2);
    assert.equal(countTiktokens("<|endoftext|>") > 1, true, "special tokens are plain text");
  });

  it("keeps the request when it fits, lowers the output limit when tight, refuses when it cannot fit", async () => {
    const input = countTiktokens(request.systemPrompt) + countTiktokens(request.prompt) + 16;
    const ok = await fitRequest(fake(100000), request, "x");
    assert.equal(ok.inputTokens, input);
    assert.equal(ok.countedWith, "tiktoken");
    assert.equal(ok.outputReduced, false);
    assert.equal(ok.request.maxOutputTokens, 4000);
    const margin = Math.ceil(input * 0.05);
    const tight = await fitRequest(fake(input + margin + 2000), request, "x");
    assert.equal(tight.outputReduced, true);
    assert.equal(tight.request.maxOutputTokens, 2000);
    await assert.rejects(
      fitRequest(fake(input + margin + MIN_SUMMARY_OUTPUT_TOKENS - 1), request, "compaction summary"),
      (e: SummarizerError) =>
        e.kind === "too-large" && /does not fit/.test(e.message) && /context window of/.test(e.message),
    );
    const unknown = await fitRequest(fake(undefined), request, "x");
    assert.equal(unknown.outputReduced, false);
  });

  it("uses the model's own counter when there is one (no margin)", async () => {
    const s = fake(3000, async (t) => t.length);
    const r = await fitRequest(s, { systemPrompt: "ab", prompt: "c".repeat(100), maxOutputTokens: 4000 }, "x");
    assert.equal(r.countedWith, "model");
    assert.equal(r.inputTokens, 2 + 100 + 16);
    assert.equal(r.request.maxOutputTokens, 3000 - 118);
  });
});
