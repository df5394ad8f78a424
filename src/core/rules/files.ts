/** Read/modified file tracking as pi 1.6.0's summaries do it (`compaction/utils.js`, seeding from `details`). */

import type { EntryRecord, FileOp } from "../read/entries";
import { rulesFor, type PiRules } from "../pi/versions";

/** The reference pi version's rule switches. */
export const REFERENCE_RULES: PiRules = rulesFor(undefined);

/** Assistant tool calls always; a tool result's `nestedCalls` (codemode) only from pi 0.99. */
export function countsFileOps(record: EntryRecord, rules: Pick<PiRules, "nestedCallFileOps">): boolean {
  return rules.nestedCallFileOps || !(record.type === "message" && record.role === "toolResult");
}

/** pi's `FileOperations`: insertion-ordered path sets. */
export interface FileOps {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOps {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

export function addFileOps(into: FileOps, ops: readonly FileOp[] | undefined): void {
  if (!ops) return;
  for (const op of ops) {
    if (op.kind === "read") into.read.add(op.path);
    else if (op.kind === "write") into.written.add(op.path);
    else into.edited.add(op.path);
  }
}

/** Seeds from a summary's `details` only when pi generated it (`fromHook` falsy). */
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

export function fileOpsToJson(ops: FileOps): { read: string[]; written: string[]; edited: string[] } {
  return { read: [...ops.read], written: [...ops.written], edited: [...ops.edited] };
}
