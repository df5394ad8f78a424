/**
 * The OpenAI-compatible summarizer against the scripted server on 127.0.0.1: the request it sends,
 * streaming and non-streaming answers, usage mapping, and every failure (HTTP error, network
 * failure, empty answer, `length` stop, tool call, cancel).
 */

import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { guardConsole } from "../../../src/cli/main";
import { after, before, beforeEach, describe, it } from "node:test";
import { completeSummary, SummarizerError } from "../../../src/core/flows/summarizer";
import { parseArgs } from "../../../src/cli/args";
import { summarizerFromFlags } from "../../../src/cli/summarizer";
import {
  displayBaseURL,
  isOpenAiOrigin,
  OpenAiSummarizer,
  redactSecret,
  stripThinking,
  withoutStatus,
  usageFromOpenAi,
} from "../../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../../support/scripted-openai";
import { ZERO_COST } from "../../support/session-builder";

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
      cost: ZERO_COST,
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
      /Check the API key in PI_CONTEXT_API_KEY \(OPENAI_API_KEY is only sent to https:\/\/api\.openai\.com, not to http:\/\/127\.0\.0\.1:\d+\)\.$/,
      "the CLI's wording by default (a server other than OpenAI's)",
    );
    assert.doesNotMatch(e.message, /Pi Context: Set API Key/);
    server.script({ status: 403, errorMessage: "forbidden" });
    const v = await rejectsWith(make({ surface: "vscode" }).summarize(REQUEST), "http", /HTTP 403/);
    assert.match(v.message, /Check the API key \("Pi Context: Set API Key…"\)\.$/, "VS Code's wording");
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

  it("an answer that stops coming (streamed or not) is given up on after timeoutMs, not waited for forever", async () => {
    for (const stream of [true, false]) {
      server.script({ chunks: ["## Goal\n", "never"], hang: true });
      const disconnects = server.disconnects;
      const seen: string[] = [];
      const started = Date.now();
      await rejectsWith(
        make({ stream, timeoutMs: 300 }).summarize(REQUEST, { onText: (d) => seen.push(d) }),
        "network",
        /stopped sending its answer: nothing came for 0 s/,
      );
      assert.ok(Date.now() - started < 5000, "given up on well before a test timeout");
      assert.deepEqual(seen, stream ? ["", "## Goal\n"].filter(Boolean) : []);
      while (server.disconnects <= disconnects && Date.now() - started < 3000)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(server.disconnects, disconnects + 1, "the connection is closed");
    }
    // a slow answer whose pieces keep coming is not cut: each gap (150 ms) is within the limit (400 ms)
    server.script({ chunks: ["## Goal\n", "a ", "b ", "c"], chunkDelayMs: 150 });
    const slow = await make({ timeoutMs: 400 }).summarize(REQUEST);
    assert.equal(slow.text, "## Goal\na b c");
  });

  it("a malformed stream event: an error; the package prints nothing, and the CLI's console guard makes what it still prints text", async () => {
    const printed: string[] = [];
    const restore = guardConsole((s) => printed.push(s));
    try {
      server.script({ raw: "data: {not json \u001b]0;PWNED\u0007 \u001b[2J\n\n" });
      const error = await rejectsWith(make().summarize(REQUEST), "network");
      assert.doesNotMatch(error.message, /sk-test-secret/);
      assert.deepEqual(printed, [], "the package's logger is off");
      // an Assistants-API event name: the package prints it with console.error whatever its log level
      server.script({ raw: "event: thread.x\ndata: {not json \u001b[2J\n\n" });
      await rejectsWith(make().summarize(REQUEST), "network");
    } finally {
      restore();
    }
    assert.ok(printed.length > 0);
    for (const line of printed) assert.doesNotMatch(line, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    assert.match(printed.join("\n"), /\\u001b\[2J/);
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
      /^No API key for https:\/\/api\.openai\.com\/v1: run "Pi Context: Set API Key…"/,
    );
    assert.doesNotMatch(vs.missingKeyError().message, /PI_CONTEXT_API_KEY|OPENAI_API_KEY|environment/);
    // other servers: no key needed up front (local servers), a key when given
    assert.equal(make({ apiKey: undefined }).needsApiKey, false);
    assert.equal(new OpenAiSummarizer({ model: "m", maxOutputTokens: 1, apiKey: "k" }).needsApiKey, false);
  });
});

describe("the API key: sent only where it belongs, never printed", () => {
  const KEY = "sk-proj-Abc123_secretKEY-987xyz";
  const b64 = (text: string) => Buffer.from(text).toString("base64");
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
  const make = (stream: boolean) =>
    new OpenAiSummarizer({
      baseURL: server.baseURL,
      apiKey: KEY,
      model: "m",
      maxOutputTokens: 100,
      maxRetries: 0,
      stream,
    });
  const echoes = [
    KEY,
    KEY.toUpperCase(),
    KEY.toLowerCase(),
    `Authorization: Bearer ${KEY}`,
    b64(KEY),
    b64(`Bearer ${KEY}`),
    b64(`Authorization: Bearer ${KEY}`),
    b64(`user:${KEY}`).replace(/\+/g, "-").replace(/\//g, "_"),
  ];
  const leaks = (text: string) =>
    [KEY, KEY.toUpperCase(), KEY.toLowerCase(), b64(KEY).slice(4, -4)].filter((form) =>
      text.toLowerCase().includes(form.toLowerCase()),
    );

  it("a finish_reason, an error body or the answer echoing the key (any case, base64): redacted everywhere", async () => {
    for (const echo of echoes) {
      for (const stream of [true, false]) {
        server.script({ text: "## Goal\nx", finishReason: `auth ${echo}` });
        const finish = await rejectsWith(make(stream).summarize(REQUEST), "http", /finish_reason/);
        assert.deepEqual(leaks(finish.message), [], `finish_reason (stream ${stream}): ${finish.message}`);
        assert.equal(finish.cause, undefined, "no raw cause carried along");
        server.script({ status: 400, errorMessage: `bad request from ${echo}` });
        const http = await rejectsWith(make(stream).summarize(REQUEST), "http", /HTTP 400/);
        assert.deepEqual(leaks(http.message), [], http.message);
        server.script({ text: `## Goal\nThe header was ${echo}.` });
        const ok = await make(stream).summarize(REQUEST);
        assert.deepEqual(leaks(ok.text), [], `the summary written to the session: ${ok.text}`);
        assert.match(ok.text, /\*\*\*/);
      }
    }
    assert.equal(server.requests[0]!.authorization, `Bearer ${KEY}`, "the key itself was sent, to the server chosen");
  });

  it("redactSecret covers every alignment of a base64 echo and leaves other text alone", () => {
    for (let pad = 0; pad < 6; pad++) {
      const encoded = b64(`${"x".repeat(pad)}${KEY}${"y".repeat(pad)}`);
      assert.deepEqual(leaks(redactSecret(encoded, KEY)), [], `prefix ${pad}`);
      assert.doesNotMatch(redactSecret(encoded, KEY), new RegExp(b64(KEY).slice(4, -4).replace(/[+/]/g, "\\$&")));
    }
    assert.equal(redactSecret("nothing secret here", KEY), "nothing secret here");
    assert.equal(redactSecret(`a ${KEY} b`, undefined), `a ${KEY} b`);
  });

  it("a base URL with a user name or password is refused, and never printed", () => {
    assert.throws(
      () => new OpenAiSummarizer({ baseURL: "https://me:hunter2@proxy.example/v1", model: "m", maxOutputTokens: 1 }),
      (e: unknown) =>
        e instanceof SummarizerError &&
        e.kind === "config" &&
        /must not contain a user name or password/.test(e.message) &&
        !/hunter2|me:/.test(e.message),
    );
    assert.equal(displayBaseURL("https://me:hunter2@proxy.example/v1?key=abc"), "https://proxy.example/v1?…");
    assert.doesNotMatch(displayBaseURL("not a url //me:pw@host"), /pw/);
  });

  it("the CLI sends OPENAI_API_KEY only to OpenAI's origin; PI_CONTEXT_API_KEY to the server given", async () => {
    const flags = (...argv: string[]) => parseArgs(argv, new Set(["no-stream"]));
    const openAiOnly = { OPENAI_API_KEY: KEY };
    const local = summarizerFromFlags(flags("--base-url", server.baseURL), openAiOnly).make();
    assert.equal(local.hasApiKey, false, "OPENAI_API_KEY is not for another server");
    server.script({ text: "## Goal\nlocal" });
    await local.summarize(REQUEST);
    assert.equal(server.requests.at(-1)!.authorization, undefined, "no Authorization header sent");
    const viaEnvURL = summarizerFromFlags(flags(), {
      ...openAiOnly,
      PI_CONTEXT_BASE_URL: "http://10.0.0.1:8080/v1",
    }).make();
    assert.equal(viaEnvURL.hasApiKey, false);
    assert.equal(summarizerFromFlags(flags(), openAiOnly).make().hasApiKey, true, "OpenAI itself gets it");
    const chosen = summarizerFromFlags(flags("--base-url", server.baseURL), {
      ...openAiOnly,
      PI_CONTEXT_API_KEY: "sk-chosen-0001",
    }).make();
    server.script({ text: "## Goal\nchosen" });
    await chosen.summarize(REQUEST);
    assert.equal(server.requests.at(-1)!.authorization, "Bearer sk-chosen-0001");
    assert.equal(isOpenAiOrigin(undefined), true);
    assert.equal(isOpenAiOrigin("https://api.openai.com/v1"), true);
    for (const other of [
      "http://api.openai.com/v1",
      "https://api.openai.com.evil.example/v1",
      "https://api.openai.com:8443/v1",
      server.baseURL,
    ])
      assert.equal(isOpenAiOrigin(other), false, other);
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
      cost: ZERO_COST,
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

describe("redirects (issue 43): refused, never followed", () => {
  interface Seen {
    method: string;
    url: string;
    body: string;
  }
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  let status = 307;
  before(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", body });
        if (req.url?.startsWith("/elsewhere")) {
          // what a follower would get: an answer that looks like a summary
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id: "x",
              object: "chat.completion",
              model: "m-1",
              choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "NOT A SUMMARY" } }],
            }),
          );
          return;
        }
        res.writeHead(status, { location: `${base.replace(/\/v1$/, "")}/elsewhere/v1/chat/completions?token=abc` });
        res.end("moved");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const code of [301, 302, 303, 307, 308])
    for (const stream of [true, false])
      it(`HTTP ${code} (${stream ? "streaming" : "not streaming"}): an http error naming the redirect; nothing reaches the new address`, async () => {
        status = code;
        seen.length = 0;
        const summarizer = new OpenAiSummarizer({
          baseURL: base,
          apiKey: "sk-test-secret-123",
          model: "m-1",
          maxOutputTokens: 4000,
          maxRetries: 2,
          stream,
        });
        const e = await rejectsWith(
          summarizer.summarize(REQUEST),
          "http",
          new RegExp(
            `answered HTTP ${code}, a redirect to http://127\\.0\\.0\\.1:\\d+/elsewhere/v1/chat/completions\\?…\\. .*does not follow redirects`,
          ),
        );
        assert.equal(e.status, code);
        assert.deepEqual(
          seen.map((s) => `${s.method} ${s.url}`),
          ["POST /v1/chat/completions"],
          "one request, to the configured address; none to the new one, no retry",
        );
      });
});
