/**
 * The summary diff's default pair compares like with like (fixes3 item 4): the latest compaction
 * with the previous compaction even when a branch summary came between them; the latest two branch
 * summaries when there are not two compactions; with no two of one kind it says so.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { defaultSummaryPair } from "../../../src/shared/summaryDiff";

const C = { type: "compaction" as const };
const B = { type: "branch_summary" as const };

describe("the summary diff's default pair", () => {
  it("the latest two compactions, skipping a branch summary after or between them", () => {
    assert.deepEqual(defaultSummaryPair([C, C, B]), { fromIndex: 0, toIndex: 1, like: true });
    assert.deepEqual(defaultSummaryPair([C, B, C]), { fromIndex: 0, toIndex: 2, like: true });
    assert.deepEqual(defaultSummaryPair([C, C, B, C, B]), { fromIndex: 1, toIndex: 3, like: true });
  });

  it("two branch summaries when there are not two compactions", () => {
    assert.deepEqual(defaultSummaryPair([B, C, B]), { fromIndex: 0, toIndex: 2, like: true });
    assert.deepEqual(defaultSummaryPair([B, B]), { fromIndex: 0, toIndex: 1, like: true });
  });

  it("one of each: no like pair, and the note says so", () => {
    const p = defaultSummaryPair([C, B]);
    assert.equal(p.like, false);
    assert.equal(
      p.note,
      "This path has one compaction summary and one branch summary: no two summaries of one kind to compare. Compare these two anyway, or pick another pair above.",
    );
    assert.deepEqual([p.fromIndex, p.toIndex], [0, 1]);
  });
});
