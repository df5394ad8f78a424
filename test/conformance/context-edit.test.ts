/**
 * Context edits and tool-call pairing against pi 1.6.0 itself (oracle, Node 22):
 * - pairing: on random trees at random leaves, our findings equal what pi-ai's
 *   `transformMessages(convertToLlm(projection.messages))` makes of the context (orphaned results,
 *   "No result provided" fillers);
 * - random trees × random edit sets, in two rounds (edits of edited items, restores, a compaction
 *   in between, targets off the path, summarized, not editable): pi's `appendContextEdit` refuses
 *   exactly what we refuse for pi's reasons (same message) and writes our drafts exactly as we do
 *   (key order, normalised replacement); the file with our entries gives pi's projection,
 *   estimates, context usage and `prepareCompaction` equal to ours; the targets show exactly the
 *   intended content and everything else is unchanged; no tool result is orphaned that was not
 *   orphaned before;
 * - the shared fixtures edited through the real flow (one append) are loaded by pi as intended;
 * - notes A4: a compaction cut that lands on an omitted assistant.
 *
 * Runs: PI_CONTEXT_EDIT_RUNS (default 1000; `npm run test:long` uses 10000).
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
  chainContextEdits,
  editableRole,
  projectedContent,
  type ContextEditContent,
} from "../../src/core/rules/contextEdit";
import { prepareContextEdits, type ContextEditAction } from "../../src/core/rules/editPlan";
import { analyzePairing, toolCallLinks, type PairingReport } from "../../src/core/rules/pairing";
import { currentSystemMessage, estimateProjectedContextTokens } from "../../src/core/rules/tokens";
import { commitContextEdits, planContextEdits } from "../../src/core/flows/contextEdit";
import { newEntryId } from "../../src/core/flows/write";
import { oracleView } from "../support/oracle-view";
import { buildSession, recipeArb, type Recipe } from "../support/random-session";
import { SessionBuilder } from "../support/session-builder";
import { REPO_ROOT } from "../support/paths";

interface LlmView {
  leafId: string | null;
  /** `messages` absent in digest mode unless asked for (`fullFor`); `digest` only in digest mode. */
  projected: { entryId: string; messages?: { role: string; content?: unknown }[]; digest?: string }[];
  estimate: { tokens: number; usageTokens: number; trailingTokens: number; lastUsageIndex: number | null };
  orphanResults: { entryId: string; toolCallId: string }[];
  fillers: { callEntryId: string | null; toolCallId: string; paired: boolean }[];
}
interface EditResult {
  results: ({ ok: true; id: string; line: string } | { ok: false; error: string })[];
}
interface Oracle {
  oracle(request: { entriesJsonl?: string; file?: string; args: string[] }): Promise<Record<string, unknown>>;
  llm(request: {
    entriesJsonl?: string;
    file?: string;
    leaf?: string;
    digest?: boolean;
    fullFor?: string[];
  }): Promise<LlmView>;
  contextEdit(request: {
    entriesJsonl: string;
    edits: { targetId: string; replacement: unknown }[];
  }): Promise<EditResult>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_EDIT_RUNS ?? 1000);
const PI_CODES = new Set(["invalid-replacement", "not-found", "not-on-branch", "not-editable"]);
const VIEW_KEYS = [
  "entryCount",
  "leafId",
  "pathIds",
  "pathTypes",
  "contextEntries",
  "context",
  "estimateContextTokens",
  "estimateProjectedContextTokens",
  "contextUsage",
  "shouldCompact",
  "prepareCompaction",
];

let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-edit-conf-"));
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

function fail(what: string, jsonl: string, error: unknown): never {
  const dump = path.join(os.tmpdir(), `pi-context-edit-${Date.now()}.jsonl`);
  fs.writeFileSync(dump, jsonl);
  (error as Error).message = `${what} (session saved to ${dump})\n${(error as Error).message}`;
  throw error;
}

/** Our pairing in the shape the oracle derives from pi-ai's output. */
function pairingShape(report: PairingReport): { orphans: string[]; fillers: string[] } {
  return {
    orphans: report.findings
      .filter((f) => f.severity === "error")
      .map((f) => `${f.resultEntryId} ${f.toolCallId}`)
      .sort(),
    fillers: report.findings
      .filter((f) => f.filler)
      .map((f) => `${f.callEntryId} ${f.toolCallId}`)
      .sort(),
  };
}

function piPairingShape(view: LlmView): { orphans: string[]; fillers: string[] } {
  for (const f of view.fillers) assert.ok(f.paired, "pi-ai's filler follows its call");
  return {
    orphans: view.orphanResults.map((o) => `${o.entryId} ${o.toolCallId}`).sort(),
    fillers: view.fillers.map((f) => `${f.callEntryId} ${f.toolCallId}`).sort(),
  };
}

const pairingStats = { total: 0, orphans: 0, fillers: 0, separated: 0, dropped: 0, duplicate: 0, clean: 0 };

describe("tool-call pairing agrees with pi-ai 1.6.0's transformMessages", () => {
  it(`orphaned results and fillers on ${RUNS} random trees at random leaves`, async () => {
    await fc.assert(
      fc.asyncProperty(recipeArb, async (recipe: Recipe) => {
        const { jsonl, leaf } = buildSession(recipe);
        const session = SessionFile.fromBytes(jsonl);
        const ours = analyzePairing(buildProjection(session, leaf ?? undefined), session);
        const pi = await oracle.llm({ entriesJsonl: jsonl, ...(leaf ? { leaf } : {}) });
        try {
          assert.deepEqual(pairingShape(ours), piPairingShape(pi));
        } catch (error) {
          fail(`pairing differs at leaf ${leaf}`, jsonl, error);
        }
        pairingStats.total++;
        if (ours.errors > 0) pairingStats.orphans++;
        else pairingStats.clean++;
        if (ours.fillers > 0) pairingStats.fillers++;
        const kinds = new Set(ours.findings.map((f) => f.kind));
        if (kinds.has("separated-result")) pairingStats.separated++;
        if (kinds.has("dropped-call-result")) pairingStats.dropped++;
        if (kinds.has("duplicate-result")) pairingStats.duplicate++;
      }),
      { numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
    );
    console.log(`pairing: ${JSON.stringify(pairingStats)}`);
    for (const [key, share] of [
      ["orphans", 0.1],
      ["fillers", 0.1],
      ["clean", 0.3],
      ["separated", 0.01],
      ["dropped", 0.01],
    ] as const)
      assert.ok(pairingStats[key] > RUNS * share, `${key}: ${pairingStats[key]}/${pairingStats.total}`);
  });
});

// ------------------------------------------------------------------------------------------------
// Random edit sets
// ------------------------------------------------------------------------------------------------

interface ActionRoll {
  where: number;
  targetRoll: number;
  kind: "omit" | "replace" | "restore";
  contentRoll: number;
}

const actionArb: fc.Arbitrary<ActionRoll> = fc.record({
  where: fc.integer({ min: 0, max: 99 }),
  targetRoll: fc.nat({ max: 1_000_000 }),
  kind: fc.constantFrom("omit" as const, "omit" as const, "replace" as const, "restore" as const),
  contentRoll: fc.nat({ max: 1_000_000 }),
});

const editCaseArb = fc.record({
  recipe: recipeArb,
  round1: fc.array(actionArb, { minLength: 1, maxLength: 5 }),
  compactRoll: fc.integer({ min: 0, max: 99 }),
  round2: fc.array(actionArb, { minLength: 0, maxLength: 4 }),
});

function contentFor(roll: number): ContextEditContent {
  switch (roll % 4) {
    case 0:
      return `short ${roll % 97}`;
    case 1:
      return [{ type: "text", text: `replaced ${roll % 89} é 😀` }];
    case 2:
      return [
        { type: "text", text: "with a stray call" },
        { type: "toolCall", id: `stray_${roll % 7}`, name: "edit", arguments: { path: "src/x.ts" } },
      ];
    default:
      return "";
  }
}

/**
 * Concrete actions for a session: edited targets, tool results, assistants with calls, editable
 * context entries, any path entry, any entry, unknown ids.
 */
function actionsFor(session: SessionFile, rolls: readonly ActionRoll[]): ContextEditAction[] {
  const projection = buildProjection(session);
  const context = projection.entries;
  const ids = (list: { record: { id: string } }[]) => list.map((e) => e.record.id);
  // tool results whose call is sent (omitting one alone gives a note)
  const links = toolCallLinks(context, session);
  const visible = new Map(context.map((e) => [e.record.id, e]));
  const sentOwner = new Set(
    [...links.ownerOf]
      .filter(([, owner]) => {
        const e = visible.get(owner);
        return e && e.roles.length > 0 && e.record.stopReason !== "error" && e.record.stopReason !== "aborted";
      })
      .map(([result]) => result),
  );
  const pools = [
    { upTo: 25, ids: ids(context.filter((e) => e.edit)) },
    { upTo: 35, ids: ids(context.filter((e) => sentOwner.has(e.record.id))) },
    { upTo: 45, ids: ids(context.filter((e) => e.record.role === "toolResult")) },
    { upTo: 55, ids: ids(context.filter((e) => e.record.role === "assistant" && e.record.toolCallIds)) },
    { upTo: 75, ids: ids(context.filter((e) => editableRole(e.record))) },
    { upTo: 88, ids: projection.path.map((r) => r.id) },
    { upTo: 97, ids: session.records.map((r) => r.id) },
  ];
  return rolls.map((roll) => {
    let targetId = "nope1234";
    for (const pool of pools) {
      if (roll.where < pool.upTo && pool.ids.length > 0) {
        targetId = pool.ids[roll.targetRoll % pool.ids.length]!;
        break;
      }
    }
    if (roll.kind === "replace") return { action: "replace", targetId, content: contentFor(roll.contentRoll) };
    return { action: roll.kind, targetId };
  });
}

const editStats = {
  cases: 0,
  rounds: 0,
  edits: 0,
  omit: 0,
  note: 0,
  replace: 0,
  restore: 0,
  cascades: 0,
  refusedPi: 0,
  summarized: 0,
  conflict: 0,
  wouldOrphan: 0,
  unchanged: 0,
  compactedBetween: 0,
  orphansBefore: 0,
};

function args(recipe: Recipe): string[] {
  return [
    "--agent-dir",
    "/nonexistent",
    "--no-project-settings",
    "--full",
    "--context-window",
    String(recipe.window),
    "--reserve-tokens",
    String(recipe.reserve),
    "--keep-recent-tokens",
    String(recipe.keepRecent),
  ];
}

/** Projected messages per entry: their digest (digest mode) or their JSON. */
function messagesByEntry(view: LlmView): Map<string, string> {
  return new Map(view.projected.map((p) => [p.entryId, p.digest ?? JSON.stringify(p.messages)]));
}

/** One round: plan, check pi's acceptance and writing, append, compare everything. Returns the new file. */
async function editRound(jsonl: string, recipe: Recipe, rolls: readonly ActionRoll[], piBefore: LlmView) {
  const session = SessionFile.fromBytes(jsonl);
  const actions = actionsFor(session, rolls);
  const prep = prepareContextEdits(session, actions);
  editStats.rounds++;

  // pi refuses exactly what we refuse for pi's reasons, with the same message
  const accepted = await oracle.contextEdit({
    entriesJsonl: jsonl,
    edits: actions.map((a) => ({
      targetId: a.targetId,
      replacement: a.action === "omit" ? null : { content: a.action === "replace" ? a.content : [] },
    })),
  });
  actions.forEach((action, i) => {
    const refusal = prep.refused.find((r) => r.action === action);
    const pi = accepted.results[i]!;
    if (refusal && PI_CODES.has(refusal.code)) {
      editStats.refusedPi++;
      assert.deepEqual(pi, { ok: false, error: refusal.message });
    } else assert.equal(pi.ok, true, `pi accepts ${JSON.stringify(action)}: ${JSON.stringify(pi)}`);
  });
  for (const r of prep.refused) {
    if (r.code === "summarized") editStats.summarized++;
    if (r.code === "conflict") editStats.conflict++;
    if (r.code === "would-orphan") editStats.wouldOrphan++;
  }
  editStats.unchanged += prep.unchanged.length;
  assert.deepEqual(prep.newPairingErrors, []);

  // pi writes our drafts exactly as we do
  const entries = chainContextEdits(prep.drafts, {
    leafId: prep.leafId,
    newId: (reserved) => newEntryId(session.byId, reserved),
    timestamp: new Date().toISOString(),
  });
  if (entries.length > 0) {
    const written = await oracle.contextEdit({
      entriesJsonl: jsonl,
      edits: prep.drafts.map((d) => ({ targetId: d.targetId, replacement: d.replacement })),
    });
    let parent = prep.leafId;
    written.results.forEach((w, i) => {
      assert.ok(w.ok, `pi writes draft ${i}: ${JSON.stringify(w)}`);
      const piEntry = JSON.parse(w.line) as Record<string, unknown>;
      const ours = entries[i]! as unknown as Record<string, unknown>;
      assert.deepEqual(Object.keys(ours), Object.keys(piEntry), "key order");
      assert.deepEqual(ours.replacement, piEntry.replacement, "normalised replacement");
      assert.equal(piEntry.parentId, parent);
      assert.equal(ours.parentId, i === 0 ? prep.leafId : entries[i - 1]!.id);
      parent = w.id;
    });
    assert.equal(
      prep.bytes,
      entries.reduce((sum, e) => sum + Buffer.byteLength(`${JSON.stringify(e)}\n`), 0),
      "planned bytes",
    );
  }
  const next = jsonl + entries.map((e) => `${JSON.stringify(e)}\n`).join("");
  const afterSession = SessionFile.fromBytes(next);
  const afterProjection = buildProjection(afterSession);

  // the planner's overlay is what the file gives when read back
  assert.deepEqual(roleView(prep.projectionAfter, session), roleView(afterProjection, session));
  const tokensAfter = estimateProjectedContextTokens(afterProjection, afterSession);
  assert.deepEqual(prep.tokensAfter, tokensAfter);
  assert.deepEqual(prep.pairingAfter, analyzePairing(afterProjection, afterSession));

  // the pure estimate before, minus what the targets lose, is pi's (pure) estimate after
  const saved = prep.edits.reduce((sum, e) => sum + e.tokensBefore - e.tokensAfter, 0);
  if (prep.edits.length > 0) assert.equal(prep.pureTokensBefore - saved, tokensAfter.tokens);
  if (piBefore.estimate.lastUsageIndex === null) assert.equal(prep.pureTokensBefore, piBefore.estimate.tokens);

  // pi's view of the edited file equals ours: projection, estimates, usage, prepareCompaction
  const piView = await oracle.oracle({ entriesJsonl: next, args: args(recipe) });
  const ourView = oracleView(afterSession, {
    settings: { enabled: true, reserveTokens: recipe.reserve, keepRecentTokens: recipe.keepRecent },
    contextWindow: recipe.window,
  });
  for (const key of VIEW_KEYS) {
    let expected = piView[key];
    let actual = ourView[key];
    if (key === "contextUsage" && "unavailable" in (expected as object)) {
      expected = true;
      actual = "unavailable" in (actual as object);
    }
    assert.deepEqual(actual, expected, `${key} differs`);
  }

  // what pi sends: estimate, pairing (ours = pi-ai's), no new orphan, targets as intended, rest unchanged
  const piAfter = await oracle.llm({ entriesJsonl: next, digest: true, fullFor: prep.drafts.map((d) => d.targetId) });
  assert.equal(piAfter.estimate.tokens, tokensAfter.tokens);
  assert.deepEqual(pairingShape(prep.pairingAfter), piPairingShape(piAfter));
  const orphansBefore = new Set(piBefore.orphanResults.map((o) => o.entryId));
  for (const o of piAfter.orphanResults) assert.ok(orphansBefore.has(o.entryId), `new orphan ${o.entryId}`);
  if (orphansBefore.size > 0) editStats.orphansBefore++;
  const beforeMessages = messagesByEntry(piBefore);
  const afterMessages = messagesByEntry(piAfter);
  const targets = new Map(prep.edits.map((e) => [e.targetId, e]));
  for (const [entryId, messages] of beforeMessages) {
    const edit = targets.get(entryId);
    if (!edit) {
      assert.equal(afterMessages.get(entryId), messages, `untouched entry ${entryId} unchanged`);
      continue;
    }
    const projected = piAfter.projected.find((p) => p.entryId === entryId)!.messages!;
    if (edit.replacement === null) assert.deepEqual(projected, []);
    else assert.deepEqual(projected[0]!.content, projectedContent(edit.role, edit.replacement.content));
  }
  for (const e of prep.edits) {
    editStats.edits++;
    editStats[e.effect]++;
    if (e.cause.kind !== "requested") editStats.cascades++;
  }
  return { jsonl: next, pi: piAfter };
}

/** Ids, roles and message positions of a projection; entries not in `before` (our new edits) as `new <type>`. */
function roleView(p: Projection, before: SessionFile): string[] {
  return p.entries.map(
    (e) =>
      `${before.byId.has(e.record.id) ? e.record.id : `new ${e.record.type}`} ${e.roles.join(",")} ${e.firstMessageIndex}`,
  );
}

/** Append a compaction like pi's /compact would write at the leaf (if pi would compact). */
function compacted(jsonl: string, recipe: Recipe): string | undefined {
  const session = SessionFile.fromBytes(jsonl);
  const settings = { enabled: true, reserveTokens: recipe.reserve, keepRecentTokens: recipe.keepRecent };
  const prep = prepareCompaction(session, settings, session);
  if (!isPrepared(prep)) return undefined;
  const system = currentSystemMessage(prep.projection);
  const entry = buildCompactionEntry({
    id: newEntryId(session.byId),
    parentId: prep.leafId,
    timestamp: new Date().toISOString(),
    summary: "## Goal\nsummary between edit rounds",
    firstKeptEntryId: prep.firstKeptEntryId,
    tokensBefore: prep.tokensBefore,
    readFiles: prep.readFiles,
    modifiedFiles: prep.modifiedFiles,
    fromHook: false,
    ...(system ? { systemMessage: system } : {}),
  });
  return `${jsonl}${JSON.stringify(entry)}\n`;
}

describe("context edits agree with pi 1.6.0", () => {
  it(`random trees × random edit sets (${RUNS} cases, two rounds, compactions in between)`, async () => {
    await fc.assert(
      fc.asyncProperty(editCaseArb, async ({ recipe, round1, compactRoll, round2 }) => {
        const { jsonl } = buildSession(recipe);
        let current = jsonl;
        try {
          let pi = await oracle.llm({ entriesJsonl: current, digest: true });
          ({ jsonl: current, pi } = await editRound(current, recipe, round1, pi));
          if (compactRoll < 35) {
            const withCompaction = compacted(current, recipe);
            if (withCompaction) {
              current = withCompaction;
              pi = await oracle.llm({ entriesJsonl: current, digest: true });
              editStats.compactedBetween++;
            }
          }
          if (round2.length > 0) await editRound(current, recipe, round2, pi);
        } catch (error) {
          fail("context edit round failed", current, error);
        }
        editStats.cases++;
      }),
      { numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
    );
    console.log(`context edits: ${JSON.stringify(editStats)}`);
    const min = (key: keyof typeof editStats, share: number) =>
      assert.ok(editStats[key] > RUNS * share, `${key}: ${editStats[key]} in ${RUNS} cases`);
    min("omit", 0.3);
    min("note", 0.05);
    min("replace", 0.1);
    min("restore", 0.05);
    min("cascades", 0.05);
    min("refusedPi", 0.1);
    min("summarized", 0.02);
    min("unchanged", 0.02);
    min("compactedBetween", 0.05);
    min("orphansBefore", 0.05);
  });
});

// ------------------------------------------------------------------------------------------------
// Real files through the real flow, and notes A4
// ------------------------------------------------------------------------------------------------

describe("edited files are loaded by pi 1.6.0 with exactly the intended context", () => {
  it("the shared fixtures: omit the largest tool result, shrink and omit assistants with calls, restore", async () => {
    let checked = 0;
    for (const name of ["long", "split", "overflow", "tree"]) {
      const file = path.join(tmp, `${name}.jsonl`);
      fs.copyFileSync(path.join(REPO_ROOT, "test/fixtures/pi-1.6.0", `${name}.jsonl`), file);
      const session = await SessionFile.open(file);
      const entries = buildProjection(session).entries.filter((e) => e.roles.length > 0);
      const results = entries.filter((e) => e.record.role === "toolResult");
      const callers = entries.filter((e) => e.record.role === "assistant" && e.record.toolCallIds?.length);
      const largest = [...results].sort((a, b) => b.record.tokens - a.record.tokens)[0];
      const rounds: ContextEditAction[][] = [
        [
          ...(largest ? [{ action: "omit" as const, targetId: largest.record.id }] : []),
          ...(callers[0]
            ? [{ action: "replace" as const, targetId: callers[0].record.id, content: "(shortened)" }]
            : []),
          ...(callers[1] ? [{ action: "omit" as const, targetId: callers[1].record.id }] : []),
        ],
        [
          ...(largest ? [{ action: "restore" as const, targetId: largest.record.id }] : []),
          ...(callers[1] ? [{ action: "restore" as const, targetId: callers[1].record.id }] : []),
        ],
      ];
      for (const actions of rounds) {
        if (actions.length === 0) continue;
        const piBefore = await oracle.llm({ file });
        const bytes = fs.readFileSync(file);
        const plan = await planContextEdits(file, actions, { guardSeconds: 0, procRoot: null });
        assert.deepEqual(plan.preparation.refused, [], name);
        const result = await commitContextEdits(plan);
        assert.ok(result.entries.length >= actions.length, name);
        const afterBytes = fs.readFileSync(file);
        assert.ok(afterBytes.subarray(0, bytes.length).equals(bytes), "existing bytes untouched");
        assert.equal(afterBytes.length, result.bytesAfter);
        const piAfter = await oracle.llm({ file });
        assert.equal(piAfter.leafId, result.entries[result.entries.length - 1]!.id);
        assert.equal(piAfter.estimate.tokens, result.tokensAfter);
        assert.equal(result.tokensAfter, plan.preparation.tokensAfter.tokens);
        assert.deepEqual(piAfter.orphanResults, []);
        const beforeMessages = messagesByEntry(piBefore);
        const edits = new Map(plan.preparation.edits.map((e) => [e.targetId, e]));
        for (const p of piAfter.projected) {
          const edit = edits.get(p.entryId);
          if (!edit) {
            if (beforeMessages.has(p.entryId)) assert.equal(JSON.stringify(p.messages), beforeMessages.get(p.entryId));
            else assert.deepEqual(p.messages, [], "only our context_edit entries are new");
          } else if (edit.replacement === null) assert.deepEqual(p.messages, []);
          else {
            const raw = session.readEntry(session.byId.get(p.entryId)!) as { message: object };
            assert.deepEqual(p.messages, [
              { ...raw.message, content: projectedContent(edit.role, edit.replacement.content) },
            ]);
          }
          if (edit?.effect === "restore" && edit.cause.kind === "requested") {
            // restoring an item brings back exactly its original message
            const raw = session.readEntry(session.byId.get(p.entryId)!) as { message: unknown };
            assert.deepEqual(p.messages, [raw.message]);
          }
        }
        // pi's compaction preparation on the edited file equals ours
        const piView = await oracle.oracle({
          file,
          args: ["--agent-dir", "/nonexistent", "--no-project-settings", "--full", "--keep-recent-tokens", "2000"],
        });
        const ours = oracleView(await SessionFile.open(file), {
          settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 },
          contextWindow: null,
        });
        assert.deepEqual(ours.prepareCompaction, piView.prepareCompaction, name);
        assert.deepEqual(ours.context, piView.context, name);
        checked++;
      }
    }
    assert.ok(checked >= 6, `rounds checked: ${checked}`);
  });

  it("notes A4: an omitted assistant becomes the first kept entry of a split turn (cut walks projected entries)", async () => {
    const big = "B".repeat(4000);
    const b = new SessionBuilder()
      .user("q1", `q1 ${big}`)
      .assistant("b1", { text: `a1 ${big}`, usage: 100 })
      .user("q2", `q2 ${big}`)
      .assistant("b2", { text: "a2", usage: 100 });
    const file = path.join(tmp, "a4.jsonl");
    fs.writeFileSync(file, b.jsonl());
    const plan = await planContextEdits(
      file,
      [
        { action: "replace", targetId: "q1", content: "q1 (edited short)" },
        { action: "omit", targetId: "b1" },
      ],
      { guardSeconds: 0, procRoot: null },
    );
    await commitContextEdits(plan);
    const session = await SessionFile.open(file);
    const prep = prepareCompaction(session, { enabled: true, reserveTokens: 100, keepRecentTokens: 500 }, session);
    assert.ok(isPrepared(prep));
    assert.equal(prep.firstKeptEntryId, "b1");
    assert.equal(prep.isSplitTurn, true);
    assert.deepEqual(
      prep.turnPrefixMessages.map((e) => e.record.id),
      ["q1"],
    );
    assert.deepEqual(prep.messagesToSummarize, []);
    const piView = await oracle.oracle({
      file,
      args: ["--agent-dir", "/nonexistent", "--no-project-settings", "--full", "--keep-recent-tokens", "500"],
    });
    const ours = oracleView(session, {
      settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 500 },
      contextWindow: null,
    });
    assert.deepEqual(ours.prepareCompaction, piView.prepareCompaction);
    assert.equal((piView.prepareCompaction as { firstKeptEntryId: string }).firstKeptEntryId, "b1");
  });
});
