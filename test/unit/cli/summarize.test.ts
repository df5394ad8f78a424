/**
 * `pi-context summarize FILE FROM TO` against the scripted OpenAI-compatible server: the dry run's
 * preview (what is summarized, the widening, tokens before → after, the cache effect, the price
 * lines) in text and JSON with nothing sent or written; the write (one append: the note in the
 * first message, the rest omitted); refusals with exit 1 and the file byte-identical; usage errors.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { startScriptedServer, type ScriptedServer } from "../../support/scripted-openai";
import { SessionBuilder } from "../../support/session-builder";
import { runCli, writeOldSession } from "../../support/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-summarize-"));
const agentDir = path.join(tmp, "agent");
let server: ScriptedServer;
let saved: NodeJS.ProcessEnv;
let n = 0;

before(async () => {
  fs.mkdirSync(agentDir, { recursive: true });
  server = await startScriptedServer();
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  saved = { ...process.env };
  delete process.env.OPENAI_API_KEY;
  process.env.PI_CONTEXT_API_KEY = "sk-cli-span";
  server.reset();
});
afterEach(() => {
  process.env = saved;
});

function fresh(): string {
  const b = new SessionBuilder()
    .user("u1", "find the bug")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", name: "read", arguments: { path: "src/a.ts" } }] })
    .result("r1", "c1", "z".repeat(6000))
    .assistant("a2", { text: "the bug is in a.ts" })
    .bash("x1", "npm test", "1 failing")
    .user("u2", "fix it")
    .assistant("a3", { text: "fixed" });
  return writeOldSession(path.join(tmp, `s${++n}.jsonl`), b.jsonl());
}

const common = (file: string, from: string, to: string) => [
  "summarize",
  file,
  from,
  to,
  "--agent-dir",
  agentDir,
  "--base-url",
  server.baseURL,
  "--model",
  "m",
  "--guard-seconds",
  "0",
];

describe("pi-context summarize", () => {
  it("--dry-run: the preview (widened span, tokens, cache, price), nothing sent or written; --json the same numbers", async () => {
    const file = fresh();
    const bytes = fs.readFileSync(file);
    const r = await runCli([...common(file, "r1", "a2"), "--dry-run"]);
    assert.equal(r.code, 0, r.err);
    // the result's call is before the span: the widening takes its assistant in, which carries the note
    assert.match(r.out, /^note +\[pi-context: summary of 3 messages, [\d,]+ tokens, entries a1…a2\]$/m);
    assert.match(
      r.out,
      /^Summarizes 3 messages \(≈[\d,]+ tokens\) from a1 to a2 into one note in place of the first one \(assistant message a1\)/m,
    );
    assert.match(
      r.out,
      /^Widened to whole tool call \/ result groups .*: a1 added to the span you chose \(r1 to a2\)\.$/m,
    );
    assert.match(r.out, /^Prompt cache: the next request sends ≈[\d,]+ tokens uncached \(everything from a1 on\)/m);
    assert.match(r.out, /^Break-even: /m);
    assert.match(r.out, /^Dry run: nothing was sent or written\.$/m);
    const j = JSON.parse((await runCli([...common(file, "r1", "a2"), "--dry-run", "--json"])).out);
    assert.deepEqual(j.messages, ["a1", "r1", "a2"]);
    assert.deepEqual(j.preview.widenedBy, ["a1"]);
    assert.ok(j.preview.tokensAfter.high < j.preview.tokensBefore);
    assert.ok(j.request.prompt.includes("[... 4000 more characters truncated]"));
    assert.equal(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(bytes));
  });

  it("--yes: summarizes and appends the note and the omissions in one write", async () => {
    const file = fresh();
    const bytes = fs.readFileSync(file);
    server.script({ text: "## Goal\nFind the bug." });
    const r = await runCli([...common(file, "u1", "a2"), "--yes", "--json"]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.summarized, true);
    assert.deepEqual(
      j.entries.map((e: { targetId: string; replacement: unknown }) => [e.targetId, e.replacement === null]),
      [
        ["u1", false],
        ["r1", true],
        ["a1", true],
        ["a2", true],
      ],
    );
    assert.match(
      j.note,
      /^\[pi-context: summary of 4 messages, [\d,]+ tokens, entries u1…a2\]\n\n## Goal\nFind the bug\.$/,
    );
    assert.ok(fs.readFileSync(file).subarray(0, bytes.length).equals(bytes));
    assert.equal(server.requests[0]!.authorization, "Bearer sk-cli-span");
  });

  it("refused (a bash execution in the span): exit 1, why, nothing sent or written; usage errors exit 2", async () => {
    const file = fresh();
    const bytes = fs.readFileSync(file);
    const r = await runCli([...common(file, "a2", "u2"), "--yes"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /The span includes x1 \(bashExecution\), which a context edit cannot change/);
    assert.equal(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(bytes));
    const usage = await runCli(["summarize", file, "u1"]).catch((e: Error) => e);
    assert.ok(usage instanceof Error || usage.code === 2);
  });
});
