/**
 * Conformance with pi 1.6.0 itself on random session trees (fast-check): for each generated file
 * pi (oracle, Node 22) and our core must agree on leaf, path, projected context (ids, roles,
 * per-message estimates), both token estimates, context usage, shouldCompact, the compaction
 * preparation (cut point, split turn, turn prefix, tokensBefore, file ops and lists) and the branch
 * summary collection for a random navigation target.
 *
 * Runs: PI_CONTEXT_RANDOM_TREES (default 1000; `npm run test:long` uses 10000).
 */

import { after, before, describe, it } from "node:test";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { assertCoverage, assertSameView, newStats, viewsOf, type Oracle } from "../support/random-compare";
import { recipeArb, type Recipe } from "../support/random-session";
import { REPO_ROOT } from "../support/paths";

const RUNS = Number(process.env.PI_CONTEXT_RANDOM_TREES ?? 1000);

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

const stats = newStats();

/** Our view vs pi's view of one recipe; throws an AssertionError naming the first differing key. */
async function compare(recipe: Recipe): Promise<void> {
  assertSameView(await viewsOf(oracle, recipe), stats);
}

describe(`core agrees with pi 1.6.0 on ${RUNS} random session trees`, () => {
  it("leaf, path, context, tokens, usage, shouldCompact, prepareCompaction, branch collection", async () => {
    await fc.assert(fc.asyncProperty(recipeArb, compare), {
      numRuns: RUNS,
      endOnFailure: true,
      includeErrorInReport: true,
    });
    // Coverage of the interesting situations, so a generator regression cannot make this test vacuous.
    assertCoverage(stats, RUNS);
    console.log(`random trees: ${JSON.stringify(stats)}`);
  });
});
