/**
 * Issue 16, items 1, 2 and 4: files pi reads in surprising ways, judged by pi 1.6.0 itself.
 *
 * - 16.1: long lines (≥ 8 kB) whose long strings hold an escape `JSON.parse` rejects (`\x41`,
 *   `\u12G4`) or one corrupted byte: pi skips the line; so must we (entry count, leaf, path, tokens).
 * - 16.2: nesting far deeper than 512 levels (in a long line, a system message's `toolsAdded`,
 *   tool-call arguments, a pi-context leaf marker's data, 20 000 levels in a system message): read
 *   like pi, never a failed open.
 * - 16.4: type-confused entries pi keeps (`message: false`, a string message) and header versions
 *   that are not numbers (`"3"`, `"2"`, `[3]`, `"abc"`, `true`, `2.5`): the same tree and tokens as
 *   pi; where we differ on purpose (non-string ids, non-object lines), a precise warning.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { SessionFile } from "../../src/core/read/session";
import { oracleView } from "../support/oracle-view";
import { REPO_ROOT } from "../support/paths";

interface Oracle {
  oracle(request: { entriesJsonl: string; args: string[] }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

let oracle: Oracle;
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
});

const KEYS = ["entryCount", "leafId", "pathIds", "contextEntries", "estimateProjectedContextTokens"];

const header = (version?: unknown): string =>
  JSON.stringify({
    type: "session",
    ...(version === undefined ? {} : { version }),
    id: "s1",
    timestamp: "2026-01-01T00:00:00.000Z",
    cwd: "/tmp",
  });
const user = (id: string, parentId: string | null, text: string): string =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
  });
const assistant = (id: string, parentId: string, total: number): string =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:02.000Z",
    message: {
      role: "assistant",
      content: [{ type: "text", text: "answer" }],
      usage: { input: total - 20, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: total },
      stopReason: "stop",
      provider: "openai",
      model: "gpt-4o",
    },
  });
const hook = (id: string, parentId: string): string =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:03.000Z",
    message: { role: "hookMessage", customType: "x", content: "hook text", display: true, timestamp: 1 },
  });
const toolResult = (id: string, parentId: string, text: string): string =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:04.000Z",
    message: {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text }],
      isError: false,
    },
  });
const nest = (depth: number): string => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
const longText = 'console.log("café 😀");\n\tpath\\to\\file '.repeat(400);

/** Replace the first occurrence of `find` in a line by `by` (a corruption of the raw bytes). */
function corrupt(line: string, find: string, by: string): string {
  const at = line.indexOf(find, line.length / 2);
  assert.ok(at > 0, `${find} in the line`);
  return line.slice(0, at) + by + line.slice(at + find.length);
}

const FILES: Record<string, string[]> = {
  // 16.1: the corrupted long line sits between entries, then is the last line.
  "invalid \\x escape in a long string": [
    header(3),
    user("a1", null, "hello"),
    assistant("a2", "a1", 500),
    corrupt(toolResult("a3", "a2", longText), "\\t", "\\x41"),
    user("a4", "a2", "after"),
  ],
  "invalid \\u escape, last line": [
    header(3),
    user("a1", null, "hello"),
    assistant("a2", "a1", 500),
    corrupt(toolResult("a3", "a2", longText), "\\n", "\\u12G4"),
  ],
  "a control byte in a long string": [
    header(3),
    user("a1", null, "hello"),
    assistant("a2", "a1", 500),
    corrupt(toolResult("a3", "a2", longText), " ", "\u0001"),
    user("a4", "a2", "after"),
  ],
  "an unescaped quote in a long string": [
    header(3),
    user("a1", null, "hello"),
    corrupt(toolResult("a3", "a1", longText), "\\t", '"'),
  ],
  "an escaped closing quote": [
    header(3),
    user("a1", null, "hello"),
    corrupt(toolResult("a3", "a1", longText), '"}]', '\\"}]'),
  ],
  // 16.2
  "600 levels in a long line": [
    header(3),
    user("a1", null, "hello"),
    toolResult("a2", "a1", longText).replace('"isError"', `"details":${nest(600)},"isError"`),
  ],
  "2 500 levels in a system message and tool-call arguments, 20 000 in a system message": [
    header(3),
    `{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"system","content":"sys","toolsAdded":${nest(2500)}}}`,
    `{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{"a":${nest(2500)}}}],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"toolUse"}}`,
    user("a3", "a2", "question"),
    `{"type":"message","id":"a4","parentId":"a3","timestamp":"t","message":{"role":"system","content":${nest(20000)}}}`,
  ],
  "2 500 levels in a pi-context leaf marker": [
    header(3),
    user("a1", null, "hello"),
    `{"type":"custom","id":"a2","parentId":"a1","timestamp":"t","customType":"pi-context/leaf","data":{"x":${nest(2500)}}}`,
  ],
  // 16.4
  'version "3" (no migration)': [header("3"), user("a1", null, "hello"), hook("a2", "a1"), assistant("a3", "a2", 300)],
  'version "2" (v2 → v3 only)': [header("2"), user("a1", null, "hello"), hook("a2", "a1"), assistant("a3", "a2", 300)],
  "version [3]": [header([3]), user("a1", null, "hello"), hook("a2", "a1")],
  'version "abc" (no migration applies)': [header("abc"), user("a1", null, "hello"), hook("a2", "a1")],
  "version 2.5": [header(2.5), user("a1", null, "hello"), hook("a2", "a1")],
  "message: false as the leaf": [
    header(3),
    user("a1", null, "hello"),
    assistant("a2", "a1", 300),
    '{"type":"message","id":"a3","parentId":"a2","timestamp":"t","message":false}',
  ],
  "message: false inside the path, a string message": [
    header(3),
    user("a1", null, "hello"),
    '{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":false}',
    user("a3", "a2", "after"),
    '{"type":"message","id":"a4","parentId":"a3","timestamp":"t","message":"text"}',
    user("a5", "a4", "and after"),
  ],
};

describe("reading agrees with pi 1.6.0 on corrupted, deep and type-confused lines (issue 16.1, 16.2, 16.4)", () => {
  for (const [name, lines] of Object.entries(FILES)) {
    it(name, async () => {
      const jsonl = `${lines.join("\n")}\n`;
      const pi = await oracle.oracle({
        entriesJsonl: jsonl,
        args: ["--agent-dir", "/nonexistent", "--no-project-settings"],
      });
      const session = SessionFile.fromBytes(jsonl);
      const ours = oracleView(session, {
        settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
        contextWindow: null,
      });
      for (const key of KEYS) assert.deepEqual(ours[key], pi[key], `${key}: ${JSON.stringify(session.diagnostics)}`);
    });
  }

  it("v1 migration never applies to a header pi reads as version ≥ 2", () => {
    for (const version of ["3", [3], "abc", 3, "2", 2.5]) {
      const session = SessionFile.fromBytes(`${header(version)}\n${user("a1", null, "x")}\n${hook("a2", "a1")}\n`);
      assert.deepEqual(
        session.records.map((r) => r.id),
        ["a1", "a2"],
        `version ${JSON.stringify(version)}`,
      );
    }
  });

  it("warns precisely where pi keeps what we skip: non-string ids, non-object lines; keeps a null message as pi does", () => {
    const cases: [string, RegExp, number][] = [
      [
        '{"type":"message","id":5,"parentId":"a1","timestamp":"t","message":{"role":"user","content":"x"}}',
        /a number id 5, not a string \(pi 1\.6\.0 keeps it/,
        1,
      ],
      [
        '{"type":"message","parentId":"a1","timestamp":"t","message":{"role":"user","content":"x"}}',
        /with no id, not a string/,
        1,
      ],
      ["[1,2]", /not an object \(pi 1\.6\.0 still counts it as an entry/, 1],
      [
        // pi keeps it in its tree (a string id); a context through it throws (issue 43, kind 5)
        '{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":null}',
        /message entry a2 has message null; kept in the tree, as pi 1\.6\.0 keeps it, but pi cannot build a context from a branch through it/,
        2,
      ],
    ];
    for (const [line, expected, records] of cases) {
      const session = SessionFile.fromBytes(`${header(3)}\n${user("a1", null, "x")}\n${line}\n`);
      assert.equal(session.records.length, records);
      assert.match(session.diagnostics.map((d) => d.message).join("\n"), expected);
    }
  });
});
