/**
 * The fixed part of the context on the pi-written fixture `test/fixtures/fixed-context/` (values
 * worked out here from the file and its prices) and on hand-made system messages: older pi and
 * other writers, pi's layouts with awkward contents, a compaction's checkpoint, a section patch,
 * cache reads, unknown prices, codemode's nested calls. pi's own numbers are in
 * `test/conformance/fixed-context.test.ts`.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../../../src/core/read/session";
import { estimateTokens } from "../../../../src/core/read/estimate";
import { analyzeSession } from "../../../../src/core/rules/analyze";
import { buildProjection } from "../../../../src/core/rules/context";
import { NO_PRICES, type PriceLookup } from "../../../../src/core/rules/cost";
import {
  fixedContextOf,
  splitSystemMessage,
  toolKind,
  type FixedContext,
} from "../../../../src/core/rules/fixedContext";
import type { SystemMessage } from "../../../../src/core/types";
import { SessionBuilder } from "../../../support/session-builder";
import { FIXTURES } from "../../../support/paths";

const FIXTURE = path.join(FIXTURES, "fixed-context", "session.jsonl");
const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

function close(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(typeof actual === "number" && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

function fixedOf(b: SessionBuilder, prices: PriceLookup = NO_PRICES): FixedContext {
  const session = SessionFile.fromBytes(b.jsonl());
  return fixedContextOf(buildProjection(session), prices, session);
}

const system = (fields: Partial<SystemMessage>): Record<string, unknown> => ({
  role: "system",
  content: "",
  ...fields,
});
const tool = (name: string, description = "does things") => ({
  name,
  description,
  parameters: { type: "object", properties: {} },
});

describe("the fixture pi wrote (context files, skills, extension, MCP)", () => {
  it("parts, tokens and kinds; the parts add up to pi's estimate", async () => {
    const a = await analyzeSession(FIXTURE, { agentDir: path.join(FIXTURES, "fixed-context", "session.agent") });
    const f = a.inspect.fixedContext;
    assert.equal(f.layout, "sections");
    assert.equal(f.total, 2858);
    assert.equal(
      f.parts.reduce((s, p) => s + p.tokens, 0),
      2858,
    );
    const rows = f.parts.map((p) => [p.kind, p.name.replace(/^\/tmp\/[^/]+\//, ""), p.tokens, p.chars]);
    assert.deepEqual(rows, [
      ["section", "preamble", 32, 126],
      ["section", "tools", 81, 324],
      ["section", "rules", 181, 726],
      ["section", "docs", 306, 1221],
      ["section", "addendum", 19, 76],
      ["section", "project_context", 20, 82],
      ["context-file", "agent/AGENTS.md", 70, 279],
      ["context-file", "project/AGENTS.md", 249, 996],
      ["section", "skills", 80, 321],
      ["skill", "db-migration", 63, 251],
      ["skill", "release-notes", 65, 260],
      ["section", "cwd", 11, 46],
      ["extension-section", "team_notes", 45, 179],
      ["mcp-section", "mcp_servers", 51, 203],
      ["tool", "read", 210, 841],
      ["tool", "bash", 174, 694],
      ["tool", "edit", 316, 1266],
      ["tool", "write", 130, 518],
      ["extension-tool", "todo_list", 112, 448],
      ["extension-tool", "codemode", 454, 1817],
      ["mcp-tool", "mcp__notes__lookup", 81, 323],
      ["mcp-tool", "mcp__notes__search", 108, 433],
    ]);
    // the context files and skills keep their section
    assert.deepEqual(
      f.parts.filter((p) => p.section).map((p) => p.section),
      ["project_context", "project_context", "skills", "skills"],
    );
  });

  it("over 25 requests at the model's prices: cache reads from the second request, the patched section per request", async () => {
    const a = await analyzeSession(FIXTURE, { agentDir: path.join(FIXTURES, "fixed-context", "session.agent") });
    const f = a.inspect.fixedContext;
    // request 1: 2,843 fixed tokens (team_notes not yet patched) uncached at $3/M; request 2: the
    // same read from the cache at $0.30/M; requests 3–25: 2,858 tokens, all read from the cache
    assert.deepEqual(
      { ...f.session!, cost: undefined },
      {
        requests: 25,
        tokens: 2 * 2843 + 23 * 2858,
        cachedTokens: 2843 + 23 * 2858,
        cost: undefined,
        unpricedRequests: 0,
      },
    );
    close(f.session!.cost, (2843 * 3 + 2843 * 0.3 + 23 * 2858 * 0.3) / 1e6, "cost");
    const part = (name: string) => f.parts.find((p) => p.name === name)!;
    const codemode = part("codemode").session!;
    assert.deepEqual(
      { ...codemode, cost: undefined },
      {
        requests: 25,
        tokens: 25 * 454,
        cachedTokens: Math.round((454 / 2843) * 2843 + 23 * 454),
        cost: undefined,
        calls: 0,
      },
    );
    close(codemode.cost, (454 * 3 + 454 * 0.3 + 23 * 454 * 0.3) / 1e6, "codemode's cost");
    assert.equal(part("read").session!.calls, 1);
    assert.equal(part("mcp__notes__lookup").session!.calls, 1);
    assert.equal(part("team_notes").session!.tokens, 2 * 30 + 23 * 45);
    assert.equal(part("docs").session!.calls, undefined, "only tools count calls");
    const sum = f.parts.reduce((s, p) => s + (p.session!.cost ?? 0), 0);
    close(sum, f.session!.cost!, "the parts' costs add up");
  });

  it("removals: pi's flags and settings per kind", async () => {
    const session = await SessionFile.open(FIXTURE);
    const f = fixedContextOf(buildProjection(session), NO_PRICES, session);
    const texts = (name: string) => f.parts.find((p) => p.name.endsWith(name))!.removedBy.map((r) => r.text);
    assert.deepEqual(texts("write"), ["--exclude-tools write", '"defaultTools": ["-write"]', "--no-builtin-tools"]);
    assert.deepEqual(texts("codemode"), ["--exclude-tools codemode", '"extensions": ["-builtin:codemode"]']);
    assert.deepEqual(texts("todo_list"), ["--exclude-tools todo_list", "--no-extensions"]);
    assert.deepEqual(texts("mcp__notes__search"), [
      "--exclude-tools mcp__notes__search",
      '"toolExposure": {"search": "deferred"}',
      "--no-mcp",
    ]);
    assert.deepEqual(texts("project/AGENTS.md"), ["--no-context-files"]);
    assert.deepEqual(texts("db-migration"), ["disable-model-invocation: true", "--no-skills"]);
    assert.deepEqual(texts("docs"), ["--system-prompt", "SYSTEM.md"]);
    assert.deepEqual(texts("addendum"), ["--append-system-prompt", "APPEND_SYSTEM.md"]);
    assert.deepEqual(texts("team_notes"), ["--no-extensions"]);
    assert.deepEqual(texts("cwd"), []);
  });
});

describe("system messages pi-context splits by hand", () => {
  it("no system message (pi before 0.86): layout none, nothing to split", () => {
    const f = fixedOf(new SessionBuilder().user("u1", "hi").assistant("a1", { text: "hello", usage: 100 }));
    assert.deepEqual(f, {
      total: 0,
      parts: [],
      layout: "none",
      session: { requests: 0, tokens: 0, cachedTokens: 0, cost: null, unpricedRequests: 0 },
    });
  });

  it("a system message without sections (another program): the prompt is one part, tools still split", () => {
    const text = "You are a helpful assistant. ".repeat(10);
    const message = system({ content: text, toolsAdded: [tool("lookup"), tool("read")] }) as unknown as SystemMessage;
    const f = splitSystemMessage(message);
    assert.equal(f.layout, "content");
    assert.equal(f.total, estimateTokens(message));
    assert.deepEqual(
      f.parts.map((p) => [p.kind, p.name, p.chars]),
      [
        ["prompt", "system prompt", text.length],
        ["extension-tool", "lookup", JSON.stringify(tool("lookup")).length + 2],
        ["tool", "read", JSON.stringify(tool("read")).length + 1],
      ],
    );
    assert.deepEqual(f.parts[0]!.removedBy, []);
  });

  it("pi's skills layout: XML-escaped names unescaped; a layout pi does not write stays one section", () => {
    const skills =
      "<skills>\nThe following skills provide specialized instructions.\n\n<available_skills>\n" +
      "  <skill>\n    <name>r&amp;d &lt;notes&gt;</name>\n    <description>Research &amp; development</description>\n    <location>/s/SKILL.md</location>\n  </skill>\n" +
      "</available_skills>\n</skills>";
    const f = splitSystemMessage(system({ sections: { skills } }) as unknown as SystemMessage);
    assert.deepEqual(
      f.parts.map((p) => [p.kind, p.name]),
      [
        ["section", "skills"],
        ["skill", "r&d <notes>"],
      ],
    );
    assert.equal(
      f.parts.reduce((s, p) => s + p.chars, 0),
      skills.length,
    );
    const odd = splitSystemMessage(
      system({ sections: { skills: "<skills>\n- release-notes\n</skills>" } }) as unknown as SystemMessage,
    );
    assert.deepEqual(
      odd.parts.map((p) => [p.kind, p.name]),
      [["section", "skills"]],
    );
  });

  it("project_context: a file that quotes the closing tag is still one file; another layout is one section", () => {
    const a = "# A\nwrite </project_instructions> in docs\nend";
    const b = "# B";
    const text =
      "<project_context>\nProject-specific instructions and guidelines:\n\n" +
      `<project_instructions path="/p/AGENTS.md">\n${a}\n</project_instructions>\n\n` +
      `<project_instructions path="/p/sub/CLAUDE.md">\n${b}\n</project_instructions>\n</project_context>`;
    const f = splitSystemMessage(system({ sections: { project_context: text } }) as unknown as SystemMessage);
    assert.deepEqual(
      f.parts.map((p) => [p.kind, p.name]),
      [
        ["section", "project_context"],
        ["context-file", "/p/AGENTS.md"],
        ["context-file", "/p/sub/CLAUDE.md"],
      ],
    );
    const fileA = `\n\n<project_instructions path="/p/AGENTS.md">\n${a}\n</project_instructions>`;
    assert.equal(f.parts[1]!.chars, fileA.length);
    const other = splitSystemMessage(
      system({ sections: { project_context: "<project_context>\nsee AGENTS.md\n</project_context>" } }) as never,
    );
    assert.deepEqual(
      other.parts.map((p) => [p.kind, p.name]),
      [["section", "project_context"]],
    );
  });

  it("tool kinds by name: built-in, MCP server and resource tools, extensions", () => {
    assert.deepEqual(["read", "powershell", "mcp__gh__search", "read_mcp_resource", "codemode", "todo"].map(toolKind), [
      "tool",
      "tool",
      "mcp-tool",
      "mcp-tool",
      "extension-tool",
      "extension-tool",
    ]);
  });

  it("the parts add up to pi's estimate for any sections and tools (cumulative rounding)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), fc.string({ maxLength: 40 })),
        fc.array(fc.record({ name: fc.string({ maxLength: 6 }), description: fc.string({ maxLength: 30 }) }), {
          maxLength: 5,
        }),
        fc.string({ maxLength: 20 }),
        (sections, tools, content) => {
          const message = system({ content, sections, toolsAdded: tools }) as unknown as SystemMessage;
          const f = splitSystemMessage(message);
          assert.equal(f.total, estimateTokens(message));
          assert.equal(
            f.parts.reduce((s, p) => s + p.tokens, 0),
            f.total,
          );
          for (const p of f.parts) assert.ok(Math.abs(p.tokens - p.chars / 4) < 1);
        },
      ),
    );
  });
});

describe("over the branch's requests", () => {
  const prices: PriceLookup = (provider) => (provider === "p" ? SONNET : undefined);

  function withUsage(b: SessionBuilder, id: string, input: number, cacheRead: number, provider = "p"): SessionBuilder {
    return b.assistant(id, { text: "ok", provider, usage: { input, output: 10, cacheRead } });
  }

  it("a section deletion and a compaction's checkpoint (replayed from scratch) change what later requests carry", () => {
    const big = "x".repeat(400); // 100 tokens
    const b = new SessionBuilder().message("s1", system({ content: big, sections: { notes: big } })).user("u1", "hi");
    withUsage(b, "a1", 300, 0) // 200 fixed tokens, uncached
      .message("s2", system({ sections: { notes: null } }))
      .user("u2", "again");
    withUsage(b, "a2", 100, 250) // 100 fixed tokens, read from the cache
      .entry("c1", "compaction", {
        summary: "s",
        firstKeptEntryId: "u2",
        tokensBefore: 500,
        // pi-ai's replay needs a timestamp (or a tool): without one the checkpoint replays to nothing
        systemMessage: system({ content: big, sections: { extra: "y".repeat(800) }, timestamp: 1 }),
      })
      .user("u3", "more");
    withUsage(b, "a3", 400, 50, "q"); // 300 fixed tokens, 50 cached, no prices for q
    const f = fixedOf(b, prices);
    assert.deepEqual(
      f.parts.map((p) => [p.name, p.tokens]),
      [
        ["system prompt", 100],
        ["extra", 200],
      ],
    );
    assert.deepEqual(
      { ...f.session!, cost: undefined },
      { requests: 3, tokens: 200 + 100 + 300, cachedTokens: 0 + 100 + 50, cost: undefined, unpricedRequests: 1 },
    );
    close(f.session!.cost, (200 * 3 + 100 * 0.3) / 1e6, "priced requests only");
    assert.deepEqual(
      { ...f.parts[0]!.session!, cost: undefined },
      { requests: 3, tokens: 300, cachedTokens: Math.round(0 + 100 + 50 / 3), cost: undefined },
    );
    assert.deepEqual(
      { ...f.parts[1]!.session!, cost: null },
      { requests: 1, tokens: 200, cachedTokens: Math.round((50 * 2) / 3), cost: null },
    );
    assert.equal(f.parts[1]!.session!.cost, null, "the one request carrying it had no prices");
  });

  it("a failed request without usage is not a request; codemode's nested calls count as calls", () => {
    const b = new SessionBuilder()
      .message("s1", system({ sections: { preamble: "p" }, toolsAdded: [tool("read"), tool("codemode")] }))
      .user("u1", "go")
      .assistant("a0", { stopReason: "error" })
      .assistant("a1", { calls: [{ id: "c1", name: "codemode", arguments: { code: "tools.read()" } }], usage: 500 })
      .message("r1", {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "codemode",
        content: [{ type: "text", text: "done" }],
        nestedCalls: {
          calls: [
            { id: "n1", name: "read" },
            { id: "n2", name: "read" },
          ],
          complete: true,
        },
        isError: false,
      })
      .assistant("a2", { text: "ok", usage: 600 });
    const f = fixedOf(b);
    assert.equal(f.session!.requests, 2);
    assert.equal(f.session!.cost, null);
    assert.equal(f.session!.unpricedRequests, 2);
    assert.deepEqual(
      f.parts.filter((p) => p.session?.calls !== undefined).map((p) => [p.name, p.session!.calls]),
      [
        ["read", 2],
        ["codemode", 1],
      ],
    );
  });
});
