/**
 * The panel's view models on the real pi 1.6.0 fixtures: the breakdown adds up to pi's headline
 * at every leaf, the tracked files equal the lists pi wrote into its compactions, summaries and
 * history come from the path, the summary diff reconstructs both texts.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { analyzeLoaded, type Analysis } from "../../../src/core/rules/analyze";
import { buildProjection } from "../../../src/core/rules/context";
import { prepareCompaction, isPrepared } from "../../../src/core/rules/compaction";
import { computeFileLists, createFileOps, addFileOps } from "../../../src/core/rules/files";
import { inspectSession } from "../../../src/core/rules/inspect";
import { SessionFile } from "../../../src/core/read/session";
import { compactionSettingsOf } from "../../../src/core/rules/settings";
import { currentSystemMessage } from "../../../src/core/rules/tokens";
import { estimateTokens } from "../../../src/core/read/estimate";
import { allocate, buildBreakdown, categoryEntries, CONTEXT_CATEGORIES } from "../../../src/viewModel/breakdown";
import { buildGauge, footerLevel } from "../../../src/viewModel/gauge";
import { buildHistory } from "../../../src/viewModel/history";
import { buildPanelState, emptyPanelState } from "../../../src/viewModel/panelState";
import { buildSummaries } from "../../../src/viewModel/summaries";
import { diffSummaries, type SummaryDiff } from "../../../src/shared/summaryDiff";
import { splitSummary } from "../../../src/viewModel/summaryText";
import { buildTrackedFiles, resolveToolPath } from "../../../src/viewModel/trackedFiles";
import { applyLiveState } from "../../../src/liveBridge/liveUsage";
import type { TrackedFilesModel } from "../../../src/shared/protocol";
import { FIXTURES } from "../../support/paths";

interface Fixture {
  name: string;
  session: string;
  agentDir: string;
}

const PI_FIXTURES: Fixture[] = ["long", "tree", "split", "overflow"].map((n) => ({
  name: n,
  session: `pi-1.6.0/${n}.jsonl`,
  agentDir: `pi-1.6.0/${n}.agent`,
}));
const CASES: Fixture[] = [
  {
    name: "01",
    session: "cases/01-repeated-compaction-kept-window/session.jsonl",
    agentDir: "cases/01-repeated-compaction-kept-window/agent",
  },
  { name: "02", session: "cases/02-trailing-toolresults-exceed-keep/session.jsonl", agentDir: "pi-1.6.0/long.agent" },
  { name: "05", session: "cases/05-zero-usage-fallback/session.jsonl", agentDir: "pi-1.6.0/long.agent" },
  { name: "06", session: "cases/06-usage-totaltokens-vs-components/session.jsonl", agentDir: "pi-1.6.0/long.agent" },
  { name: "11", session: "cases/11-concurrent-writers-interleaved/session.jsonl", agentDir: "pi-1.6.0/long.agent" },
  {
    name: "13",
    session: "cases/13-file-lists-cumulative/session.jsonl",
    agentDir: "cases/13-file-lists-cumulative/agent",
  },
  {
    name: "13 fromHook",
    session: "cases/13-file-lists-cumulative/session-fromhook.jsonl",
    agentDir: "cases/13-file-lists-cumulative/agent",
  },
  { name: "15", session: "cases/15-branch-summary-tree/session.jsonl", agentDir: "pi-1.6.0/tree.agent" },
  { name: "17", session: "cases/17-token-estimate-rules/session.jsonl", agentDir: "pi-1.6.0/long.agent" },
  { name: "real", session: "real-sessions/getspecstory-real_world.jsonl", agentDir: "pi-1.6.0/tree.agent" },
];

const loaded = new Map<string, { session: SessionFile; analysis: Analysis }>();
async function load(f: Fixture): Promise<{ session: SessionFile; analysis: Analysis }> {
  const key = f.session;
  let v = loaded.get(key);
  if (!v) {
    const session = await SessionFile.open(path.join(FIXTURES, f.session));
    const analysis = analyzeLoaded(session, { agentDir: path.join(FIXTURES, f.agentDir), projectSettings: "never" });
    v = { session, analysis };
    loaded.set(key, v);
  }
  return v;
}

function sumContext(categories: { id: string; tokens: number }[]): number {
  return categories
    .filter((c) => (CONTEXT_CATEGORIES as readonly string[]).includes(c.id))
    .reduce((s, c) => s + c.tokens, 0);
}

describe("allocate (largest remainder)", () => {
  it("splits exactly and proportionally", () => {
    assert.deepEqual(allocate(10, { user: 1, toolResults: 1, thinking: 1 }), { user: 4, toolResults: 3, thinking: 3 });
    assert.deepEqual(allocate(0, { user: 5 }), {});
    assert.deepEqual(allocate(7, {}), {});
    fc.assert(
      fc.property(fc.nat(100000), fc.array(fc.nat(10000), { minLength: 1, maxLength: 6 }), (total, ws) => {
        const keys = ["user", "assistantText", "thinking", "toolCalls", "toolResults", "system"] as const;
        const weights = Object.fromEntries(ws.map((w, i) => [keys[i], w]));
        const out = allocate(total, weights);
        const sum = Object.values(out).reduce((s, v) => s + (v ?? 0), 0);
        const wsum = ws.reduce((s, w) => s + w, 0);
        assert.equal(sum, wsum > 0 ? total : 0);
        for (const [k, v] of Object.entries(out)) {
          const exact = (total * (weights[k] ?? 0)) / wsum;
          assert.ok(Math.abs((v ?? 0) - exact) < 1, `${k}: ${v} vs ${exact}`);
        }
      }),
    );
  });
});

describe("breakdown", () => {
  for (const f of [...PI_FIXTURES, ...CASES]) {
    it(`${f.name}: the parts add up to the headline at every leaf`, async () => {
      const { session, analysis } = await load(f);
      let scaled = 0;
      let estimated = 0;
      for (const record of session.records) {
        const inspect = inspectSession(session, {
          settings: analysis.settings,
          contextWindow: analysis.window,
          leafId: record.id,
        });
        const projection = buildProjection(session, record.id);
        const b = buildBreakdown(projection, inspect, session);
        assert.equal(b.total, inspect.contextTokens, `leaf ${record.id}`);
        assert.equal(sumContext(b.categories), inspect.contextTokens, `leaf ${record.id}`);
        assert.ok(!b.categories.some((c) => c.id === "other"), `leaf ${record.id}: unattributed tokens`);
        if (b.method === "scaled") scaled++;
        else estimated++;
        const window = inspect.contextWindow.value;
        if (window && inspect.contextTokens <= window && inspect.reserveTokens.value !== null) {
          const all = b.categories.reduce((s, c) => s + c.tokens, 0);
          assert.equal(all, window, `leaf ${record.id}: used + free + reserve = window`);
        }
        for (const c of b.categories) {
          assert.ok(c.tokens >= 0, `${c.id} negative at ${record.id}`);
          for (let i = 1; i < c.top.length; i++) assert.ok(c.top[i - 1]!.tokens >= c.top[i]!.tokens);
        }
      }
      assert.ok(scaled + estimated === session.records.length);
    });
  }

  it("long: pure estimate at a compaction leaf (pi shows ?) equals the unscaled sum, system = replayed system message", async () => {
    const { session, analysis } = await load(PI_FIXTURES[0]!);
    const compaction = session.records.find((r) => r.type === "compaction")!;
    const inspect = inspectSession(session, {
      settings: analysis.settings,
      contextWindow: analysis.window,
      leafId: compaction.id,
    });
    assert.equal(inspect.usageKnown, false);
    const projection = buildProjection(session, compaction.id);
    const b = buildBreakdown(projection, inspect, session);
    assert.equal(b.method, "estimate");
    assert.equal(b.scale, 1);
    for (const c of b.categories) if (c.id !== "free" && c.id !== "reserve") assert.equal(c.tokens, c.estimated);
    const system = currentSystemMessage(projection);
    assert.equal(b.categories.find((c) => c.id === "system")!.tokens, system ? estimateTokens(system) : 0);
    // The compaction summary is the only summary in context.
    const summaries = b.categories.find((c) => c.id === "summaries")!;
    assert.equal(summaries.tokens, compaction.tokens);
    assert.deepEqual(
      summaries.top.map((e) => e.entryId),
      [compaction.id],
    );
  });

  it("long: at the file leaf the messages up to the last usage are scaled to pi's provider usage", async () => {
    const { session, analysis } = await load(PI_FIXTURES[0]!);
    const inspect = analysis.inspect;
    assert.equal(inspect.estimate.method, "usage+estimate");
    const b = buildBreakdown(buildProjection(session), inspect, session);
    assert.equal(b.method, "scaled");
    assert.ok(b.scale > 0.5 && b.scale < 2, `scale ${b.scale}`);
    assert.equal(b.total, inspect.contextTokens);
    assert.equal(inspect.contextTokens, inspect.estimate.usageTokens + inspect.estimate.trailingTokens);
    const toolResults = b.categories.find((c) => c.id === "toolResults")!;
    assert.ok(toolResults.tokens > 0 && toolResults.entryCount > 0);
    const all = categoryEntries(buildProjection(session), inspect, session, "toolResults");
    assert.equal(all.length, toolResults.entryCount);
    assert.deepEqual(all.slice(0, toolResults.top.length), toolResults.top);
  });

  it("13: categories with pi's per-message estimates (a4 100, u3 200, a5 200 …) and usage 2200 covering all", async () => {
    const { session, analysis } = await load(CASES.find((c) => c.name === "13")!);
    const b = buildBreakdown(buildProjection(session), analysis.inspect, session);
    assert.equal(analysis.inspect.contextTokens, 2200);
    assert.equal(b.total, 2200);
    const user = b.categories.find((c) => c.id === "user")!;
    assert.ok(user.top.some((e) => e.entryId === "u3"));
  });
});

describe("gauge", () => {
  it("mirrors inspect: threshold = window − reserve, tokens until compaction, footer, reserve source", async () => {
    const { analysis } = await load(PI_FIXTURES[0]!);
    const g = buildGauge(analysis.inspect);
    assert.equal(g.window, 16000);
    assert.equal(g.reserveTokens, 4000);
    assert.equal(g.reserveSource, "global");
    // keepRecentTokens says where it was set, like reserveTokens (trial: the panel showed no source)
    assert.equal(g.keepRecentTokens, 3000);
    assert.equal(g.keepRecentSource, "global");
    assert.equal(g.keepRecentKey, "compaction.keepRecentTokens");
    assert.match(g.keepRecentFile ?? "", /settings\.json$/);
    assert.equal(g.threshold, 12000);
    assert.equal(g.used, analysis.inspect.contextTokens);
    assert.equal(g.tokensUntilCompaction, 12000 - g.used);
    assert.equal(g.footer, analysis.inspect.footer);
    assert.equal(g.model, "scripted/scripted-small");
    assert.equal(g.autoCompaction, true);
  });
  it("long at a compaction leaf: pi's ? state, our estimate labelled as such", async () => {
    const { session, analysis } = await load(PI_FIXTURES[0]!);
    const compaction = session.records.filter((r) => r.type === "compaction")[1]!;
    const inspect = inspectSession(session, {
      settings: analysis.settings,
      contextWindow: analysis.window,
      leafId: compaction.id,
    });
    const g = buildGauge(inspect);
    assert.equal(g.usageKnown, false);
    assert.equal(g.method, "estimate");
    assert.equal(g.footer, "?/16k (auto)");
    assert.equal(g.level, "normal");
    assert.ok(g.used > 0 && g.used === inspect.contextTokens);
  });
  it("tree: default reserve on a 200k window", async () => {
    const { analysis } = await load(PI_FIXTURES[1]!);
    const g = buildGauge(analysis.inspect);
    assert.equal(g.window, 200000);
    assert.equal(g.reserveSource, "default");
    assert.equal(g.reserveTokens, 16384);
    assert.equal(g.keepRecentSource, "default");
    assert.equal(g.keepRecentFile, undefined);
    assert.equal(g.threshold, 200000 - 16384);
  });
  it("pi's footer colours", () => {
    assert.equal(footerLevel(70), "normal");
    assert.equal(footerLevel(70.1), "warning");
    assert.equal(footerLevel(90), "warning");
    assert.equal(footerLevel(90.1), "error");
    assert.equal(footerLevel(null), "normal");
  });
});

describe("history", () => {
  it("long: one point per trusted assistant usage on the path, 4 compactions marked with tokensBefore", async () => {
    const { session } = await load(PI_FIXTURES[0]!);
    const projection = buildProjection(session);
    const h = buildHistory(projection.path);
    const assistants = projection.path.filter(
      (r) =>
        r.type === "message" &&
        r.role === "assistant" &&
        r.usageTokens > 0 &&
        r.stopReason !== "error" &&
        r.stopReason !== "aborted",
    );
    assert.equal(h.points.length, assistants.length);
    assert.deepEqual(
      h.compactions.map((c) => c.tokensBefore),
      [13821, 12610, 12458, 6387],
    );
    for (const c of h.compactions) {
      assert.ok(c.atPoint > 0 && c.atPoint <= h.points.length);
      // the point before an auto-compaction is above the threshold or close to it
      assert.ok(h.points[c.atPoint - 1]!.tokens > 0);
    }
  });
  it("overflow: the errored response is not a point", async () => {
    const { session } = await load(PI_FIXTURES[3]!);
    const path = buildProjection(session).path;
    const errored = path.find((r) => r.type === "message" && r.stopReason === "error");
    assert.ok(errored);
    assert.ok(!buildHistory(path).points.some((p) => p.entryId === errored.id));
  });
});

describe("summaries", () => {
  it("long: 4 compactions on the path, only the latest in context, file blocks equal details", async () => {
    const { session } = await load(PI_FIXTURES[0]!);
    const s = buildSummaries(buildProjection(session));
    assert.equal(s.length, 4);
    assert.deepEqual(
      s.map((x) => x.inContext),
      [false, false, false, true],
    );
    for (const x of s) {
      const record = session.byId.get(x.entryId)!;
      assert.equal(x.type, "compaction");
      assert.equal(x.firstKeptEntryId, record.firstKeptEntryId);
      assert.equal(x.tokensBefore, record.tokensBefore);
      assert.deepEqual(x.readFiles, record.details?.readFiles);
      assert.deepEqual(x.modifiedFiles, record.details?.modifiedFiles);
      assert.ok(!/<\/(read|modified)-files>\s*$/.test(x.body));
      // the manual split-turn compaction embeds the previous summary, inner blocks included (pi's text)
      if (x !== s[3]) assert.ok(!x.body.includes("<read-files>") && !x.body.includes("<modified-files>"));
      else assert.ok(x.body.includes("<modified-files>"));
      assert.ok(x.text.startsWith(x.body));
    }
  });
  it("tree: the branch summary on the final path is in context and names its fromId", async () => {
    const { session } = await load(PI_FIXTURES[1]!);
    const s = buildSummaries(buildProjection(session));
    for (const x of s) {
      assert.equal(x.type, "branch_summary");
      assert.equal(x.fromId, session.byId.get(x.entryId)!.fromId);
      assert.equal(x.inContext, true);
    }
  });
  it("splitSummary leaves text without blocks alone", () => {
    assert.deepEqual(splitSummary("## Goal\nx"), { body: "## Goal\nx", readFiles: [], modifiedFiles: [] });
    assert.deepEqual(
      splitSummary("b\n\n<read-files>\na\nb c\n</read-files>\n\n<modified-files>\nm\n</modified-files>"),
      { body: "b", readFiles: ["a", "b c"], modifiedFiles: ["m"] },
    );
    assert.deepEqual(splitSummary("b\n\n<modified-files>\nm\n</modified-files>"), {
      body: "b",
      readFiles: [],
      modifiedFiles: ["m"],
    });
  });
});

function listsOf(model: TrackedFilesModel, keep: (s: { kind: string; entryId: string }) => boolean) {
  const ops = createFileOps();
  for (const f of [...model.readFiles, ...model.modifiedFiles]) {
    for (const s of f.sources) {
      if (!keep(s)) continue;
      if (s.kind === "compaction") addFileOps(ops, [{ kind: s.op === "read" ? "read" : "edit", path: f.path }]);
      else addFileOps(ops, [{ kind: s.op as "read" | "write" | "edit", path: f.path }]);
    }
  }
  return computeFileLists(ops);
}

describe("tracked files", () => {
  for (const f of [PI_FIXTURES[0]!, PI_FIXTURES[2]!, PI_FIXTURES[3]!]) {
    it(`${f.name}: at each compaction's parent, the files from the summarized turns + previous details equal the lists pi wrote`, async () => {
      const { session, analysis } = await load(f);
      const compactions = session.records.filter((r) => r.type === "compaction");
      assert.ok(compactions.length > 0);
      for (const c of compactions) {
        const projection = buildProjection(session, c.parentId);
        const tracked = buildTrackedFiles(projection, session, session.cwd);
        const prep = prepareCompaction(session, compactionSettingsOf(analysis.settings), session, c.parentId);
        assert.ok(isPrepared(prep));
        const summarized = new Set([...prep.messagesToSummarize, ...prep.turnPrefixMessages].map((e) => e.record.id));
        // sources name the assistant turn; a tool result's nested calls name their assistant too
        const lists = listsOf(tracked, (s) => s.kind === "compaction" || summarized.has(s.entryId));
        assert.deepEqual(
          lists,
          { readFiles: c.details?.readFiles, modifiedFiles: c.details?.modifiedFiles },
          `compaction ${c.id}`,
        );
        // and the full lists are a superset (kept turns add their files)
        for (const p of c.details?.modifiedFiles ?? [])
          assert.ok(
            tracked.modifiedFiles.some((x) => x.path === p),
            p,
          );
      }
    });
  }

  it("long: at the leaf, seeded from the latest compaction, sources say which compaction/turn", async () => {
    const { session } = await load(PI_FIXTURES[0]!);
    const projection = buildProjection(session);
    const t = buildTrackedFiles(projection, session, "/ws");
    assert.equal(t.seededFrom, projection.compaction!.id);
    const alpha = t.modifiedFiles.find((x) => x.path === "src/alpha.ts")!;
    assert.equal(alpha.absolutePath, "/ws/src/alpha.ts");
    assert.ok(
      alpha.sources.some(
        (s) =>
          s.kind === "compaction" && s.entryId === projection.compaction!.id && s.op === "modified" && s.ordinal === 4,
      ),
    );
    for (const f of [...t.readFiles, ...t.modifiedFiles]) {
      assert.ok(f.sources.length > 0);
      for (const s of f.sources) if (s.kind === "turn") assert.equal(session.byId.get(s.entryId)!.role, "assistant");
    }
    // read − modified
    for (const f of t.readFiles) assert.ok(!t.modifiedFiles.some((m) => m.path === f.path));
  });

  it("long: maxSources keeps each file's last sources and counts them all", async () => {
    const { session } = await load(PI_FIXTURES[0]!);
    const projection = buildProjection(session);
    const full = buildTrackedFiles(projection, session, "/ws");
    const capped = buildTrackedFiles(projection, session, "/ws", { maxSources: 1 });
    const all = [...full.readFiles, ...full.modifiedFiles];
    assert.ok(
      all.some((f) => f.sources.length > 1),
      "the fixture has a file with more than one source",
    );
    assert.deepEqual(
      [...capped.readFiles, ...capped.modifiedFiles].map((f) => [f.path, f.sourceCount, f.sources]),
      all.map((f) => [f.path, f.sources.length, f.sources.slice(-1)]),
    );
  });

  it("13: pi's lists (details seed only without fromHook), from the oracle", async () => {
    for (const [name, read, modified] of [
      ["13", ["README.md", "src/util.ts"], ["NOTES.md", "docs/old.md", "src/parser.ts"]],
      ["13 fromHook", ["src/util.ts"], ["NOTES.md", "src/parser.ts"]],
    ] as const) {
      const { session, analysis } = await load(CASES.find((c) => c.name === name)!);
      const prep = prepareCompaction(session, compactionSettingsOf(analysis.settings), session);
      assert.ok(isPrepared(prep));
      const summarized = new Set(prep.messagesToSummarize.map((e) => e.record.id));
      const t = buildTrackedFiles(buildProjection(session), session, "/p");
      assert.equal(t.seededFrom, name === "13" ? "k1" : null);
      assert.deepEqual(
        listsOf(t, (s) => s.kind === "compaction" || summarized.has(s.entryId)),
        { readFiles: [...read], modifiedFiles: [...modified] },
      );
    }
  });

  it("resolveToolPath like pi's resolveToCwd", () => {
    assert.equal(resolveToolPath("src/a.ts", "/w"), "/w/src/a.ts");
    assert.equal(resolveToolPath("./src/../b.ts", "/w"), "/w/b.ts");
    assert.equal(resolveToolPath("/abs/x", "/w"), "/abs/x");
    assert.equal(resolveToolPath("@src/a.ts", "/w"), "/w/src/a.ts");
    assert.equal(resolveToolPath("~/n.md", "/w", "/home/u"), "/home/u/n.md");
    assert.equal(resolveToolPath("~", "/w", "/home/u"), "/home/u");
    assert.equal(resolveToolPath("file:///etc/hosts", "/w"), "/etc/hosts");
    assert.equal(resolveToolPath("my\u00A0file.txt", "/w"), "/w/my file.txt");
    assert.equal(resolveToolPath("../outside.ts", "/w/p"), "/w/outside.ts");
  });
});

function reconstruct(d: SummaryDiff): { older: string; newer: string } {
  const older: string[] = [];
  const newer: string[] = [];
  for (const l of d.lines) {
    if (l.kind !== "added")
      older.push(
        l.segments
          .filter((s) => s.op !== "added")
          .map((s) => s.text)
          .join(""),
      );
    if (l.kind !== "removed")
      newer.push(
        l.segments
          .filter((s) => s.op !== "removed")
          .map((s) => s.text)
          .join(""),
      );
  }
  return { older: older.join("\n"), newer: newer.join("\n") };
}

describe("summary diff", () => {
  it("identical texts", () => {
    const d = diffSummaries("a\nb", "a\nb");
    assert.equal(d.identical, true);
    assert.deepEqual(d.stats, { linesRemoved: 0, linesAdded: 0, linesChanged: 0, wordsRemoved: 0, wordsAdded: 0 });
  });
  it("a line that disappeared is a whole removed line; an edited line is a word-level change", () => {
    const d = diffSummaries(
      "## Goal\nFix the parser\n- keep tests green\n- use pnpm",
      "## Goal\nFix the lexer\n- use pnpm",
    );
    assert.deepEqual(
      d.lines.map((l) => l.kind),
      ["same", "changed", "removed", "same"],
    );
    const changed = d.lines[1]!;
    assert.deepEqual(changed.segments, [
      { text: "Fix the ", op: "same" },
      { text: "parser", op: "removed" },
      { text: "lexer", op: "added" },
    ]);
    assert.deepEqual(d.lines[2]!.segments, [{ text: "- keep tests green", op: "removed" }]);
    assert.equal(d.stats.linesRemoved, 1);
    assert.equal(d.stats.linesChanged, 1);
    assert.equal(d.stats.wordsRemoved, 1 + 4);
    assert.equal(d.stats.wordsAdded, 1);
    assert.equal(d.lines[2]!.oldLine, 3);
    assert.equal(d.lines[3]!.newLine, 3);
  });
  it("long: consecutive compaction summaries diff and reconstruct exactly; the dropped file lines show as removed", async () => {
    const { session } = await load(PI_FIXTURES[0]!);
    const s = buildSummaries(buildProjection(session));
    for (let i = 1; i < s.length; i++) {
      const d = diffSummaries(s[i - 1]!.text, s[i]!.text);
      assert.equal(d.identical, false);
      const r = reconstruct(d);
      assert.equal(r.older, s[i - 1]!.text.replace(/\n$/, ""));
      assert.equal(r.newer, s[i]!.text.replace(/\n$/, ""));
    }
    // compaction 1 → 2 adds docs/eta-14.md and docs/gamma-10.md to the modified list
    const d12 = diffSummaries(s[0]!.text, s[1]!.text);
    assert.ok(d12.lines.some((l) => l.kind === "added" && l.segments[0]!.text === "docs/eta-14.md"));
  });
  it("reconstructs both texts for arbitrary inputs", () => {
    const line = fc
      .array(fc.constantFrom("goal", "fix", "the", "parser", "lexer", " ", "-", "##", "x"), { maxLength: 8 })
      .map((a) => a.join(" "));
    const text = fc.array(line, { maxLength: 10 }).map((a) => a.join("\n"));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const r = reconstruct(diffSummaries(a, b));
        assert.equal(r.older, a.replace(/\n$/, ""));
        assert.equal(r.newer, b.replace(/\n$/, ""));
      }),
      { numRuns: 300 },
    );
  });
});

describe("panel state", () => {
  it("tree: a leaf the Pi Session tree hides (Switch to Here's marker, a label) is shown at the entry the tree marks", () => {
    const bytes = fs.readFileSync(path.join(FIXTURES, "pi-1.6.0/tree.jsonl"), "utf8");
    const base = SessionFile.fromBytes(bytes);
    const target = base.records.find((r) => r.type === "message" && r.role === "assistant")!;
    const marker = {
      type: "custom",
      customType: "pi-context/leaf",
      id: "mark0001",
      parentId: target.id,
      timestamp: "t",
    };
    const label = {
      type: "label",
      id: "labl0001",
      parentId: "mark0001",
      targetId: target.id,
      label: "x",
      timestamp: "t",
    };
    const stateAt = (extra: object[]) => {
      const session = SessionFile.fromBytes(bytes + extra.map((e) => `${JSON.stringify(e)}\n`).join(""));
      const analysis = analyzeLoaded(session, {
        agentDir: path.join(FIXTURES, "pi-1.6.0/tree.agent"),
        projectSettings: "never",
      });
      return buildPanelState({ file: "tree.jsonl", session, analysis, pinned: false, updatedAt: 1 }).session!;
    };
    const plain = stateAt([]);
    assert.equal(plain.shownLeafId, plain.leafId, "a shown leaf stands for itself");
    const marked = stateAt([marker]);
    assert.equal(marked.leafId, "mark0001");
    assert.equal(marked.shownLeafId, target.id);
    const labelled = stateAt([marker, label]);
    assert.equal(labelled.leafId, "labl0001");
    assert.equal(labelled.shownLeafId, target.id, "through every hidden entry");
  });

  it("long: everything at the file leaf, consistent with inspect", async () => {
    const { session, analysis } = await load(PI_FIXTURES[0]!);
    const state = buildPanelState({ file: session.filePath, session, analysis, pinned: false, updatedAt: 1 });
    assert.equal(state.session!.name, "long scripted session");
    assert.equal(state.session!.leafId, analysis.inspect.leafId);
    assert.equal(state.gauge!.used, analysis.inspect.contextTokens);
    assert.equal(state.breakdown!.total, analysis.inspect.contextTokens);
    assert.equal(state.summaries.length, 4);
    assert.ok(state.files!.modifiedFiles.length >= 8);
    assert.ok(state.history!.points.length > 20);
    // JSON-able (postMessage clones it)
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
    // updated = the file's mtime (not the read time); the window's source in words, its file apart
    assert.equal(state.session!.modifiedAt, session.mtimeMs);
    assert.equal(state.session!.readAt, 1);
    assert.equal(state.gauge!.windowSourceText, "models.json: providers.scripted, model scripted-small");
    assert.match(state.gauge!.windowFile ?? "", /models\.json$/);
    assert.deepEqual(state.session!.problems, []);
  });
  it("live: pi's numbers from the live bridge in the gauge (as the status bar), marked live; the breakdown adds up to them", async () => {
    const { session, analysis } = await load(PI_FIXTURES[0]!);
    const input = { file: session.filePath, session, pinned: false, updatedAt: 1 };
    const fromFile = buildPanelState({ ...input, analysis });
    assert.equal(fromFile.gauge!.live, undefined);
    assert.equal("live" in fromFile.gauge!, false);
    const source = { pid: 4242, piVersion: "1.6.0", bridgeVersion: "1.0.0" };
    const tokens = analysis.inspect.contextTokens + 500;
    const live = applyLiveState(
      analysis,
      {
        seq: 1,
        at: 0,
        sessionFile: session.filePath,
        leafId: analysis.inspect.leafId,
        idle: false,
        activity: "streaming",
        usage: { tokens, contextWindow: 32000, percent: (tokens / 32000) * 100 },
        model: { provider: "scripted", id: "scripted-small", contextWindow: 32000 },
        compaction: { enabled: true, reserveTokens: 4000, keepRecentTokens: 1000 },
      },
      source,
    );
    const state = buildPanelState({ ...input, analysis: live, live: { ...source, activity: "streaming" } });
    const g = state.gauge!;
    assert.equal(g.used, tokens);
    assert.equal(g.window, 32000);
    assert.equal(g.windowSource, "live");
    assert.equal(g.windowSourceText, "the running pi (pi 1.6.0, pid 4242)");
    assert.equal(g.threshold, 28000);
    assert.equal(g.tokensUntilCompaction, 28000 - tokens);
    assert.equal(g.footer, live.inspect.footer);
    assert.deepEqual(g.live, { pid: 4242, piVersion: "1.6.0", bridgeVersion: "1.0.0", activity: "streaming" });
    assert.equal(state.breakdown!.total, tokens);
    assert.equal(sumContext(state.breakdown!.categories), tokens);
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
  });
  it("problems: readable, ordered, with the file and line to open (case 09: torn final line)", async () => {
    const file = path.join(FIXTURES, "cases/09-truncated-final-line/session.jsonl");
    const session = await SessionFile.open(file);
    const analysis = analyzeLoaded(session, { agentDir: fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-vm-")) });
    const state = buildPanelState({ file, session, analysis, pinned: true, updatedAt: 5, modifiedAt: 7 });
    assert.equal(state.session!.modifiedAt, 7);
    assert.deepEqual(
      state.session!.problems.map((p) => [p.id, p.severity, p.code, p.title, p.file, p.line]),
      [
        ["p0", "warning", "truncated-final-line", "Incomplete last line", file, 5],
        ["p1", "warning", "unknown-window", "Unknown context window", undefined, undefined],
      ],
    );
    assert.match(state.session!.problems[0]!.message, /^truncated final record at line 5 \(164 bytes\)/);
  });
  it("empty state", () => {
    const s = emptyPanelState("No pi session");
    assert.equal(s.session, null);
    assert.equal(s.emptyMessage, "No pi session");
    assert.equal(emptyPanelState("x", undefined, "no-folder").emptyReason, "no-folder");
  });
});
