/**
 * The OpenAI-compatible summariser against the scripted server on 127.0.0.1: the request it sends,
 * streaming and non-streaming answers, usage mapping, and every failure (HTTP error, network
 * failure, empty answer, `length` stop, tool call, cancel).
 */

import { strict as assert } from "node:assert";
import { after, before, beforeEach, describe, it } from "node:test";
import { completeSummary, SummarizerError } from "../../../src/core/flows/summarizer";
import { OpenAiSummarizer, withoutStatus, stripThinking, usageFromOpenAi } from "../../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../../support/scripted-openai";

const REQUEST = { systemPrompt: "SYSTEM", prompt: "PROMPT <conversation>x</conversation>", maxOutputTokens: 1234 };

async function rejectsWith(p: Promise<unknown>, kind: string, pattern?: RegExp): Promise<SummarizerError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof SummarizerError, `expected SummarizerError, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    if (pattern) assert.match(error.message, pattern);
    return error;
  }
  assert.fail(`expected a ${kind} error`);
}

describe("OpenAiSummarizer against the scripted server", () => {
  let server: ScriptedServer;
  before(async () => {
    server = await startScriptedServer();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  const make = (extra: Partial<ConstructorParameters<typeof OpenAiSummarizer>[0]> = {}) =>
    new OpenAiSummarizer({
      baseURL: server.baseURL,
      apiKey: "sk-test-secret-123",
      model: "m-1",
      maxOutputTokens: 4000,
      maxRetries: 0,
      ...extra,
    });

  it("streams: sends model, system + user messages, stream options, output limit; returns text, usage, stop", async () => {
    server.script({
      chunks: ["## Goal\n", "Fix the", " parser."],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 20,
        prompt_tokens_details: { cached_tokens: 30 },
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    });
    const deltas: string[] = [];
    const result = await make().summarize(REQUEST, { onText: (d) => deltas.push(d) });
    assert.deepEqual(deltas, ["## Goal\n", "Fix the", " parser."]);
    assert.equal(result.text, "## Goal\nFix the parser.");
    assert.equal(result.stopReason, "stop");
    assert.equal(result.model, "m-1");
    assert.deepEqual(result.usage, {
      input: 70,
      output: 20,
      cacheRead: 30,
      cacheWrite: 0,
      reasoning: 5,
      totalTokens: 120,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    });
    assert.equal(server.requests.length, 1);
    const req = server.requests[0]!;
    assert.equal(req.url, "/v1/chat/completions");
    assert.equal(req.authorization, "Bearer sk-test-secret-123");
    assert.equal(req.body.model, "m-1");
    assert.equal(req.body.stream, true);
    assert.deepEqual(req.body.stream_options, { include_usage: true });
    assert.equal(req.body.max_tokens, 1234, "non-OpenAI hosts get max_tokens");
    assert.equal(req.body.max_completion_tokens, undefined);
    assert.deepEqual(req.body.messages, [
      { role: "system", content: "SYSTEM" },
      { role: "user", content: "PROMPT <conversation>x</conversation>" },
    ]);
    assert.equal(req.body.tools, undefined, "no tools are offered");
  });

  it("non-streaming answers, max_completion_tokens when asked, no key for local servers", async () => {
    server.script({ text: "<think>hmm</think>\n## Goal\nok" });
    const s = make({ stream: false, apiKey: undefined, maxTokensField: "max_completion_tokens" });
    const result = await s.summarize(REQUEST);
    assert.equal(result.text, "## Goal\nok");
    assert.equal(server.requests[0]!.body.stream, false);
    assert.equal(server.requests[0]!.body.max_completion_tokens, 1234);
    assert.equal(server.requests[0]!.authorization, undefined);
    assert.ok(result.usage && result.usage.totalTokens > 0);
  });

  it("HTTP errors become `http` errors with the status, without the key", async () => {
    server.script({ status: 401, errorMessage: "bad key sk-test-secret-123" });
    const e = await rejectsWith(make().summarize(REQUEST), "http", /HTTP 401/);
    assert.equal(e.status, 401);
    assert.doesNotMatch(e.message, /sk-test-secret-123/);
    assert.match(
      e.message,
      /Check the API key \(PI_CONTEXT_API_KEY or OPENAI_API_KEY\)\.$/,
      "the CLI's wording by default",
    );
    assert.doesNotMatch(e.message, /Pi: Set API Key/);
    server.script({ status: 403, errorMessage: "forbidden" });
    const v = await rejectsWith(make({ surface: "vscode" }).summarize(REQUEST), "http", /HTTP 403/);
    assert.match(v.message, /Check the API key \("Pi: Set API Key…"\)\.$/, "VS Code's wording");
    assert.doesNotMatch(v.message, /PI_CONTEXT_API_KEY|OPENAI_API_KEY/);
    server.script({ status: 500, errorMessage: "upstream exploded" });
    const boom = await rejectsWith(make().summarize(REQUEST), "http", /HTTP 500/);
    // the status once, not "answered HTTP 500: 500 upstream exploded"
    assert.match(boom.message, /answered HTTP 500: upstream exploded\.$/);
    assert.equal(boom.message.split("500").length - 1, 1, boom.message);
  });

  it("withoutStatus: the package's leading status and its no-body text", () => {
    assert.equal(withoutStatus("500 upstream exploded", 500), "upstream exploded.");
    assert.equal(withoutStatus("502 status code (no body)", 502), "no body.");
    assert.equal(withoutStatus("Connection error.", undefined), "Connection error.");
    assert.equal(withoutStatus("404 5000 things", 404), "5000 things.");
  });

  it("retries a 500 once when retries are allowed", async () => {
    server.script({ status: 500 }, { text: "## Goal\nsecond try" });
    const result = await make({ maxRetries: 1 }).summarize(REQUEST);
    assert.equal(result.text, "## Goal\nsecond try");
    assert.equal(server.requests.length, 2);
  });

  it("network failures: dropped connection and closed port", async () => {
    server.script({ destroy: true });
    await rejectsWith(make().summarize(REQUEST), "network", /Could not reach/);
    await rejectsWith(make({ baseURL: "http://127.0.0.1:1/v1" }).summarize(REQUEST), "network", /127\.0\.0\.1:1/);
  });

  it("`length`, tool calls and empty answers are returned as such and refused by completeSummary", async () => {
    server.script({ text: "## Goal\npartial", finishReason: "length" });
    const r = await make().summarize(REQUEST);
    assert.equal(r.stopReason, "length");
    server.script({ text: "## Goal\npartial", finishReason: "length" });
    await rejectsWith(completeSummary(make(), REQUEST, "Summarization"), "length", /token cap/);
    server.script({ toolCall: true });
    await rejectsWith(completeSummary(make(), REQUEST, "Summarization"), "tool-call", /tool/);
    server.script({ toolCall: true });
    await rejectsWith(completeSummary(make({ stream: false }), REQUEST, "Summarization"), "tool-call");
    server.script({ text: "   " });
    await rejectsWith(completeSummary(make(), REQUEST, "Summarization"), "empty", /empty/);
    server.script({ text: "x", finishReason: "content_filter" });
    await rejectsWith(make().summarize(REQUEST), "http", /content_filter/);
  });

  it("cancel: aborting mid-stream rejects with `cancelled` and closes the connection", async () => {
    server.script({ chunks: ["## Goal\n", "never"], hang: true });
    const controller = new AbortController();
    const seen: string[] = [];
    const p = make().summarize(REQUEST, {
      signal: controller.signal,
      onText: (d) => {
        seen.push(d);
        controller.abort();
      },
    });
    await rejectsWith(p, "cancelled");
    assert.deepEqual(seen, ["## Goal\n"]);
    const before = Date.now();
    while (server.disconnects < 1 && Date.now() - before < 3000) await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.disconnects, 1);
    // an already aborted signal sends nothing
    const n = server.requests.length;
    await rejectsWith(make().summarize(REQUEST, { signal: AbortSignal.abort() }), "cancelled");
    assert.equal(server.requests.length, n);
  });

  it("configuration errors: no model, bad URL (per surface)", () => {
    assert.throws(
      () => new OpenAiSummarizer({ model: "", maxOutputTokens: 1 }),
      (e: SummarizerError) =>
        e.kind === "config" && e.message === "No summarizer model is set: pass --model or set PI_CONTEXT_MODEL.",
    );
    assert.throws(
      () => new OpenAiSummarizer({ model: "", maxOutputTokens: 1, surface: "vscode" }),
      (e: SummarizerError) =>
        e.kind === "config" && e.message === "No summarizer model is set: set piContext.summarizer.openai.model.",
    );
    assert.throws(
      () => new OpenAiSummarizer({ model: "m", baseURL: "not a url", maxOutputTokens: 1 }),
      (e: SummarizerError) =>
        e.kind === "config" && /not a valid URL \(--base-url or PI_CONTEXT_BASE_URL\)/.test(e.message),
    );
  });

  it("OpenAI without a key: made (counting, previews), needsApiKey, sending refused with how to set one", async () => {
    const cli = new OpenAiSummarizer({ model: "m", maxOutputTokens: 1 });
    assert.equal(cli.needsApiKey, true);
    assert.equal(cli.hasApiKey, false);
    await rejectsWith(
      cli.summarize(REQUEST),
      "config",
      /^No API key for https:\/\/api\.openai\.com\/v1: set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment\.$/,
    );
    const vs = new OpenAiSummarizer({ model: "m", maxOutputTokens: 1, surface: "vscode" });
    await rejectsWith(
      vs.summarize(REQUEST),
      "config",
      /^No API key for https:\/\/api\.openai\.com\/v1: run "Pi: Set API Key…"/,
    );
    assert.doesNotMatch(vs.missingKeyError().message, /PI_CONTEXT_API_KEY|OPENAI_API_KEY|environment/);
    // other servers: no key needed up front (local servers), a key when given
    assert.equal(make({ apiKey: undefined }).needsApiKey, false);
    assert.equal(new OpenAiSummarizer({ model: "m", maxOutputTokens: 1, apiKey: "k" }).needsApiKey, false);
  });
});

describe("openai helpers", () => {
  it("usageFromOpenAi mirrors pi-ai's parseChunkUsage", () => {
    assert.deepEqual(usageFromOpenAi({ prompt_tokens: 10, completion_tokens: 4 }), {
      input: 10,
      output: 4,
      cacheRead: 0,
      cacheWrite: 0,
      reasoning: 0,
      totalTokens: 14,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    });
    assert.equal(usageFromOpenAi({ prompt_tokens: 10, prompt_cache_hit_tokens: 3, completion_tokens: 1 }).input, 7);
    assert.equal(
      usageFromOpenAi({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 2, cache_write_tokens: 3 } }).input,
      5,
    );
  });
  it("stripThinking drops only a leading think block", () => {
    assert.equal(stripThinking("<think>a\nb</think>\n\n## Goal"), "## Goal");
    assert.equal(stripThinking("## Goal <think>x</think>"), "## Goal <think>x</think>");
  });
});
