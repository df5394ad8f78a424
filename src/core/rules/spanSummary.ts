/**
 * "Summarize these messages": a context span replaced by one note with pi 1.6.0 `context_edit`s (first
 * message replaced, the rest omitted; a restore brings them back). The span widens to whole tool call /
 * result groups; non-editable messages refuse it. The batch is ordered so every prefix stays
 * pairing-safe, and each prefix is simulated (`withAppended` + `analyzePairing`) to prove it.
 */

import { projectedEstimateFailure } from "./estimateFailure";
import { buildProjection, type ProjectedEntry, type Projection } from "./context";
import {
  buildContextEditEntry,
  draftLineBytes,
  editableRole,
  normalizeReplacement,
  type ContextEditDraft,
  type ContextEditReplacement,
  type EditableRole,
} from "./contextEdit";
import type { ContextEditPreparation, PlannedContextEdit } from "./editPlan";
import { analyzePairing, toolCallLinks, type PairingFinding, type PairingReport } from "./pairing";
import {
  contribution,
  currentSystemMessage,
  estimateProjectedContextTokens,
  estimatePureContextTokens,
  type ContextEstimate,
} from "./tokens";
import { estimateTokens } from "../read/estimate";
import { withAppended, type SessionView } from "../read/overlay";
import { formatCount } from "../../shared/format";

export type SpanRefusalCode =
  | "unknown"
  /** Another branch, or summarized by a compaction. */
  | "not-in-context"
  | "not-editable"
  /** All omitted already, or only system messages. */
  | "empty"
  /** Only tool results without their call: no message can hold the summary. */
  | "no-target"
  /** A prefix of the batch would leave a tool result without its call (a safety net; never expected). */
  | "unpaired";

export interface SpanRefusal {
  reason: "span";
  code: SpanRefusalCode;
  entryIds: string[];
}

export interface SpanPlan {
  leafId: string | null;
  requested: { fromId: string; toId: string };
  /** After widening. */
  fromId: string;
  toId: string;
  /** Whole tool call / result groups the widening took in, in context order. */
  widenedBy: string[];
  /** Visible, non-system, in context order. */
  messages: ProjectedEntry[];
  targetId: string;
  targetRole: EditableRole;
  spanTokens: number;
  projection: Projection;
}

const PLACEHOLDER_TIME = "2026-01-01T00:00:00.000Z";
/** Drafts × records up to which every prefix of a batch is simulated. */
const MAX_PREFIX_WORK = 5_000_000;

/** The span from `fromId` to `toId` (either order); `options.leafId` plans at a running pi's leaf. */
export function planSpan(
  session: SessionView,
  fromId: string,
  toId: string,
  options: { leafId?: string | null } = {},
): SpanPlan | SpanRefusal {
  const leaf = options.leafId;
  const projection = buildProjection(
    session,
    leaf !== undefined && (leaf === null || session.byId.has(leaf)) ? leaf : undefined,
  );
  const entries = projection.entries;
  const position = new Map(entries.map((e, i) => [e.record.id, i]));
  const refuse = (code: SpanRefusalCode, entryIds: string[]): SpanRefusal => ({ reason: "span", code, entryIds });
  for (const id of [fromId, toId]) {
    if (!session.byId.has(id)) return refuse("unknown", [id]);
    if (!position.has(id)) return refuse("not-in-context", [id]);
  }
  let start = Math.min(position.get(fromId)!, position.get(toId)!);
  let end = Math.max(position.get(fromId)!, position.get(toId)!);
  const requested = { fromId: entries[start]!.record.id, toId: entries[end]!.record.id };
  const visible = (e: ProjectedEntry) => e.roles.some((r) => r !== "system");
  const links = toolCallLinks(entries, session);
  // widen to whole call/result groups until nothing changes
  for (let changed = true; changed;) {
    changed = false;
    for (let i = start; i <= end; i++) {
      const e = entries[i]!;
      if (!visible(e)) continue;
      const owner = links.ownerOf.get(e.record.id);
      const ownerAt = owner === undefined ? undefined : position.get(owner);
      if (ownerAt !== undefined && ownerAt < start && visible(entries[ownerAt]!)) {
        start = ownerAt;
        changed = true;
      }
      for (const resultId of links.resultsOf.get(e.record.id) ?? []) {
        const at = position.get(resultId);
        if (at !== undefined && at > end && visible(entries[at]!)) {
          end = at;
          changed = true;
        }
      }
    }
  }
  const messages = entries.slice(start, end + 1).filter(visible);
  if (messages.length === 0) return refuse("empty", [requested.fromId, requested.toId]);
  const fixed = messages.filter((e) => editableRole(e.record) === undefined);
  if (fixed.length > 0)
    return refuse(
      "not-editable",
      fixed.map((e) => e.record.id),
    );
  const target = messages.find((e) => editableRole(e.record) !== "toolResult");
  if (!target)
    return refuse(
      "no-target",
      messages.map((e) => e.record.id),
    );
  const inRequested = (id: string) => {
    const at = position.get(id)!;
    return (
      at >= Math.min(position.get(fromId)!, position.get(toId)!) &&
      at <= Math.max(position.get(fromId)!, position.get(toId)!)
    );
  };
  let spanTokens = 0;
  for (const e of messages) spanTokens += contribution(e, session).tokens;
  return {
    leafId: projection.leafId,
    requested,
    fromId: messages[0]!.record.id,
    toId: messages[messages.length - 1]!.record.id,
    widenedBy: messages.filter((e) => !inRequested(e.record.id)).map((e) => e.record.id),
    messages,
    targetId: target.record.id,
    targetRole: editableRole(target.record)!,
    spanTokens,
    projection,
  };
}

export function isSpanRefusal(value: SpanPlan | SpanRefusal): value is SpanRefusal {
  return "reason" in value;
}

/**
 * The note's first line, e.g. `[pi-context: summary of 14 messages, 38,412 tokens, entries a1b2c3d4…c3d4e5f6]`.
 * English: the model reads it; {@link parseSpanNote} reads it back.
 */
export function spanNoteHeader(span: Pick<SpanPlan, "messages" | "spanTokens" | "fromId" | "toId">): string {
  const count = span.messages.length;
  return `[pi-context: summary of ${count} ${count === 1 ? "message" : "messages"}, ${formatCount(span.spanTokens)} tokens, entries ${span.fromId}…${span.toId}]`;
}

export function spanNote(span: Pick<SpanPlan, "messages" | "spanTokens" | "fromId" | "toId">, summary: string): string {
  return `${spanNoteHeader(span)}\n\n${summary.trim()}`;
}

/** Null: not a span summary note. */
export function parseSpanNote(
  text: string,
): { count: number; tokens: number; fromId: string; toId: string; summary: string } | null {
  const m = /^\[pi-context: summary of (\d+) messages?, ([\d,]+) tokens, entries (\S+)…(\S+)\]\n\n/.exec(text);
  if (!m) return null;
  return {
    count: Number(m[1]),
    tokens: Number(m[2]!.replace(/,/g, "")),
    fromId: m[3]!,
    toId: m[4]!,
    summary: text.slice(m[0].length),
  };
}

/** Prefix-safe order: the summary's own assistant's results, the summary, then results before their assistant. */
export function spanDrafts(span: SpanPlan, note: string, session: SessionView): ContextEditDraft[] {
  const links = toolCallLinks(span.projection.entries, session);
  const inSpan = new Set(span.messages.map((e) => e.record.id));
  const omit = (targetId: string): ContextEditDraft => ({ type: "context_edit", targetId, replacement: null });
  const resultsOf = (id: string) => (links.resultsOf.get(id) ?? []).filter((r) => inSpan.has(r));
  const drafts: ContextEditDraft[] = [];
  const done = new Set<string>();
  const add = (draft: ContextEditDraft) => {
    if (done.has(draft.targetId)) return;
    done.add(draft.targetId);
    drafts.push(draft);
  };
  for (const r of resultsOf(span.targetId)) add(omit(r));
  add({
    type: "context_edit",
    targetId: span.targetId,
    replacement: normalizeReplacement(span.targetRole, { content: note }),
  });
  for (const e of span.messages) {
    const id = e.record.id;
    if (done.has(id)) continue;
    for (const r of resultsOf(id)) add(omit(r));
    add(omit(id));
  }
  return drafts;
}

/**
 * The span's edits as a context-edit preparation (preview, cache effect, the `flows/contextEdit.ts`
 * write), with pairing checked on every prefix of the batch.
 */
export function spanEditPreparation(span: SpanPlan, note: string, session: SessionView): ContextEditPreparation {
  const projection = span.projection;
  const entries = projection.entries;
  const position = new Map(entries.map((e, i) => [e.record.id, i]));
  const drafts = spanDrafts(span, note, session);
  const pairingBefore = analyzePairing(projection, session);
  const errorKey = (f: PairingFinding) => `${f.resultEntryId ?? ""}\u0000${f.toolCallId}`;
  const errorsBefore = new Set(pairingBefore.findings.filter((f) => f.severity === "error").map(errorKey));
  const placeholder = (i: number) => {
    let id = `~span-edit-${i}`;
    while (session.byId.has(id)) id += "~";
    return id;
  };
  const planned = drafts.map((d, i) =>
    buildContextEditEntry({
      id: placeholder(i),
      parentId: i === 0 ? projection.leafId : placeholder(i - 1),
      timestamp: PLACEHOLDER_TIME,
      targetId: d.targetId,
      replacement: d.replacement,
    }),
  );
  const newErrors: PairingFinding[] = [];
  let view: SessionView = session;
  let after: Projection = projection;
  let pairingAfter: PairingReport = pairingBefore;
  // each prefix costs a copy of the records; past the limit only the whole batch is checked
  // (the order above is what keeps the prefixes safe, this is its check)
  const everyPrefix = planned.length * session.records.length <= MAX_PREFIX_WORK;
  for (let n = everyPrefix ? 1 : planned.length; n <= planned.length; n++) {
    view = withAppended(session, planned.slice(0, n));
    after = buildProjection(view);
    pairingAfter = analyzePairing(after, view);
    for (const f of pairingAfter.findings)
      if (
        f.severity === "error" &&
        !errorsBefore.has(errorKey(f)) &&
        !newErrors.some((x) => errorKey(x) === errorKey(f))
      )
        newErrors.push(f);
  }
  const edits: PlannedContextEdit[] = drafts.map((d, i) => {
    const at = position.get(d.targetId)!;
    const entry = entries[at]!;
    return {
      targetId: d.targetId,
      role: editableRole(entry.record)!,
      effect: d.replacement === null ? "omit" : "replace",
      replacement: d.replacement as ContextEditReplacement,
      cause: { kind: "requested" },
      contextIndex: at,
      messageIndex: entry.firstMessageIndex,
      tokensBefore: contribution(entry, session).tokens,
      tokensAfter: contribution(after.entries[position.get(d.targetId)!]!, view).tokens,
      bytes: draftLineBytes(d, i, projection.leafId),
    };
  });
  const first = entries[position.get(span.fromId)!]!;
  const system = currentSystemMessage(projection);
  let prefix = system ? estimateTokens(system) : 0;
  for (let i = 0; i < position.get(span.fromId)!; i++) {
    const e = entries[i]!;
    if (e.roles.some((r) => r !== "system")) prefix += contribution(e, session).tokens;
  }
  const tokensAfter: ContextEstimate = estimateProjectedContextTokens(after, view);
  const pureTokensBefore = estimatePureContextTokens(projection, session);
  const failureBefore = projectedEstimateFailure(projection, session);
  const failureAfter = projectedEstimateFailure(after, view);
  return {
    leafId: projection.leafId,
    edits,
    drafts,
    refused: [],
    unchanged: [],
    tokensBefore: estimateProjectedContextTokens(projection, session),
    tokensAfter,
    pureTokensBefore,
    // edits are planned: pi counts from chars/4 after them, so "now" is on that basis too
    baselineTokens: pureTokensBefore,
    ...(failureBefore ? { estimateFailureBefore: failureBefore } : {}),
    ...(failureAfter ? { estimateFailureAfter: failureAfter } : {}),
    earliest: {
      entryId: span.fromId,
      contextIndex: position.get(span.fromId)!,
      messageIndex: first.firstMessageIndex,
      unchangedPrefixTokens: prefix,
    },
    bytes: edits.reduce((sum, e) => sum + e.bytes, 0),
    pairingBefore,
    pairingAfter,
    newPairingErrors: newErrors,
    projection,
    projectionAfter: after,
  };
}
