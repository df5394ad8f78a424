/**
 * The branch-switch flow (src/core/switchFlow.ts) on temp copies of pi's tree fixture and case 15:
 * pi's new-leaf rule, what is appended with and without a summary / label, the leaf marker, the
 * summary request (scripted OpenAI-compatible server on 127.0.0.1), change detection and re-plan,
 * cancel / error / live guard leaving the file byte-identical.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { SummarizerError } from "../../../../src/core/flows/summarizer";
import { BRANCH_SUMMARY_PREAMBLE } from "../../../../src/core/flows/prompts";
import { LiveSessionError } from "../../../../src/core/access/words";
import { SessionChangedError } from "../../../../src/core/flows/write";
import {
  commitSwitch,
  NO_CONTENT_SUMMARY,
  pathOf,
  planSwitch,
  plannedWrites,
  runSwitchFlow,
  summarizeSwitch,
  type SwitchPlanOptions,
} from "../../../../src/core/flows/switch";
import { OpenAiSummarizer } from "../../../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../../../support/scripted-openai";
import { FIXTURES } from "../../../support/paths";

const TREE = path.join(FIXTURES, "pi-1.6.0/tree.jsonl");
const TREE_AGENT = path.join(FIXTURES, "pi-1.6.0/tree.agent");
const CASE15 = path.join(FIXTURES, "cases/15-branch-summary-tree/session.jsonl");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-switch-"));
let server: ScriptedServer;
before(async () => {
  server = await startScriptedServer();
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
function copy(src: string): string {
  const file = path.join(tmp, `s${n++}.jsonl`);
  fs.copyFileSync(src, file);
  // an old mtime: the live guard only looks at the process check in these tests
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

const options: SwitchPlanOptions = { agentDir: TREE_AGENT, guardSeconds: 0, procRoot: null };
const summarizer = () =>
  new OpenAiSummarizer({
    baseURL: server.baseURL,
    model: "scripted",
    maxOutputTokens: 2000,
    contextWindow: 200000,
    maxRetries: 0,
  });

function lines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("switch flow: plans (pi's navigateTree rules)", () => {
  it("an assistant target becomes the leaf; the abandoned stretch is old leaf → common ancestor", async () => {
    const plan = await planSwitch(copy(TREE), "895e5ef5", options);
    assert.equal(plan.oldLeafId, "bb6f6d3c");
    assert.equal(plan.newLeafId, "895e5ef5");
    assert.equal(plan.returnsText, false);
    assert.equal(plan.collection.commonAncestorId, "3bcd7a02");
    assert.deepEqual(
      plan.collection.entries.map((e) => e.id),
      ["b6b95844", "07b460a3", "9a572700", "bb6f6d3c"],
    );
    // pi's prepareBranchEntries: tool results skipped; read file from t6's read call
    assert.deepEqual(
      plan.preparation.messages.map((m) => m.record.id),
      ["b6b95844", "07b460a3", "bb6f6d3c"],
    );
    assert.deepEqual(plan.preparation.readFiles, ["src/delta.ts"]);
    assert.equal(plan.contextWindow, 200000);
    assert.equal(plan.budget, 200000 - 16384);
    assert.deepEqual(plannedWrites(plan, { summarize: false }), ["leaf-marker"]);
    assert.deepEqual(plannedWrites(plan, { summarize: false, label: "x" }), ["label"]);
    assert.deepEqual(plannedWrites(plan, { summarize: true, label: "x" }), ["branch_summary", "label"]);
  });

  it("a user-message target moves the leaf to its parent and gives its text back", async () => {
    const plan = await planSwitch(copy(TREE), "a41d08b8", options);
    assert.equal(plan.newLeafId, "3bcd7a02");
    assert.equal(plan.returnsText, true);
    assert.equal(plan.editorText, "[task:t3] do t3");
  });

  it("the current leaf is a no-op; an unknown id fails with pi's message", async () => {
    const file = copy(TREE);
    const plan = await planSwitch(file, "bb6f6d3c", options);
    assert.equal(plan.noop, true);
    assert.deepEqual(plannedWrites(plan, { summarize: true, label: "x" }), []);
    await assert.rejects(planSwitch(file, "nope", options), /Entry nope not found/);
  });

  it("case 15: navigating l1 → bA5 collects [bs1, bB1, bB2, bB3, l1] with pi's file lists (oracle.json)", async () => {
    const plan = await planSwitch(copy(CASE15), "bA5", { ...options, agentDir: "/nonexistent" });
    assert.equal(plan.collection.commonAncestorId, "a1");
    assert.deepEqual(
      plan.collection.entries.map((e) => e.id),
      ["bs1", "bB1", "bB2", "bB3", "l1"],
    );
    assert.deepEqual(
      plan.preparation.messages.map((m) => m.role),
      ["branchSummary", "user", "assistant"],
    );
    assert.equal(plan.preparation.totalTokens, 31);
    assert.deepEqual(plan.preparation.readFiles, []);
    assert.deepEqual(plan.preparation.modifiedFiles, ["src/cache.ts", "src/lru.ts"]);
    assert.equal(plan.budget, 111616);
  });
});

describe("switch flow: writes", () => {
  it("without a summary: one leaf marker on the new leaf; the file resumes there; switching again is a no-op", async () => {
    const file = copy(TREE);
    const before = fs.readFileSync(file);
    const plan = await planSwitch(file, "895e5ef5", options);
    const result = await commitSwitch(
      plan,
      { summarize: false },
      undefined,
      () => new Date("2026-02-01T00:00:00.000Z"),
    );
    assert.equal(result.entries.length, 1);
    const marker = result.entries[0]!;
    assert.deepEqual(Object.keys(marker), ["type", "customType", "data", "id", "parentId", "timestamp"]);
    assert.equal(marker.type, "custom");
    assert.equal(marker.parentId, "895e5ef5");
    assert.deepEqual((marker as { data: unknown }).data, { targetId: "895e5ef5", fromId: "bb6f6d3c" });
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before), "existing bytes unchanged");
    const session = await SessionFile.open(file);
    assert.equal(session.leafId, marker.id);
    assert.deepEqual(pathOf(session, session.leafId).slice(-3), ["eefae3d2", "895e5ef5", marker.id]);
    const again = await planSwitch(file, "895e5ef5", options);
    assert.equal(again.oldLeafId, "895e5ef5", "the marker stands for its parent");
    assert.equal(again.noop, true);
    // the marker itself as a target also resolves to its parent
    assert.equal((await planSwitch(file, marker.id, options)).noop, true);
  });

  it("without a summary, with a label: pi's label entry on the target, parented on the new leaf", async () => {
    const file = copy(TREE);
    const plan = await planSwitch(file, "a41d08b8", options);
    const result = await commitSwitch(plan, { summarize: false, label: "  retry t3  " });
    assert.equal(result.entries.length, 1);
    assert.deepEqual(result.entries[0], {
      type: "label",
      id: result.entries[0]!.id,
      parentId: "3bcd7a02",
      timestamp: result.entries[0]!.timestamp,
      targetId: "a41d08b8",
      label: "retry t3",
    });
    assert.equal(result.editorText, "[task:t3] do t3");
  });

  it("a user-message child of the leaf: nothing to write, only the text comes back", async () => {
    const file = copy(CASE15);
    // make bB1's sibling situation: target bB1 (user) whose parent bs1 is not the leaf → marker; target = a user child of the leaf needs one
    fs.appendFileSync(
      file,
      `${JSON.stringify({ type: "message", id: "u9", parentId: "l1", timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "next" } })}\n`,
    );
    fs.appendFileSync(
      file,
      `${JSON.stringify({ type: "message", id: "a9", parentId: "u9", timestamp: "2026-01-01T00:00:00.000Z", message: { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" } })}\n`,
    );
    const size = fs.statSync(file).size;
    const plan = await planSwitch(file, "u9", { ...options, agentDir: "/nonexistent" });
    assert.equal(plan.newLeafId, "l1");
    assert.deepEqual(plannedWrites(plan, { summarize: false }), ["leaf-marker"]);
    const r = await commitSwitch(plan, { summarize: false });
    assert.equal(r.editorText, "next");
    assert.equal(fs.statSync(file).size > size, true);
    // now the leaf is a marker on l1; u9 again: the marker already points at l1 → nothing to write
    const size2 = fs.statSync(file).size;
    const plan2 = await planSwitch(file, "u9", { ...options, agentDir: "/nonexistent" });
    assert.deepEqual(plannedWrites(plan2, { summarize: true }), []);
    await commitSwitch(plan2, { summarize: true });
    assert.equal(fs.statSync(file).size, size2);
  });

  it("with a summary: the request (pi's layout, our prompt), then branch_summary on the new leaf + label on it, in pi's key order", async () => {
    const file = copy(TREE);
    const plan = await planSwitch(file, "a41d08b8", options);
    server.script({ text: "## Goal\nRead delta on branch C.\n\n## Next Steps\n1. Continue." });
    const requestsBefore = server.requests.length;
    const draft = await summarizeSwitch(plan, { summarize: true, customInstructions: "focus on delta" }, summarizer());
    const req = server.requests[requestsBefore]!;
    assert.equal(req.body.model, "scripted");
    const prompt = req.body.messages!.find((m) => m.role === "user")!.content;
    assert.match(prompt, /^<conversation>\n\[User\]: \[task:t6\] do t6 on branch C/);
    assert.match(prompt, /\[Assistant tool calls\]: read\(path="src\/delta\.ts"\)/);
    assert.doesNotMatch(prompt, /\[Tool result\]/, "pi's prepareBranchEntries skips tool results");
    assert.match(prompt, /<\/conversation>\n\n/);
    assert.match(prompt, /## Goal/);
    assert.doesNotMatch(prompt, /Critical Context/);
    assert.match(prompt, /\n\nAdditional focus: focus on delta$/);
    assert.equal(
      draft.summary,
      `${BRANCH_SUMMARY_PREAMBLE}## Goal\nRead delta on branch C.\n\n## Next Steps\n1. Continue.\n\n<read-files>\nsrc/delta.ts\n</read-files>`,
    );
    const result = await commitSwitch(plan, { summarize: true, label: "C" }, draft);
    const [summary, label] = result.entries as unknown as Record<string, unknown>[];
    assert.deepEqual(Object.keys(summary!), [
      "type",
      "id",
      "parentId",
      "timestamp",
      "fromId",
      "summary",
      "details",
      "usage",
      "fromHook",
    ]);
    assert.equal(summary!.parentId, "3bcd7a02");
    assert.equal(summary!.fromId, "bb6f6d3c");
    assert.deepEqual(summary!.details, { readFiles: ["src/delta.ts"], modifiedFiles: [] });
    assert.equal(summary!.fromHook, false);
    assert.deepEqual(label, {
      type: "label",
      id: label!.id,
      parentId: summary!.id,
      timestamp: label!.timestamp,
      targetId: summary!.id,
      label: "C",
    });
    const written = lines(file).slice(-2);
    assert.deepEqual(written, [summary, label]);
  });

  it("nothing to convert: 'No content to summarize' without calling the model", async () => {
    const file = copy(CASE15);
    // leaf is l1 (a label on a1, parent bB3); target bB3: collection [l1] has no message
    const plan = await planSwitch(file, "bB3", { ...options, agentDir: "/nonexistent" });
    assert.deepEqual(
      plan.collection.entries.map((e) => e.id),
      ["l1"],
    );
    assert.equal(plan.preparation.messages.length, 0);
    const requests = server.requests.length;
    const draft = await summarizeSwitch(plan, { summarize: true }, summarizer());
    assert.equal(server.requests.length, requests);
    assert.deepEqual(draft, { summary: NO_CONTENT_SUMMARY, readFiles: [], modifiedFiles: [] });
    const r = await commitSwitch(plan, { summarize: true }, draft);
    assert.equal((r.entries[0] as { summary: string }).summary, NO_CONTENT_SUMMARY);
    assert.equal((r.entries[0] as { usage?: unknown }).usage, undefined);
  });
});

describe("switch flow: nothing written on change, cancel, error or a live session", () => {
  it("the file changed after the plan: SessionChangedError, and the flow re-plans and asks again", async () => {
    const file = copy(TREE);
    const plan = await planSwitch(file, "895e5ef5", options);
    fs.appendFileSync(
      file,
      `${JSON.stringify({ type: "label", id: "zz000001", parentId: "bb6f6d3c", timestamp: "2026-01-01T00:00:00.000Z", targetId: "bb6f6d3c", label: "pi wrote" })}\n`,
    );
    const size = fs.statSync(file).size;
    await assert.rejects(commitSwitch(plan, { summarize: false }), SessionChangedError);
    assert.equal(fs.statSync(file).size, size);
    // runSwitchFlow: the file changes once between deciding and writing → re-plan, decide again
    const file2 = copy(TREE);
    const seen: { oldLeaf: string | null; changed: boolean }[] = [];
    const outcome = await runSwitchFlow(file2, "895e5ef5", { summarize: false }, undefined, options, {
      decide: async (p, changed) => {
        seen.push({ oldLeaf: p.oldLeafId, changed });
        if (seen.length === 1)
          fs.appendFileSync(
            file2,
            `${JSON.stringify({ type: "label", id: "zz000002", parentId: "bb6f6d3c", timestamp: "2026-01-01T00:00:00.000Z", targetId: "bb6f6d3c", label: "pi wrote" })}\n`,
          );
        return { summarize: false };
      },
    });
    assert.deepEqual(seen, [
      { oldLeaf: "bb6f6d3c", changed: false },
      { oldLeaf: "zz000002", changed: true },
    ]);
    assert.equal(outcome.kind, "switched");
    assert.equal(lines(file2).at(-1)!.parentId, "895e5ef5");
  });

  it("the file changes while summarizing: nothing written, re-planned with a new summary", async () => {
    const file = copy(TREE);
    let decisions = 0;
    server.script({ text: "## Goal\nfirst", chunkDelayMs: 50 }, { text: "## Goal\nsecond" });
    const outcome = await runSwitchFlow(file, "895e5ef5", { summarize: true }, summarizer(), options, {
      decide: async () => {
        decisions++;
        return { summarize: true };
      },
      onText: () => {
        if (decisions === 1 && !fs.readFileSync(file, "utf8").includes("zz000003")) {
          fs.appendFileSync(
            file,
            `${JSON.stringify({ type: "label", id: "zz000003", parentId: "bb6f6d3c", timestamp: "2026-01-01T00:00:00.000Z", targetId: "bb6f6d3c" })}\n`,
          );
        }
      },
    });
    assert.equal(decisions, 2);
    assert.equal(outcome.kind, "switched");
    const all = lines(file);
    assert.equal(all.filter((l) => l.type === "branch_summary").length, 3, "the fixture's two + exactly one new");
    const last = all.at(-1)!;
    assert.equal(last.type, "branch_summary");
    assert.equal(last.fromId, "zz000003");
    assert.match(String(last.summary), /second/);
  });

  it("cancel while summarizing: cancelled error, file byte-identical", async () => {
    const file = copy(TREE);
    const before = fs.readFileSync(file);
    server.script({ text: "## Goal\nnever", hang: true });
    const controller = new AbortController();
    const plan = await planSwitch(file, "895e5ef5", options);
    const pending = summarizeSwitch(plan, { summarize: true }, summarizer(), {
      signal: controller.signal,
      onText: () => controller.abort(),
    });
    await assert.rejects(pending, (e: unknown) => e instanceof SummarizerError && e.kind === "cancelled");
    assert.ok(fs.readFileSync(file).equals(before));
  });

  it("an HTTP error or a truncated answer writes nothing", async () => {
    for (const answer of [
      { status: 500, errorMessage: "boom" },
      { text: "## Goal\npartial", finishReason: "length" },
    ]) {
      const file = copy(TREE);
      const before = fs.readFileSync(file);
      server.script(answer);
      await assert.rejects(
        runSwitchFlow(file, "895e5ef5", { summarize: true }, summarizer(), options),
        SummarizerError,
      );
      assert.ok(fs.readFileSync(file).equals(before));
    }
  });

  it("HTTP 401: onUnauthorized gives a summarizer with a new key and the same switch goes on; without it nothing is written", async () => {
    const file = copy(TREE);
    const requests = server.requests.length;
    server.script({ status: 401, errorMessage: "bad key" }, { text: "## Goal\nafter a new key" });
    const seen: number[] = [];
    const outcome = await runSwitchFlow(file, "895e5ef5", { summarize: true }, summarizer(), options, {
      onUnauthorized: async (error) => {
        seen.push(error.status!);
        return new OpenAiSummarizer({
          baseURL: server.baseURL,
          apiKey: "sk-new",
          model: "scripted",
          maxOutputTokens: 2000,
          contextWindow: 200000,
          maxRetries: 0,
        });
      },
    });
    assert.equal(outcome.kind, "switched");
    assert.deepEqual(seen, [401]);
    assert.equal(server.requests.length, requests + 2);
    assert.equal(server.requests[requests + 1]!.authorization, "Bearer sk-new");
    assert.match((lines(file).pop() as { summary: string }).summary, /after a new key/);
    const other = copy(TREE);
    const before = fs.readFileSync(other);
    server.script({ status: 403, errorMessage: "forbidden" });
    await assert.rejects(
      runSwitchFlow(other, "895e5ef5", { summarize: true }, summarizer(), options, {
        onUnauthorized: async () => undefined,
      }),
      (e: unknown) => e instanceof SummarizerError && e.status === 403,
    );
    assert.ok(fs.readFileSync(other).equals(before));
  });

  it("a live session (recently written) is refused before anything is spent or written", async () => {
    const file = copy(TREE);
    fs.utimesSync(file, new Date(), new Date());
    const before = fs.readFileSync(file);
    const requests = server.requests.length;
    await assert.rejects(
      runSwitchFlow(file, "895e5ef5", { summarize: true }, summarizer(), { ...options, guardSeconds: 60 }),
      LiveSessionError,
    );
    assert.equal(server.requests.length, requests);
    assert.ok(fs.readFileSync(file).equals(before));
    // a no-op is fine even when live (nothing is written)
    const noop = await runSwitchFlow(file, "bb6f6d3c", { summarize: false }, undefined, {
      ...options,
      guardSeconds: 60,
    });
    assert.equal(noop.kind, "noop");
  });
});
