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
  it("compare by semver precedence: numerically, a pre-release before its release, v prefix and build ignored", () => {
    assert.equal(compareVersions("1.10.0", "1.9.2"), 1);
    assert.equal(compareVersions("0.87.1", "1.0.3"), -1);
    assert.equal(compareVersions("1.7.0-beta.1", "1.7.0"), -1);
    assert.equal(compareVersions("1.7.0", "1.7.0-beta.1"), 1);
    assert.equal(compareVersions("1.7.0-beta.2", "1.7.0-beta.10"), -1);
    assert.equal(compareVersions("1.7.0-beta.1", "1.6.9"), 1);
    assert.equal(compareVersions("v1.5.2", "1.5.2+build.7"), 0);
    assert.equal(compareVersions("1.0", "1.0.0"), 0);
    assert.deepEqual(parseVersion("1.5.2"), [1, 5, 2]);
    assert.deepEqual(parseVersion("1.7.0-beta.1"), [1, 7, 0]);
    assert.ok(atLeast("1.5.0", "1.5.0") && !atLeast("1.4.9", "1.5.0") && !atLeast("1.5.0-rc.1", "1.5.0"));
  });

  it("a version it cannot read is no version: older than every readable one, never guessed from other text", () => {
    for (const bad of ["not a version", "", "1.2.3.4.5", "pi 1.5.2", "1.x"]) {
      assert.equal(parseVersion(bad), undefined, bad);
      assert.equal(compareVersions(bad, "0.0.1"), -1, bad);
      assert.equal(compareVersions("0.0.1", bad), 1, bad);
    }
    assert.equal(compareVersions("garbage", "other garbage"), 0);
    assert.equal(rulesFor("not a version").version, REFERENCE_PI_VERSION);
  });

  it("engines ranges in npm's syntax; a Node pre-release counts as its line", () => {
    assert.equal(satisfiesEngine("v22.23.5", ">=22.19.0"), true);
    assert.equal(satisfiesEngine("v22.18.0", ">=22.19.0"), false);
    assert.equal(satisfiesEngine("v20.20.2", ">=22.19.0"), false);
    assert.equal(satisfiesEngine("v24.1.0", ">=22"), true);
    assert.equal(satisfiesEngine("v23.0.0", "^22.19.0"), false);
    assert.equal(satisfiesEngine("v22.19.0", "^22.19.0"), true);
    assert.equal(satisfiesEngine("v24.0.0", "^22.19.0 || >=24"), true);
    assert.equal(satisfiesEngine("v23.5.0", "^22.19.0 || >=24"), false);
    assert.equal(satisfiesEngine("v22.3.0", "22.x"), true);
    assert.equal(satisfiesEngine("v25.0.0", ">=22.19.0 <25"), false);
    assert.equal(satisfiesEngine("v24.0.0-nightly20250101abcdef", ">=22.19.0"), true);
    assert.equal(satisfiesEngine("v20.0.0", undefined), true);
    assert.equal(satisfiesEngine("v20.0.0", ""), true, "npm reads an empty range as any version");
  });

  it("an engines range it cannot read is satisfied by no Node (nodeForPi then names the range and runs none)", () => {
    for (const range of [">=22.19.0 banana", "node 22", ">=", "latest", "22.19.0.1"])
      for (const node of ["v20.0.0", "v22.19.0", "v99.0.0"])
        assert.equal(satisfiesEngine(node, range), false, `${node} ${range}`);
    assert.equal(satisfiesEngine("not a version", ">=22"), false);
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
