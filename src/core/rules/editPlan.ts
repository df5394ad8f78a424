/**
 * The pairing-safe context-edit planner: turn requested actions on context items (omit, replace,
 * restore) into the `context_edit` entries to append at the file's leaf, such that what pi sends
 * afterwards has no tool result the provider would reject. Pure: nothing is read but entry bodies,
 * nothing is written (see `flows/contextEdit.ts` for the write).
 *
 * Policy (pi-context's, following pi's own `_omitRecoveryAttempt` and the pairing rules of
 * `pairing.ts`):
 * - Omitting an assistant message that made tool calls omits its tool results too (cause
 *   `results-of-omitted-call`); a result omitted on its own is replaced by a short note
 *   ({@link resultNote}) so its call keeps a result (effect `note`) — unless its call is not sent
 *   (assistant omitted or failed, or no call at all) or the result is orphaned already (a
 *   pairing error: separated from its call, a duplicate), then it is omitted, which repairs it
 *   (pi-ai fills a separated call with "No result provided").
 * - Replacing an assistant's content keeps its original `toolCall` blocks (appended after the new
 *   text; `toolCall` blocks in the given content are dropped).
 * - Restore = an edit whose replacement is the target's original content (pi has no "unedit";
 *   latest edit wins). Making a result visible again (restore or replace) while its assistant is
 *   omitted restores that assistant (`call-of-restored-result`); making an omitted assistant visible
 *   restores its omitted results (`results-of-restored-call`). A result of a failed assistant, or
 *   one without a call, cannot be made visible (`would-orphan`).
 * - Refused, with a reason: pi's own refusals (same messages), targets a compaction summarized
 *   (pi accepts those but they have no effect), a target named twice, a result whose assistant the
 *   same batch omits (`conflict`). Requests that change nothing are reported as `unchanged`.
 * - Safety net: the plan is simulated; a tool result that would become an orphan although no rule
 *   above foresaw it is omitted (`orphan-of-plan`) or, if the plan made it visible, that edit is
 *   dropped (`would-orphan`).
 */

import { isDeepStrictEqual } from "node:util";
import { buildProjection, type ProjectedEntry, type Projection } from "./context";
import {
  buildContextEditEntry,
  checkContextEditTarget,
  editableRole,
  normalizeReplacement,
  projectedContent,
  resultNote,
  toolCallSubject,
  type ContextEditContent,
  type ContextEditDraft,
  type ContextEditReplacement,
  type EditableRole,
  type PiEditRefusal,
} from "./contextEdit";
import { analyzePairing, toolCallLinks, type PairingFinding, type PairingReport } from "./pairing";
import { entryToContextMessages } from "./serialize";
import {
  contribution,
  currentSystemMessage,
  estimateProjectedContextTokens,
  estimatePureContextTokens,
  type ContextEstimate,
} from "./tokens";
import { estimateTokens, messageChars, totalChars } from "../read/estimate";
import { pairingSafeOrder } from "./batchOrder";
import { projectedEstimateFailure, type EstimateFailure } from "./estimateFailure";
import { withAppended, type SessionView } from "../read/overlay";
import type { EntryRecord } from "../read/entries";
import type { SessionEntry } from "../types";
import * as l10n from "@vscode/l10n";

/** One requested change of a context item. */
export type ContextEditAction =
  | { action: "omit"; targetId: string }
  | { action: "replace"; targetId: string; content: ContextEditContent }
  | { action: "restore"; targetId: string };

/** Why an edit is in the plan. */
export type EditCause =
  | { kind: "requested" }
  /** A tool result omitted with the assistant that made its call. */
  | { kind: "results-of-omitted-call"; assistantId: string }
  /** A tool result restored because the assistant that made its call becomes visible again. */
  | { kind: "results-of-restored-call"; assistantId: string }
  /** An assistant restored because one of its tool results becomes visible again. */
  | { kind: "call-of-restored-result"; resultId: string }
  /** A tool result the plan would otherwise leave orphaned (safety net). */
  | { kind: "orphan-of-plan" };

/** One `context_edit` to append. */
export interface PlannedContextEdit {
  targetId: string;
  role: EditableRole;
  /** `omit`: replacement null; `note`: a tool result shown as a short note; `replace`; `restore`: the original content. */
  effect: "omit" | "note" | "replace" | "restore";
  /** As pi stores it (normalised like `appendContextEdit`). */
  replacement: ContextEditReplacement;
  cause: EditCause;
  /** Position of the target among the context entries, and of its first message (before the edit). */
  contextIndex: number;
  messageIndex: number;
  /** pi's estimate of the target's content now and after the edit, in tokens. */
  tokensBefore: number;
  tokensAfter: number;
  /** Size of the appended line in bytes (UTF-8, with the newline; ids of 8 characters). */
  bytes: number;
}

/** Why a requested action is refused (nothing is planned for it). */
export type RefusalCode =
  | PiEditRefusal
  /** On the path but before the latest compaction's kept range: pi accepts the edit, it has no effect. */
  | "summarized"
  /** The batch names the target twice. */
  | "duplicate"
  /** A tool result whose assistant this batch omits cannot be restored or replaced. */
  | "conflict"
  /** The tool result would be rejected by providers (its call is not sent). */
  | "would-orphan"
  /** The original content is not a string or an array (a damaged entry): it cannot be written back. */
  | "not-restorable";

/** A refused action. */
export interface RefusedAction {
  action: ContextEditAction;
  code: RefusalCode;
  /** A sentence saying why (pi's message for pi's refusals). */
  message: string;
}

/** The plan of {@link prepareContextEdits}. */
export interface ContextEditPreparation {
  /** The leaf the edits hang off (the file's leaf). */
  leafId: string | null;
  /**
   * The edits to append, in the order they are written ({@link pairingSafeOrder}): after each one,
   * what pi sends has no tool result without its call that it did not have before.
   */
  edits: PlannedContextEdit[];
  /** The same as pi's boundary drafts (`{type: "context_edit", targetId, replacement}`). */
  drafts: ContextEditDraft[];
  /** In the order of the requested actions. */
  refused: RefusedAction[];
  /** Requested actions that change nothing (the target already shows that), in request order. */
  unchanged: ContextEditAction[];
  /** pi's projected estimate now (what pi's footer shows: provider usage + trailing estimates when usage is trusted). */
  tokensBefore: ContextEstimate;
  /**
   * pi's projected estimate after the edits. Always pure chars/4: pi discards provider usage after a
   * context edit until the next answer, so compare it with {@link pureTokensBefore}, not with
   * `tokensBefore` (which may be usage-based and smaller or larger for other reasons).
   */
  tokensAfter: ContextEstimate;
  /** The pure chars/4 estimate of the context now, in tokens. */
  pureTokensBefore: number;
  /**
   * The context now on the basis of {@link tokensAfter}, in tokens: {@link pureTokensBefore} when
   * edits are planned (pi counts from chars/4 after an edit); {@link tokensBefore} when nothing
   * would be written (pi's number does not move). `baselineTokens − tokensAfter.tokens` is what the
   * plan saves (0 for a plan without edits).
   */
  baselineTokens: number;
  /**
   * Where pi's own estimate fails now / after the edits (`estimateFailure.ts`): pi has no number
   * there, so `tokensBefore` / `tokensAfter` are pi-context's counts only. Absent: pi has one.
   */
  estimateFailureBefore?: EstimateFailure;
  estimateFailureAfter?: EstimateFailure;
  /** The earliest edited context position: the prompt cache is invalid from there on. Absent without edits. */
  earliest?: {
    entryId: string;
    contextIndex: number;
    messageIndex: number;
    /** pi's estimate of what comes before it (replayed system prompt + earlier messages), in tokens. */
    unchangedPrefixTokens: number;
  };
  /** Σ {@link PlannedContextEdit.bytes}. */
  bytes: number;
  pairingBefore: PairingReport;
  pairingAfter: PairingReport;
  /** Error findings after the edits that were not there before (empty unless the safety net failed). */
  newPairingErrors: PairingFinding[];
  projection: Projection;
  /** The projection after the edits (from an in-memory overlay). */
  projectionAfter: Projection;
}

type Desired =
  | { kind: "omit"; cause: EditCause }
  | { kind: "note"; cause: EditCause }
  | { kind: "content"; content: ContextEditContent; cause: EditCause }
  | { kind: "original"; cause: EditCause };

const REQUESTED: EditCause = { kind: "requested" };
const PLACEHOLDER_ID = "00000000";
const PLACEHOLDER_TIME = "2026-01-01T00:00:00.000Z";
const MAX_REPAIR_ROUNDS = 4;

/** What a tool result's note needs of the call it answers: the call's `name` as stored and its {@link toolCallSubject}. */
export interface ToolCallNote {
  name: unknown;
  subject: string | undefined;
}

/** Options of {@link prepareContextEdits}. */
export interface ContextEditPlanOptions {
  /**
   * The tool calls of an assistant message (its original content) by call id, the first call of
   * an id — when the caller has read that body already (the trim list has); undefined lets the
   * planner read it. Used for the notes of tool results only.
   */
  toolCallsOf?: (assistant: EntryRecord) => ReadonlyMap<string, ToolCallNote> | undefined;
  /**
   * Plan at this leaf instead of the file's (its last line): a running pi's in-memory leaf, from
   * its live bridge — after a navigation without summary or label pi writes nothing, so its branch
   * is not the file's. Ignored when the session has no such entry. Only for plans pi applies itself.
   */
  leafId?: string | null;
}

/**
 * Plan context edits at the session's leaf (see the file comment for the policy).
 * @param session the file as read (`SessionFile`), or an overlay.
 * @param actions requested actions, in any order; each target at most once.
 * @returns the plan; an empty `edits` list means nothing would be written.
 * @throws {StaleSessionError} (from the reader) when a needed body changed on disk.
 */
export function prepareContextEdits(
  session: SessionView,
  actions: readonly ContextEditAction[],
  options: ContextEditPlanOptions = {},
): ContextEditPreparation {
  const leaf = options.leafId;
  const projection = buildProjection(
    session,
    leaf !== undefined && (leaf === null || session.byId.has(leaf)) ? leaf : undefined,
  );
  const entries = projection.entries;
  const position = new Map<string, number>();
  entries.forEach((e, i) => position.set(e.record.id, i));
  const pathIds = new Set(projection.path.map((r) => r.id));
  const links = toolCallLinks(entries, session);
  const at = (id: string): ProjectedEntry => entries[position.get(id)!]!;
  const bodies = new Map<string, SessionEntry>();
  const body = (id: string): SessionEntry => {
    let b = bodies.get(id);
    if (!b) bodies.set(id, (b = session.readEntry(at(id).record)));
    return b;
  };

  const refused: RefusedAction[] = [];
  const unchanged: ContextEditAction[] = [];
  const refuse = (action: ContextEditAction, code: RefusalCode, message: string) => {
    if (!refused.some((r) => r.action === action)) refused.push({ action, code, message });
  };

  // 1. pi's checks, then ours
  const requested = new Map<string, ContextEditAction>();
  for (const action of actions) {
    const replacement =
      action.action === "omit" ? null : { content: action.action === "replace" ? action.content : [] };
    const check = checkContextEditTarget(session, pathIds, action.targetId, replacement);
    if (!check.ok) refuse(action, check.code, check.message);
    else if (!position.has(action.targetId))
      refuse(
        action,
        "summarized",
        l10n.t(
          "Entry {0} was summarized by compaction {1}: it is no longer in the context, so an edit would have no effect.",
          action.targetId,
          projection.compaction?.id ?? "?",
        ),
      );
    else if (requested.has(action.targetId))
      refuse(
        action,
        "duplicate",
        l10n.t("Entry {0} is named twice in one edit; give one action per entry.", action.targetId),
      );
    else requested.set(action.targetId, action);
  }

  const roleOf = (id: string): EditableRole => editableRole(at(id).record)!;
  const hiddenNow = (id: string): boolean => at(id).roles.length === 0;
  const desired = new Map<string, Desired>();
  const hiddenAfter = (id: string): boolean => {
    const d = desired.get(id);
    return d ? d.kind === "omit" : hiddenNow(id);
  };
  const failed = (id: string): boolean => {
    const stop = at(id).record.stopReason;
    return stop === "error" || stop === "aborted";
  };
  /** The tool calls of `assistantId` will be sent after the plan. */
  const callsSent = (assistantId: string | undefined): boolean =>
    assistantId !== undefined && !hiddenAfter(assistantId) && !failed(assistantId);
  const ofRole = (role: EditableRole) =>
    [...requested.values()]
      .filter((a) => roleOf(a.targetId) === role)
      .sort((x, y) => position.get(x.targetId)! - position.get(y.targetId)!);
  const desiredOf = (action: ContextEditAction, cause: EditCause = REQUESTED): Desired =>
    action.action === "omit"
      ? { kind: "omit", cause }
      : action.action === "restore"
        ? { kind: "original", cause }
        : { kind: "content", content: action.content, cause };

  // 2. assistants
  for (const a of ofRole("assistant")) desired.set(a.targetId, desiredOf(a));
  // 3. tool results made visible need their call sent: restore its assistant
  const results = ofRole("toolResult");
  for (const r of results) {
    if (r.action === "omit") continue;
    const owner = links.ownerOf.get(r.targetId);
    if (owner !== undefined && requested.get(owner)?.action === "omit") {
      refuse(
        r,
        "conflict",
        l10n.t(
          "Tool result {0} answers a call of assistant {1}, which this edit omits; omit both or neither.",
          r.targetId,
          owner,
        ),
      );
      continue;
    }
    if (hiddenNow(r.targetId) && (owner === undefined || failed(owner))) {
      refuse(
        r,
        "would-orphan",
        owner === undefined
          ? l10n.t(
              "Tool result {0} answers no tool call in the context; shown again, providers would reject the request.",
              r.targetId,
            )
          : l10n.t(
              "Tool result {0} answers a call of failed assistant {1}, which pi does not send; shown again, providers would reject the request.",
              r.targetId,
              owner,
            ),
      );
      continue;
    }
    if (owner !== undefined && hiddenAfter(owner) && !failed(owner))
      desired.set(owner, { kind: "original", cause: { kind: "call-of-restored-result", resultId: r.targetId } });
    desired.set(r.targetId, desiredOf(r));
  }
  // 4. tool results omitted on their own: a note while their call is sent and they answer it
  //    (an orphaned result is simply omitted: that is its repair)
  const pairingBefore = analyzePairing(projection, session);
  const orphaned = new Set(pairingBefore.findings.filter((f) => f.severity === "error").map((f) => f.resultEntryId));
  for (const r of results) {
    if (r.action !== "omit") continue;
    const noted = callsSent(links.ownerOf.get(r.targetId)) && !orphaned.has(r.targetId);
    desired.set(r.targetId, noted ? { kind: "note", cause: REQUESTED } : desiredOf(r));
  }
  // 5. results follow their assistant
  for (const [id, d] of [...desired]) {
    if (roleOf(id) !== "assistant") continue;
    for (const resultId of links.resultsOf.get(id) ?? []) {
      if (desired.has(resultId)) continue;
      if (d.kind === "omit") {
        if (!hiddenNow(resultId))
          desired.set(resultId, { kind: "omit", cause: { kind: "results-of-omitted-call", assistantId: id } });
      } else if (hiddenNow(id) && hiddenNow(resultId) && !failed(id))
        desired.set(resultId, { kind: "original", cause: { kind: "results-of-restored-call", assistantId: id } });
    }
  }
  // 6. user and custom messages
  for (const role of ["user", "custom"] as const) for (const a of ofRole(role)) desired.set(a.targetId, desiredOf(a));

  // 7. replacements, skipping what changes nothing
  const tokensBefore = estimateProjectedContextTokens(projection, session);
  let planned = buildEdits(desired);
  let simulated = simulate(planned);
  for (let round = 0; round < MAX_REPAIR_ROUNDS && simulated.newErrors.length > 0; round++) {
    const plannedIds = new Set(planned.map((p) => p.targetId));
    for (const f of simulated.newErrors) {
      const resultId = f.resultEntryId;
      if (resultId === undefined || !position.has(resultId)) continue;
      if (plannedIds.has(resultId)) {
        const d = desired.get(resultId)!;
        desired.delete(resultId);
        const action = requested.get(resultId);
        if (action && d.cause.kind === "requested")
          refuse(
            action,
            "would-orphan",
            l10n.t(
              "Tool result {0} would not follow its tool call any more; providers would reject the request.",
              resultId,
            ),
          );
      } else desired.set(resultId, { kind: "omit", cause: { kind: "orphan-of-plan" } });
    }
    planned = buildEdits(desired);
    simulated = simulate(planned);
  }

  const edits = pairingSafeOrder(planned).map((p, i) => {
    const after = simulated.projection.entries[position.get(p.targetId)!]!;
    return { ...p, tokensAfter: contribution(after, simulated.view).tokens, bytes: lineBytes(p, i) };
  });
  const order = new Map(actions.map((a, i) => [a, i]));
  refused.sort((x, y) => order.get(x.action)! - order.get(y.action)!);
  unchanged.sort((x, y) => order.get(x)! - order.get(y)!);
  const preparation: ContextEditPreparation = {
    leafId: projection.leafId,
    edits,
    drafts: edits.map((e) => ({ type: "context_edit", targetId: e.targetId, replacement: e.replacement })),
    refused,
    unchanged,
    tokensBefore,
    tokensAfter: estimateProjectedContextTokens(simulated.projection, simulated.view),
    ...tokensNow(projection, session, tokensBefore, edits.length > 0),
    bytes: edits.reduce((sum, e) => sum + e.bytes, 0),
    pairingBefore,
    pairingAfter: simulated.pairing,
    newPairingErrors: simulated.newErrors,
    projection,
    projectionAfter: simulated.projection,
  };
  const first = edits.reduce<PlannedContextEdit | undefined>(
    (min, e) => (min === undefined || e.contextIndex < min.contextIndex ? e : min),
    undefined,
  );
  if (first) preparation.earliest = earliestOf(first);
  const failureBefore = projectedEstimateFailure(projection, session);
  if (failureBefore) preparation.estimateFailureBefore = failureBefore;
  const failureAfter = projectedEstimateFailure(simulated.projection, simulated.view);
  if (failureAfter) preparation.estimateFailureAfter = failureAfter;
  return preparation;

  function buildEdits(wanted: Map<string, Desired>): Omit<PlannedContextEdit, "tokensAfter" | "bytes">[] {
    unchanged.length = 0;
    const out: Omit<PlannedContextEdit, "tokensAfter" | "bytes">[] = [];
    const ids = [...wanted.keys()].sort((x, y) => position.get(x)! - position.get(y)!);
    for (const id of ids) {
      const d = wanted.get(id)!;
      const role = roleOf(id);
      const entry = at(id);
      let replacement: ContextEditReplacement;
      let effect: PlannedContextEdit["effect"];
      if (d.kind === "omit") {
        effect = "omit";
        replacement = null;
      } else if (d.kind === "note") {
        effect = "note";
        replacement = { content: [{ type: "text", text: noteFor(id) }] };
      } else if (d.kind === "content") {
        effect = "replace";
        const content = role === "assistant" ? withOriginalToolCalls(d.content, originalContent(id)) : d.content;
        replacement = normalizeReplacement(role, { content });
      } else {
        effect = "restore";
        const original = originalContent(id);
        if (typeof original !== "string" && !Array.isArray(original)) {
          const action = requested.get(id);
          if (action && d.cause.kind === "requested")
            refuse(action, "not-restorable", l10n.t("Entry {0} has no string or array content to restore.", id));
          continue;
        }
        replacement = { content: original as ContextEditContent };
      }
      if (sameAsNow(entry, role, replacement)) {
        const action = requested.get(id);
        if (action && d.cause.kind === "requested" && !unchanged.includes(action)) unchanged.push(action);
        continue;
      }
      out.push({
        targetId: id,
        role,
        effect,
        replacement,
        cause: d.cause,
        contextIndex: position.get(id)!,
        messageIndex: entry.firstMessageIndex,
        tokensBefore: contribution(entry, session).tokens,
      });
    }
    return out;
  }

  function simulate(plannedEdits: readonly Omit<PlannedContextEdit, "tokensAfter" | "bytes">[]) {
    const placeholder = (i: number) => {
      let id = `~planned-edit-${i}`;
      while (session.byId.has(id)) id += "~";
      return id;
    };
    const planEntries = plannedEdits.map((p, i) =>
      buildContextEditEntry({
        id: placeholder(i),
        parentId: i === 0 ? projection.leafId : placeholder(i - 1),
        timestamp: PLACEHOLDER_TIME,
        targetId: p.targetId,
        replacement: p.replacement,
      }),
    );
    const view = withAppended(session, planEntries);
    const after = buildProjection(view);
    const pairing = analyzePairing(after, view);
    const before = new Set(pairingBefore.findings.filter((f) => f.severity === "error").map(errorKey));
    const newErrors = pairing.findings.filter((f) => f.severity === "error" && !before.has(errorKey(f)));
    return { view, projection: after, pairing, newErrors };
  }

  function originalContent(id: string): unknown {
    const messages = entryToContextMessages(body(id));
    return (messages[0] as { content?: unknown } | undefined)?.content;
  }

  function noteFor(resultId: string): string {
    const r = at(resultId).record;
    const owner = links.ownerOf.get(resultId);
    let subject: string | undefined;
    let toolName = r.toolName;
    if (owner !== undefined) {
      const known = options.toolCallsOf?.(at(owner).record);
      const call = known
        ? r.toolCallId === undefined
          ? undefined
          : known.get(r.toolCallId)
        : callNote(owner, r.toolCallId);
      subject = call?.subject;
      if (!toolName && typeof call?.name === "string") toolName = call.name;
    }
    return resultNote({ ...(toolName ? { toolName } : {}), ...(subject ? { subject } : {}), tokens: r.tokens });
  }

  function callNote(ownerId: string, toolCallId: string | undefined): ToolCallNote | undefined {
    const content = originalContent(ownerId);
    const call = Array.isArray(content)
      ? (content as { type?: unknown; id?: unknown; name?: unknown; arguments?: unknown }[]).find(
          (b) => b && b.type === "toolCall" && b.id === toolCallId,
        )
      : undefined;
    return call && { name: call.name, subject: toolCallSubject(call.arguments) };
  }

  function sameAsNow(entry: ProjectedEntry, role: EditableRole, replacement: ContextEditReplacement): boolean {
    if (replacement === null) return entry.roles.length === 0;
    if (entry.roles.length === 0) return false;
    const wanted = projectedContent(role, replacement.content);
    if (!entry.edit) {
      // Unedited: the target shows its original content, whose characters (pi's `estimateTokens`
      // count) were measured when the file was read. Equal content has equal counts, so a
      // different count settles it without reading the body (most targets are large results).
      if (totalChars(messageChars({ role, content: wanted })) !== totalChars(entry.record.chars)) return false;
      return isDeepStrictEqual(wanted, originalContent(entry.record.id));
    }
    const content = (session.readEntry(entry.edit) as { replacement?: { content?: unknown } }).replacement?.content;
    return isDeepStrictEqual(
      wanted,
      content === undefined ? undefined : projectedContent(role, content as ContextEditContent),
    );
  }

  function lineBytes(edit: Omit<PlannedContextEdit, "tokensAfter" | "bytes">, index: number): number {
    const entry = buildContextEditEntry({
      id: PLACEHOLDER_ID,
      parentId: index === 0 ? projection.leafId : PLACEHOLDER_ID,
      timestamp: PLACEHOLDER_TIME,
      targetId: edit.targetId,
      replacement: edit.replacement,
    });
    return Buffer.byteLength(JSON.stringify(entry)) + 1;
  }

  function earliestOf(edit: PlannedContextEdit): NonNullable<ContextEditPreparation["earliest"]> {
    const system = currentSystemMessage(projection);
    let prefix = system ? estimateTokens(system) : 0;
    for (let i = 0; i < edit.contextIndex; i++) {
      const e = entries[i]!;
      if (e.roles.some((r) => r !== "system")) prefix += contribution(e, session).tokens;
    }
    return {
      entryId: edit.targetId,
      contextIndex: edit.contextIndex,
      messageIndex: edit.messageIndex,
      unchangedPrefixTokens: prefix,
    };
  }
}

/**
 * The context now on both bases: pi's pure chars/4 estimate, and the one "after" is compared with
 * (the pure one when edits are planned; pi's own number, `tokensBefore`, when nothing is written).
 */
function tokensNow(
  projection: Projection,
  session: SessionView,
  tokensBefore: ContextEstimate,
  edited: boolean,
): { pureTokensBefore: number; baselineTokens: number } {
  const pureTokensBefore = estimatePureContextTokens(projection, session);
  return { pureTokensBefore, baselineTokens: edited ? pureTokensBefore : tokensBefore.tokens };
}

function errorKey(f: PairingFinding): string {
  return `${f.resultEntryId ?? ""}\u0000${f.toolCallId}`;
}

/**
 * An assistant's new content with its original tool calls kept: the given content without
 * `toolCall` blocks (a string becomes one text block), then the original `toolCall` blocks in order.
 * Without original calls the content is returned as given.
 */
export function withOriginalToolCalls(content: ContextEditContent, original: unknown): ContextEditContent {
  const calls = Array.isArray(original)
    ? (original as { type?: unknown }[]).filter((b) => b && b.type === "toolCall")
    : [];
  if (calls.length === 0) return content;
  const blocks =
    typeof content === "string" ? [{ type: "text", text: content }] : content.filter((b) => b.type !== "toolCall");
  return [...blocks, ...calls] as ContextEditContent;
}
