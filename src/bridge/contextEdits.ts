/**
 * Context edits applied by the running pi itself: pi never re-reads the file, so they go into its
 * session manager — at once while idle, else handed to the next `turn_end`/`agent_before_settle`
 * handler and checked afterwards (pi drops a whole boundary's drafts when one is invalid).
 */

import { MAX_EDIT_BATCHES, type BridgeEditBatch, type ContextEditDraft } from "./protocol";
import type { PiAppendContextEdit, PiContext, PiEntry } from "./piApi";
import { randomHex } from "./announce";

/** How often a batch is handed to pi's boundary before it counts as dropped. */
export const MAX_HAND_OVERS = 3;

interface Batch extends BridgeEditBatch {
  drafts: ContextEditDraft[];
  handedAt?: number;
  handOvers: number;
}

/** Why pi's `appendContextEdit` would refuse a draft now (pi's messages), or undefined. */
export function draftProblem(sessionManager: PiContext["sessionManager"], draft: ContextEditDraft): string | undefined {
  const target = sessionManager.getEntry(draft.targetId);
  if (!target) return `Entry ${draft.targetId} not found`;
  if (!sessionManager.getBranch().some((e) => e.id === draft.targetId))
    return `Entry ${draft.targetId} is not on the active branch`;
  const role = target.message?.role;
  const editable =
    target.type === "custom_message" ||
    (target.type === "message" && (role === "user" || role === "assistant" || role === "toolResult"));
  if (!editable) return `Entry ${draft.targetId} does not contribute editable model content`;
  return undefined;
}

function toolCallIds(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((b): b is { type: string; id: string } => b?.type === "toolCall" && typeof b.id === "string")
    .map((b) => b.id);
}

/**
 * `drafts` plus omissions of the results of every tool call they take out, as pi's session is now:
 * results appended after planning would otherwise lose their call, and providers reject that.
 */
export function withPairedResults(
  sessionManager: PiContext["sessionManager"],
  drafts: readonly ContextEditDraft[],
): ContextEditDraft[] {
  const branch = sessionManager.getBranch();
  const latest = new Map<string, unknown>();
  for (const e of branch)
    if (e.type === "context_edit" && e.targetId !== undefined) latest.set(e.targetId, e.replacement);
  for (const d of drafts) latest.set(d.targetId, d.replacement);
  const extra: ContextEditDraft[] = [];
  for (const d of drafts) {
    const at = branch.findIndex((e) => e.id === d.targetId);
    const target = branch[at];
    if (target?.type !== "message" || target.message?.role !== "assistant") continue;
    const kept = new Set(toolCallIds(d.replacement?.content));
    const removed = new Set(toolCallIds(target.message.content).filter((id) => !kept.has(id)));
    if (removed.size === 0) continue;
    for (const e of branch.slice(at + 1)) {
      if (e.type !== "message") continue;
      if (e.message?.role !== "toolResult") break;
      if (!removed.has(e.message.toolCallId ?? "") || latest.get(e.id) === null) continue;
      extra.push({ type: "context_edit", targetId: e.id, replacement: null });
      latest.set(e.id, null);
    }
  }
  return extra.length > 0 ? [...drafts, ...extra] : [...drafts];
}

/**
 * `drafts` in the planner's order (`core/rules/batchOrder.ts`): pi appends one at a time, so a result
 * is hidden before its call and shown after it (a call without result is safe, the reverse is not).
 */
export function pairingSafeDrafts(
  sessionManager: PiContext["sessionManager"],
  drafts: readonly ContextEditDraft[],
): ContextEditDraft[] {
  const position = new Map(sessionManager.getBranch().map((e, i) => [e.id, i]));
  const rank = (d: ContextEditDraft): number => {
    const role = sessionManager.getEntry(d.targetId)?.message?.role;
    const kind = role === "toolResult" ? "result" : role === "assistant" ? "assistant" : "other";
    if (d.replacement === null) return { result: 0, assistant: 1, other: 2 }[kind];
    return { assistant: 3, result: 4, other: 5 }[kind];
  };
  return drafts
    .map((d, i) => ({ d, i, rank: rank(d), at: position.get(d.targetId) ?? Number.MAX_SAFE_INTEGER }))
    .sort((x, y) => x.rank - y.rank || x.at - y.at || x.i - y.i)
    .map((x) => x.d);
}

/** The context-edit batches of one session's bridge. */
export class ContextEditQueue {
  private readonly batches: Batch[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: PiContext,
    private readonly changed: () => void,
  ) {}

  snapshot(): BridgeEditBatch[] {
    return this.batches.map(({ batchId, status, targetIds, entryIds, message, at }) => ({
      batchId,
      status,
      targetIds: [...targetIds],
      ...(entryIds ? { entryIds: [...entryIds] } : {}),
      ...(message !== undefined ? { message } : {}),
      at,
    }));
  }

  get pending(): boolean {
    return this.batches.some((b) => b.status === "queued" || b.status === "handed");
  }

  private add(drafts: ContextEditDraft[]): Batch {
    const batch: Batch = {
      batchId: randomHex(8),
      status: "queued",
      targetIds: drafts.map((d) => d.targetId),
      at: Date.now(),
      drafts,
      handOvers: 0,
    };
    this.batches.push(batch);
    while (this.batches.length > MAX_EDIT_BATCHES) {
      const i = this.batches.findIndex((b) => b.status !== "queued" && b.status !== "handed");
      this.batches.splice(i >= 0 ? i : 0, 1);
    }
    return batch;
  }

  private set(batch: Batch, status: Batch["status"], message?: string): void {
    batch.status = status;
    batch.at = Date.now();
    if (message !== undefined) batch.message = message;
    this.changed();
  }

  /** All checked first; nothing is appended when one is refused. @throws Error with pi's message. */
  applyNow(drafts: ContextEditDraft[]): { batch: BridgeEditBatch; entries: { id: string; targetId: string }[] } {
    const sm = this.ctx.sessionManager;
    const append = (sm as unknown as { appendContextEdit?: PiAppendContextEdit }).appendContextEdit;
    if (typeof append !== "function")
      throw new UnavailableError("this pi's session manager has no appendContextEdit (pi 1.6 has)");
    drafts = pairingSafeDrafts(sm, withPairedResults(sm, drafts));
    for (const d of drafts) {
      const problem = draftProblem(sm, d);
      if (problem) throw new Error(problem);
    }
    const entries = drafts.map((d) => ({ id: append.call(sm, d.targetId, d.replacement), targetId: d.targetId }));
    const batch = this.add(drafts);
    batch.entryIds = entries.map((e) => e.id);
    this.set(batch, "applied");
    return { batch, entries };
  }

  /** @throws Error when a draft is refused now. */
  enqueue(drafts: ContextEditDraft[]): BridgeEditBatch {
    const sm = this.ctx.sessionManager;
    for (const d of drafts) {
      const problem = draftProblem(sm, d);
      if (problem) throw new Error(problem);
    }
    const batch = this.add(drafts);
    this.changed();
    return batch;
  }

  /** @returns false when it is not queued (unknown, already handed, applied…). */
  cancel(batchId: string): boolean {
    const batch = this.batches.find((b) => b.batchId === batchId);
    if (!batch || batch.status !== "queued") return false;
    this.set(batch, "cancelled", "Cancelled before pi's turn boundary.");
    return true;
  }

  /** The queued batches pi would accept now, added to `event.entries`; undefined = nothing to add. */
  boundary(event: { entries?: unknown[] }): { entries: unknown[] } | undefined {
    this.check();
    const queued = this.batches.filter((b) => b.status === "queued");
    if (queued.length === 0) return undefined;
    const sm = this.ctx.sessionManager;
    const drafts: ContextEditDraft[] = [];
    const handedAt = sm.getEntries().length;
    for (const batch of queued) {
      // results of removed calls appended since planning go with them
      batch.drafts = pairingSafeDrafts(sm, withPairedResults(sm, batch.drafts));
      batch.targetIds = batch.drafts.map((d) => d.targetId);
      const problem = batch.drafts.map((d) => draftProblem(sm, d)).find((p) => p !== undefined);
      if (problem) {
        this.set(batch, "dropped", `pi's session no longer accepts these edits: ${problem}.`);
        continue;
      }
      batch.handedAt = handedAt;
      batch.handOvers++;
      this.set(batch, "handed");
      drafts.push(...batch.drafts);
    }
    if (drafts.length === 0) return undefined;
    this.watch();
    return { entries: [...(Array.isArray(event?.entries) ? event.entries : []), ...drafts] };
  }

  /** Handed batches found in pi's session are applied; missing after pi moved on, re-queued or dropped. */
  check(final = false): void {
    const handed = this.batches.filter((b) => b.status === "handed");
    if (handed.length === 0) return;
    const entries = this.ctx.sessionManager.getEntries();
    for (const batch of handed) {
      const ids = findAppended(entries.slice(batch.handedAt ?? 0), batch.drafts);
      if (ids) {
        batch.entryIds = ids;
        this.set(batch, "applied");
      } else if (final) {
        if (batch.handOvers >= MAX_HAND_OVERS)
          this.set(
            batch,
            "dropped",
            `pi did not append the edits at ${batch.handOvers} turn boundaries (pi drops every boundary entry when one of them is invalid; see pi's extension errors).`,
          );
        else this.set(batch, "queued");
      }
    }
  }

  /** pi appends right after the boundary's handlers. */
  private watch(): void {
    clearTimeout(this.timer);
    let rounds = 0;
    const tick = () => {
      this.check();
      if (this.batches.some((b) => b.status === "handed") && ++rounds < 100) this.timer = setTimeout(tick, 50);
    };
    this.timer = setTimeout(tick, 0);
    this.timer.unref?.();
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const b of this.batches)
      if (b.status === "queued" || b.status === "handed") {
        b.status = "dropped";
        b.message = "pi's session ended before its next turn boundary.";
      }
  }
}

/** The bridge cannot run the operation in this pi. */
export class UnavailableError extends Error {}

function findAppended(entries: readonly PiEntry[], drafts: readonly ContextEditDraft[]): string[] | undefined {
  const ids: string[] = [];
  let i = 0;
  for (const e of entries) {
    const d = drafts[i];
    if (!d) break;
    if (e.type === "context_edit" && e.targetId === d.targetId && sameReplacement(e.replacement, d.replacement)) {
      ids.push(e.id);
      i++;
    }
  }
  return i === drafts.length ? ids : undefined;
}

/** pi stores string replacements of assistants and tool results as one text block. */
function sameReplacement(stored: unknown, draft: ContextEditDraft["replacement"]): boolean {
  if (draft === null || stored === null) return draft === stored;
  const content = (stored as { content?: unknown } | undefined)?.content;
  if (typeof draft.content === "string" && Array.isArray(content))
    return JSON.stringify(content) === JSON.stringify([{ type: "text", text: draft.content }]) || false;
  return JSON.stringify(content) === JSON.stringify(draft.content);
}
