/**
 * Conformance of "Switch to Here…" / `pi-context switch` (src/core/switchFlow.ts) with pi 1.6.0:
 * on temp copies of the tree fixture (branches, branch summaries, labels), case 15 and random trees,
 * switch to every entry with each choice (no summary, label, summary from the scripted
 * OpenAI-compatible server on 127.0.0.1, summary + label), then
 * - our plan equals pi's own navigation (oracle `--branch-target`: old leaf, common ancestor,
 *   entries to summarize, new leaf, budget, prepared messages and file lists), and
 * - pi (`loadCheck`) loads the file at the chosen position: leaf = the last entry we wrote, path =
 *   pi's path to the new leaf + our entries, context = exactly the context pi builds at the new leaf
 *   (computed by pi on the file before the switch, `--leaf`), plus our branch summary when one was
 *   written; the model and thinking level pi resumes with are those of the new position.
 *
 * Runs: PI_CONTEXT_SWITCH_RUNS random trees (default 60).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../src/core/read/session";
import { runSwitchFlow, type SwitchChoice, type SwitchPlan, type SwitchPlanOptions } from "../../src/core/flows/switch";
import { OpenAiSummarizer } from "../../src/summarizers/openai";
import { buildSession, recipeArb } from "../support/random-session";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { REPO_ROOT } from "../support/paths";

interface Loaded {
  leafId: string | null;
  pathIds: string[];
  contextMessages: { entryId: string; role: string }[];
  model: unknown;
  thinkingLevel: unknown;
  unchangedOnOpen: boolean;
}
interface View {
  leafId: string | null;
  pathIds: string[];
  context: { messages: string[]; model: unknown; thinkingLevel: unknown };
  branchSummary?: {
    oldLeafId: string | null;
    commonAncestorId: string | null;
    entriesToSummarize: string[];
    newLeafIdAfterNavigation: string | null;
    tokenBudget: number;
    prepared: {
      messageCount: number;
      totalTokens: number;
      fileLists: { readFiles: string[]; modifiedFiles: string[] };
    };
  };
}
interface Oracle {
  loadCheck(request: { file: string }): Promise<Loaded>;
  oracle(request: { file: string; args: string[] }): Promise<View>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_SWITCH_RUNS ?? 60);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-switch-oracle-"));
let oracle: Oracle;
let server: ScriptedServer;

before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
  server = await startScriptedServer({ text: "## Goal\nScripted branch summary.\n\n## Next Steps\n1. Go on." });
});
after(async () => {
  await oracle?.close();
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const CHOICES: { name: string; choice: SwitchChoice }[] = [
  { name: "no summary", choice: { summarize: false } },
  { name: "label", choice: { summarize: false, label: "here" } },
  { name: "summary", choice: { summarize: true } },
  {
    name: "summary+label",
    choice: { summarize: true, customInstructions: "keep the file names", label: "checkpoint" },
  },
];

let counter = 0;
function copyOf(text: string): string {
  const file = path.join(tmp, `c${counter++}.jsonl`);
  fs.writeFileSync(file, text);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

const stats = { switches: 0, summaries: 0, markers: 0, labels: 0, nothing: 0, noops: 0 };

/**
 * Switch `targetId` in a copy of `text` with `choice`, and check it against pi.
 * @param piArgs the oracle args describing the agent dir / settings of this session.
 */
async function switchAndCheck(
  text: string,
  targetId: string,
  choice: SwitchChoice,
  options: SwitchPlanOptions,
  piArgs: string[],
): Promise<void> {
  const file = copyOf(text);
  const before = fs.readFileSync(file);
  const pi = await oracle.oracle({ file, args: [...piArgs, "--branch-target", targetId] });
  const nav = pi.branchSummary!;
  const summarizer = new OpenAiSummarizer({
    baseURL: server.baseURL,
    model: "scripted",
    maxOutputTokens: 1000,
    contextWindow: 1_000_000,
    maxRetries: 0,
  });
  let plan: SwitchPlan | undefined;
  const outcome = await runSwitchFlow(file, targetId, choice, summarizer, options, {
    decide: async (p) => {
      plan = p;
      return choice;
    },
  });
  plan ??= outcome.plan;
  if (outcome.kind === "noop") {
    stats.noops++;
    assert.equal(targetId, plan.oldLeafId);
    assert.ok(fs.readFileSync(file).equals(before));
    return;
  }
  assert.equal(outcome.kind, "switched");
  if (outcome.kind !== "switched") return;
  // Our plan is pi's navigation.
  assert.equal(plan.oldLeafId, nav.oldLeafId, "old leaf");
  assert.equal(plan.collection.commonAncestorId, nav.commonAncestorId, "common ancestor");
  assert.deepEqual(
    plan.collection.entries.map((e) => e.id),
    nav.entriesToSummarize,
    "entries to summarize",
  );
  assert.equal(plan.newLeafId, nav.newLeafIdAfterNavigation, "new leaf");
  assert.equal(plan.budget, nav.tokenBudget, "budget");
  assert.equal(plan.preparation.messages.length, nav.prepared.messageCount, "prepared messages");
  assert.equal(plan.preparation.totalTokens, nav.prepared.totalTokens, "prepared tokens");
  assert.deepEqual(
    { readFiles: plan.preparation.readFiles, modifiedFiles: plan.preparation.modifiedFiles },
    nav.prepared.fileLists,
    "file lists",
  );

  const after = fs.readFileSync(file);
  assert.ok(after.subarray(0, before.length).equals(before), "bytes before the append unchanged");
  const written = outcome.result.entries;
  // pi at the new leaf, on the file before the switch (what its own in-memory navigation would give).
  const atNewLeaf = await oracle.oracle({
    file: copyOf(before.toString("utf8")),
    args: [...piArgs, "--leaf", plan.newLeafId ?? "null"],
  });
  const loaded = await oracle.loadCheck({ file });
  assert.equal(loaded.unchangedOnOpen, true, "pi did not need to repair the file");
  if (written.length === 0) {
    stats.nothing++;
    assert.equal(loaded.leafId, plan.fileLeafId);
  } else assert.equal(loaded.leafId, written[written.length - 1]!.id, "pi's leaf is our last entry");
  const writtenIds = written.map((e) => e.id);
  assert.deepEqual(
    loaded.pathIds,
    written.length ? [...atNewLeaf.pathIds, ...writtenIds] : loaded.pathIds,
    "path = pi's path to the new leaf + our entries",
  );
  const expected = [...atNewLeaf.context.messages];
  const summary = written.find((e) => e.type === "branch_summary");
  if (summary) {
    expected.push(`${summary.id} branchSummary`);
    stats.summaries++;
    const body = (summary as { summary: string }).summary;
    if (plan.preparation.messages.length > 0)
      assert.ok(
        body.startsWith(
          "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nScripted branch summary.",
        ),
        body,
      );
    else assert.equal(body, "No content to summarize");
    assert.deepEqual((summary as { details: unknown }).details, nav.prepared.fileLists);
    assert.equal((summary as { fromId: string }).fromId, nav.oldLeafId ?? "root");
  }
  if (written.some((e) => e.type === "custom")) stats.markers++;
  if (written.some((e) => e.type === "label")) stats.labels++;
  assert.deepEqual(
    loaded.contextMessages.map((m) => `${m.entryId} ${m.role}`),
    written.length ? expected : loaded.contextMessages.map((m) => `${m.entryId} ${m.role}`),
    "context = pi's context at the new leaf (+ the branch summary)",
  );
  assert.deepEqual(loaded.model, atNewLeaf.context.model, "model pi resumes with");
  assert.equal(loaded.thinkingLevel, atNewLeaf.context.thinkingLevel, "thinking level pi resumes with");
  stats.switches++;
}

const options = (agentDir: string): SwitchPlanOptions => ({
  agentDir,
  projectSettings: "never",
  guardSeconds: 0,
  procRoot: null,
});

describe("switch flow vs pi 1.6.0", () => {
  it("tree.jsonl: every entry as the target, each choice", async () => {
    const source = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0/tree.jsonl");
    const agent = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0/tree.agent");
    const text = fs.readFileSync(source, "utf8");
    const session = await SessionFile.open(source);
    for (const r of session.records) {
      for (const { choice } of CHOICES)
        await switchAndCheck(text, r.id, choice, options(agent), ["--agent-dir", agent, "--no-project-settings"]);
    }
    assert.ok(stats.summaries >= 30 && stats.markers >= 20 && stats.labels >= 40, JSON.stringify(stats));
  });

  it("case 15: every entry as the target, each choice", async () => {
    const source = path.join(REPO_ROOT, "test/fixtures/cases/15-branch-summary-tree/session.jsonl");
    const text = fs.readFileSync(source, "utf8");
    const session = await SessionFile.open(source);
    for (const r of session.records) {
      for (const { choice } of CHOICES)
        await switchAndCheck(text, r.id, choice, options("/nonexistent"), [
          "--agent-dir",
          "/nonexistent",
          "--no-project-settings",
        ]);
    }
  });

  it("switching twice: a second switch from a leaf marker (the marker stands for its parent)", async () => {
    const source = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0/tree.jsonl");
    const agent = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0/tree.agent");
    const file = copyOf(fs.readFileSync(source, "utf8"));
    const first = await runSwitchFlow(file, "895e5ef5", { summarize: false }, undefined, options(agent));
    assert.equal(first.kind, "switched");
    // from the marker on 895e5ef5 to t6's answer, with a summary of branch A's tail (not of the marker)
    const second = await runSwitchFlow(
      file,
      "bb6f6d3c",
      { summarize: true },
      new OpenAiSummarizer({
        baseURL: server.baseURL,
        model: "s",
        maxOutputTokens: 500,
        contextWindow: 100000,
        maxRetries: 0,
      }),
      options(agent),
    );
    assert.equal(second.kind, "switched");
    if (second.kind !== "switched") return;
    assert.equal(second.plan.oldLeafId, "895e5ef5");
    const summary = second.result.entries[0] as { type: string; fromId: string; parentId: string; id: string };
    assert.equal(summary.type, "branch_summary");
    assert.equal(summary.fromId, "895e5ef5");
    assert.equal(summary.parentId, "bb6f6d3c");
    const loaded = await oracle.loadCheck({ file });
    assert.equal(loaded.leafId, summary.id);
    assert.deepEqual(
      loaded.contextMessages.slice(-2).map((m) => `${m.entryId} ${m.role}`),
      ["bb6f6d3c assistant", `${summary.id} branchSummary`],
    );
  });

  it(`random trees (${RUNS}): a random target and choice`, async () => {
    let skipped = 0;
    await fc.assert(
      fc.asyncProperty(recipeArb, fc.nat(3), async (recipe, choiceIndex) => {
        const built = buildSession(recipe);
        if (!built.target) {
          skipped++;
          return;
        }
        const session = SessionFile.fromBytes(built.jsonl);
        // pi never writes v1/v2 files we could append to, nor duplicate ids we could target reliably
        if (session.fileVersion < 3 || session.byId.size !== session.records.length) {
          skipped++;
          return;
        }
        // A user/custom message whose parent is missing: pi's navigation throws "Entry <parent> not
        // found" (SessionManager.branch); so must we, without writing.
        const target = session.byId.get(built.target)!;
        if (
          (target.role === "user" || target.type === "custom_message") &&
          target.parentId !== null &&
          !session.byId.has(target.parentId)
        ) {
          const file = copyOf(built.jsonl);
          const before = fs.readFileSync(file);
          await assert.rejects(
            runSwitchFlow(
              file,
              built.target,
              CHOICES[choiceIndex]!.choice,
              new OpenAiSummarizer({
                baseURL: server.baseURL,
                model: "scripted",
                maxOutputTokens: 1000,
                contextWindow: 1_000_000,
                maxRetries: 0,
              }),
              options(tmp),
              { decide: async () => CHOICES[choiceIndex]!.choice },
            ),
            new RegExp(`^Error: Entry ${target.parentId} not found`),
          );
          assert.ok(fs.readFileSync(file).equals(before), "nothing written");
          skipped++;
          return;
        }
        const agent = fs.mkdtempSync(path.join(tmp, "agent-"));
        fs.writeFileSync(
          path.join(agent, "settings.json"),
          JSON.stringify({
            compaction: { reserveTokens: recipe.reserve, keepRecentTokens: recipe.keepRecent },
            branchSummary: { reserveTokens: Math.min(16384, Math.floor(recipe.window / 2)) },
          }),
        );
        await switchAndCheck(
          built.jsonl,
          built.target,
          CHOICES[choiceIndex]!.choice,
          { ...options(agent), contextWindow: recipe.window },
          ["--agent-dir", agent, "--no-project-settings", "--context-window", String(recipe.window)],
        );
      }),
      { numRuns: RUNS },
    );
    assert.ok(skipped < RUNS, "some random trees were switched");
  });

  it("reports what was exercised", () => {
    console.log(`switch conformance: ${JSON.stringify(stats)}`);
    assert.ok(stats.switches > 100);
  });
});
