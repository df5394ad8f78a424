/**
 * Placement of the labels under the panel's context bar (`0`, `auto-compact 196k`, `200k`) from
 * their measured widths, so they never overlap — also when the threshold sits next to the window
 * (`196k` of `200k`, `996k` of `1M`) or next to 0, and in a narrow sidebar. Pure (the webview
 * measures the text and applies the result); no `vscode`, no `node:` imports.
 */

/** One label to place. All lengths in px. */
export interface AxisLabel {
  id: string;
  /** The x the label belongs to (0 = the bar's left edge). */
  at: number;
  /** The label's measured width. */
  width: number;
  /**
   * `start`: the label starts at `at` (the `0` at the left edge); `end`: it ends at `at` (the
   * window at the right edge) — both only on the first row, hidden when they do not fit;
   * `center`: centred on `at` if possible, else just left or right of it, else on the next row.
   */
  align: "start" | "end" | "center";
  /** Higher = placed earlier among labels of the same kind (edge labels are placed first). */
  priority: number;
}

/** Where a label goes. */
export interface AxisPlacement {
  id: string;
  /** Left edge (px from the bar's left edge). */
  left: number;
  /** 0 = first row under the bar, 1 = the row below. */
  row: number;
  hidden: boolean;
}

/** Distance between a `center` label and its marker when it sits beside it (px). */
export const MARKER_GAP = 4;

/**
 * Place axis labels without overlaps.
 *
 * Edge labels (`start`/`end`) go on row 0 at their anchors (clamped into `[0, width]`), higher
 * priority first; one that would overlap an already placed label is hidden. Each `center` label
 * (higher priority first) tries, on row 0 and then on the rows below (up to `maxRows`): centred on
 * its anchor, ending just left of it, starting just right of it — each clamped into the bar — and
 * takes the first position that keeps `gap` px from every label on that row. If none fits, it goes
 * on the last row, clamped (a label wider than the bar starts at 0).
 *
 * @param width the bar's width (px).
 * @param gap the minimum horizontal distance between two labels on one row (px).
 * @returns one placement per label, in the input order.
 */
export function placeAxisLabels(labels: readonly AxisLabel[], width: number, gap = 8, maxRows = 2): AxisPlacement[] {
  const clamp = (left: number, w: number) => Math.max(0, Math.min(left, width - w));
  const placedByRow = new Map<number, { left: number; right: number }[]>();
  const fits = (row: number, left: number, w: number) =>
    (placedByRow.get(row) ?? []).every((p) => left + w + gap <= p.left || left >= p.right + gap);
  const take = (row: number, left: number, w: number) => {
    const list = placedByRow.get(row) ?? [];
    list.push({ left, right: left + w });
    placedByRow.set(row, list);
  };
  const out = new Map<number, AxisPlacement>();
  const order = labels
    .map((l, i) => ({ l, i }))
    .sort(
      (a, b) =>
        Number(a.l.align === "center") - Number(b.l.align === "center") || b.l.priority - a.l.priority || a.i - b.i,
    );
  for (const { l, i } of order) {
    if (l.align !== "center") {
      const left = clamp(l.align === "start" ? l.at : l.at - l.width, l.width);
      if (fits(0, left, l.width)) {
        take(0, left, l.width);
        out.set(i, { id: l.id, left, row: 0, hidden: false });
      } else out.set(i, { id: l.id, left, row: 0, hidden: true });
      continue;
    }
    const candidates = [l.at - l.width / 2, l.at - MARKER_GAP - l.width, l.at + MARKER_GAP].map((x) =>
      clamp(x, l.width),
    );
    let placed: AxisPlacement | undefined;
    for (let row = 0; row < maxRows && !placed; row++) {
      for (const left of candidates) {
        if (fits(row, left, l.width)) {
          placed = { id: l.id, left, row, hidden: false };
          break;
        }
      }
    }
    placed ??= { id: l.id, left: candidates[0]!, row: maxRows - 1, hidden: false };
    take(placed.row, placed.left, l.width);
    out.set(i, placed);
  }
  return labels.map((_, i) => out.get(i)!);
}
