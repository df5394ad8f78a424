/**
 * One random session tree (test/support/random-session.ts) through pi's oracle and through our
 * core, compared field by field: leaf, path, projected context (ids, roles, per-message estimates),
 * both token estimates, context usage, shouldCompact, the compaction preparation and the branch
 * summary collection for a random navigation target. Shared by the random-tree conformance test
 * (pi 1.6.0) and the version matrix (every pi of the conformance package).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SessionFile } from "../../src/core/read/session";
import { oracleView } from "./oracle-view";
import { buildSession, type Recipe } from "./random-session";
import type { PiRules } from "../../src/core/pi/versions";

/** The oracle batch client as the comparisons use it. */
export interface Oracle {
  oracle(request: {
    entriesJsonl: string;
    args: string[];
    agentFiles?: Record<string, unknown>;
  }): Promise<Record<string, unknown>>;
  catalog(request?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The keys compared. */
export const RANDOM_TREE_KEYS = [
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

/** What the generated trees exercised (so a generator regression cannot make a run vacuous). */
export interface RandomTreeStats {
  total: number;
  prepared: number;
  split: number;
  compacted: number;
  pureEstimate: number;
  unknown: number;
}

/** Fresh counters. */
export function newStats(): RandomTreeStats {
  return { total: 0, prepared: 0, split: 0, compacted: 0, pureEstimate: 0, unknown: 0 };
}

/** The oracle arguments of a generated tree. */
function argsOf(recipe: Recipe, leaf: string | null, target: string | null): string[] {
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
  return args;
}

/** Our view of a generated tree with a pi version's rules (default pi 1.6.0's). */
export function ourViewOf(recipe: Recipe, rules?: PiRules): Record<string, unknown> {
  const { jsonl, leaf, target } = buildSession(recipe);
  return oracleView(SessionFile.fromBytes(jsonl), {
    settings: { enabled: true, reserveTokens: recipe.reserve, keepRecentTokens: recipe.keepRecent },
    contextWindow: recipe.window,
    ...(leaf ? { leafId: leaf } : {}),
    ...(target ? { branchTarget: target } : {}),
    ...(rules ? { rules } : {}),
  });
}

/** One generated tree: pi's view and ours (with the given pi version's rules; default pi 1.6.0's), not yet compared. */
export async function viewsOf(
  oracle: Oracle,
  recipe: Recipe,
  rules?: PiRules,
): Promise<{ jsonl: string; args: string[]; pi: Record<string, unknown>; ours: Record<string, unknown> }> {
  const { jsonl, leaf, target } = buildSession(recipe);
  const args = argsOf(recipe, leaf, target);
  const pi = await oracle.oracle({ entriesJsonl: jsonl, args });
  return { jsonl, args, pi, ours: ourViewOf(recipe, rules) };
}

/** The keys on which two views differ (of {@link RANDOM_TREE_KEYS}). */
export function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return RANDOM_TREE_KEYS.filter((key) => {
    try {
      assert.deepEqual(a[key], b[key]);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Compare our view with pi's for one tree; throws an AssertionError naming the first differing key
 * (the session is saved to the temp dir for reproduction) and counts what was exercised.
 */
export function assertSameView(
  views: { jsonl: string; args: string[]; pi: Record<string, unknown>; ours: Record<string, unknown> },
  stats: RandomTreeStats,
  label = "pi",
): void {
  const { jsonl, args, pi, ours } = views;
  const usage = pi.contextUsage as Record<string, unknown>;
  for (const key of RANDOM_TREE_KEYS) {
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
        `${key} differs from ${label} (session saved to ${dump}; args ${args.join(" ")})\n${(error as Error).message}`;
      throw error;
    }
  }
  stats.total++;
  if (pi.prepareCompaction) stats.prepared++;
  if ((pi.prepareCompaction as { isSplitTurn?: boolean } | null)?.isSplitTurn) stats.split++;
  if ((pi.contextEntries as string[]).some((e) => e.endsWith(" compaction"))) stats.compacted++;
  if ((pi.estimateProjectedContextTokens as { lastUsageIndex: number | null }).lastUsageIndex === null)
    stats.pureEstimate++;
  if ((pi.contextUsage as { percent?: number | null }).percent === null) stats.unknown++;
}

/** The coverage every run must reach (fractions of `runs`). */
export function assertCoverage(stats: RandomTreeStats, runs: number): void {
  assert.ok(stats.prepared > runs * 0.2, `prepareCompaction ran in ${stats.prepared}/${stats.total}`);
  assert.ok(stats.split > runs * 0.02, `split turns ${stats.split}/${stats.total}`);
  assert.ok(stats.compacted > runs * 0.1, `compacted contexts ${stats.compacted}/${stats.total}`);
  assert.ok(stats.pureEstimate > runs * 0.05, `pure estimates ${stats.pureEstimate}/${stats.total}`);
  assert.ok(stats.unknown > runs * 0.02, `unknown usage ${stats.unknown}/${stats.total}`);
}
