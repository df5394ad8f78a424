/**
 * `pi-context tree` and `pi-context switch` (src/treeCli.ts) through the CLI's `main()`, on temp
 * copies of pi's tree fixture; summaries from the scripted OpenAI-compatible server on 127.0.0.1.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { startScriptedServer, type ScriptedServer } from "../../support/scripted-openai";
import { FIXTURES } from "../../support/paths";
import { SessionBuilder } from "../../support/session-builder";
import { runCli } from "../../support/cli";

const TREE = path.join(FIXTURES, "pi-1.6.0/tree.jsonl");
const AGENT = path.join(FIXTURES, "pi-1.6.0/tree.agent");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-treecli-"));
let server: ScriptedServer;
before(async () => {
  server = await startScriptedServer({ text: "## Goal\nCLI summary." });
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const run = (...argv: string[]) => runCli(argv);

let n = 0;
function copy(): string {
  const file = path.join(tmp, `t${n++}.jsonl`);
  fs.copyFileSync(TREE, file);
  return file;
}

describe("pi-context tree", () => {
  it("entries on a parent cycle are not shown, and it says how many (text and --json)", async () => {
    const file = path.join(tmp, `cycle${n++}.jsonl`);
    const entries = fs
      .readFileSync(TREE, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; id: string; parentId?: string | null; message?: { role: string } });
    const first = entries.findIndex((e) => e.type === "message" && e.message?.role === "user");
    entries[first]!.parentId = entries[first + 3]!.id; // the first user message's parent is below it
    fs.writeFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const r = await run("tree", file);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.equal(
      lines[2],
      "note     31 entries not shown: on a parent cycle, with no root above (see `pi-context doctor`)",
    );
    assert.equal(
      lines.filter((l) => /^\s*[•⑂ ]/.test(l) && /[0-9a-f]{8} {2}/.test(l)).length,
      1,
      "only the system prompt",
    );
    const json = await run("tree", file, "--json");
    assert.equal((JSON.parse(json.out) as { unreachable: number }).unreachable, 31);
    const plain = await run("tree", TREE);
    assert.doesNotMatch(plain.out, /^note/m);
    assert.equal((JSON.parse((await run("tree", TREE, "--json")).out) as { unreachable: number }).unreachable, 0);
  });

  it("prints the indented tree with ids, labels, the active path and the leaf", async () => {
    const r = await run("tree", TREE);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.match(lines[1]!, /^leaf {5}bb6f6d3c · 34 entries · filter default/);
    assert.ok(lines.includes("• c8a901f3  user: [task:t1] do t1"));
    assert.ok(lines.includes("• c707baf6  assistant: → read  · scripted-big"), "the model where it first appears");
    assert.ok(lines.includes("• a03949d4  assistant: alpha read."), "not repeated while it stays the same");
    assert.ok(
      lines.includes("  • 524c617f  tool read: src/alpha.ts  · // alpha: generated fixture module"),
      "folded tool result, indented",
    );
    assert.ok(lines.some((l) => l.startsWith("• 3bcd7a02  assistant: alpha edited.") && l.endsWith("⑂ 3 branches")));
    // a branch starts with its first entry (not a separate group line repeating it)
    assert.ok(
      lines.some(
        (l) => l.startsWith("  ⑂   7daca6b9  [branch-A] Branch summary: ") && l.endsWith("· branch of 7 entries"),
      ),
    );
    // the branch with the leaf continues the active path in the top level, marked where it starts
    assert.ok(lines.includes("⑂ • b6b95844  user: [task:t6] do t6 on branch C"));
    assert.equal(lines.filter((l) => l.includes("b6b95844")).length, 1);
    assert.ok(lines.includes("• bb6f6d3c  assistant: delta read on branch C.  ← leaf"));
    assert.deepEqual(
      lines.filter((l) => l.startsWith("•") || l.startsWith("⑂ •")).length,
      10,
      "the whole active path in the top level, folded tool results aside (system prompt, t1, t2, then branch C)",
    );
  });

  it("a failed assistant message shows its error once (real session with an HTTP 400)", async () => {
    const r = await run("tree", path.join(FIXTURES, "real-sessions/getspecstory-real_world.jsonl"));
    assert.equal(r.code, 0, r.err);
    const line = r.out.split("\n").find((l) => l.includes("59c6b470"))!;
    assert.match(
      line,
      /^• 59c6b470 {2}assistant: Error 400: max_tokens must be greater than thinking\.budget_tokens\./,
    );
    assert.doesNotMatch(r.out, /\(error\)/);
    assert.match(line, / {2}· kimi-k2p6-fast$/, "the model changed here");
    const j = JSON.parse(
      (await run("tree", path.join(FIXTURES, "real-sessions/getspecstory-real_world.jsonl"), "--json")).out,
    );
    const node = j.tree.find((t: { id: string }) => t.id === "59c6b470");
    assert.match(node.error, /^400 \{"error"/);
    assert.equal(node.model, "fireworks/accounts/fireworks/routers/kimi-k2p6-fast");
  });

  it("--filter user-only --json: the nesting as depth and parent in a flat list", async () => {
    const r = await run("tree", TREE, "--filter", "user-only", "--json");
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.displayLeafId, "b6b95844");
    assert.deepEqual(j.labels, { "7daca6b9": "branch-A" });
    type Node = { kind: string; id: string; text: string; entries: number; depth: number; parent: string | null };
    const nodes = j.tree as Node[];
    assert.deepEqual(
      nodes.filter((t) => t.depth === 0).map((t) => `${t.id}${"startsBranch" in t ? " ⑂" : ""}`),
      ["c8a901f3", "1c4d30f5", "b6b95844 ⑂"],
    );
    assert.deepEqual(
      nodes.filter((t) => t.parent === "1c4d30f5").map((c) => `${c.kind} ${c.id} ${c.text} (${c.entries}) @${c.depth}`),
      ["branch a41d08b8 [task:t3] do t3 (2) @1", "branch 60933bb1 [task:t5] do t5 on a new branch (1) @1"],
    );
    assert.deepEqual(
      nodes.filter((t) => t.parent === "a41d08b8").map((c) => `${c.id} @${c.depth}`),
      ["d687d2f6 @2"],
    );
    assert.equal(
      r.out.split("\n").filter((l) => l.startsWith('    {"kind":')).length,
      nodes.length,
      "one node per line",
    );
  });

  it("branches nested 10,000 deep: linear text (indentation stops at 32 levels), --json without recursion", async () => {
    const depth = 10_000;
    const b = new SessionBuilder({ id: "s", cwd: "/w" });
    let parent: string | null = null;
    for (let i = 0; i < depth; i++) {
      b.user(`u${i}`, `q${i}`, parent).user(`s${i}`, `side ${i}`, `u${i}`); // every entry a branch point
      parent = `u${i}`;
    }
    // the leaf under the root: the deep branch is off the active path (which is the top level)
    b.user("end", "end", "u0");
    const file = path.join(tmp, "deep.jsonl");
    fs.writeFileSync(file, b.jsonl());
    const text = await run("tree", file);
    assert.equal(text.code, 0, text.err);
    const out = text.out.split("\n");
    const longest = Math.max(...out.map((l) => l.length));
    assert.ok(longest < 200, `longest line ${longest} characters`);
    assert.ok(text.out.length < 2 * depth * 200, `${text.out.length} bytes for ${2 * depth} entries`);
    const deepest = out.find((l) => l.includes("user: side 9999"))!;
    assert.match(deepest, /^ {64}\[\d+\] /, deepest);
    assert.ok(out.includes("• u0  user: q0  ⑂ 3 branches"));
    assert.ok(out.includes("⑂ • end  user: end  ← leaf"));
    const json = await run("tree", file, "--json");
    assert.equal(json.code, 0, json.err);
    const nodes = JSON.parse(json.out).tree as { id: string; depth: number; parent: string | null }[];
    assert.equal(nodes.length, new Set(nodes.map((n) => n.id)).size);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const last = byId.get("s9999")!;
    assert.ok(last.depth > 5000, `depth ${last.depth}`);
    assert.equal(byId.get("end")!.depth, 0);
    for (const n of nodes) if (n.parent !== null) assert.equal(byId.get(n.parent)!.depth, n.depth - 1, n.id);
  });

  it("a file that is not a pi session exits 1 and says so", async () => {
    const r = await run("tree", path.join(FIXTURES, "cases/README.md"));
    assert.equal(r.code, 1);
    assert.match(r.err, /is not a pi session: its first line is not a session header/);
    assert.equal(r.out, "");
  });

  it("usage errors exit 2", async () => {
    assert.equal((await run("tree")).code, 2);
    assert.equal((await run("tree", TREE, "--filter", "nope")).code, 2);
    assert.equal((await run("tree", TREE, "--bogus", "1")).code, 2);
  });
});

describe("pi-context switch", () => {
  it("--dry-run shows the plan and writes nothing", async () => {
    const file = copy();
    const before = fs.readFileSync(file);
    const r = await run(
      "switch",
      file,
      "a41d08b8",
      "--summarize",
      "--label",
      "retry",
      "--dry-run",
      "--agent-dir",
      AGENT,
      "--base-url",
      server.baseURL,
      "--model",
      "m",
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /leaf {10}bb6f6d3c → 3bcd7a02/);
    assert.match(r.out, /text back {5}"\[task:t3\] do t3"/);
    assert.match(r.out, /target {8}a41d08b8 \(user message\) “\[task:t3\] do t3”/);
    assert.match(r.out, /abandoned {5}4 entries back to 3bcd7a02; 3 messages, .*; pi's budget [\d,]+ tokens \(window /);
    // a window at or below branchSummary.reserveTokens: pi has no limit (not "pi's no budget limit")
    const small = await run("switch", file, "a41d08b8", "--dry-run", "--agent-dir", AGENT, "--context-window", "8000");
    assert.equal(small.code, 0, small.err);
    assert.match(
      small.out,
      /; pi has no budget limit \(window 8,000 − branchSummary\.reserveTokens [\d,]+ ≤ 0: pi sends the whole branch\)$/m,
    );
    assert.match(r.out, /writes {8}branch_summary \+ label/);
    assert.match(r.out, /summarizer {4}m at http:\/\/127\.0\.0\.1:\d+\/v1: 1 request/);
    assert.match(r.out, /dry run: nothing was sent or written\./);
    assert.equal(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(before));
    const j = JSON.parse((await run("switch", file, "895e5ef5", "--dry-run", "--json", "--agent-dir", AGENT)).out);
    assert.deepEqual(j.writes, ["leaf-marker"]);
    assert.equal(j.newLeafId, "895e5ef5");
  });

  it("switches without a summary (leaf marker) and with a summary + label", async () => {
    const file = copy();
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const r1 = await run("switch", file, "895e5ef5", "--agent-dir", AGENT);
    assert.equal(r1.code, 0, r1.err);
    assert.match(r1.out, /^switched: pi resumes at 895e5ef5/);
    assert.match(r1.out, /wrote leaf marker \w+ \(parent 895e5ef5\)/);
    // written by us: no refusal for our own write (a second switch right away works, issue 40)…
    const again = await run("switch", file, "895e5ef5", "--agent-dir", AGENT);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /^already at 895e5ef5|^the file already resumes at 895e5ef5/);
    // …but a write by another program is: the access model refuses; --guard-seconds 0 turns the time check off
    fs.utimesSync(file, new Date(), new Date());
    const refused = await run(
      "switch",
      file,
      "a41d08b8",
      "--summarize",
      "--agent-dir",
      AGENT,
      "--base-url",
      server.baseURL,
      "--model",
      "m",
    );
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Refusing to switch branches in this session/);
    assert.match(refused.err, /--guard-seconds N sets it/, "the CLI's flag, not the VS Code setting");
    assert.doesNotMatch(refused.err, /piContext\./);
    // no bridge in this agent folder: where it comes from (the CLI cannot install it), no VS Code command name
    assert.match(refused.err, /With pi-context's live bridge installed in pi \(the VS Code extension installs it\)/);
    assert.doesNotMatch(refused.err, /\/reload/);
    assert.match(refused.err, /--force goes ahead/);
    const r2 = await run(
      "switch",
      file,
      "a41d08b8",
      "--summarize",
      "--label",
      "retry",
      "--guard-seconds",
      "0",
      "--json",
      "--agent-dir",
      AGENT,
      "--base-url",
      server.baseURL,
      "--model",
      "m",
    );
    assert.equal(r2.code, 0, r2.err);
    const j = JSON.parse(r2.out);
    assert.equal(j.newLeafId, "3bcd7a02");
    assert.equal(j.editorText, "[task:t3] do t3");
    assert.deepEqual(
      j.entries.map((e: { type: string }) => e.type),
      ["branch_summary", "label"],
    );
    assert.equal(j.entries[0].fromId, "895e5ef5", "the marker at the leaf stands for its parent");
    assert.match(j.entries[0].summary, /## Goal\nCLI summary\./);
    assert.equal(server.requests.length, 1);
  });

  it("usage errors exit 2; unknown ids exit 1 with pi's message", async () => {
    assert.equal((await run("switch", TREE)).code, 2);
    assert.equal((await run("switch", TREE, "x", "--instructions", "focus")).code, 2);
    assert.equal((await run("switch", TREE, "x", "--api-key", "k")).code, 2);
    const r = await run("switch", copy(), "nope", "--agent-dir", AGENT, "--guard-seconds", "0");
    assert.equal(r.code, 1);
    assert.equal(r.err, "Entry nope not found. Nothing was written.");
  });
});
