/**
 * Pairing-safe batches (issue 43, kind 1), judged by pi 1.6.0 itself (oracle, Node 22): a batch of
 * context edits is one append, but pi (or a crash, or pi's boundary taking the entries one at a
 * time) can see any prefix of it. For every prefix of every batch the planner writes — random
 * sessions, random omit / replace / restore sets in two rounds (the second restores what the first
 * hid) — pi-ai's `transformMessages` output has no orphaned tool result that the session did not
 * have before; pi's own `appendContextEdit`, called once per draft in the batch's order (what the
 * live bridge does), accepts every draft. Plus the issue's example through `pi-context trim`.
 *
 * Runs: PI_CONTEXT_BATCH_RUNS (default 200).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../src/core/read/session";
import { buildProjection } from "../../src/core/rules/context";
import { chainContextEdits, editableRole, type ContextEditContent } from "../../src/core/rules/contextEdit";
import { prepareContextEdits, type ContextEditAction } from "../../src/core/rules/editPlan";
import { toolCallLinks } from "../../src/core/rules/pairing";
import { buildSession, recipeArb } from "../support/random-session";
import { SessionBuilder } from "../support/session-builder";
import { runCli, writeOldSession } from "../support/cli";
import { REPO_ROOT } from "../support/paths";

interface LlmView {
  orphanResults: { entryId: string; toolCallId: string }[];
}
interface Oracle {
  llm(request: { entriesJsonl: string }): Promise<LlmView>;
  contextEdit(request: {
    entriesJsonl: string;
    edits: { targetId: string; replacement: unknown }[];
  }): Promise<{ results: ({ ok: true; id: string; line: string } | { ok: false; error: string })[] }>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_BATCH_RUNS ?? 200);
let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-batch-order-"));
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

let nextId = 0;
const orphansOf = async (jsonl: string) =>
  new Set((await oracle.llm({ entriesJsonl: jsonl })).orphanResults.map((o) => `${o.entryId} ${o.toolCallId}`));

/**
 * Write `actions` as planned at the file's leaf; check every prefix with pi-ai; return the file
 * with the whole batch (or the same file when nothing is planned).
 */
async function writeChecked(jsonl: string, actions: ContextEditAction[], stats: { batches: number; prefixes: number }) {
  const session = SessionFile.fromBytes(jsonl);
  const prep = prepareContextEdits(session, actions);
  if (prep.drafts.length === 0) return jsonl;
  const entries = chainContextEdits(prep.drafts, {
    leafId: prep.leafId,
    newId: () => `bo${String(nextId++).padStart(6, "0")}`, // unique across rounds
    timestamp: "2026-01-01T00:00:00.000Z",
  });
  const before = await orphansOf(jsonl);
  stats.batches++;
  let text = jsonl;
  for (const [i, entry] of entries.entries()) {
    text += `${JSON.stringify(entry)}\n`;
    if (i === entries.length - 1 && entries.length > 1) break; // the whole batch: the planner's own proof
    stats.prefixes++;
    const now = await orphansOf(text);
    const added = [...now].filter((o) => !before.has(o));
    assert.deepEqual(
      added,
      [],
      `after ${i + 1} of ${entries.length} edits (${entries.map((e) => `${e.targetId}:${e.replacement === null ? "omit" : "show"}`).join(", ")}) pi-ai sends orphaned results\n${jsonl}`,
    );
  }
  // pi's own appendContextEdit, one draft at a time in this order (the live bridge's path)
  const pi = await oracle.contextEdit({
    entriesJsonl: jsonl,
    edits: prep.drafts.map((d) => ({ targetId: d.targetId, replacement: d.replacement })),
  });
  assert.ok(
    pi.results.every((r) => r.ok),
    JSON.stringify(pi.results.filter((r) => !r.ok)),
  );
  return text;
}

/** Actions on the context: assistants with calls (omit/restore), tool results, user and custom messages. */
function actionsFor(jsonl: string, rolls: readonly { pick: number; kind: number }[]): ContextEditAction[] {
  const session = SessionFile.fromBytes(jsonl);
  const projection = buildProjection(session);
  const editable = projection.entries.filter((e) => editableRole(e.record));
  if (editable.length === 0) return [];
  const links = toolCallLinks(projection.entries, session);
  const callers = editable.filter((e) => links.resultsOf.get(e.record.id)?.length);
  const seen = new Set<string>();
  const out: ContextEditAction[] = [];
  for (const roll of rolls) {
    const pool = roll.pick % 3 === 0 && callers.length > 0 ? callers : editable;
    const targetId = pool[roll.pick % pool.length]!.record.id;
    if (seen.has(targetId)) continue;
    seen.add(targetId);
    const kind = roll.kind % 4;
    const content: ContextEditContent = "a shorter text";
    out.push(
      kind <= 1
        ? { action: "omit", targetId }
        : kind === 2
          ? { action: "restore", targetId }
          : { action: "replace", targetId, content },
    );
  }
  return out;
}

const rollsArb = fc.array(fc.record({ pick: fc.nat({ max: 10_000 }), kind: fc.nat({ max: 100 }) }), {
  minLength: 1,
  maxLength: 6,
});

describe("every prefix of a batch of context edits is pairing-safe (issue 43, kind 1)", () => {
  it(`random sessions × two rounds of edits (${RUNS} runs): pi-ai sends no new orphaned result after any prefix`, async () => {
    const stats = { batches: 0, prefixes: 0 };
    await fc.assert(
      fc.asyncProperty(recipeArb, rollsArb, rollsArb, async (recipe, round1, round2) => {
        const { jsonl } = buildSession(recipe);
        const first = await writeChecked(jsonl, actionsFor(jsonl, round1), stats);
        // the second round restores and re-edits what the first one hid or changed
        const restores = round2.map((r) => ({ ...r, kind: r.kind % 2 === 0 ? 2 : r.kind }));
        await writeChecked(first, actionsFor(first, restores), stats);
      }),
      { numRuns: RUNS },
    );
    console.log(`batch order: ${JSON.stringify(stats)}`);
    assert.ok(stats.prefixes > RUNS / 2, "batches of several edits were checked");
  });

  it("pi-context trim of an assistant with two tool calls: its results first, then the assistant; pi-ai agrees after each line", async () => {
    const jsonl = new SessionBuilder()
      .user("u1", "look at two files")
      .assistant("a1", { calls: [{ id: "c1" }, { id: "c2" }], usage: 100 })
      .result("r1", "c1", "first file")
      .result("r2", "c2", "second file")
      .assistant("a2", { text: "done", usage: 150 })
      .jsonl();
    const file = writeOldSession(path.join(tmp, "trim.jsonl"), jsonl);
    const r = await runCli(["trim", file, "a1", "--remove", "--agent-dir", path.join(tmp, "no-agent")]);
    assert.equal(r.code, 0, r.err);
    const lines = fs.readFileSync(file, "utf8").slice(jsonl.length).trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { targetId: string }).targetId),
      ["r1", "r2", "a1"],
    );
    let text = jsonl;
    for (const line of lines) {
      text += `${line}\n`;
      assert.deepEqual([...(await orphansOf(text))], [], `after ${line}`);
    }
  });
});
