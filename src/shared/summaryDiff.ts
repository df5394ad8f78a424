/**
 * Word-level diff of two summaries (pure; the webview runs it): whole removed/added lines, and
 * pairs ≥ 40 % similar shown as one changed line with an inline word diff.
 */

import { diffLines, diffWordsWithSpace } from "diff";

export interface DiffSegment {
  text: string;
  op: "same" | "added" | "removed";
}

export interface DiffLine {
  kind: "same" | "added" | "removed" | "changed";
  segments: DiffSegment[];
  oldLine?: number;
  newLine?: number;
}

export interface SummaryDiffStats {
  linesRemoved: number;
  linesAdded: number;
  linesChanged: number;
  wordsRemoved: number;
  wordsAdded: number;
}

export interface SummaryDiff {
  lines: DiffLine[];
  stats: SummaryDiffStats;
  identical: boolean;
}

export const CHANGED_LINE_SIMILARITY = 0.4;

function splitLines(value: string): string[] {
  const lines = value.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function countWords(text: string): number {
  const m = text.match(/[^\s]+/g);
  return m ? m.length : 0;
}

function similarity(a: string, b: string): { ratio: number; segments: DiffSegment[] } {
  const parts = diffWordsWithSpace(a, b);
  let common = 0;
  const segments: DiffSegment[] = [];
  for (const p of parts) {
    const op: DiffSegment["op"] = p.added ? "added" : p.removed ? "removed" : "same";
    if (op === "same") common += p.value.trim().length;
    const last = segments[segments.length - 1];
    if (last && last.op === op) last.text += p.value;
    else segments.push({ text: p.value, op });
  }
  const longest = Math.max(a.trim().length, b.trim().length);
  return { ratio: longest === 0 ? 1 : common / longest, segments };
}

/** Display lines in order, with counts; `identical` when the texts are equal. */
export function diffSummaries(older: string, newer: string): SummaryDiff {
  const stats: SummaryDiffStats = { linesRemoved: 0, linesAdded: 0, linesChanged: 0, wordsRemoved: 0, wordsAdded: 0 };
  const lines: DiffLine[] = [];
  if (older === newer) {
    splitLines(older).forEach((l, i) =>
      lines.push({ kind: "same", segments: [{ text: l, op: "same" }], oldLine: i + 1, newLine: i + 1 }),
    );
    return { lines, stats, identical: true };
  }
  const chunks = diffLines(older.endsWith("\n") ? older : `${older}\n`, newer.endsWith("\n") ? newer : `${newer}\n`);
  let oldNo = 0;
  let newNo = 0;
  const removed = (text: string) => {
    oldNo++;
    stats.linesRemoved++;
    stats.wordsRemoved += countWords(text);
    lines.push({ kind: "removed", segments: [{ text, op: "removed" }], oldLine: oldNo });
  };
  const added = (text: string) => {
    newNo++;
    stats.linesAdded++;
    stats.wordsAdded += countWords(text);
    lines.push({ kind: "added", segments: [{ text, op: "added" }], newLine: newNo });
  };
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    if (!chunk.added && !chunk.removed) {
      for (const l of splitLines(chunk.value)) {
        oldNo++;
        newNo++;
        lines.push({ kind: "same", segments: [{ text: l, op: "same" }], oldLine: oldNo, newLine: newNo });
      }
      continue;
    }
    if (chunk.removed && chunks[i + 1]?.added) {
      const rem = splitLines(chunk.value);
      const add = splitLines(chunks[i + 1]!.value);
      i++;
      // An unmatched added line waits for the next removed line, so insertions do not break later pairs.
      let a = 0;
      for (const r of rem) {
        let paired = false;
        for (let j = a; j < add.length && j < a + 3; j++) {
          const sim = similarity(r, add[j]!);
          if (sim.ratio >= CHANGED_LINE_SIMILARITY) {
            for (; a < j; a++) added(add[a]!);
            oldNo++;
            newNo++;
            stats.linesChanged++;
            for (const s of sim.segments) {
              if (s.op === "removed") stats.wordsRemoved += countWords(s.text);
              else if (s.op === "added") stats.wordsAdded += countWords(s.text);
            }
            lines.push({ kind: "changed", segments: sim.segments, oldLine: oldNo, newLine: newNo });
            a = j + 1;
            paired = true;
            break;
          }
        }
        if (!paired) removed(r);
      }
      for (; a < add.length; a++) added(add[a]!);
      continue;
    }
    for (const l of splitLines(chunk.value)) (chunk.removed ? removed : added)(l);
  }
  return { lines, stats, identical: false };
}

export interface SummaryPair {
  fromIndex: number;
  toIndex: number;
  like: boolean;
  note?: string;
}

/** Like with like: the last two compactions, else the last two branch summaries, else the last two with a note. */
export function defaultSummaryPair(summaries: readonly { type: "compaction" | "branch_summary" }[]): SummaryPair {
  for (const type of ["compaction", "branch_summary"] as const) {
    const of = summaries.flatMap((s, i) => (s.type === type ? [i] : []));
    if (of.length >= 2) return { fromIndex: of[of.length - 2]!, toIndex: of[of.length - 1]!, like: true };
  }
  const compactions = summaries.filter((s) => s.type === "compaction").length;
  const branches = summaries.length - compactions;
  const what = [
    compactions ? `${compactions === 1 ? "one" : compactions} compaction summary` : "",
    branches ? `${branches === 1 ? "one" : branches} branch summary` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  return {
    fromIndex: summaries.length - 2,
    toIndex: summaries.length - 1,
    like: false,
    note: `This path has ${what}: no two summaries of one kind to compare. Compare these two anyway, or pick another pair above.`,
  };
}
