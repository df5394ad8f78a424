/**
 * Conformance with pi 1.6.0 itself on random session trees (fast-check): for each generated file
 * pi (oracle, Node 22) and our core must agree on leaf, path, projected context (ids, roles,
 * per-message estimates), both token estimates, context usage, shouldCompact, the compaction
 * preparation (cut point, split turn, turn prefix, tokensBefore, file ops and lists) and the branch
 * summary collection for a random navigation target.
 *
 * Runs: PI_CONTEXT_RANDOM_TREES (default 1000; `npm run test:long` uses 10000).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { setScanLineBytes } from "../../src/core/read/lines";
import { SessionFile } from "../../src/core/read/session";
import { oracleView } from "../support/oracle-view";
import { buildSession, recipeArb, type Recipe } from "../support/random-session";
import { REPO_ROOT } from "../support/paths";

interface Oracle {
  oracle(request: { entriesJsonl: string; args: string[] }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_RANDOM_TREES ?? 1000);
const KEYS = [
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
  "branchSummary",
];

let oracle: Oracle;

before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
});

export function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in o) out[k] = o[k];
  return out;
}

/** Our view vs pi's view of one recipe; throws an AssertionError naming the first differing key. */
async function compare(recipe: Recipe): Promise<void> {
  const { jsonl, leaf, target } = buildSession(recipe);
  const args = [
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
  if (leaf) args.push("--leaf", leaf);
  if (target) args.push("--branch-target", target);
  const pi = await oracle.oracle({ entriesJsonl: jsonl, args });
  const session = SessionFile.fromBytes(jsonl);
  const ours = oracleView(session, {
    settings: { enabled: true, reserveTokens: recipe.reserve, keepRecentTokens: recipe.keepRecent },
    contextWindow: recipe.window,
    ...(leaf ? { leafId: leaf } : {}),
    ...(target ? { branchTarget: target } : {}),
  });
  const usage = pi.contextUsage as Record<string, unknown>;
  for (const key of KEYS) {
    if (!(key in pi) && !(key in ours)) continue;
    let expected = pi[key];
    let actual = ours[key];
    if (key === "contextUsage" && "unavailable" in usage) {
      expected = true;
      actual = "unavailable" in (ours.contextUsage as object);
    }
    try {
      assert.deepEqual(actual, expected);
    } catch (error) {
      const dump = path.join(os.tmpdir(), `pi-context-random-${Date.now()}.jsonl`);
      fs.writeFileSync(dump, jsonl);
      (error as Error).message =
        `${key} differs (session saved to ${dump}; args ${args.join(" ")})\n${(error as Error).message}`;
      throw error;
    }
  }
  // The projections must not be vacuous across the run: record what was exercised.
  stats.total++;
  if (pi.prepareCompaction) stats.prepared++;
  if ((pi.prepareCompaction as { isSplitTurn?: boolean } | null)?.isSplitTurn) stats.split++;
  if ((pi.contextEntries as string[]).some((e) => e.endsWith(" compaction"))) stats.compacted++;
  if ((pi.estimateProjectedContextTokens as { lastUsageIndex: number | null }).lastUsageIndex === null)
    stats.pureEstimate++;
  if ((pi.contextUsage as { percent?: number | null }).percent === null) stats.unknown++;
}

const stats = { total: 0, prepared: 0, split: 0, compacted: 0, pureEstimate: 0, unknown: 0 };

describe(`core agrees with pi 1.6.0 on ${RUNS} random session trees`, () => {
  it("the same with every line read by the lazy long-line scanner", async () => {
    setScanLineBytes(0);
    try {
      await fc.assert(fc.asyncProperty(recipeArb, compare), {
        numRuns: Math.ceil(RUNS / 4),
        endOnFailure: true,
        includeErrorInReport: true,
      });
    } finally {
      setScanLineBytes(8 * 1024);
    }
  });

  it("leaf, path, context, tokens, usage, shouldCompact, prepareCompaction, branch collection", async () => {
    await fc.assert(fc.asyncProperty(recipeArb, compare), {
      numRuns: RUNS,
      endOnFailure: true,
      includeErrorInReport: true,
    });
    // Coverage of the interesting situations, so a generator regression cannot make this test vacuous.
    assert.ok(stats.prepared > RUNS * 0.2, `prepareCompaction ran in ${stats.prepared}/${stats.total}`);
    assert.ok(stats.split > RUNS * 0.02, `split turns ${stats.split}/${stats.total}`);
    assert.ok(stats.compacted > RUNS * 0.1, `compacted contexts ${stats.compacted}/${stats.total}`);
    assert.ok(stats.pureEstimate > RUNS * 0.05, `pure estimates ${stats.pureEstimate}/${stats.total}`);
    assert.ok(stats.unknown > RUNS * 0.02, `unknown usage ${stats.unknown}/${stats.total}`);
    console.log(`random trees: ${JSON.stringify(stats)}`);
  });
});
