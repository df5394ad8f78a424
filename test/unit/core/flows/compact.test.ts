/**
 * The compaction flow (core/compact.ts) and `pi-context compact` on copies of the shared pi 1.6.0
 * fixtures, against the scripted OpenAI-compatible server: the requests we send, the entry we
 * append (compared with the entry pi itself wrote at the same leaf), the live-session guard, the
 * re-plan when the file changed, and every failure path leaving the file byte-identical.
 */

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { main } from "../../../../src/cli/main";
import { isUnauthorized } from "../../../../src/core/flows/summarizer";
import {
  NothingToCompactError,
  planCompaction,
  runCompactionFlow,
  withInstructions,
  type CompactionPlan,
} from "../../../../src/core/flows/compact";
import { sessionAccess } from "../../../../src/core/access/gather";
import { LiveSessionError } from "../../../../src/core/access/words";
import { isPiCommandLine } from "../../../../src/core/proc/table";
import {
  COMPACTION_INSTRUCTIONS,
  COMPACTION_UPDATE_INSTRUCTIONS,
  SPLIT_TURN_SEPARATOR,
  SUMMARY_SYSTEM_PROMPT,
  TURN_PREFIX_INSTRUCTIONS,
} from "../../../../src/core/flows/prompts";
import { formatFileOperations } from "../../../../src/core/rules/files";
import { SummarizerError } from "../../../../src/core/flows/summarizer";
import { SessionChangedError, UnsafeSessionWriteError } from "../../../../src/core/flows/write";
import { OpenAiSummarizer } from "../../../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../../../support/scripted-openai";
import { FIXTURES } from "../../../support/paths";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-compact-"));

interface PiCompaction {
  line: number;
  entry: Record<string, unknown> & {
    id: string;
    parentId: string;
    summary: string;
    firstKeptEntryId: string;
    tokensBefore: number;
    details: { readFiles: string[]; modifiedFiles: string[] };
  };
}

/** pi's compaction entries of a fixture, with their 1-based line numbers. */
export function piCompactions(name: string): PiCompaction[] {
  const lines = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
  const out: PiCompaction[] = [];
  lines.forEach((l, i) => {
    if (l.includes('"type":"compaction"')) out.push({ line: i + 1, entry: JSON.parse(l) });
  });
  return out;
}

let copyCounter = 0;
/** A copy of the fixture's first `lines` lines (the file as pi had it at that moment), mtime in the past. */
export function fixturePrefix(name: string, lines: number): string {
  const all = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
  const file = path.join(tmp, `${name}-${lines}-${++copyCounter}.jsonl`);
  fs.writeFileSync(file, all.slice(0, lines).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

/** The scripted answers pi got, recovered from its summary: history text, turn-prefix text. */
export function answersOf(entry: PiCompaction["entry"]): { history: string; prefix?: string } {
  const lists = formatFileOperations(entry.details.readFiles, entry.details.modifiedFiles);
  assert.ok(entry.summary.endsWith(lists));
  const body = entry.summary.slice(0, entry.summary.length - lists.length);
  const i = body.lastIndexOf(SPLIT_TURN_SEPARATOR);
  return i < 0 ? { history: body } : { history: body.slice(0, i), prefix: body.slice(i + SPLIT_TURN_SEPARATOR.length) };
}

const base = { guardSeconds: 0, procRoot: null } as const;
const agentDir = (name: string) => path.join(PI, `${name}.agent`);

describe("compaction flow on the pi 1.6.0 fixtures", () => {
  let server: ScriptedServer;
  let summarizer: OpenAiSummarizer;
  before(async () => {
    server = await startScriptedServer();
    summarizer = new OpenAiSummarizer({
      baseURL: server.baseURL,
      apiKey: "sk-unit-0000",
      model: "summary-model",
      contextWindow: 128000,
      maxOutputTokens: 4096,
      maxRetries: 0,
    });
  });
  after(async () => {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  for (const name of ["long", "split", "overflow"]) {
    for (const [k, pi] of piCompactions(name).entries()) {
      it(`${name} compaction #${k + 1} (${pi.entry.id}): same entry as pi wrote, given pi's answers`, async () => {
        const file = fixturePrefix(name, pi.line - 1);
        const before = fs.readFileSync(file);
        const answers = answersOf(pi.entry);
        const plan = await planCompaction(file, { ...base, agentDir: agentDir(name), maxOutputTokens: 4096 });
        assert.equal(plan.preparation.leafId, pi.entry.parentId);
        assert.equal(plan.preview.firstKeptEntryId, pi.entry.firstKeptEntryId);
        assert.equal(plan.preview.tokensBefore, pi.entry.tokensBefore);
        assert.deepEqual(
          { readFiles: plan.preview.readFiles, modifiedFiles: plan.preview.modifiedFiles },
          pi.entry.details,
        );
        assert.equal(plan.preview.isSplitTurn, answers.prefix !== undefined);
        const expectedRequests = (plan.historyRequest ? 1 : 0) + (plan.turnPrefixRequest ? 1 : 0);
        if (plan.historyRequest)
          server.script({ text: answers.history, usage: { prompt_tokens: 1000, completion_tokens: 100 } });
        if (plan.turnPrefixRequest)
          server.script({
            text: answers.prefix!,
            usage: { prompt_tokens: 500, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: 7 } },
          });
        if (!plan.historyRequest)
          assert.equal(
            answers.history,
            plan.preparation.previousSummary ?? "No prior history.",
            "pi reused the previous summary (empty history)",
          );

        const outcome = await runCompactionFlow(file, summarizer, { ...base, agentDir: agentDir(name) });
        assert.equal(outcome.kind, "compacted");
        assert.equal(server.requests.length, expectedRequests);
        const after = fs.readFileSync(file);
        assert.ok(after.subarray(0, before.length).equals(before), "bytes before the append are unchanged");
        const written = after.subarray(before.length).toString("utf8");
        assert.equal(written.endsWith("\n"), true);
        assert.equal(written.split("\n").length, 2, "exactly one line appended");
        const ours = JSON.parse(written) as Record<string, unknown> & {
          id: string;
          timestamp: string;
          systemMessage?: { timestamp: number };
        };
        // pi's key order, pi's values; only id, timestamp, usage (a different provider) differ
        assert.deepEqual(Object.keys(ours), Object.keys(pi.entry));
        for (const key of ["type", "parentId", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"])
          assert.deepEqual(ours[key], pi.entry[key], key);
        const { timestamp: ourTs, ...ourSystem } = ours.systemMessage as Record<string, unknown>;
        const { timestamp: _piTs, ...piSystem } = pi.entry.systemMessage as Record<string, unknown>;
        assert.deepEqual(ourSystem, piSystem, "same checkpoint system message");
        assert.equal(ourTs, Date.parse(ours.timestamp));
        assert.match(ours.id, /^[0-9a-f]{8}$/);
        const usage = ours.usage as Record<string, number>;
        if (expectedRequests === 2)
          assert.deepEqual(
            { input: usage.input, output: usage.output, totalTokens: usage.totalTokens, reasoning: usage.reasoning },
            { input: 1500, output: 150, totalTokens: 1650, reasoning: 7 },
          );
        else if (plan.historyRequest)
          assert.deepEqual(
            { input: usage.input, output: usage.output, totalTokens: usage.totalTokens },
            { input: 1000, output: 100, totalTokens: 1100 },
          );
        assert.equal(
          outcome.kind === "compacted" &&
            outcome.result.tokensAfter !== null &&
            outcome.result.tokensAfter > 0 &&
            outcome.result.tokensAfter < pi.entry.tokensBefore,
          true,
        );
      });
    }
  }

  it("sends pi's request layout: system prompt, <conversation>, <previous-summary>, update instructions, focus, streaming", async () => {
    const [first, second] = piCompactions("long");
    const file = fixturePrefix("long", second!.line - 1);
    server.script({ text: "## Goal\nupdated" });
    const plan = await planCompaction(file, {
      ...base,
      agentDir: agentDir("long"),
      maxOutputTokens: 4096,
      customInstructions: "the parser",
    });
    assert.equal(plan.preparation.previousCompactionId, first!.entry.id);
    assert.equal(plan.turnPrefixRequest, undefined);
    await runCompactionFlow(file, summarizer, {
      ...base,
      agentDir: agentDir("long"),
      customInstructions: "the parser",
    });
    assert.equal(server.requests.length, 1);
    const body = server.requests[0]!.body;
    assert.equal(body.model, "summary-model");
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 4096);
    assert.equal(server.requests[0]!.authorization, "Bearer sk-unit-0000");
    assert.equal(body.messages![0]!.role, "system");
    assert.equal(body.messages![0]!.content, SUMMARY_SYSTEM_PROMPT);
    const prompt = body.messages![1]!.content;
    assert.equal(prompt, plan.historyRequest!.prompt);
    assert.match(prompt, /^<conversation>\n\[Assistant tool calls\]: /);
    assert.ok(
      prompt.includes(
        `\n</conversation>\n\n<previous-summary>\n${first!.entry.summary}\n</previous-summary>\n\n${COMPACTION_UPDATE_INSTRUCTIONS}\n\nAdditional focus: the parser`,
      ),
    );
    assert.ok(prompt.endsWith("Additional focus: the parser"));
    const entry = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.equal(entry.summary, `## Goal\nupdated${plan.fileListsText}`);
  });

  it("split turn: two requests (history, then # Conversation prefix), merged with pi's separator", async () => {
    const [pi] = piCompactions("split");
    const file = fixturePrefix("split", pi!.line - 1);
    server.script({ text: "H-TEXT" }, { text: "P-TEXT" });
    const outcome = await runCompactionFlow(file, summarizer, { ...base, agentDir: agentDir("split") });
    assert.equal(outcome.kind, "compacted");
    assert.equal(server.requests.length, 2);
    const [h, p] = server.requests.map((r) => r.body.messages![1]!.content);
    assert.ok(h!.startsWith("<conversation>\n") && h!.endsWith(COMPACTION_INSTRUCTIONS));
    assert.ok(!h!.includes("<previous-summary>"));
    assert.ok(p!.startsWith("# Conversation\n") && p!.endsWith(`\n\n# Instructions\n${TURN_PREFIX_INSTRUCTIONS}`));
    if (outcome.kind === "compacted")
      assert.ok(outcome.result.entry.summary.startsWith(`H-TEXT${SPLIT_TURN_SEPARATOR}P-TEXT\n\n<read-files>`));
  });

  describe("prepare first, key later (the order of Pi Context: Compact Session…)", () => {
    it("withInstructions: same read and expectation, requests rebuilt with the focus; the input plan unchanged", async () => {
      const [, second] = piCompactions("long");
      const file = fixturePrefix("long", second!.line - 1);
      const plain = await planCompaction(file, { ...base, agentDir: agentDir("long"), maxOutputTokens: 4096 });
      const focused = withInstructions(plain, "  the parser  ");
      const direct = await planCompaction(file, {
        ...base,
        agentDir: agentDir("long"),
        maxOutputTokens: 4096,
        customInstructions: "the parser",
      });
      assert.equal(focused.customInstructions, "the parser");
      assert.equal(focused.options.customInstructions, "the parser");
      assert.deepEqual(focused.historyRequest, direct.historyRequest);
      assert.equal(focused.estimatedTokensAfter, direct.estimatedTokensAfter);
      assert.equal(focused.session, plain.session, "no second read");
      assert.equal(focused.expectation, plain.expectation);
      assert.equal(plain.customInstructions, undefined);
      assert.ok(!plain.historyRequest!.prompt.includes("Additional focus"));
      const cleared = withInstructions(focused, "   ");
      assert.equal(cleared.customInstructions, undefined);
      assert.deepEqual(cleared.historyRequest, plain.historyRequest);
      // split turn: both requests carry the focus
      const split = await planCompaction(fixturePrefix("split", piCompactions("split")[0]!.line - 1), {
        ...base,
        agentDir: agentDir("split"),
        maxOutputTokens: 4096,
      });
      const splitFocused = withInstructions(split, "x");
      assert.ok(
        splitFocused.historyRequest!.prompt.endsWith("Additional focus: x") &&
          splitFocused.turnPrefixRequest!.prompt.endsWith("Additional focus: x"),
      );
    });

    it("preview without a key; the key is asked after the confirmation and the same compaction continues", async () => {
      const [, second] = piCompactions("long");
      const file = fixturePrefix("long", second!.line - 1);
      const plan = withInstructions(
        await planCompaction(file, { ...base, agentDir: agentDir("long"), maxOutputTokens: 4096 }),
        "focus",
      );
      // keyless "OpenAI" summarizer (needs a key): previews and fits without one
      const keyless = new OpenAiSummarizer({
        baseURL: "https://api.openai.com/v1",
        model: "summary-model",
        contextWindow: 128000,
        maxOutputTokens: 4096,
        maxRetries: 0,
      });
      assert.equal(keyless.needsApiKey, true);
      const steps: string[] = [];
      server.script({ text: "## Goal\nwith the key" });
      const outcome = await runCompactionFlow(
        file,
        keyless,
        { ...base, agentDir: agentDir("long"), customInstructions: "focus", plan },
        {
          onPlan: (p, fit) => steps.push(`plan ${p === plan} ${fit.inputTokens > 0}`),
          confirm: async () => (steps.push("preview"), true),
          beforeSummarize: async (s) => {
            steps.push(`ready ${s === keyless}`);
            return new OpenAiSummarizer({
              baseURL: server.baseURL,
              apiKey: "sk-entered-1",
              model: "summary-model",
              contextWindow: 128000,
              maxOutputTokens: 4096,
              maxRetries: 0,
            });
          },
        },
      );
      assert.deepEqual(steps, ["plan true true", "preview", "ready true"]);
      assert.equal(outcome.kind, "compacted");
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0]!.authorization, "Bearer sk-entered-1");
      assert.ok(server.requests[0]!.body.messages![1]!.content.endsWith("Additional focus: focus"));
    });

    it("no key given (beforeSummarize → undefined): declined at stage summarizer, nothing sent or written", async () => {
      const file = fixturePrefix("long", piCompactions("long")[1]!.line - 1);
      const before = fs.readFileSync(file);
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long") },
        { confirm: async () => true, beforeSummarize: async () => undefined },
      );
      assert.equal(outcome.kind, "declined");
      if (outcome.kind === "declined") assert.equal(outcome.stage, "summarizer");
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
      const atPreview = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long") },
        { confirm: async () => false, beforeSummarize: async () => assert.fail("not asked after a declined preview") },
      );
      assert.equal(atPreview.kind === "declined" && atPreview.stage, "preview");
    });

    it("HTTP 401: onUnauthorized gives a summarizer with a key, the request is retried, then written", async () => {
      const file = fixturePrefix("long", piCompactions("long")[1]!.line - 1);
      const noKey = new OpenAiSummarizer({
        baseURL: server.baseURL,
        model: "summary-model",
        contextWindow: 128000,
        maxOutputTokens: 4096,
        maxRetries: 0,
      });
      server.script({ status: 401, errorMessage: "key required" }, { text: "## Goal\nafter 401" });
      const seen: number[] = [];
      const outcome = await runCompactionFlow(
        file,
        noKey,
        { ...base, agentDir: agentDir("long") },
        {
          onUnauthorized: async (error) => {
            seen.push(error.status!);
            return new OpenAiSummarizer({
              baseURL: server.baseURL,
              apiKey: "sk-after-401",
              model: "summary-model",
              contextWindow: 128000,
              maxOutputTokens: 4096,
              maxRetries: 0,
            });
          },
        },
      );
      assert.deepEqual(seen, [401]);
      assert.equal(outcome.kind, "compacted");
      assert.deepEqual(
        server.requests.map((r) => r.authorization),
        [undefined, "Bearer sk-after-401"],
      );
      if (outcome.kind === "compacted") assert.ok(outcome.result.entry.summary.startsWith("## Goal\nafter 401"));
      // cancelled key box → the 401 error, file untouched
      const other = fixturePrefix("long", piCompactions("long")[1]!.line - 1);
      const before = fs.readFileSync(other);
      server.script({ status: 403 });
      await assert.rejects(
        runCompactionFlow(
          other,
          noKey,
          { ...base, agentDir: agentDir("long") },
          { onUnauthorized: async () => undefined },
        ),
        (e: unknown) => isUnauthorized(e) && e.status === 403,
      );
      assert.ok(fs.readFileSync(other).equals(before));
    });
  });

  describe("failures leave the file byte-identical", () => {
    const cases: { name: string; answers: Parameters<ScriptedServer["script"]>; kind: string }[] = [
      { name: "HTTP 500", answers: [{ status: 500, errorMessage: "upstream exploded" }], kind: "http" },
      { name: "HTTP 401", answers: [{ status: 401 }], kind: "http" },
      { name: "network failure", answers: [{ destroy: true }], kind: "network" },
      { name: "empty answer", answers: [{ text: "" }], kind: "empty" },
      { name: "length stop", answers: [{ text: "## Goal\nhalf", finishReason: "length" }], kind: "length" },
      { name: "tool call", answers: [{ toolCall: true }], kind: "tool-call" },
      { name: "split turn: second request fails", answers: [{ text: "fine" }, { status: 503 }], kind: "http" },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const [pi] = piCompactions("split");
        const file = fixturePrefix("split", pi!.line - 1);
        const before = fs.readFileSync(file);
        server.script(...c.answers);
        await assert.rejects(
          runCompactionFlow(file, summarizer, { ...base, agentDir: agentDir("split") }),
          (e: unknown) => e instanceof SummarizerError && e.kind === c.kind,
        );
        assert.ok(fs.readFileSync(file).equals(before));
      });
    }

    it("cancel while streaming", async () => {
      const file = fixturePrefix("long", piCompactions("long")[1]!.line - 1);
      const before = fs.readFileSync(file);
      server.script({ chunks: ["## Goal\n", "never ends"], hang: true });
      const controller = new AbortController();
      const p = runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long") },
        { signal: controller.signal, onText: () => controller.abort() },
      );
      await assert.rejects(p, (e: unknown) => e instanceof SummarizerError && e.kind === "cancelled");
      assert.ok(fs.readFileSync(file).equals(before));
    });

    it("request too large for the summarizer's window: refused before sending", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      const before = fs.readFileSync(file);
      const small = new OpenAiSummarizer({
        baseURL: server.baseURL,
        apiKey: "k",
        model: "tiny",
        contextWindow: 4000,
        maxOutputTokens: 1024,
        maxRetries: 0,
      });
      await assert.rejects(
        runCompactionFlow(file, small, { ...base, agentDir: agentDir("long") }),
        (e: unknown) =>
          e instanceof SummarizerError && e.kind === "too-large" && /context window of 4,000/.test(e.message),
      );
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
    });

    it("declined at the preview: nothing sent", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      const before = fs.readFileSync(file);
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long") },
        { confirm: async () => false },
      );
      assert.equal(outcome.kind, "declined");
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
    });
  });

  describe("refusals before any request", () => {
    it("the leaf is already a compaction", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line);
      await assert.rejects(
        planCompaction(file, { ...base, agentDir: agentDir("long"), maxOutputTokens: 1 }),
        (e: unknown) => e instanceof NothingToCompactError && e.reason === "already-compacted",
      );
    });
    it("v1 session (case 08) and torn final line (case 09)", async () => {
      for (const f of [
        "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl",
        "cases/09-truncated-final-line/session.jsonl",
      ]) {
        const file = path.join(tmp, `refuse-${path.basename(path.dirname(f))}.jsonl`);
        fs.copyFileSync(path.join(FIXTURES, f), file);
        const before = fs.readFileSync(file);
        await assert.rejects(
          runCompactionFlow(file, summarizer, { ...base, agentDir: "/nonexistent" }),
          UnsafeSessionWriteError,
        );
        assert.ok(fs.readFileSync(file).equals(before));
      }
      assert.equal(server.requests.length, 0);
    });
    it("live: written a moment ago", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      fs.utimesSync(file, new Date(), new Date());
      const before = fs.readFileSync(file);
      await assert.rejects(
        runCompactionFlow(file, summarizer, { agentDir: agentDir("long"), guardSeconds: 30, procRoot: null }),
        (e: unknown) => e instanceof LiveSessionError && /written 0 s ago/.test(e.message) && /Quit pi/.test(e.message),
      );
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
    });
    it("live: a pi process runs in the session's cwd (fake /proc)", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      const cwd = JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]!).cwd as string;
      const proc = path.join(tmp, "proc");
      fs.mkdirSync(path.join(proc, "4242"), { recursive: true });
      fs.writeFileSync(
        path.join(proc, "4242", "cmdline"),
        ["node", "/usr/lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js", "--continue", ""].join("\0"),
      );
      fs.symlinkSync(cwd, path.join(proc, "4242", "cwd"));
      fs.mkdirSync(path.join(proc, "4243"), { recursive: true });
      fs.writeFileSync(path.join(proc, "4243", "cmdline"), ["vim", "x", ""].join("\0"));
      fs.symlinkSync(cwd, path.join(proc, "4243", "cwd"));
      await assert.rejects(
        runCompactionFlow(file, summarizer, { agentDir: agentDir("long"), guardSeconds: 0, procRoot: proc }),
        (e: unknown) =>
          e instanceof LiveSessionError && e.access.evidence.length === 1 && /process 4242/.test(e.message),
      );
      assert.equal(server.requests.length, 0);
    });
  });

  describe("the file changes between preview and write", () => {
    it("while the preview is shown: nothing spent, prepared again, asked again, written on the new leaf", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      const seen: { changed: boolean; leaf: string }[] = [];
      server.script({ text: "## Goal\nafter change" }, { text: "## Original Request\nprefix" });
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long") },
        {
          confirm: async (plan: CompactionPlan, _fit, changed) => {
            seen.push({ changed, leaf: plan.preparation.leafId });
            if (seen.length === 1)
              fs.appendFileSync(
                file,
                JSON.stringify({
                  type: "label",
                  id: "abcd0001",
                  parentId: plan.preparation.leafId,
                  timestamp: new Date().toISOString(),
                  targetId: plan.preparation.leafId,
                  label: "x",
                }) + "\n",
              );
            return true;
          },
        },
      );
      assert.deepEqual(seen, [
        { changed: false, leaf: pi!.entry.parentId },
        { changed: true, leaf: "abcd0001" },
      ]);
      assert.equal(server.requests.length, 2, "one summary (history + split-turn prefix), none for the stale preview");
      assert.equal(outcome.kind === "compacted" && outcome.result.entry.parentId, "abcd0001");
    });

    it("while summarizing: the append is refused, then the flow prepares and summarizes again", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      let appended = false;
      server.script(
        { text: "## Goal\nfirst" },
        { text: "prefix 1" },
        { text: "## Goal\nsecond" },
        { text: "prefix 2" },
      );
      // no confirm (like --yes / skipPreview): summarized twice, written once. The change comes during
      // the last request and the file watch polls too rarely to see it (watch.test.ts covers a slow
      // answer): the write's own check finds it and the finished summary is discarded.
      const stages: string[] = [];
      let phase = "";
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long"), changePollMs: 60_000 },
        {
          onSessionChanged: (stage) => stages.push(stage),
          onPhase: (p) => (phase = p),
          onText: () => {
            if (appended || phase !== "turn-prefix") return;
            appended = true;
            fs.appendFileSync(
              file,
              JSON.stringify({
                type: "label",
                id: "abcd0002",
                parentId: pi!.entry.parentId,
                timestamp: new Date().toISOString(),
                targetId: pi!.entry.parentId,
                label: "y",
              }) + "\n",
            );
          },
        },
      );
      assert.equal(server.requests.length, 4, "summarized twice (history + prefix each time)");
      assert.deepEqual(stages, ["write"], "the finished summary was discarded");
      assert.equal(outcome.kind === "compacted" && outcome.result.entry.parentId, "abcd0002");
      const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
      assert.equal(JSON.parse(lines[lines.length - 2]!).id, "abcd0002");
      assert.equal(lines.filter((l) => l.includes('"type":"compaction"')).length, 0 + 1);
    });

    it("between a split turn's two requests: the second one is not sent after a change", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      server.script({ text: "## Goal\nfirst" }, { text: "## Goal\nsecond" }, { text: "prefix 2" });
      const stages: string[] = [];
      let appended = false;
      const outcome = await runCompactionFlow(
        file,
        summarizer,
        { ...base, agentDir: agentDir("long"), changePollMs: 60_000 },
        {
          onSessionChanged: (stage) => stages.push(stage),
          onText: () => {
            if (appended) return;
            appended = true;
            fs.appendFileSync(
              file,
              JSON.stringify({
                type: "label",
                id: "abcd0003",
                parentId: pi!.entry.parentId,
                timestamp: new Date().toISOString(),
                targetId: pi!.entry.parentId,
                label: "y",
              }) + "\n",
            );
          },
        },
      );
      assert.deepEqual(stages, ["summary"]);
      assert.equal(server.requests.length, 3, "history, (no prefix), then history + prefix of the new plan");
      assert.equal(outcome.kind === "compacted" && outcome.result.entry.parentId, "abcd0003");
    });

    it("keeps changing: gives up after 3 attempts without writing", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      let n = 0;
      await assert.rejects(
        runCompactionFlow(
          file,
          summarizer,
          { ...base, agentDir: agentDir("long") },
          {
            confirm: async (plan) => {
              fs.appendFileSync(
                file,
                JSON.stringify({
                  type: "label",
                  id: `abcd01${String(++n).padStart(2, "0")}`,
                  parentId: plan.preparation.leafId,
                  timestamp: new Date().toISOString(),
                  targetId: plan.preparation.leafId,
                  label: "z",
                }) + "\n",
              );
              return true;
            },
          },
        ),
        SessionChangedError,
      );
      assert.equal(n, 3);
      assert.equal(server.requests.length, 0);
      assert.equal(fs.readFileSync(file, "utf8").includes('"type":"compaction"'), false);
    });
  });

  describe("pi-context compact (CLI)", () => {
    let saved: NodeJS.ProcessEnv;
    beforeEach(() => {
      saved = { ...process.env };
      delete process.env.OPENAI_API_KEY;
      process.env.PI_CONTEXT_API_KEY = "sk-cli-9999";
    });
    afterEach(() => {
      process.env = saved;
    });
    const run = async (args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(
        ["compact", ...args],
        (s) => out.push(s),
        (s) => err.push(s),
      );
      return { code, out: out.join("\n"), err: err.join("\n") };
    };

    it("--dry-run prints the preview and sends nothing", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      const before = fs.readFileSync(file);
      const r = await run([
        file,
        "--agent-dir",
        agentDir("long"),
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--dry-run",
        "--guard-seconds",
        "0",
      ]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /tokens before +13,821/);
      assert.match(r.out, new RegExp(`kept +\\d+ entries from ${pi!.entry.firstKeptEntryId} \\(firstKeptEntryId\\)`));
      assert.match(r.out, /split turn +yes/);
      assert.match(r.out, /modified files +docs\/eta-6\.md, docs\/gamma-2\.md, src\/alpha\.ts, src\/epsilon\.ts/);
      assert.match(r.out, /^Dry run: nothing was sent or written\.$/m);
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
    });

    it("--yes compacts with the key from the environment and prints the result", async () => {
      const [pi] = piCompactions("long");
      const file = fixturePrefix("long", pi!.line - 1);
      server.script({ text: "## Goal\nH" }, { text: "## Original Request\nP" });
      const r = await run([
        file,
        "--agent-dir",
        agentDir("long"),
        "--base-url",
        server.baseURL,
        "--model",
        "cli-model",
        "--yes",
        "--guard-seconds",
        "0",
        "--instructions",
        "tests only",
      ]);
      assert.equal(r.code, 0, r.err);
      assert.match(
        r.out,
        /^Compacted: wrote compaction [0-9a-f]{8} after entry 925c02fe; pi keeps the messages from e96f0264 on\.$/m,
      );
      assert.match(r.out, /^Tokens: 13,821 → [\d,]+ \(pi's estimate\); the summarizer used [\d,]+ tokens\.$/m);
      assert.match(r.out, /^File: [\d,]+ → [\d,]+ bytes\.$/m);
      assert.equal(server.requests.length, 2);
      assert.equal(server.requests[0]!.authorization, "Bearer sk-cli-9999");
      assert.equal(server.requests[0]!.body.model, "cli-model");
      assert.ok(server.requests.every((q) => q.body.messages![1]!.content.endsWith("Additional focus: tests only")));
      assert.doesNotMatch(r.out + r.err, /sk-cli-9999/);
    });

    it("without an API key for OpenAI: --dry-run previews; compacting shows the preview, then stops (exit 1), nothing sent", async () => {
      delete process.env.PI_CONTEXT_API_KEY;
      const file = fixturePrefix("long", piCompactions("long")[1]!.line - 1);
      const before = fs.readFileSync(file);
      let r = await run([file, "--agent-dir", agentDir("long"), "--dry-run", "--guard-seconds", "0"]);
      assert.equal(r.code, 0, r.err);
      assert.match(
        r.out,
        /^summarizer +gpt-4o-mini at https:\/\/api\.openai\.com\/v1: 1 request, ≈[\d,]+ input tokens \(window 128,000\)$/m,
      );
      assert.match(r.out, /^API key +none: set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment to compact$/m);
      r = await run([file, "--agent-dir", agentDir("long"), "--yes", "--guard-seconds", "0"]);
      assert.equal(r.code, 1);
      assert.match(r.out, /^tokens before +12,610$/m, "the preview came first");
      assert.match(
        r.err,
        /^No API key for https:\/\/api\.openai\.com\/v1: set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment\. Nothing was written\.$/m,
      );
      assert.doesNotMatch(r.err, /Pi Context: Set API Key/);
      assert.ok(fs.readFileSync(file).equals(before));
    });

    it("nothing to compact: pi's message as a sentence, exit 1", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line);
      const r = await run([
        file,
        "--agent-dir",
        agentDir("long"),
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--yes",
        "--guard-seconds",
        "0",
      ]);
      assert.equal(r.code, 1);
      assert.equal(r.err, "Already compacted: the leaf is a compaction entry.");
    });

    it("without --yes and without a terminal: refuses (exit 2), nothing sent", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      const before = fs.readFileSync(file);
      const r = await run([
        file,
        "--agent-dir",
        agentDir("long"),
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--guard-seconds",
        "0",
      ]);
      assert.equal(r.code, 2);
      assert.match(r.err, /--yes/);
      assert.equal(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before));
    });

    it("failures exit 1 with the reason; live sessions are refused", async () => {
      const file = fixturePrefix("long", piCompactions("long")[0]!.line - 1);
      const before = fs.readFileSync(file);
      server.script({ text: "x", finishReason: "length" });
      let r = await run([
        file,
        "--agent-dir",
        agentDir("long"),
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--yes",
        "--guard-seconds",
        "0",
      ]);
      assert.equal(r.code, 1);
      assert.match(r.err, /token cap/);
      fs.utimesSync(file, new Date(), new Date());
      r = await run([file, "--agent-dir", agentDir("long"), "--base-url", server.baseURL, "--model", "m", "--yes"]);
      assert.equal(r.code, 1);
      assert.match(r.err, /Refusing to compact/);
      assert.match(r.err, /--guard-seconds N sets it, 0 turns it off/, "the CLI names its flag");
      assert.doesNotMatch(
        r.err,
        /piContext\.|Pi Context: Install Live Bridge/,
        "no VS Code settings or commands in the CLI",
      );
      assert.ok(fs.readFileSync(file).equals(before));
      r = await run([file, "--api-key", "x"]);
      assert.equal(r.code, 2, "no --api-key flag");
    });
  });
});

describe("live-session detection", () => {
  it("isPiCommandLine", () => {
    assert.equal(isPiCommandLine(["pi"]), true);
    assert.equal(isPiCommandLine(["/usr/local/bin/pi", "--continue"]), true);
    assert.equal(
      isPiCommandLine(["node", "/home/u/.npm/lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"]),
      true,
    );
    assert.equal(isPiCommandLine(["node", "/x/bin/pi"]), true);
    assert.equal(isPiCommandLine(["node", "server.js"]), false);
    assert.equal(isPiCommandLine(["pip", "install"]), false);
  });

  it(
    "finds a real running `pi` process by its cwd in /proc (Linux)",
    { skip: process.platform !== "linux" },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-"));
      const bin = path.join(dir, "pi");
      fs.writeFileSync(bin, "#!/bin/sh\nsleep 30\n", { mode: 0o755 });
      const session = path.join(dir, "s.jsonl");
      fs.writeFileSync(session, "{}\n");
      const old = new Date(Date.now() - 3600_000);
      fs.utimesSync(session, old, old);
      const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-other-"));
      const child = spawn(bin, [], { cwd: dir, stdio: "ignore" });
      try {
        // the real table (procRoot given: not the runner's PI_CONTEXT_GUARD_PROCESSES); wait until
        // the child has exec'd rather than for a fixed time
        const check = (cwd: string) => sessionAccess(session, { guardSeconds: 30, header: { cwd }, procRoot: "/proc" });
        let found = await check(dir);
        for (let i = 0; i < 200 && found.strength === "none"; i++) {
          await new Promise((r) => setTimeout(r, 50));
          found = await check(dir);
        }
        // its session cannot be told (s.jsonl is no pi session it started): it may have resumed this one
        const reason = found.evidence.find((e) => e.kind === "process");
        assert.ok(reason && reason.kind === "process" && reason.pid === child.pid && reason.how === "in-folder");
        // a folder no other pi on this machine runs in (a fresh one, not the shared tmp dir)
        assert.equal((await check(elsewhere)).strength, "none");
      } finally {
        child.kill();
        fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(elsewhere, { recursive: true, force: true });
      }
    },
  );
});
