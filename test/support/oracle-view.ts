/**
 * Our core's view of a session in the exact shape of the pi oracle (`test/conformance/oracle/oracle.mjs`,
 * pi 1.6.0 or another version of the matrix), so conformance tests compare field by field.
 */

import {
  collectEntriesForBranchSummary,
  branchSummaryBudget,
  navigationTarget,
  prepareBranchEntries,
} from "../../src/core/rules/branch";
import { isPrepared, prepareCompaction, type CompactionPreparation } from "../../src/core/rules/compaction";
import { buildProjection, type ProjectedEntry, type Projection } from "../../src/core/rules/context";
import type { EntryRecord } from "../../src/core/read/entries";
import { estimateTokens } from "../../src/core/read/estimate";
import { computeFileLists, fileOpsToJson } from "../../src/core/rules/files";
import { formatTokens } from "../../src/shared/format";
import type { SessionFile } from "../../src/core/read/session";
import {
  contextUsage,
  contribution,
  entryMessageTokens,
  estimateContextTokens,
  estimateProjectedContextTokens,
  shouldCompact,
  type CompactionSettings,
} from "../../src/core/rules/tokens";
import { getPath } from "../../src/core/rules/tree";
import { rulesFor, type PiRules } from "../../src/core/pi/versions";

export interface ViewOptions {
  settings: CompactionSettings;
  contextWindow: number | null;
  leafId?: string | null;
  branchTarget?: string;
  branchSummaryReserve?: number;
  verifyCompactions?: boolean;
  verifyBranchSummaries?: boolean;
  /** The pi version's rule switches (default: pi 1.6.0's). */
  rules?: PiRules;
}

function typeName(r: EntryRecord): string {
  return r.type === "message" ? `message:${r.role}` : r.type;
}

function messageInfos(entry: ProjectedEntry, session: SessionFile): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const role of entry.roles) {
    const info: Record<string, unknown> = { entryId: entry.record.id, role };
    if (role === "system") info.estimateTokens = entry.record.systemTokens;
    else info.estimateTokens = contribution(entry, session).tokens;
    if (role === "assistant") {
      info.stopReason = entry.record.stopReason;
      info.usageTotal = entry.record.usage ? rawUsageTotal(entry.record) : 0;
    }
    out.push(info);
  }
  return out;
}

function rawUsageTotal(r: EntryRecord): number {
  const u = r.usage!;
  return u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
}

function estimateJson(e: {
  tokens: number;
  usageTokens: number;
  trailingTokens: number;
  lastUsageIndex: number | null;
}): Record<string, unknown> {
  return {
    tokens: e.tokens,
    usageTokens: e.usageTokens,
    trailingTokens: e.trailingTokens,
    lastUsageIndex: e.lastUsageIndex,
  };
}

function part(entries: ProjectedEntry[], session: SessionFile): Record<string, unknown> {
  const messages = entries.flatMap((e) => messageInfos(e, session).filter((m) => m.role !== "system"));
  return { count: messages.length, entryIds: messages.map((m) => m.entryId), messages };
}

function preparationJson(prep: CompactionPreparation, session: SessionFile): Record<string, unknown> {
  return {
    firstKeptEntryId: prep.firstKeptEntryId,
    isSplitTurn: prep.isSplitTurn,
    tokensBefore: prep.tokensBefore,
    hasPreviousSummary: prep.previousSummary !== undefined,
    messagesToSummarize: part(prep.messagesToSummarize, session),
    turnPrefix: part(prep.turnPrefixMessages, session),
    fileOps: fileOpsToJson(prep.fileOps),
    fileLists: { readFiles: prep.readFiles, modifiedFiles: prep.modifiedFiles },
    settings: prep.settings,
  };
}

/** Our answer to the questions the oracle answers. */
export function oracleView(session: SessionFile, options: ViewOptions): Record<string, unknown> {
  const projection: Projection = buildProjection(session, options.leafId);
  const estimate = estimateContextTokens(projection, session);
  const projected = estimateProjectedContextTokens(projection, session);
  const window = options.contextWindow;
  let usageJson: Record<string, unknown>;
  if (window === null) usageJson = { unavailable: "no context window" };
  else {
    const usage = contextUsage(projection, window, session);
    usageJson = usage
      ? {
          ...usage,
          footer:
            usage.percent === null
              ? `?/${formatTokens(window)}`
              : `${usage.percent.toFixed(1)}%/${formatTokens(window)}`,
        }
      : { unavailable: "window <= 0" };
  }
  const rules = options.rules ?? rulesFor(undefined);
  const prepared = prepareCompaction(session, options.settings, session, options.leafId, rules);
  const view: Record<string, unknown> = {
    entryCount: session.records.length,
    leafId: projection.leafId,
    pathIds: projection.path.map((e) => e.id),
    pathTypes: projection.path.map(typeName),
    contextEntries: projection.entries.map((e) => `${e.record.id} ${typeName(e.record)}`),
    context: {
      model: projection.model,
      thinkingLevel: projection.thinkingLevel,
      messages: projection.entries.flatMap((e) => messageInfos(e, session)),
    },
    estimateContextTokens: estimateJson(estimate),
    estimateProjectedContextTokens: estimateJson(projected),
    contextUsage: usageJson,
    shouldCompact: window !== null && window > 0 ? shouldCompact(projected.tokens, window, options.settings) : null,
    prepareCompaction: isPrepared(prepared) ? preparationJson(prepared, session) : null,
  };
  const reserve = options.branchSummaryReserve ?? 16384;
  if (options.branchTarget !== undefined) {
    const target = session.byId.get(options.branchTarget);
    const tokenBudget = branchSummaryBudget(window ?? undefined, reserve);
    if (!target)
      view.branchSummary = {
        oldLeafId: projection.leafId,
        targetId: options.branchTarget,
        targetFound: false,
        tokenBudget,
      };
    else if (options.branchTarget === projection.leafId) {
      view.branchSummary = {
        oldLeafId: projection.leafId,
        targetId: options.branchTarget,
        targetFound: true,
        noOp: "target is the current leaf (pi: navigateTree no-op)",
        tokenBudget,
      };
    } else {
      const collection = collectEntriesForBranchSummary(session, projection.leafId, options.branchTarget);
      const { newLeafId } = navigationTarget(target);
      const prep = prepareBranchEntries(collection.entries, tokenBudget, session, rules);
      view.branchSummary = {
        oldLeafId: projection.leafId,
        targetId: options.branchTarget,
        targetFound: true,
        commonAncestorId: collection.commonAncestorId,
        entriesToSummarize: collection.entries.map((e) => e.id),
        newLeafIdAfterNavigation: newLeafId,
        summaryEntryParentId: collection.entries.length > 0 ? newLeafId : null,
        tokenBudget,
        prepared: {
          messageCount: prep.messages.length,
          roles: prep.messages.map((m) => m.role),
          totalTokens: prep.totalTokens,
          fileOps: fileOpsToJson(prep.fileOps),
          fileLists: computeFileLists(prep.fileOps),
        },
      };
    }
  }
  if (options.verifyCompactions) {
    view.verifyCompactions = session.records
      .filter((r) => r.type === "compaction")
      .map((c) => {
        const prep = c.parentId
          ? prepareCompaction(session, options.settings, session, c.parentId, rules)
          : { reason: "nothing-to-compact" as const };
        return {
          compactionId: c.id,
          prepared: isPrepared(prep)
            ? {
                firstKeptEntryId: prep.firstKeptEntryId,
                tokensBefore: prep.tokensBefore,
                isSplitTurn: prep.isSplitTurn,
                readFiles: prep.readFiles,
                modifiedFiles: prep.modifiedFiles,
              }
            : null,
        };
      });
  }
  if (options.verifyBranchSummaries) {
    view.verifyBranchSummaries = session.records
      .filter((r) => r.type === "branch_summary")
      .map((b) => {
        const oldLeaf = b.fromId === "root" ? null : (b.fromId ?? null);
        const entries = b.parentId
          ? collectEntriesForBranchSummary(session, oldLeaf, b.parentId)
          : { entries: oldLeaf ? getPath(session, oldLeaf).path : [], commonAncestorId: null };
        const prep = prepareBranchEntries(
          entries.entries,
          branchSummaryBudget(window ?? undefined, reserve),
          session,
          rules,
        );
        const lists =
          prep.messages.length > 0
            ? { readFiles: prep.readFiles, modifiedFiles: prep.modifiedFiles }
            : { readFiles: [], modifiedFiles: [] };
        return {
          branchSummaryId: b.id,
          commonAncestorId: entries.commonAncestorId,
          entriesToSummarize: entries.entries.map((e) => e.id),
          prepared: { messageCount: prep.messages.length, totalTokens: prep.totalTokens, ...lists },
        };
      });
  }
  return view;
}

/** For the compaction message estimate checks. */
export { entryMessageTokens, estimateTokens };
