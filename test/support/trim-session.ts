/**
 * A session with something of every kind context surgery suggests, for the trim tests (unit,
 * conformance, integration, e2e) and the committed fixture `test/fixtures/trim/surgery.jsonl`
 * (written by `node out/test/support/trim-session.js --write`; a unit test checks the file is this
 * builder's output, and the conformance suite that pi 1.6.0 loads it as we do):
 *
 *   u1 fix the parser test → a1 read src/parser.ts (c1) + bash npm test (c2)
 *      r1 parser.ts (6,000 chars)   r2 npm test failed (isError, 3,000 chars)
 *      a2 edit src/parser.ts (c3) → r3 ok;  a3 read src/parser.ts again (c4) → r4 (6,000 chars);  a4 "Fixed."
 *   u2 take a screenshot → a5 screenshot (c5) → r5 text + one PNG image;  a6
 *   u3 run the whole suite → a7 bash npm run test:all (c6) → r6 (24,000 chars);  a8 aborted
 *   u4 only the parser tests → a9 bash (c7) → r7;  a10 "All parser tests pass." (usage 11,900)
 *
 * Model `p/m`; the agent dir (`surgery.agent/`) gives it a 16,000-token window, reserve 4,000.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { SessionBuilder } from "./session-builder";

/** The fixture's directory in the repository. */
export const TRIM_FIXTURE_DIR = path.join(__dirname, "..", "..", "..", "test", "fixtures", "trim");
export const TRIM_FIXTURE = path.join(TRIM_FIXTURE_DIR, "surgery.jsonl");
export const TRIM_AGENT_DIR = path.join(TRIM_FIXTURE_DIR, "surgery.agent");

/** 1x1 transparent PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function lines(prefix: string, chars: number): string {
  let out = "";
  for (let i = 0; out.length < chars; i++) out += `${prefix} line ${i}: ${"x".repeat(60)}\n`;
  return out.slice(0, chars);
}

/** The session (see the file comment). */
export function trimSession(cwd = "/tmp/trim-project"): SessionBuilder {
  const b = new SessionBuilder(cwd);
  const result = (id: string, callId: string, toolName: string, content: unknown[], isError = false) =>
    b.message(id, { role: "toolResult", toolCallId: callId, toolName, content, isError });
  b.system("s", "You are pi, a coding agent.");
  b.user("u1", "Fix the failing parser test");
  b.assistant("a1", {
    text: "Let me look at the parser and run the tests.",
    calls: [
      { id: "c1", name: "read", arguments: { path: "src/parser.ts" } },
      { id: "c2", name: "bash", arguments: { command: "npm test" } },
    ],
    usage: 900,
  });
  result("r1", "c1", "read", [{ type: "text", text: lines("export const parser", 6000) }]);
  result(
    "r2",
    "c2",
    "bash",
    [{ type: "text", text: `npm test failed\n${lines("FAIL test/parser.test.ts", 3000)}` }],
    true,
  );
  b.assistant("a2", {
    text: "The tokenizer drops the last token.",
    calls: [{ id: "c3", name: "edit", arguments: { path: "src/parser.ts", oldText: "i < n - 1", newText: "i < n" } }],
    usage: 3400,
  });
  result("r3", "c3", "edit", [{ type: "text", text: "Successfully replaced 1 occurrence in src/parser.ts." }]);
  b.assistant("a3", { calls: [{ id: "c4", name: "read", arguments: { path: "src/parser.ts" } }], usage: 3500 });
  result("r4", "c4", "read", [{ type: "text", text: lines("export const parser (fixed)", 6000) }]);
  b.assistant("a4", { text: "Fixed: the loop now includes the last token.", usage: 5000 });
  b.user("u2", "Take a screenshot of the demo page");
  b.assistant("a5", {
    calls: [{ id: "c5", name: "screenshot", arguments: { url: "http://localhost:3000" } }],
    usage: 5100,
  });
  result("r5", "c5", "screenshot", [
    { type: "text", text: "Screenshot of http://localhost:3000 (1280x800)" },
    { type: "image", data: PNG, mimeType: "image/png" },
  ]);
  b.assistant("a6", { text: "Here is the screenshot: the demo page renders.", usage: 6400 });
  b.user("u3", "Run the whole test suite");
  b.assistant("a7", { calls: [{ id: "c6", name: "bash", arguments: { command: "npm run test:all" } }], usage: 6500 });
  result("r6", "c6", "bash", [{ type: "text", text: lines("PASS test/suite", 24000) }]);
  b.assistant("a8", { text: "The suite is still running", stopReason: "aborted" });
  b.user("u4", "Run only the parser tests instead");
  b.assistant("a9", {
    calls: [{ id: "c7", name: "bash", arguments: { command: "npm test -- parser" } }],
    usage: 11800,
  });
  result("r7", "c7", "bash", [{ type: "text", text: "PASS test/parser.test.ts (4 tests)" }]);
  b.assistant("a10", { text: "All parser tests pass.", usage: 11900 });
  return b;
}

/** `settings.json` and `models.json` of the fixture's agent dir. */
export const TRIM_AGENT_FILES = {
  "settings.json": {
    defaultProvider: "p",
    defaultModel: "m",
    cacheWarming: "off",
    enableInstallTelemetry: false,
    retry: { enabled: false },
    compaction: { enabled: true, reserveTokens: 4000, keepRecentTokens: 3000 },
  },
  "models.json": {
    providers: {
      p: {
        baseUrl: "http://127.0.0.1:9/v1",
        api: "openai-completions",
        apiKey: "dummy",
        models: [
          { id: "m", name: "m", contextWindow: 16000, maxTokens: 2048, input: ["text", "image"], reasoning: false },
        ],
      },
    },
  },
};

/** Write the fixture and its agent dir (the committed files). */
export function writeTrimFixture(dir = TRIM_FIXTURE_DIR): void {
  fs.mkdirSync(path.join(dir, "surgery.agent"), { recursive: true });
  fs.writeFileSync(path.join(dir, "surgery.jsonl"), trimSession().jsonl());
  for (const [name, body] of Object.entries(TRIM_AGENT_FILES))
    fs.writeFileSync(path.join(dir, "surgery.agent", name), `${JSON.stringify(body, null, 2)}\n`);
}

if (require.main === module && process.argv.includes("--write")) writeTrimFixture();
