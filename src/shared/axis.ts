/** Places the labels under the panel's context bar so they never overlap. Pure; lengths in px. */

export interface AxisLabel {
  id: string;
  at: number;
  width: number;
  /** `start`/`end`: edge labels on row 0, hidden when they do not fit; `center`: beside or below. */
  align: "start" | "end" | "center";
  priority: number;
}

export interface AxisPlacement {
  id: string;
  left: number;
  row: number;
  hidden: boolean;
}

export const MARKER_GAP = 4;

/**
 * Edge labels first (an overlapping one is hidden); each `center` label takes the first of centred,
 * left, right that keeps `gap` px on a row, else the last row. @returns placements in input order.
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
