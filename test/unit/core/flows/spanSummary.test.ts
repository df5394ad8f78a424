/**
 * The "Summarize these messages" flow (`core/flows/spanSummary.ts`) against the scripted
 * OpenAI-compatible server: the request (the span serialized like pi's compaction input, tool
 * results cut at 2,000 characters, pi's structured headings, the focus), the one append (the note
 * in the first message, the rest omitted, chained from the leaf), the preview's numbers, and the
 * refusals and failures that leave the file byte-identical.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import {
  planSpanSummary,
  runSpanSummaryFlow,
  SpanRefusedError,
  withSpanInstructions,
} from "../../../../src/core/flows/spanSummary";
import { SPAN_SUMMARY_INSTRUCTIONS, SUMMARY_SYSTEM_PROMPT } from "../../../../src/core/flows/prompts";
import { SummarizerError } from "../../../../src/core/flows/summarizer";
import { SessionFile } from "../../../../src/core/read/session";
import { OpenAiSummarizer } from "../../../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../../../support/scripted-openai";
import { SessionBuilder } from "../../../support/session-builder";
import { writeOldSession } from "../../../support/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-span-flow-"));
const agentDir = path.join(tmp, "agent");
let server: ScriptedServer;
let summarizer: OpenAiSummarizer;
let n = 0;

before(async () => {
  fs.mkdirSync(agentDir, { recursive: true });
  server = await startScriptedServer();
  summarizer = new OpenAiSummarizer({
    baseURL: server.baseURL,
    apiKey: "k",
    model: "m",
    contextWindow: 128000,
    maxOutputTokens: 2048,
    maxRetries: 0,
  });
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => server.reset());

function session(): string {
  const b = new SessionBuilder()
    .user("u1", "find the bug")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", name: "read", arguments: { path: "src/a.ts" } }] })
    .result("r1", "c1", "y".repeat(3000))
    .assistant("a2", { text: "the bug is in a.ts" })
    .user("u2", "fix it")
    .assistant("a3", { text: "fixed" });
  return writeOldSession(path.join(tmp, `s${++n}.jsonl`), b.jsonl());
}

const options = { agentDir, guardSeconds: 0, procRoot: null };

describe("the span summary flow", () => {
  it("sends the span serialized like pi (results cut at 2,000 characters), writes one append: note + omissions", async () => {
    const file = session();
    const bytes = fs.readFileSync(file);
    server.script({ text: "## Goal\nFind the bug in a.ts." });
    const outcome = await runSpanSummaryFlow(file, "u1", "a2", summarizer, {
      ...options,
      customInstructions: "keep the file name",
    });
    assert.equal(outcome.kind, "summarized");
    if (outcome.kind !== "summarized") return;
    const body = server.requests[0]!.body;
    assert.equal(body.messages![0]!.content, SUMMARY_SYSTEM_PROMPT);
    const prompt = body.messages![1]!.content;
    assert.equal(
      prompt,
      `<conversation>\n[User]: find the bug\n\n[Assistant]: reading\n\n[Assistant tool calls]: read(path="src/a.ts")\n\n[Tool result]: ${"y".repeat(2000)}\n\n[... 1000 more characters truncated]\n\n[Assistant]: the bug is in a.ts\n</conversation>\n\n${SPAN_SUMMARY_INSTRUCTIONS}\n\nAdditional focus: keep the file name`,
    );
    const appended = fs
      .readFileSync(file)
      .subarray(bytes.length)
      .toString("utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.ok(fs.readFileSync(file).subarray(0, bytes.length).equals(bytes));
    assert.deepEqual(
      appended.map((e) => [e.type, e.targetId, e.replacement === null ? null : "note"]),
      [
        ["context_edit", "u1", "note"],
        ["context_edit", "r1", null],
        ["context_edit", "a1", null],
        ["context_edit", "a2", null],
      ],
    );
    assert.equal(appended[0].parentId, "a3");
    for (let i = 1; i < appended.length; i++) assert.equal(appended[i].parentId, appended[i - 1].id);
    const tokens = outcome.plan.span.spanTokens.toLocaleString("en-US");
    assert.equal(
      appended[0].replacement.content,
      `[pi-context: summary of 4 messages, ${tokens} tokens, entries u1…a2]\n\n## Goal\nFind the bug in a.ts.`,
    );
    assert.equal(outcome.result.tokensAfter, outcome.result.edits.tokensAfter.tokens);
    const reread = SessionFile.fromBytes(fs.readFileSync(file));
    assert.equal(reread.leafId, appended.at(-1).id);
  });

  it("the preview's numbers: after without the summary exact, the summary a range; instructions change only the request", async () => {
    const file = session();
    const plan = await planSpanSummary(file, "a2", "u1", { ...options, maxOutputTokens: 2048 });
    assert.equal(plan.span.fromId, "u1");
    assert.ok(plan.edits.tokensAfter.tokens < plan.edits.pureTokensBefore);
    assert.equal(plan.estimatedTokensAfterRange.low, plan.edits.tokensAfter.tokens + plan.estimatedSummaryRange.low);
    assert.equal(plan.estimatedTokensAfterRange.high, plan.edits.tokensAfter.tokens + plan.estimatedSummaryRange.high);
    const focused = withSpanInstructions(plan, "focus on tests");
    assert.ok(focused.request.prompt.endsWith("\n\nAdditional focus: focus on tests"));
    assert.equal(focused.customInstructions, "focus on tests");
    assert.ok(!plan.request.prompt.includes("Additional focus"));
    assert.equal(withSpanInstructions(focused, "  ").customInstructions, undefined);
  });

  it("refusals and failures leave the file byte-identical: a span outside the context, a failed request, a declined preview", async () => {
    const file = session();
    const bytes = fs.readFileSync(file);
    await assert.rejects(
      planSpanSummary(file, "u1", "nope", { ...options, maxOutputTokens: 2048 }),
      (e: unknown) => e instanceof SpanRefusedError && e.code === "unknown" && /There is no entry nope/.test(e.message),
    );
    server.script({ status: 500, errorMessage: "boom" });
    await assert.rejects(runSpanSummaryFlow(file, "u1", "a2", summarizer, options), SummarizerError);
    const declined = await runSpanSummaryFlow(file, "u1", "a2", summarizer, options, { confirm: async () => false });
    assert.equal(declined.kind, "declined");
    assert.ok(fs.readFileSync(file).equals(bytes));
  });
});
