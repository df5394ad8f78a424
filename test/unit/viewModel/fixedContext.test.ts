/**
 * The fixed part of the context in words, on the pi-written fixture `test/fixtures/fixed-context/`
 * and the shared `long.jsonl`: the gauge tooltip's line, the panel's drill-down (groups, parts,
 * cost, calls, removals, notes), `pi-context inspect` (text and `--json`).
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import { analyzeSession } from "../../../src/core/rules/analyze";
import { splitSystemMessage, type FixedContext } from "../../../src/core/rules/fixedContext";
import type { SystemMessage } from "../../../src/core/types";
import {
  buildFixedContextModel,
  displayNames,
  fixedContextLine,
  fixedContextLines,
  removalLine,
} from "../../../src/viewModel/fixedContext";
import { buildPanelState } from "../../../src/viewModel/panelState";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { runCli } from "../../support/cli";
import { FIXTURES } from "../../support/paths";

const FILE = path.join(FIXTURES, "fixed-context", "session.jsonl");
const AGENT = path.join(FIXTURES, "fixed-context", "session.agent");
const LONG = path.join(FIXTURES, "pi-1.6.0", "long.jsonl");

async function fixture(): Promise<FixedContext> {
  return (await analyzeSession(FILE, { agentDir: AGENT })).inspect.fixedContext;
}

describe("the gauge tooltip's line", () => {
  it("the total, then the largest groups and files (tools and MCP as groups), then …", async () => {
    assert.equal(fixedContextLine(await fixture()), "2.9k: tools 1.4k, prompt 650, project/AGENTS.md 249, MCP 240, …");
    const long = (await analyzeSession(LONG, { agentDir: path.join(FIXTURES, "pi-1.6.0", "long.agent") })).inspect;
    assert.equal(fixedContextLine(long.fixedContext), "1.3k: tools 742, prompt 567");
  });

  it("a row of the tooltip (escaped Markdown); without a system message, that the file has none", async () => {
    const analysis = await analyzeSession(FILE, { agentDir: AGENT });
    const view = buildGaugeView({ session: { file: FILE, analysis, pinned: false, updatedAt: 0 }, margin: 1000 });
    assert.ok(
      view.tooltip.includes(
        "| Fixed part | 2\\.9k\\: tools 1\\.4k\\, prompt 650\\, project\\/AGENTS\\.md 249\\, MCP 240\\, … |",
      ),
      view.tooltip,
    );
    assert.equal(fixedContextLine(splitSystemMessage(undefined)), undefined, "no conversation: nothing to say");
    assert.equal(
      fixedContextLine(splitSystemMessage(undefined), 1200),
      "not in the session file (pi before 0.86 did not record its system prompt and tools)",
    );
  });
});

describe("the panel's drill-down", () => {
  it("groups largest first, parts largest first, costs, calls and removals", async () => {
    const model = buildFixedContextModel(await fixture());
    assert.equal(model.total, 2858);
    assert.deepEqual(
      model.groups.map((g) => [g.label, g.tokens, g.items.length]),
      [
        ["Tools", 1396, 6],
        ["pi's prompt", 630, 6],
        ["Context files", 339, 3],
        ["MCP", 240, 3],
        ["Skills", 208, 3],
        ["Extension sections", 45, 1],
      ],
    );
    assert.equal(
      model.groups.reduce((s, g) => s + g.tokens, 0),
      model.total,
    );
    const tools = model.groups[0]!.items;
    assert.deepEqual(
      tools.map((i) => [i.name, i.kindLabel, i.tokens, !!i.unused]),
      [
        ["codemode", "extension tool", 454, true],
        ["edit", "built-in tool", 316, true],
        ["read", "built-in tool", 210, false],
        ["bash", "built-in tool", 174, true],
        ["write", "built-in tool", 130, true],
        ["todo_list", "extension tool", 112, true],
      ],
    );
    assert.equal(tools[0]!.use, "$0.005 over 25 requests (11,350 tokens) · never called on this branch");
    assert.equal(tools[2]!.use, "$0.002 over 25 requests (5,250 tokens) · called 1 time");
    assert.equal(
      tools[0]!.removal,
      'Leave out in pi: --exclude-tools codemode or "extensions": ["-builtin:codemode"] in settings.json',
    );
    const files = model.groups[2]!.items;
    assert.deepEqual(
      files.map((i) => [i.name, i.tokens]),
      [
        ["project/AGENTS.md", 249],
        ["agent/AGENTS.md", 70],
        ["heading and tags", 20],
      ],
    );
    assert.match(files[0]!.fullName, /^\/tmp\/.+\/project\/AGENTS\.md$/);
    assert.equal(files[0]!.removal, "Leave out in pi: --no-context-files (every context file)");
    assert.equal(
      model.session,
      "25 requests so far carried 71,420 fixed tokens (68,577 read from the cache): $0.029 at the model's prices.",
    );
    assert.deepEqual(model.notes, ["pi's estimate of its system message (chars/4): 2,858 tokens, split by part."]);
  });

  it("the scale of the bar, a message without sections, no system message: said in the notes", () => {
    const content = splitSystemMessage({ role: "system", content: "You are helpful.", timestamp: 1 } as SystemMessage);
    const model = buildFixedContextModel(content, 1.08);
    assert.deepEqual(
      model.groups.map((g) => [g.label, g.items.map((i) => i.name)]),
      [["pi's prompt", ["system prompt"]]],
    );
    assert.deepEqual(model.notes, [
      "This system message has no sections (it was not written by pi 0.87 or later): its prompt is one part; each tool's declaration is still its own part.",
      "pi's estimate of its system message (chars/4): 4 tokens, split by part; the bar scales it ×1.08 with the messages before the last provider usage.",
    ]);
    assert.equal(
      model.groups[0]!.items[0]!.removal,
      "Written by the program that wrote the session; pi has no setting for it.",
    );
    const none = buildFixedContextModel(splitSystemMessage(undefined));
    assert.deepEqual(none.groups, []);
    assert.match(none.notes[0]!, /^The session holds no system message: pi before 0\.86/);
  });

  it("in the panel state: the breakdown's system category carries it; Σ groups = pi's estimate", async () => {
    const analysis = await analyzeSession(FILE, { agentDir: AGENT });
    const state = buildPanelState({ file: FILE, session: analysis.session, analysis, pinned: false, updatedAt: 0 });
    const fixed = state.breakdown!.fixed!;
    assert.equal(fixed.total, 2858);
    assert.equal(fixed.layout, "sections");
    assert.equal(state.breakdown!.categories.find((c) => c.id === "system")!.estimated, 2858);
  });

  it("context files by file name, with the folder only when names repeat; removal words per kind", () => {
    const parts = (names: string[]) =>
      names.map((name) => ({ kind: "context-file" as const, name, tokens: 1, chars: 4, removedBy: [] }));
    assert.deepEqual(displayNames(parts(["/a/AGENTS.md", "/b/CLAUDE.md"])), ["AGENTS.md", "CLAUDE.md"]);
    assert.deepEqual(displayNames(parts(["/h/.pi/agent/AGENTS.md", "C:\\w\\p\\AGENTS.md"])), [
      "agent/AGENTS.md",
      "p/AGENTS.md",
    ]);
    const docs = { kind: "section" as const, name: "docs", tokens: 1, chars: 4 };
    assert.equal(
      removalLine({
        ...docs,
        removedBy: [
          { kind: "flag", text: "--system-prompt", all: true },
          { kind: "file", text: "SYSTEM.md", where: "the agent dir or .pi/", all: true },
        ],
      }),
      "Leave out in pi: --system-prompt or SYSTEM.md in the agent dir or .pi/ (your own prompt instead of pi's: no tools, rules or docs sections)",
    );
    assert.equal(removalLine({ ...docs, name: "cwd", removedBy: [] }), "pi always sends it.");
  });
});

describe("pi-context inspect", () => {
  it("text: the total, the cost over the branch, one line per part with its removal", async () => {
    const { code, out } = await runCli(["inspect", FILE, "--agent-dir", AGENT]);
    assert.equal(code, 0);
    const lines = out.split("\n");
    const at = lines.indexOf("fixed part (what every request carries before the conversation: pi's system message)");
    assert.ok(at > 0, out);
    assert.deepEqual(lines.slice(at + 1, at + 5), [
      "  2,858 tokens every request carries (pi's estimate of its system message)",
      "  25 requests so far carried 71,420 fixed tokens (68,577 read from the cache): $0.029 at the model's prices.",
      "    codemode                  454  extension tool · $0.005 over 25 requests (11,350 tokens) · never called on this branch",
      '                                   Leave out in pi: --exclude-tools codemode or "extensions": ["-builtin:codemode"] in settings.json',
    ]);
    assert.deepEqual(fixedContextLines(splitSystemMessage(undefined)).length, 1);
  });

  it("--json: fixedContext {total, parts: [{kind, name, tokens, …}]}, the parts adding up to the total", async () => {
    const { code, out } = await runCli(["inspect", FILE, "--agent-dir", AGENT, "--json"]);
    assert.equal(code, 0);
    const fixed = JSON.parse(out).fixedContext as FixedContext;
    assert.equal(fixed.total, 2858);
    assert.equal(fixed.parts.length, 22);
    assert.equal(
      fixed.parts.reduce((s, p) => s + p.tokens, 0),
      2858,
    );
    const lookup = fixed.parts.find((p) => p.name === "mcp__notes__lookup")!;
    assert.deepEqual(
      { kind: lookup.kind, tokens: lookup.tokens, calls: lookup.session?.calls, requests: lookup.session?.requests },
      { kind: "mcp-tool", tokens: 81, calls: 1, requests: 25 },
    );
    assert.deepEqual(fixed.session, {
      requests: 25,
      tokens: 71420,
      cachedTokens: 68577,
      cost: fixed.session!.cost,
      unpricedRequests: 0,
    });
    assert.ok(Math.abs(fixed.session!.cost! - 0.0291021) < 1e-12);
  });
});
