/**
 * Every kind of entry our write path appends — a compaction, a branch summary (+ label), a label,
 * and the leaf marker that persists a move without a summary — is loaded by pi 1.6.0 with the
 * intended leaf and context. Random trees (fast-check) and the shared fixtures, on temp copies.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../src/core/read/session";
import { buildProjection, type Projection } from "../../src/core/rules/context";
import { buildCompactionEntry, isPrepared, prepareCompaction } from "../../src/core/rules/compaction";
import {
  buildBranchSummaryEntry,
  buildLabelEntry,
  buildLeafMarkerEntry,
  planNavigation,
  prepareBranchEntries,
  branchSummaryBudget,
} from "../../src/core/rules/branch";
import { contribution, currentSystemMessage } from "../../src/core/rules/tokens";
import { formatFileOperations } from "../../src/core/rules/files";
import { appendEntries, expectationOf, newEntryId } from "../../src/core/flows/write";
import { buildSession, recipeArb, type Recipe } from "../support/random-session";
import { REPO_ROOT } from "../support/paths";

interface Loaded {
  leafId: string | null;
  pathIds: string[];
  contextEntries: string[];
  contextMessages: { entryId: string; role: string; estimateTokens: number }[];
  unchangedOnOpen: boolean;
}
interface Oracle {
  loadCheck(request: { file: string }): Promise<Loaded>;
  oracle(request: { file: string; args: string[] }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_WRITE_RUNS ?? 150);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-written-"));
let oracle: Oracle;
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

function typeName(r: { type: string; role?: string }): string {
  return r.type === "message" ? `message:${r.role}` : r.type;
}

/** Our projection of a file in loadCheck's shape. */
function ourView(
  session: SessionFile,
  projection: Projection = buildProjection(session),
): Omit<Loaded, "unchangedOnOpen"> {
  return {
    leafId: projection.leafId,
    pathIds: projection.path.map((e) => e.id),
    contextEntries: projection.entries.map((e) => `${e.record.id} ${typeName(e.record)}`),
    contextMessages: projection.entries.flatMap((e) =>
      e.roles.map((role) => ({
        entryId: e.record.id,
        role,
        estimateTokens: role === "system" ? e.record.systemTokens : contribution(e, session).tokens,
      })),
    ),
  };
}

async function expectPiLoads(file: string, session: SessionFile): Promise<Loaded> {
  const loaded = await oracle.loadCheck({ file });
  assert.equal(loaded.unchangedOnOpen, true, "pi did not need to repair the file");
  const ours = ourView(session);
  assert.deepEqual(
    {
      leafId: loaded.leafId,
      pathIds: loaded.pathIds,
      contextEntries: loaded.contextEntries,
      contextMessages: loaded.contextMessages,
    },
    ours,
  );
  return loaded;
}

let counter = 0;
async function writeRecipe(recipe: Recipe): Promise<string | undefined> {
  const { jsonl } = buildSession(recipe);
  const file = path.join(tmp, `r${counter++}.jsonl`);
  fs.writeFileSync(file, jsonl);
  return file;
}

const stats = { compactions: 0, summaries: 0, markers: 0, labels: 0 };

async function compactAndCheck(file: string, keepRecent: number): Promise<void> {
  const session = await SessionFile.open(file, { digest: true });
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: keepRecent };
  const prep = prepareCompaction(session, settings, session);
  if (!isPrepared(prep)) return;
  const bytes = fs.readFileSync(file);
  const expectation = expectationOf(session);
  const id = newEntryId(session.byId);
  const system = currentSystemMessage(prep.projection);
  const entry = buildCompactionEntry({
    id,
    parentId: prep.leafId,
    timestamp: new Date().toISOString(),
    summary: `## Goal\nTest summary ${id}${formatFileOperations(prep.readFiles, prep.modifiedFiles)}`,
    firstKeptEntryId: prep.firstKeptEntryId,
    tokensBefore: prep.tokensBefore,
    readFiles: prep.readFiles,
    modifiedFiles: prep.modifiedFiles,
    fromHook: false,
    ...(system ? { systemMessage: system } : {}),
  });
  appendEntries(expectation, [entry]);
  assert.ok(fs.readFileSync(file).subarray(0, bytes.length).equals(bytes), "bytes before the append unchanged");
  await session.refresh();
  const loaded = await expectPiLoads(file, session);
  // pi's context: checkpoint system message (if any) + our summary + the kept entries.
  assert.equal(loaded.leafId, id);
  assert.equal(loaded.contextEntries[0], `${id} compaction`);
  assert.deepEqual(
    loaded.contextMessages.slice(0, system ? 2 : 1).map((m) => m.role),
    system ? ["system", "compactionSummary"] : ["compactionSummary"],
  );
  // Kept: every raw path entry from firstKeptEntryId on (older compactions included), minus system messages.
  const rawPath = prep.projection.path;
  const from = rawPath.findIndex((e) => e.id === prep.firstKeptEntryId);
  const keptIds = (from < 0 ? [] : rawPath.slice(from))
    .filter((e) => !(e.type === "message" && e.role === "system"))
    .map((e) => e.id);
  assert.deepEqual(
    loaded.contextEntries.slice(1).map((s) => s.split(" ")[0]),
    keptIds,
  );
  // pi refuses to compact again right away ("Already compacted").
  const view = await oracle.oracle({
    file,
    args: ["--agent-dir", "/nonexistent", "--no-project-settings", "--keep-recent-tokens", String(keepRecent)],
  });
  assert.equal(view.prepareCompaction, null);
  stats.compactions++;
}

async function switchAndCheck(
  file: string,
  targetIndex: number,
  mode: "summary" | "summary+label" | "marker" | "label",
): Promise<void> {
  const session = await SessionFile.open(file, { digest: true });
  if (session.records.length === 0) return;
  const target = session.records[targetIndex % session.records.length]!;
  if (session.byId.get(target.id) !== target) return;
  const plan = planNavigation(session, target.id);
  if (plan.noop) return;
  const expectation = expectationOf(session);
  const reserved = new Set<string>();
  const id1 = newEntryId(session.byId, reserved);
  reserved.add(id1);
  const id2 = newEntryId(session.byId, reserved);
  const ts = new Date().toISOString();
  const entries: object[] = [];
  let expectedLeaf: string;
  let expectedContextLeaf: string | null = plan.newLeafId;
  if ((mode === "summary" || mode === "summary+label") && plan.collection.entries.length > 0) {
    const prepared = prepareBranchEntries(plan.collection.entries, branchSummaryBudget(undefined, 16384), session);
    entries.push(
      buildBranchSummaryEntry({
        id: id1,
        parentId: plan.newLeafId,
        timestamp: ts,
        fromId: plan.oldLeafId ?? "root",
        summary: `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nbranch ${id1}`,
        readFiles: prepared.readFiles,
        modifiedFiles: prepared.modifiedFiles,
        fromHook: false,
      }),
    );
    expectedLeaf = id1;
    expectedContextLeaf = id1;
    if (mode === "summary+label") {
      entries.push(buildLabelEntry({ id: id2, parentId: id1, timestamp: ts, targetId: id1, label: "checkpoint" }));
      expectedLeaf = id2;
      expectedContextLeaf = id2;
      stats.labels++;
    }
    stats.summaries++;
  } else if (mode === "label") {
    entries.push(
      buildLabelEntry({ id: id1, parentId: plan.newLeafId, timestamp: ts, targetId: target.id, label: "here" }),
    );
    expectedLeaf = id1;
    expectedContextLeaf = id1;
    stats.labels++;
  } else {
    entries.push(
      buildLeafMarkerEntry({
        id: id1,
        parentId: plan.newLeafId,
        timestamp: ts,
        targetId: target.id,
        fromId: plan.oldLeafId,
      }),
    );
    expectedLeaf = id1;
    stats.markers++;
  }
  // The model context pi should build at the new position, computed on the file before the append.
  const before = buildProjection(session, plan.newLeafId);
  appendEntries(expectation, entries);
  await session.refresh();
  const loaded = await expectPiLoads(file, session);
  assert.equal(loaded.leafId, expectedLeaf);
  const newLeafPath = plan.newLeafId === null ? [] : buildProjection(session, plan.newLeafId).path.map((e) => e.id);
  assert.deepEqual(loaded.pathIds.slice(0, newLeafPath.length), newLeafPath, "resumes on the chosen branch");
  if (mode === "marker" || mode === "label") {
    // A move without a summary changes no model context: same messages as at the new leaf itself.
    assert.deepEqual(
      loaded.contextMessages.map((m) => `${m.entryId} ${m.role}`),
      before.entries.flatMap((e) => e.roles.map((r) => `${e.record.id} ${r}`)),
    );
  } else {
    assert.ok(
      loaded.contextMessages.some((m) => m.entryId === id1 && m.role === "branchSummary"),
      "the branch summary is in the context",
    );
  }
  void expectedContextLeaf;
}

describe("entries we append are loaded by pi 1.6.0 as intended", () => {
  it("compactions on the shared fixtures (at the leaves pi compacted from, and at the end)", async () => {
    for (const name of ["long", "split", "overflow", "tree"]) {
      const source = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0", `${name}.jsonl`);
      const s = await SessionFile.open(source);
      const leaves = [...s.records.filter((r) => r.type === "compaction").map((r) => r.parentId), s.leafId];
      for (const leaf of leaves) {
        if (!leaf) continue;
        // A copy holding the path to that leaf only (so the leaf is the last line, as pi would have it).
        const pathRecords = buildProjection(s, leaf).path;
        const lines = [
          fs.readFileSync(source, "utf8").split("\n")[0]!,
          ...pathRecords.map((r) => s.readLineBytes(r).toString("utf8")),
        ];
        const file = path.join(tmp, `${name}-${leaf}.jsonl`);
        fs.writeFileSync(file, `${lines.join("\n")}\n`);
        await compactAndCheck(file, name === "tree" ? 200 : 3000);
      }
    }
    assert.ok(stats.compactions >= 8, `compactions written: ${stats.compactions}`);
  });

  it(`compactions, branch summaries, labels and leaf markers on ${RUNS} random trees`, async () => {
    const modes = ["summary", "summary+label", "marker", "label"] as const;
    await fc.assert(
      fc.asyncProperty(recipeArb, fc.nat(), fc.constantFrom(...modes), async (recipe, targetIndex, mode) => {
        const file = await writeRecipe(recipe);
        if (!file) return;
        const copy = `${file}.switch`;
        fs.copyFileSync(file, copy);
        await compactAndCheck(file, recipe.keepRecent);
        await switchAndCheck(copy, targetIndex, mode);
      }),
      { numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
    );
    assert.ok(
      stats.compactions > RUNS * 0.15 && stats.summaries > RUNS * 0.1 && stats.markers > RUNS * 0.1,
      JSON.stringify(stats),
    );
    console.log(`written entries: ${JSON.stringify(stats)}`);
  });
});
