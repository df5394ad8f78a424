/**
 * Read/modified file tracking, as pi's compaction and branch summaries do it.
 *
 * Source: pi 1.6.0 `dist/core/compaction/utils.js` (`createFileOps`, `computeFileLists`,
 * `formatFileOperations`) and the seeding from previous `details` in `compaction.js`
 * (`extractFileOperations`) and `branch-summarization.js` (`prepareBranchEntries`).
 */

import type { EntryRecord, FileOp } from "../read/entries";
import { rulesFor, type PiRules } from "../pi/versions";

/** The reference pi version's rule switches (the default of the rule functions that have switches). */
export const REFERENCE_RULES: PiRules = rulesFor(undefined);

/**
 * Whether a message's file operations count for file lists: always for assistant tool calls; for
 * a tool result's `nestedCalls` (codemode) only from pi 0.99 (`PiRules.nestedCallFileOps`).
 */
export function countsFileOps(record: EntryRecord, rules: Pick<PiRules, "nestedCallFileOps">): boolean {
  return rules.nestedCallFileOps || !(record.type === "message" && record.role === "toolResult");
}

/** pi's `FileOperations`: three sets of paths, insertion-ordered. */
export interface FileOps {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

/** Empty {@link FileOps}. */
export function createFileOps(): FileOps {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

/** Add tool-call operations (`read` → read, `write` → written, `edit` → edited). */
export function addFileOps(into: FileOps, ops: readonly FileOp[] | undefined): void {
  if (!ops) return;
  for (const op of ops) {
    if (op.kind === "read") into.read.add(op.path);
    else if (op.kind === "write") into.written.add(op.path);
    else into.edited.add(op.path);
  }
}

/**
 * Seed from a previous compaction's or branch summary's `details` — only when pi generated it
 * (`fromHook` falsy): `readFiles` → read, `modifiedFiles` → edited.
 */
export function addDetails(into: FileOps, record: EntryRecord): void {
  if (record.fromHook || !record.details) return;
  for (const f of record.details.readFiles ?? []) into.read.add(f);
  for (const f of record.details.modifiedFiles ?? []) into.edited.add(f);
}

/** pi's `computeFileLists`: `modifiedFiles` = sorted(edited ∪ written), `readFiles` = sorted(read − modified). */
export function computeFileLists(ops: FileOps): { readFiles: string[]; modifiedFiles: string[] } {
  const modified = new Set([...ops.edited, ...ops.written]);
  const readFiles = [...ops.read].filter((f) => !modified.has(f)).sort();
  const modifiedFiles = [...modified].sort();
  return { readFiles, modifiedFiles };
}

/** pi's `formatFileOperations`: the `<read-files>` / `<modified-files>` blocks appended to a summary. */
export function formatFileOperations(readFiles: readonly string[], modifiedFiles: readonly string[]): string {
  const sections: string[] = [];
  if (readFiles.length > 0) sections.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
  if (modifiedFiles.length > 0) sections.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
  if (sections.length === 0) return "";
  return `\n\n${sections.join("\n\n")}`;
}

/** Plain arrays of a {@link FileOps}, in insertion order (for JSON output). */
export function fileOpsToJson(ops: FileOps): { read: string[]; written: string[]; edited: string[] } {
  return { read: [...ops.read], written: [...ops.written], edited: [...ops.edited] };
}
