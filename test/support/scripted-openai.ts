/**
 * A scripted OpenAI-compatible HTTP server on 127.0.0.1 (random port) standing in for the remote
 * summariser API in tests: `POST /v1/chat/completions`, streaming (SSE, `data: {...}\n\n` chunks and
 * `data: [DONE]`) and non-streaming JSON, answers taken from a script, every request recorded.
 *
 * Used by the unit tests (plain Node) and by the integration suites inside the real extension host.
 */

import * as http from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted answer. */
export interface ScriptedAnswer {
  /** Answer text (streamed in `chunks` pieces, or split into ~3 pieces). */
  text?: string;
  /** Explicit stream pieces (overrides splitting `text`). */
  chunks?: string[];
  /** `finish_reason` (default `stop`). */
  finishReason?: string | null;
  /** Usage reported (OpenAI shape); default derived from lengths; `null` = none. */
  usage?: Record<string, unknown> | null;
  /** Answer with this HTTP status and error body instead. */
  status?: number;
  errorMessage?: string;
  /** Reply with a tool call instead of text. */
  toolCall?: boolean;
  /** The tool call's name and JSON arguments (default `read` `{"path":"x"}`), and its id (default `call_1`). */
  tool?: { name?: string; arguments?: string; id?: string };
  /** Delay before each chunk, and before a streamed tool call (ms). */
  chunkDelayMs?: number;
  /**
   * Send the first chunk, then never finish (until the client disconnects); without streaming,
   * the headers and the start of the body.
   */
  hang?: boolean;
  /** A streamed answer's body, sent verbatim after the headers (malformed events, control bytes). */
  raw?: string;
  /** Destroy the socket without any answer (network failure). */
  destroy?: boolean;
}

/** A recorded request. */
export interface RecordedRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  body: {
    model?: string;
    messages?: { role: string; content: string }[];
    stream?: boolean;
    stream_options?: unknown;
    max_tokens?: number;
    max_completion_tokens?: number;
    [key: string]: unknown;
  };
}

/** The running server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete (cancellations). */
  disconnects: number;
  /** The most chat-completion requests open at the same time (since start or `reset`). */
  maxInFlight: number;
  /** Queue answers (consumed in order; when empty, `fallback` answers). */
  script(...answers: ScriptedAnswer[]): void;
  /** Forget queued answers and recorded requests. */
  reset(): void;
  /** Answer used when the queue is empty. */
  fallback: ScriptedAnswer;
  /** Resolves when `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function splitText(text: string): string[] {
  if (text.length < 3) return [text];
  const a = Math.floor(text.length / 3);
  return [text.slice(0, a), text.slice(a, 2 * a), text.slice(2 * a)];
}

function defaultUsage(body: RecordedRequest["body"], text: string): Record<string, unknown> {
  const prompt = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion = Math.ceil(text.length / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start a server on 127.0.0.1 with a random port. */
export async function startScriptedServer(
  fallback: ScriptedAnswer = { text: "## Goal\nScripted summary." },
): Promise<ScriptedServer> {
  const queue: ScriptedAnswer[] = [];
  const requests: RecordedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const state = { disconnects: 0, inFlight: 0, maxInFlight: 0 };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: RecordedRequest["body"];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    } catch {
      body = {};
    }
    requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
    for (const w of waiters.splice(0)) {
      if (requests.length >= w.n) w.resolve();
      else waiters.push(w);
    }
    if (!(req.method === "POST" && req.url?.endsWith("/chat/completions"))) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const answer = queue.shift() ?? api.fallback;
    let finished = false;
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    res.on("close", () => {
      state.inFlight--;
      if (!finished) state.disconnects++;
    });
    if (answer.destroy) {
      req.socket.destroy();
      return;
    }
    if (answer.status && answer.status >= 400) {
      finished = true;
      res.writeHead(answer.status, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: answer.errorMessage ?? `scripted error ${answer.status}`,
            type: "scripted_error",
            code: null,
          },
        }),
      );
      return;
    }
    const text = answer.text ?? "";
    const finish = answer.finishReason === undefined ? (answer.toolCall ? "tool_calls" : "stop") : answer.finishReason;
    const usage = answer.usage === null ? undefined : (answer.usage ?? defaultUsage(body, text));
    const id = `chatcmpl-${requests.length}`;
    const model = body.model ?? "scripted";
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = [
      {
        index: 0,
        id: answer.tool?.id ?? "call_1",
        type: "function",
        function: { name: answer.tool?.name ?? "read", arguments: answer.tool?.arguments ?? '{"path":"x"}' },
      },
    ];
    if (!body.stream && answer.hang) {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":"');
      return; // never finishes; the client must give up
    }
    if (!body.stream) {
      finished = true;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created,
          model,
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: answer.toolCall ? null : text,
                ...(answer.toolCall ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}),
              },
              finish_reason: finish,
            },
          ],
          ...(usage ? { usage } : {}),
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    const chunk = (delta: unknown, finishReason: string | null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    if (answer.raw !== undefined) {
      finished = true;
      res.end(answer.raw);
      return;
    }
    send(chunk({ role: "assistant", content: "" }, null));
    const pieces = answer.toolCall ? [] : (answer.chunks ?? splitText(text));
    for (const piece of pieces) {
      if (answer.chunkDelayMs) await sleep(answer.chunkDelayMs);
      if (res.destroyed) return;
      send(chunk({ content: piece }, null));
      if (answer.hang) return; // never finishes; the client must cancel
    }
    if (answer.hang) return;
    if (answer.toolCall && answer.chunkDelayMs) await sleep(answer.chunkDelayMs);
    if (res.destroyed) return;
    if (answer.toolCall) send(chunk({ tool_calls: toolCalls }, null));
    send(chunk({}, finish));
    if (usage) send({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
    res.write("data: [DONE]\n\n");
    finished = true;
    res.end();
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const api: ScriptedServer = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get disconnects() {
      return state.disconnects;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    script: (...answers) => queue.push(...answers),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      state.maxInFlight = state.inFlight;
    },
    fallback,
    waitForRequests: (n, timeoutMs = 10000) =>
      new Promise<void>((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${n} requests (got ${requests.length})`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return api;
}
