/**
 * "Undo last context edit" against pi 1.6.0 itself (oracle, Node 22): on the shared fixtures and the
 * trim session, a batch of context edits is written through the real flow, then taken back both
 * ways (`rules/undoEdit.ts`) on copies of the edited file, and pi loads each copy:
 *
 * - `leaf` (a `pi-context/leaf` marker before the batch): pi sends exactly the messages it sent
 *   before the batch, and its context estimate, context usage and model context are those before
 *   too (usage-based again) — pi loads the state before the edit as it was;
 * - `retarget` (one new edit per target, back to what it showed): the same messages; pi's estimate
 *   is its pure chars/4 one (the branch holds context edits) and equals ours;
 * - an undo of an edit of an edited item brings its earlier edit back (its note, not the original);
 * - after pi answered (a message after the batch), the leaf cannot move back without losing it:
 *   the plan re-targets, and pi sends the message before the batch plus the new one.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { SessionFile } from "../../src/core/read/session";
import { buildProjection } from "../../src/core/rules/context";
import type { ContextEditAction } from "../../src/core/rules/editPlan";
import { isNothingToUndo } from "../../src/core/rules/undoEdit";
import { commitContextEdits, planContextEdits } from "../../src/core/flows/contextEdit";
import { commitUndo, planUndo, type UndoResult } from "../../src/core/flows/undoEdit";
import { oracleView } from "../support/oracle-view";
import { REPO_ROOT } from "../support/paths";
import { trimSession } from "../support/trim-session";

interface LlmView {
  leafId: string | null;
  projected: { entryId: string; messages?: unknown[] }[];
  estimate: { tokens: number; usageTokens: number; trailingTokens: number; lastUsageIndex: number | null };
  orphanResults: unknown[];
}
interface Oracle {
  oracle(request: { file: string; args: string[] }): Promise<Record<string, unknown>>;
  llm(request: { file: string }): Promise<LlmView>;
  close(): Promise<void>;
}

let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-undo-conf-"));
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const GUARD = { guardSeconds: 0, procRoot: null };
const VIEW_ARGS = ["--agent-dir", "/nonexistent", "--no-project-settings", "--full", "--keep-recent-tokens", "2000"];

/** What pi sends: the messages of every projected entry that contributes any, by entry. */
function sent(view: LlmView): [string, unknown][] {
  return view.projected.filter((p) => (p.messages ?? []).length > 0).map((p) => [p.entryId, p.messages]);
}

/** pi's model context, usage and threshold view of a file (the parts a leaf move could change). */
async function piState(file: string): Promise<Record<string, unknown>> {
  const v = await oracle.oracle({ file, args: VIEW_ARGS });
  return {
    context: v.context,
    contextUsage: v.contextUsage,
    estimateProjectedContextTokens: v.estimateProjectedContextTokens,
    shouldCompact: v.shouldCompact,
  };
}

function copy(file: string, name: string): string {
  const to = path.join(tmp, name);
  fs.copyFileSync(file, to);
  return to;
}

/** Write `actions` through the real flow; the batch's ids. */
async function edit(file: string, actions: ContextEditAction[]): Promise<string[]> {
  const plan = await planContextEdits(file, actions, GUARD);
  assert.deepEqual(plan.preparation.refused, []);
  const result = await commitContextEdits(plan);
  assert.ok(result.entries.length > 0);
  return result.entries.map((e) => e.id);
}

/** Undo the last batch of `file` (the given way), checking our plan against what was written. */
async function undo(file: string, way: "leaf" | "retarget", editIds?: string[]): Promise<UndoResult> {
  const plan = await planUndo(file, { ...GUARD, ...(editIds ? { editIds } : {}), retargetOnly: way === "retarget" });
  assert.ok(!isNothingToUndo(plan.preparation), JSON.stringify(plan.preparation));
  if (isNothingToUndo(plan.preparation)) throw new Error("unreachable");
  assert.equal(plan.preparation.way, way);
  const before = fs.statSync(file).size;
  const result = await commitUndo(plan);
  assert.equal(fs.statSync(file).size - before, plan.preparation.bytes, "the bytes the preview says");
  assert.equal(result.tokensAfter, plan.preparation.tokensAfter.tokens);
  return result;
}

/** The batch of every case: the largest tool result, the first assistant with calls shortened, and a user message. */
function firstBatch(file: string): ContextEditAction[] {
  const session = SessionFile.fromBytes(fs.readFileSync(file));
  const entries = buildProjection(session).entries.filter((e) => e.roles.length > 0);
  const largest = entries
    .filter((e) => e.record.role === "toolResult")
    .sort((a, b) => b.record.tokens - a.record.tokens)[0];
  const caller = entries.find((e) => e.record.role === "assistant" && e.record.toolCallIds?.length);
  const user = entries.find((e) => e.record.role === "user");
  return [
    ...(largest ? [{ action: "omit" as const, targetId: largest.record.id }] : []),
    ...(caller && caller.record.id !== largest?.record.id
      ? [{ action: "replace" as const, targetId: caller.record.id, content: "(shortened)" }]
      : []),
    ...(user ? [{ action: "replace" as const, targetId: user.record.id, content: "(a shorter request)" }] : []),
  ];
}

const CASES = ["long", "split", "overflow", "tree", "trim"] as const;

function source(name: (typeof CASES)[number]): string {
  const file = path.join(tmp, `${name}.jsonl`);
  if (name === "trim") fs.writeFileSync(file, trimSession().jsonl());
  else fs.copyFileSync(path.join(REPO_ROOT, "test/fixtures/pi-1.6.0", `${name}.jsonl`), file);
  return file;
}

describe("undo of the last context edit, loaded by pi 1.6.0", () => {
  for (const name of CASES)
    it(`${name}: moving the leaf back restores pi's state exactly; re-targeting restores its messages`, async () => {
      const file = source(name);
      const piBefore = await oracle.llm({ file });
      const stateBefore = await piState(file);
      const ids = await edit(file, firstBatch(file));
      const edited = await oracle.llm({ file });
      assert.notDeepEqual(sent(edited), sent(piBefore), "the batch changed what pi sends");

      const byLeaf = copy(file, `${name}-leaf.jsonl`);
      const leafResult = await undo(byLeaf, "leaf");
      assert.equal(leafResult.entries.length, 1);
      const piLeaf = await oracle.llm({ file: byLeaf });
      assert.equal(piLeaf.leafId, leafResult.entries[0]!.id, "pi resumes at the marker");
      assert.deepEqual(sent(piLeaf), sent(piBefore));
      assert.deepEqual(piLeaf.estimate, piBefore.estimate, "pi's own estimate, usage-based as before");
      assert.deepEqual(await piState(byLeaf), stateBefore);
      assert.deepEqual(piLeaf.orphanResults, []);

      const byEdits = copy(file, `${name}-retarget.jsonl`);
      const retargetResult = await undo(byEdits, "retarget");
      assert.equal(retargetResult.entries.length, ids.length);
      const piEdits = await oracle.llm({ file: byEdits });
      assert.deepEqual(sent(piEdits), sent(piBefore));
      assert.equal(piEdits.estimate.tokens, retargetResult.tokensAfter, "pi's estimate is ours");
      assert.equal(piEdits.estimate.lastUsageIndex, null, "pure chars/4 while the branch holds context edits");
      assert.deepEqual(piEdits.orphanResults, []);
      const ours = oracleView(await SessionFile.open(byEdits), {
        settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 },
        contextWindow: null,
      });
      assert.deepEqual(ours.context, (await oracle.oracle({ file: byEdits, args: VIEW_ARGS })).context);
    });

  it("an edit of an edited item: undo brings its earlier edit back, both ways", async () => {
    const file = source("trim");
    await edit(file, [{ action: "omit", targetId: "r6" }]); // a note for the test log
    const withNote = await oracle.llm({ file });
    await edit(file, [{ action: "restore", targetId: "r6" }]);
    assert.notDeepEqual(sent(await oracle.llm({ file })), sent(withNote));
    for (const way of ["leaf", "retarget"] as const) {
      const f = copy(file, `again-${way}.jsonl`);
      const plan = await planUndo(f, { ...GUARD, retargetOnly: way === "retarget" });
      assert.ok(!isNothingToUndo(plan.preparation));
      if (isNothingToUndo(plan.preparation)) return;
      assert.deepEqual(plan.preparation.targets, [{ targetId: "r6", now: "replace", back: "replace" }]);
      await undo(f, way);
      assert.deepEqual(sent(await oracle.llm({ file: f })), sent(withNote), way);
    }
  });

  it("after pi answered: the leaf stays, the plan re-targets, pi keeps the answer", async () => {
    const file = source("trim");
    const piBefore = await oracle.llm({ file });
    const ids = await edit(file, firstBatch(file));
    const leaf = SessionFile.fromBytes(fs.readFileSync(file)).leafId;
    const answer = {
      type: "message",
      id: "answered",
      parentId: leaf,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: [{ type: "text", text: "and now the lexer" }], timestamp: Date.now() },
    };
    fs.appendFileSync(file, `${JSON.stringify(answer)}\n`);
    const plan = await planUndo(file, { ...GUARD, editIds: ids });
    assert.ok(!isNothingToUndo(plan.preparation));
    if (isNothingToUndo(plan.preparation)) return;
    assert.equal(plan.preparation.way, "retarget");
    await undo(file, "retarget", ids);
    const piAfter = await oracle.llm({ file });
    assert.deepEqual(sent(piAfter), [...sent(piBefore), ["answered", [answer.message]]]);
    assert.deepEqual(piAfter.orphanResults, []);
  });
});
