/**
 * The panel's axis labels (`0`, `auto-compact 196k`, `200k`) never overlap: placement from measured
 * widths (src/viewModel/axis.ts), including a threshold next to the window (196k of 200k, 996k of 1M),
 * next to 0, and narrow bars; plus a property test over random layouts.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import { placeAxisLabels, type AxisLabel, type AxisPlacement } from "../../../src/shared/axis";

/** The three labels of a bar of `width` px; widths as a 12px UI font measures them (≈ 6.2 px per character). */
function labels(width: number, thresholdAt: number, thresholdText: string, endText: string): AxisLabel[] {
  const w = (t: string) => t.length * 6.2;
  return [
    { id: "start", at: 0, width: w("0"), align: "start", priority: 0 },
    { id: "threshold", at: thresholdAt * width, width: w(thresholdText), align: "center", priority: 2 },
    { id: "end", at: width, width: w(endText), align: "end", priority: 1 },
  ];
}

function assertNoOverlap(ls: readonly AxisLabel[], ps: readonly AxisPlacement[], width: number, gap: number): void {
  const shown = ps.map((p, i) => ({ p, l: ls[i]! })).filter(({ p }) => !p.hidden);
  for (const { p, l } of shown) {
    assert.ok(p.left >= 0, `${l.id} starts inside (${p.left})`);
    if (l.width <= width)
      assert.ok(p.left + l.width <= width + 1e-9, `${l.id} ends inside (${p.left + l.width} > ${width})`);
  }
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const a = shown[i]!;
      const b = shown[j]!;
      if (a.p.row !== b.p.row) continue;
      const apart = a.p.left + a.l.width + gap <= b.p.left + 1e-9 || b.p.left + b.l.width + gap <= a.p.left + 1e-9;
      assert.ok(
        apart,
        `${a.l.id} [${a.p.left}, ${a.p.left + a.l.width}] and ${b.l.id} [${b.p.left}, ${b.p.left + b.l.width}] overlap on row ${a.p.row}`,
      );
    }
  }
}

describe("axis labels", () => {
  it("threshold in the middle: one row, centred on the marker", () => {
    const ls = labels(900, 0.75, "auto-compact 12k", "16k");
    const ps = placeAxisLabels(ls, 900, 8);
    assert.deepEqual(
      ps.map((p) => [p.id, p.row, p.hidden]),
      [
        ["start", 0, false],
        ["threshold", 0, false],
        ["end", 0, false],
      ],
    );
    assert.equal(ps[1]!.left, 675 - ls[1]!.width / 2);
    assertNoOverlap(ls, ps, 900, 8);
  });

  it("threshold near the window (196k of 200k): the threshold label moves to the second row, ending at the bar's end", () => {
    const ls = labels(900, 0.98, "auto-compact 196k", "200k");
    const ps = placeAxisLabels(ls, 900, 8);
    assert.equal(ps[2]!.row, 0);
    assert.equal(ps[1]!.row, 1);
    assert.equal(ps[1]!.left, 900 - ls[1]!.width);
    assertNoOverlap(ls, ps, 900, 8);
  });

  it("1M window, threshold 996k: no overlap with 1M", () => {
    const ls = labels(900, 0.996, "auto-compact 996k", "1M");
    const ps = placeAxisLabels(ls, 900, 8);
    assert.equal(ps.filter((p) => p.hidden).length, 0);
    assertNoOverlap(ls, ps, 900, 8);
  });

  it("threshold at 95 % of a wide bar: centred would hit 200k, so it ends just left of the marker, first row", () => {
    const ls = labels(1200, 0.95, "auto-compact 190k", "200k");
    const ps = placeAxisLabels(ls, 1200, 8);
    assert.equal(ps[1]!.row, 0, "fits left of the marker");
    assert.equal(ps[1]!.left, 0.95 * 1200 - 4 - ls[1]!.width);
    assertNoOverlap(ls, ps, 1200, 8);
  });

  it("threshold near 0 and a narrow sidebar", () => {
    for (const width of [140, 220, 300]) {
      for (const at of [0.01, 0.1, 0.5, 0.9, 0.999]) {
        const ls = labels(width, at, "auto-compact 12k", "16k");
        assertNoOverlap(ls, placeAxisLabels(ls, width, 8), width, 8);
      }
    }
  });

  it("edge labels that cannot both fit: the lower priority one (0) is hidden", () => {
    const ls: AxisLabel[] = [
      { id: "start", at: 0, width: 30, align: "start", priority: 0 },
      { id: "end", at: 40, width: 30, align: "end", priority: 1 },
    ];
    const ps = placeAxisLabels(ls, 40, 8);
    assert.deepEqual(
      ps.map((p) => p.hidden),
      [true, false],
    );
  });

  it("never overlapping on random bars (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 120, max: 1600 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 8 }),
        (width, at, tLen, eLen) => {
          const ls = labels(width, at, "x".repeat(tLen), "y".repeat(eLen));
          const ps = placeAxisLabels(ls, width, 8);
          assert.equal(ps[1]!.hidden, false, "the threshold label is always shown");
          assertNoOverlap(ls, ps, width, 8);
        },
      ),
      { numRuns: 500 },
    );
  });
});
