/** Tree navigation and branch summaries as pi 1.6.0's `/tree` does them (`branch-summarization.js`, `navigateTree`). */

import { entryRoles, type EntryRecord } from "../read/entries";
import {
  addDetails,
  addFileOps,
  computeFileLists,
  countsFileOps,
  createFileOps,
  REFERENCE_RULES,
  type FileOps,
} from "./files";
import type { PiRules } from "../pi/versions";
import { contribution, type BodyReader } from "./tokens";
import { commonAncestor, type EntryIndex } from "./tree";
import type { BranchSummaryEntry, CustomEntry, LabelEntry, MessageRole, Usage } from "../types";
import { PI_CONTEXT_CUSTOM_TYPE } from "../read/entries";

/** pi's default `branchSummary.reserveTokens` and the window assumed for a model without one. */
export const DEFAULT_BRANCH_SUMMARY_RESERVE = 16384;
export const DEFAULT_SUMMARY_CONTEXT_WINDOW = 128000;

export interface BranchCollection {
  /** From the old leaf back to (excluding) the common ancestor, oldest first. */
  entries: EntryRecord[];
  commonAncestorId: string | null;
}

/** pi's `collectEntriesForBranchSummary`: the stretch abandoned when moving from `oldLeafId` to `targetId`. */
export function collectEntriesForBranchSummary(
  index: EntryIndex,
  oldLeafId: string | null,
  targetId: string,
): BranchCollection {
  if (!oldLeafId) return { entries: [], commonAncestorId: null };
  const ancestor = commonAncestor(index, oldLeafId, targetId);
  const entries: EntryRecord[] = [];
  const seen = new Set<string>();
  let current: string | null = oldLeafId;
  while (current && current !== ancestor) {
    if (seen.has(current)) break; // a parent cycle: pi would hang
    seen.add(current);
    const entry = index.byId.get(current);
    if (!entry) break;
    entries.push(entry);
    current = entry.parentId;
  }
  entries.reverse();
  return { entries, commonAncestorId: ancestor };
}

export interface BranchMessage {
  record: EntryRecord;
  role: MessageRole;
  tokens: number;
  edit?: EntryRecord;
}

export interface BranchPreparation {
  messages: BranchMessage[];
  fileOps: FileOps;
  totalTokens: number;
  readFiles: string[];
  modifiedFiles: string[];
}

/**
 * pi's `prepareBranchEntries(entries, tokenBudget)` (budget in tokens; 0 = none): newest → oldest,
 * tool results skipped, latest context edit applied; a summary that does not fit is still taken under
 * 90 % of the budget. `rules`: `context_edit`s apply from pi 1.5.0, `nestedCalls` count from pi 0.99.
 */
export function prepareBranchEntries(
  entries: readonly EntryRecord[],
  tokenBudget: number,
  reader: BodyReader,
  rules: Pick<PiRules, "branchSummaryContextEdits" | "nestedCallFileOps"> = REFERENCE_RULES,
): BranchPreparation {
  const fileOps = createFileOps();
  for (const e of entries) if (e.type === "branch_summary") addDetails(fileOps, e);
  const edits = new Map<string, EntryRecord>();
  if (rules.branchSummaryContextEdits)
    for (const e of entries) if (e.type === "context_edit" && e.targetId !== undefined) edits.set(e.targetId, e);
  const messages: BranchMessage[] = [];
  let totalTokens = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const record = entries[i]!;
    const converted = branchMessage(record, edits.get(record.id), reader);
    if (!converted) continue;
    if (countsFileOps(record, rules)) addFileOps(fileOps, converted.fileOps);
    const tokens = converted.message.tokens;
    if (tokenBudget > 0 && totalTokens + tokens > tokenBudget) {
      if ((record.type === "compaction" || record.type === "branch_summary") && totalTokens < tokenBudget * 0.9) {
        messages.unshift(converted.message);
        totalTokens += tokens;
      }
      break;
    }
    messages.unshift(converted.message);
    totalTokens += tokens;
  }
  const { readFiles, modifiedFiles } = computeFileLists(fileOps);
  return { messages, fileOps, totalTokens, readFiles, modifiedFiles };
}

function branchMessage(
  record: EntryRecord,
  edit: EntryRecord | undefined,
  reader: BodyReader,
): { message: BranchMessage; fileOps: ReturnType<typeof contribution>["fileOps"] } | undefined {
  switch (record.type) {
    case "message":
    case "custom_message": {
      if (record.type === "message" && record.role === "toolResult") return undefined;
      if (edit?.replacementIsNull) return undefined;
      const roles = entryRoles(record);
      const role = roles[0]!;
      if (role === "system") {
        const message: BranchMessage = { record, role, tokens: record.systemTokens };
        return { message, fileOps: [] };
      }
      const c = contribution(
        edit ? { record, edit, roles, firstMessageIndex: 0 } : { record, roles, firstMessageIndex: 0 },
        reader,
      );
      const message: BranchMessage = { record, role, tokens: c.tokens };
      if (edit) message.edit = edit;
      return { message, fileOps: c.fileOps };
    }
    case "branch_summary":
      return {
        message: { record, role: "branchSummary", tokens: Math.ceil((record.summary ?? "").length / 4) },
        fileOps: [],
      };
    case "compaction":
      return { message: { record, role: "compactionSummary", tokens: record.tokens }, fileOps: [] };
    default:
      return undefined;
  }
}

/** pi's branch summary budget (tokens): `(contextWindow || 128000) − branchSummary.reserveTokens`. */
export function branchSummaryBudget(contextWindow: number | undefined, reserveTokens: number): number {
  return (contextWindow || DEFAULT_SUMMARY_CONTEXT_WINDOW) - reserveTokens;
}

/** pi stops at the budget only when `budget > 0`; otherwise the whole branch is sent ("no limit"). */
export function isBranchBudgetLimited(budget: number): boolean {
  return budget > 0;
}

/** pi's budget in words, e.g. `budget 111,616 tokens (window 128,000 − branchSummary.reserveTokens 16,384)`. */
export function branchBudgetText(contextWindow: number | undefined, reserveTokens: number): string {
  const budget = branchSummaryBudget(contextWindow, reserveTokens);
  const n = (v: number) => v.toLocaleString("en-US");
  const window = contextWindow ? n(contextWindow) : `unknown, so ${n(DEFAULT_SUMMARY_CONTEXT_WINDOW)}`;
  const formula = `window ${window} − branchSummary.reserveTokens ${n(reserveTokens)}`;
  return isBranchBudgetLimited(budget)
    ? `budget ${n(budget)} tokens (${formula})`
    : `no budget limit (${formula} ≤ 0: pi sends the whole branch)`;
}

export interface NavigationTarget {
  /** The target, or its parent for user/custom messages (null = before the root). */
  newLeafId: string | null;
  /** The target's text goes back to the prompt editor (user and custom messages). */
  returnsText: boolean;
}

export function navigationTarget(target: EntryRecord): NavigationTarget {
  if ((target.type === "message" && target.role === "user") || target.type === "custom_message") {
    return { newLeafId: target.parentId, returnsText: true };
  }
  return { newLeafId: target.id, returnsText: false };
}

/** What pi's `navigateTree` would do, minus the LLM call. */
export interface NavigationPlan {
  oldLeafId: string | null;
  targetId: string;
  newLeafId: string | null;
  returnsText: boolean;
  collection: BranchCollection;
  noop: boolean;
}

/** @throws Error when the target is not an entry of the session (pi: "Entry X not found"). */
export function planNavigation(
  index: EntryIndex & { leafId: string | null },
  targetId: string,
  oldLeafId: string | null = index.leafId,
): NavigationPlan {
  const target = index.byId.get(targetId);
  if (!target) throw new Error(`Entry ${targetId} not found`);
  const { newLeafId, returnsText } = navigationTarget(target);
  const collection = collectEntriesForBranchSummary(index, oldLeafId, targetId);
  return { oldLeafId, targetId, newLeafId, returnsText, collection, noop: targetId === oldLeafId };
}

/** The `BranchSummaryEntry` exactly as pi's `branchWithSummary` writes it (same key order). */
export function buildBranchSummaryEntry(input: {
  id: string;
  parentId: string | null;
  timestamp: string;
  fromId: string;
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  usage?: Usage;
  fromHook: boolean;
}): BranchSummaryEntry {
  return {
    type: "branch_summary",
    id: input.id,
    parentId: input.parentId as string,
    timestamp: input.timestamp,
    fromId: input.fromId,
    summary: input.summary,
    details: { readFiles: input.readFiles, modifiedFiles: input.modifiedFiles },
    ...(input.usage ? { usage: input.usage } : {}),
    fromHook: input.fromHook,
  };
}

/** A `label` entry as pi's `appendLabelChange` writes it (an empty/undefined label clears). */
export function buildLabelEntry(input: {
  id: string;
  parentId: string | null;
  timestamp: string;
  targetId: string;
  label: string | undefined;
}): LabelEntry {
  const entry: LabelEntry = {
    type: "label",
    id: input.id,
    parentId: input.parentId as string,
    timestamp: input.timestamp,
    targetId: input.targetId,
  };
  if (input.label !== undefined) entry.label = input.label;
  return entry;
}

/**
 * A `custom` entry on the new leaf that persists a move without summary (pi writes nothing, so the
 * move would be lost on restart); invisible to the context, and pi's "leaf = last line" resumes there.
 */
export function buildLeafMarkerEntry(input: {
  id: string;
  parentId: string | null;
  timestamp: string;
  targetId: string;
  fromId: string | null;
}): CustomEntry {
  return {
    type: "custom",
    customType: PI_CONTEXT_CUSTOM_TYPE,
    data: { targetId: input.targetId, fromId: input.fromId ?? "root" },
    id: input.id,
    parentId: input.parentId as string,
    timestamp: input.timestamp,
  };
}
