#!/usr/bin/env node
// The demo summarizer: a tiny OpenAI-compatible Chat Completions server on 127.0.0.1 so that
// "Pi Context: Compact Session…" can be tried in `npm run demo` without an API key or a language model.
//
// It does not understand anything: it writes a checkpoint in pi's summary format from what it
// finds in the request — the user requests in <conversation>, the tool calls, the previous
// summary's goal and done items, the "Additional focus" line — and streams it in small pieces so
// the progress notification is visible. It never calls out to the network.
//
//   import { startDemoSummarizer } from "./demo-summarizer.mjs";
//   const s = await startDemoSummarizer();   // s.baseURL = http://127.0.0.1:<port>/v1, s.model
//   …; await s.close();
//
//   node scripts/demo-summarizer.mjs [--port N]   (prints the base URL; Ctrl-C stops)
//
// Routes: POST /v1/chat/completions (stream or not), GET /v1/models. Any API key or none.
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const DEMO_MODEL = "demo-summarizer";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** First line of a text, at most `max` characters. */
function firstLine(text, max = 90) {
  const line = (text.split("\n").find((l) => l.trim()) ?? "").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The body of one `## Heading` section of a markdown summary (until the next `## `). */
function section(markdown, heading) {
  const m = new RegExp(`^## ${heading}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, "m").exec(markdown);
  return m ? m[1].trim() : "";
}

/**
 * The checkpoint text for one request's user prompt (pi's layout: `<conversation>…</conversation>`,
 * optional `<previous-summary>`, instructions, optional `Additional focus: …`; or the split-turn
 * prefix request that starts with `# Conversation`).
 * @param {string} prompt
 */
export function demoSummary(prompt) {
  const focus = /\n\nAdditional focus: ([^\n]*)\s*$/.exec(prompt)?.[1]?.trim();
  const turnPrefix = prompt.startsWith("# Conversation\n");
  const conversation = turnPrefix
    ? prompt.slice(0, prompt.indexOf("\n# Instructions"))
    : (/<conversation>\n([\s\S]*?)\n<\/conversation>/.exec(prompt)?.[1] ?? "");
  const previous = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(prompt)?.[1] ?? "";
  const requests = [...conversation.matchAll(/^\[User\]: (.*)$/gm)].map((m) => firstLine(m[1])).filter(Boolean);
  const tools = new Map();
  for (const m of conversation.matchAll(/^\[Assistant tool calls\]: (.*)$/gm)) {
    for (const call of m[1].matchAll(/(\w+)\(/g)) tools.set(call[1], (tools.get(call[1]) ?? 0) + 1);
  }
  const toolText = [...tools].map(([name, count]) => `${name} ×${count}`).join(", ") || "none";
  const note =
    "- **Demo summarizer**: written by pi-context's local demo summarizer (no language model): it lists the requests and tool calls it found";
  if (turnPrefix) {
    return [
      "## Original Request",
      requests[0] ?? "(no user message in this part of the turn)",
      "",
      "## Early Progress",
      `- Tool calls so far: ${toolText}`,
      "",
      "## Context for Suffix",
      `- The turn continues after these steps${focus ? `; focus: ${focus}` : ""}`,
    ].join("\n");
  }
  const previousGoal = section(previous, "Goal");
  const previousDone = section(previous, "Progress")
    .split("\n")
    .filter((l) => l.startsWith("- [x]"));
  const last = requests[requests.length - 1];
  const done = [...previousDone, ...requests.slice(0, -1).map((r) => `- [x] ${r}`)];
  return [
    "## Goal",
    previousGoal ||
      (requests[0] ? `Work through the user's requests, starting with: ${requests[0]}` : "Continue the session's work"),
    "",
    "## Constraints & Preferences",
    focus ? `- Focus asked for this summary: ${focus}` : "- (none)",
    "",
    "## Progress",
    "### Done",
    ...(done.length ? done.slice(-12) : ["- [x] (nothing finished yet)"]),
    "",
    "### In Progress",
    `- [ ] ${last ?? "Continue the current task"}`,
    "",
    "### Blocked",
    "- (none)",
    "",
    "## Key Decisions",
    note,
    "",
    "## Next Steps",
    "1. Finish the request in progress",
    "2. Continue with the next request",
    "",
    "## Critical Context",
    `- ${requests.length} user ${requests.length === 1 ? "request" : "requests"} and these tool calls were summarized: ${toolText}`,
  ].join("\n");
}

/** Split a text into about `n` pieces (at line ends where possible). */
function pieces(text, n = 14) {
  const out = [];
  const size = Math.max(1, Math.ceil(text.length / n));
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + size);
    const nl = text.indexOf("\n", end);
    if (nl !== -1 && nl - end < 40) end = nl + 1;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/**
 * Start the demo summarizer on 127.0.0.1.
 * @param {{port?: number, chunkDelayMs?: number, log?: (line: string) => void}} [options]
 * @returns {Promise<{baseURL: string, port: number, model: string, requests: number, close(): Promise<void>}>}
 */
export async function startDemoSummarizer(options = {}) {
  const delay = options.chunkDelayMs ?? 120;
  const state = { requests: 0 };
  const sockets = new Set();
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const json = (status, body) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method === "GET" && req.url?.endsWith("/models"))
      return json(200, { object: "list", data: [{ id: DEMO_MODEL, object: "model", owned_by: "pi-context-demo" }] });
    if (!(req.method === "POST" && req.url?.endsWith("/chat/completions")))
      return json(404, { error: { message: `no route ${req.method} ${req.url}` } });
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return json(400, { error: { message: "the body is not JSON" } });
    }
    state.requests++;
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const prompt = String(messages.filter((m) => m.role === "user").pop()?.content ?? "");
    const text = demoSummary(prompt);
    const promptTokens = Math.ceil(JSON.stringify(messages).length / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: Math.ceil(text.length / 4),
      total_tokens: promptTokens + Math.ceil(text.length / 4),
    };
    options.log?.(
      `request ${state.requests}: ${Math.round(prompt.length / 1000)}k characters → ${text.length} characters`,
    );
    const id = `demo-${state.requests}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? DEMO_MODEL;
    if (!body.stream) {
      return json(200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    const chunk = (delta, finish) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    send(chunk({ role: "assistant", content: "" }, null));
    for (const piece of pieces(text)) {
      await sleep(delay);
      if (res.destroyed) return; // the client cancelled
      send(chunk({ content: piece }, null));
    }
    send(chunk({}, "stop"));
    send({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
    res.end("data: [DONE]\n\n");
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const port = server.address().port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    model: DEMO_MODEL,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--port");
  const s = await startDemoSummarizer({
    ...(i > 0 ? { port: Number(process.argv[i + 1]) } : {}),
    log: (l) => console.log(`[demo-summarizer] ${l}`),
  });
  console.log(`[demo-summarizer] ${s.baseURL} (model ${s.model}); Ctrl-C stops`);
}
