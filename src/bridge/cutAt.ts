/**
 * "Compact up to here" inside pi: pi 1.6.0's `AgentSession.compact` hands the same preparation to
 * its default summarizer after `session_before_compact`, so moving the cut in place makes pi
 * summarize and write its own entry with our `firstKeptEntryId` (rules of pi's `prepareCompaction`).
 */

import type { PiMessage, PiProjectedEntry } from "./piApi";

/** pi 1.6.0's `CompactionPreparation` (the fields the cut sets). */
export interface PiPreparation {
  firstKeptEntryId: string;
  messagesToSummarize: PiMessage[];
  turnPrefixMessages: PiMessage[];
  isSplitTurn: boolean;
  fileOps: { read: Set<string>; written: Set<string>; edited: Set<string> };
}

const CUT_POINT_ROLES = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"]);
const TURN_START_ROLES = new Set(["user", "bashExecution", "custom", "branchSummary", "compactionSummary"]);

const isCutPoint = (e: PiProjectedEntry) =>
  e.sourceEntry.type !== "compaction" && e.messages.some((m) => CUT_POINT_ROLES.has(m.role ?? ""));
const isTurnStart = (e: PiProjectedEntry) =>
  e.sourceEntry.type !== "compaction" && e.messages.some((m) => TURN_START_ROLES.has(m.role ?? ""));
const forCompaction = (e: PiProjectedEntry) =>
  e.sourceEntry.type === "compaction" ? [] : e.messages.filter((m) => m.role !== "system");

/** What the moved cut summarizes. */
export interface CutResult {
  firstKeptEntryId: string;
  summarizedMessages: number;
  turnPrefixMessages: number;
  isSplitTurn: boolean;
}

/** Changes `preparation` only when the cut is valid. @returns what it summarizes, or why pi would not cut there. */
export function cutPreparationAt(
  preparation: PiPreparation,
  entries: readonly PiProjectedEntry[],
  keepFrom: string,
): CutResult | { error: string } {
  const previousIndex = entries.findIndex((e) => e.sourceEntry.type === "compaction" && e.messages.length > 0);
  const boundaryStart = previousIndex + 1;
  const at = entries.findIndex((e) => e.sourceEntry.id === keepFrom);
  if (at < 0) return { error: `Entry ${keepFrom} is not in pi's context at its leaf.` };
  if (at < boundaryStart) return { error: `Entry ${keepFrom} was summarized by an earlier compaction.` };
  let cut = at;
  while (cut < entries.length && entries[cut]!.messages.length === 0 && entries[cut]!.sourceEntry.type !== "compaction")
    cut++;
  if (cut >= entries.length || !isCutPoint(entries[cut]!))
    return { error: `pi does not cut at entry ${keepFrom} (a tool result, or no message of its own).` };
  while (cut > boundaryStart) {
    const previous = entries[cut - 1]!;
    if (previous.sourceEntry.type === "compaction" || previous.messages.length > 0) break;
    cut--;
  }
  let turnStart = -1;
  if (!isTurnStart(entries[cut]!))
    for (let i = cut; i >= boundaryStart; i--)
      if (isTurnStart(entries[i]!)) {
        turnStart = i;
        break;
      }
  const split = turnStart !== -1;
  const history = entries.slice(boundaryStart, split ? turnStart : cut).flatMap(forCompaction);
  const prefix = split ? entries.slice(turnStart, cut).flatMap(forCompaction) : [];
  if (history.length === 0 && prefix.length === 0) return { error: `Nothing before entry ${keepFrom} to summarize.` };

  const fileOps = { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() };
  const previous = previousIndex >= 0 ? entries[previousIndex]!.sourceEntry : undefined;
  if (previous && !previous.fromHook && previous.details && typeof previous.details === "object") {
    const details = previous.details as { readFiles?: unknown; modifiedFiles?: unknown };
    if (Array.isArray(details.readFiles)) for (const f of details.readFiles) fileOps.read.add(f as string);
    if (Array.isArray(details.modifiedFiles)) for (const f of details.modifiedFiles) fileOps.edited.add(f as string);
  }
  for (const m of [...history, ...prefix]) addFileOps(m, fileOps);

  preparation.firstKeptEntryId = entries[cut]!.sourceEntry.id;
  preparation.messagesToSummarize = history;
  preparation.turnPrefixMessages = prefix;
  preparation.isSplitTurn = split;
  preparation.fileOps = fileOps;
  return {
    firstKeptEntryId: preparation.firstKeptEntryId,
    summarizedMessages: history.length,
    turnPrefixMessages: prefix.length,
    isSplitTurn: split,
  };
}

/** pi's `extractFileOpsFromMessage`. */
function addFileOps(message: PiMessage, fileOps: PiPreparation["fileOps"]): void {
  const add = (name: unknown, args: unknown) => {
    const p = (args as { path?: unknown } | null)?.path;
    if (typeof p !== "string" || !p) return;
    if (name === "read") fileOps.read.add(p);
    else if (name === "write") fileOps.written.add(p);
    else if (name === "edit") fileOps.edited.add(p);
  };
  if (message.role === "toolResult") {
    for (const call of message.nestedCalls?.calls ?? []) add(call.name, call.arguments);
    return;
  }
  if (message.role !== "assistant" || !Array.isArray(message.content)) return;
  for (const block of message.content as { type?: unknown; name?: unknown; arguments?: unknown }[])
    if (block && typeof block === "object" && block.type === "toolCall" && "arguments" in block && "name" in block)
      add(block.name, block.arguments);
}
