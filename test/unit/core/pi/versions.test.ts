/** The pi version switches (`src/core/pi/versions.ts`): one rule set for 0.87 … now, a note below 0.87. */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  atLeast,
  compareVersions,
  olderPiNote,
  parseVersion,
  REFERENCE_PI_VERSION,
  rulesFor,
  satisfiesEngine,
} from "../../../../src/core/pi/versions";

describe("pi versions", () => {
  it("compare numerically; v prefix and pre-release suffix ignored", () => {
    assert.equal(compareVersions("1.10.0", "1.9.2"), 1);
    assert.equal(compareVersions("0.87.1", "1.0.3"), -1);
    assert.equal(compareVersions("v1.5.2", "1.5.2-beta.1"), 0);
    assert.equal(compareVersions("1.0", "1.0.0"), 0);
    assert.deepEqual(parseVersion("1.5.2"), [1, 5, 2]);
    assert.equal(parseVersion("not a version"), undefined);
    assert.ok(atLeast("1.5.0", "1.5.0") && !atLeast("1.4.9", "1.5.0"));
  });

  it("engines ranges of the kinds pi uses", () => {
    assert.equal(satisfiesEngine("v22.23.5", ">=22.19.0"), true);
    assert.equal(satisfiesEngine("v22.18.0", ">=22.19.0"), false);
    assert.equal(satisfiesEngine("v20.20.2", ">=22.19.0"), false);
    assert.equal(satisfiesEngine("v24.1.0", ">=22"), true);
    assert.equal(satisfiesEngine("v23.0.0", "^22.19.0"), false);
    assert.equal(satisfiesEngine("v20.0.0", undefined), true);
  });

  it("the switches the study and the matrix found, at their first versions", () => {
    const r = (v: string) => rulesFor(v);
    assert.equal(r("1.5.0").branchSummaryContextEdits, true);
    assert.equal(r("1.4.0").branchSummaryContextEdits, false);
    assert.equal(r("1.3.0").modelsJsonPositiveLimits, true);
    assert.equal(r("1.0.3").modelsJsonPositiveLimits, false);
    assert.equal(r("0.99.1").nestedCallFileOps, true);
    assert.equal(r("0.87.1").nestedCallFileOps, false);
    assert.equal(r("0.99.1").storeMergesByType, true);
    assert.equal(r("0.87.1").storeMergesByType, false);
    assert.equal(r("1.3.0").openRouterPersonalized, true);
    assert.equal(r("1.0.3").openRouterPersonalized, false);
    assert.equal(r("1.4.0").noMcpFlag, true);
    assert.equal(r("1.3.0").noMcpFlag, false);
    assert.equal(r("2.0.0").branchSummaryContextEdits, true, "newer versions get the newest rules");
  });

  it("an unknown version follows the reference version", () => {
    assert.deepEqual(rulesFor(undefined), rulesFor(REFERENCE_PI_VERSION));
    assert.equal(rulesFor("garbage").version, REFERENCE_PI_VERSION);
  });

  it("below 0.87 a note says what differs instead of silently wrong numbers", () => {
    assert.equal(olderPiNote("0.87.0"), undefined);
    assert.equal(rulesFor("1.6.0").note, undefined);
    const n86 = olderPiNote("0.86.1")!;
    assert.match(n86, /^Numbers may differ from your pi 0\.86\.1: pi 0\.87 changed /);
    assert.match(n86, /older compactions re-appear/);
    assert.match(n86, /system messages count/);
    assert.doesNotMatch(n86, /modelOverrides/);
    assert.match(olderPiNote("0.85.1")!, /compaction\.modelOverrides/);
    assert.equal(rulesFor("0.86.1").note, n86);
  });
});
