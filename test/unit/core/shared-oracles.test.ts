/**
 * Our core against pi 1.6.0's own saved view of every shared fixture and case
 * (`test/fixtures/**\/oracle*.json`, produced by running pi itself; see test/fixtures/cases/README.md).
 * The cases and the comparison: test/support/shared-cases.ts (the version matrix runs the same
 * comparison against a live oracle of every pi version).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { assertCaseMatches, SHARED_CASES } from "../../support/shared-cases";
import { FIXTURES } from "../../support/paths";

describe("core agrees with pi 1.6.0's saved view of every shared fixture and case", () => {
  for (const c of SHARED_CASES) {
    it(c.name, async () => {
      const oracle = JSON.parse(fs.readFileSync(path.join(FIXTURES, c.oracle), "utf8")) as Record<string, unknown>;
      await assertCaseMatches(c, oracle);
    });
  }
});
