/**
 * The pairing-safe context-edit planner: requested actions (omit, replace, restore) → the `context_edit`
 * entries to append at the leaf, so that what pi sends afterwards has no tool result a provider would
 * reject. Pure: reads entry bodies only (`flows/contextEdit.ts` writes). Policy (after pi's
 * `_omitRecoveryAttempt` and `pairing.ts`):
 * - Omitting an assistant omits its tool results. A result omitted alone becomes a short note
 *   ({@link resultNote}) while its call is sent and it answers it, else it is omitted (its repair).
 * - Replacing an assistant's content keeps its original `toolCall` blocks (after the new text).
 * - Restore = an edit back to the original (pi has no "unedit"). Showing a result again restores its
 *   omitted assistant and vice versa; a result of a failed assistant or without a call stays hidden.
 * - Refused with a reason: pi's refusals (same messages), summarized targets (no effect in pi), a target
 *   named twice, a result whose assistant the batch omits. No-ops are `unchanged`.
 * - Safety net: the plan is simulated; an unforeseen orphan is omitted, or the edit showing it dropped.
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
import { analyzePairing, toolCallLinks, type PairingFinding, type PairingReport, type ToolCallLinks } from "./pairing";
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

/** Why an edit is in the plan: asked for, or one of the pairing rules of the file comment. */
export type EditCause =
  | { kind: "requested" }
  | { kind: "results-of-omitted-call"; assistantId: string }
  | { kind: "results-of-restored-call"; assistantId: string }
  | { kind: "call-of-restored-result"; resultId: string }
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
  /** Position of the target among the context entries and of its first message, before the edit. */
  contextIndex: number;
  messageIndex: number;
  /** pi's estimate of the target's content now and after the edit, in tokens. */
  tokensBefore: number;
  tokensAfter: number;
  /** Size of the appended line in bytes (UTF-8, with the newline; ids of 8 characters). */
  bytes: number;
}

/** Why a requested action is refused (file comment); `not-restorable`: a damaged original, not writable back. */
export type RefusalCode = PiEditRefusal | "summarized" | "duplicate" | "conflict" | "would-orphan" | "not-restorable";

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
  /** In write order ({@link pairingSafeOrder}): no prefix of them adds a tool result without its call. */
  edits: PlannedContextEdit[];
  /** The same as pi's boundary drafts (`{type: "context_edit", targetId, replacement}`). */
  drafts: ContextEditDraft[];
  /** In the order of the requested actions. */
  refused: RefusedAction[];
  /** Requested actions that change nothing (the target already shows that), in request order. */
  unchanged: ContextEditAction[];
  /** pi's projected estimate now (what pi's footer shows: provider usage + trailing estimates when usage is trusted). */
  tokensBefore: ContextEstimate;
  /** pi's estimate after: pure chars/4 (pi drops usage after an edit); compare with {@link pureTokensBefore}. */
  tokensAfter: ContextEstimate;
  /** The pure chars/4 estimate of the context now, in tokens. */
  pureTokensBefore: number;
  /** The context now as compared with tokensAfter: pureTokensBefore with edits, else tokensBefore's. */
  baselineTokens: number;
  /** Where pi's own estimate fails now / after (`estimateFailure.ts`): the tokens are then pi-context's only. */
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

/** A planned edit before its simulation gives its size after and its line's bytes. */
type DraftEdit = Omit<PlannedContextEdit, "tokensAfter" | "bytes">;

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
  /** An assistant's tool calls by call id (first of an id) when the caller has read its body; for result notes. */
  toolCallsOf?: (assistant: EntryRecord) => ReadonlyMap<string, ToolCallNote> | undefined;
  /** A running pi's in-memory leaf (its branch may not be the file's), for plans pi applies; unknown: ignored. */
  leafId?: string | null;
}

/** One plan in the making: the context now, the accepted requests, and what each target should show. */
interface Plan {
  session: SessionView;
  options: ContextEditPlanOptions;
  projection: Projection;
  position: Map<string, number>;
  links: ToolCallLinks;
  bodies: Map<string, SessionEntry>;
  requested: Map<string, ContextEditAction>;
  desired: Map<string, Desired>;
  refused: RefusedAction[];
  unchanged: ContextEditAction[];
}

/** The plan after simulation: the projection, pairing and new pairing errors with the edits appended. */
interface Simulation {
  view: SessionView;
  projection: Projection;
  pairing: PairingReport;
  newErrors: PairingFinding[];
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
  const plan = startPlan(session, options);
  acceptRequests(plan, actions);
  for (const a of requestsOf(plan, "assistant")) plan.desired.set(a.targetId, desiredOf(a));
  showResults(plan);
  const pairingBefore = analyzePairing(plan.projection, session);
  noteResults(plan, pairingBefore);
  resultsFollowAssistants(plan);
  for (const role of ["user", "custom"] as const)
    for (const a of requestsOf(plan, role)) plan.desired.set(a.targetId, desiredOf(a));
  const tokensBefore = estimateProjectedContextTokens(plan.projection, session);
  const { planned, simulated } = repairOrphans(plan, pairingBefore);
  return preparationOf(plan, actions, planned, simulated, pairingBefore, tokensBefore);
}

function startPlan(session: SessionView, options: ContextEditPlanOptions): Plan {
  const leaf = options.leafId;
  const projection = buildProjection(
    session,
    leaf !== undefined && (leaf === null || session.byId.has(leaf)) ? leaf : undefined,
  );
  const position = new Map<string, number>();
  projection.entries.forEach((e, i) => position.set(e.record.id, i));
  return {
    session,
    options,
    projection,
    position,
    links: toolCallLinks(projection.entries, session),
    bodies: new Map(),
    requested: new Map(),
    desired: new Map(),
    refused: [],
    unchanged: [],
  };
}

/** pi's checks, then ours: what passes goes to `plan.requested`, the rest is refused. */
function acceptRequests(plan: Plan, actions: readonly ContextEditAction[]): void {
  const pathIds = new Set(plan.projection.path.map((r) => r.id));
  for (const action of actions) {
    const replacement =
      action.action === "omit" ? null : { content: action.action === "replace" ? action.content : [] };
    const check = checkContextEditTarget(plan.session, pathIds, action.targetId, replacement);
    if (!check.ok) refuse(plan, action, check.code, check.message);
    else if (!plan.position.has(action.targetId))
      refuse(
        plan,
        action,
        "summarized",
        l10n.t(
          "Entry {0} was summarized by compaction {1}: it is no longer in the context, so an edit would have no effect.",
          action.targetId,
          plan.projection.compaction?.id ?? "?",
        ),
      );
    else if (plan.requested.has(action.targetId))
      refuse(
        plan,
        action,
        "duplicate",
        l10n.t("Entry {0} is named twice in one edit; give one action per entry.", action.targetId),
      );
    else plan.requested.set(action.targetId, action);
  }
}

/** Tool results made visible need their call sent: restore its assistant, or refuse. */
function showResults(plan: Plan): void {
  for (const r of requestsOf(plan, "toolResult")) {
    if (r.action === "omit") continue;
    const owner = plan.links.ownerOf.get(r.targetId);
    if (owner !== undefined && plan.requested.get(owner)?.action === "omit") {
      refuse(
        plan,
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
    if (hiddenNow(plan, r.targetId) && (owner === undefined || failed(plan, owner))) {
      refuse(
        plan,
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
    if (owner !== undefined && hiddenAfter(plan, owner) && !failed(plan, owner))
      plan.desired.set(owner, { kind: "original", cause: { kind: "call-of-restored-result", resultId: r.targetId } });
    plan.desired.set(r.targetId, desiredOf(r));
  }
}

/** Tool results omitted alone: a note while their call is sent and they answer it (an orphan: omitted). */
function noteResults(plan: Plan, pairingBefore: PairingReport): void {
  const orphaned = new Set(pairingBefore.findings.filter((f) => f.severity === "error").map((f) => f.resultEntryId));
  for (const r of requestsOf(plan, "toolResult")) {
    if (r.action !== "omit") continue;
    const noted = callsSent(plan, plan.links.ownerOf.get(r.targetId)) && !orphaned.has(r.targetId);
    plan.desired.set(r.targetId, noted ? { kind: "note", cause: REQUESTED } : desiredOf(r));
  }
}

/** An assistant's tool results are hidden with it, and shown again with it. */
function resultsFollowAssistants(plan: Plan): void {
  for (const [id, d] of [...plan.desired]) {
    if (roleOf(plan, id) !== "assistant") continue;
    for (const resultId of plan.links.resultsOf.get(id) ?? []) {
      if (plan.desired.has(resultId)) continue;
      if (d.kind === "omit") {
        if (!hiddenNow(plan, resultId))
          plan.desired.set(resultId, { kind: "omit", cause: { kind: "results-of-omitted-call", assistantId: id } });
      } else if (hiddenNow(plan, id) && hiddenNow(plan, resultId) && !failed(plan, id))
        plan.desired.set(resultId, { kind: "original", cause: { kind: "results-of-restored-call", assistantId: id } });
    }
  }
}

/** The safety net: simulate, then omit each new orphan or drop the edit that showed it, a few rounds. */
function repairOrphans(plan: Plan, pairingBefore: PairingReport): { planned: DraftEdit[]; simulated: Simulation } {
  let planned = buildEdits(plan);
  let simulated = simulate(plan, planned, pairingBefore);
  for (let round = 0; round < MAX_REPAIR_ROUNDS && simulated.newErrors.length > 0; round++) {
    const plannedIds = new Set(planned.map((p) => p.targetId));
    for (const f of simulated.newErrors) {
      const resultId = f.resultEntryId;
      if (resultId === undefined || !plan.position.has(resultId)) continue;
      if (plannedIds.has(resultId)) {
        const d = plan.desired.get(resultId)!;
        plan.desired.delete(resultId);
        const action = plan.requested.get(resultId);
        if (action && d.cause.kind === "requested")
          refuse(
            plan,
            action,
            "would-orphan",
            l10n.t(
              "Tool result {0} would not follow its tool call any more; providers would reject the request.",
              resultId,
            ),
          );
      } else plan.desired.set(resultId, { kind: "omit", cause: { kind: "orphan-of-plan" } });
    }
    planned = buildEdits(plan);
    simulated = simulate(plan, planned, pairingBefore);
  }
  return { planned, simulated };
}

function preparationOf(
  plan: Plan,
  actions: readonly ContextEditAction[],
  planned: DraftEdit[],
  simulated: Simulation,
  pairingBefore: PairingReport,
  tokensBefore: ContextEstimate,
): ContextEditPreparation {
  const { session, projection, refused, unchanged } = plan;
  const edits = pairingSafeOrder(planned).map((p, i) => {
    const after = simulated.projection.entries[plan.position.get(p.targetId)!]!;
    return { ...p, tokensAfter: contribution(after, simulated.view).tokens, bytes: lineBytes(projection, p, i) };
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
  if (first) preparation.earliest = earliestOf(plan, first);
  const failureBefore = projectedEstimateFailure(projection, session);
  if (failureBefore) preparation.estimateFailureBefore = failureBefore;
  const failureAfter = projectedEstimateFailure(simulated.projection, simulated.view);
  if (failureAfter) preparation.estimateFailureAfter = failureAfter;
  return preparation;
}

/** The edits `plan.desired` asks for, in context order, minus those that change nothing (`plan.unchanged`). */
function buildEdits(plan: Plan): DraftEdit[] {
  plan.unchanged.length = 0;
  const out: DraftEdit[] = [];
  const ids = [...plan.desired.keys()].sort((x, y) => plan.position.get(x)! - plan.position.get(y)!);
  for (const id of ids) {
    const d = plan.desired.get(id)!;
    const role = roleOf(plan, id);
    const entry = at(plan, id);
    const wanted = replacementOf(plan, id, role, d);
    if (!wanted) continue;
    const action = plan.requested.get(id);
    if (sameAsNow(plan, entry, role, wanted.replacement)) {
      if (action && d.cause.kind === "requested" && !plan.unchanged.includes(action)) plan.unchanged.push(action);
      continue;
    }
    out.push({
      targetId: id,
      role,
      ...wanted,
      cause: d.cause,
      contextIndex: plan.position.get(id)!,
      messageIndex: entry.firstMessageIndex,
      tokensBefore: contribution(entry, plan.session).tokens,
    });
  }
  return out;
}

/** What target `id` is to show; undefined (refused when requested) for an original not writable back. */
function replacementOf(
  plan: Plan,
  id: string,
  role: EditableRole,
  d: Desired,
): { effect: PlannedContextEdit["effect"]; replacement: ContextEditReplacement } | undefined {
  if (d.kind === "omit") return { effect: "omit", replacement: null };
  if (d.kind === "note")
    return { effect: "note", replacement: { content: [{ type: "text", text: noteFor(plan, id) }] } };
  if (d.kind === "content") {
    const content = role === "assistant" ? withOriginalToolCalls(d.content, originalContent(plan, id)) : d.content;
    return { effect: "replace", replacement: normalizeReplacement(role, { content }) };
  }
  const original = originalContent(plan, id);
  if (typeof original !== "string" && !Array.isArray(original)) {
    const action = plan.requested.get(id);
    if (action && d.cause.kind === "requested")
      refuse(plan, action, "not-restorable", l10n.t("Entry {0} has no string or array content to restore.", id));
    return undefined;
  }
  return { effect: "restore", replacement: { content: original as ContextEditContent } };
}

function simulate(plan: Plan, plannedEdits: readonly DraftEdit[], pairingBefore: PairingReport): Simulation {
  const { session } = plan;
  const placeholder = (i: number) => {
    let id = `~planned-edit-${i}`;
    while (session.byId.has(id)) id += "~";
    return id;
  };
  const planEntries = plannedEdits.map((p, i) =>
    buildContextEditEntry({
      id: placeholder(i),
      parentId: i === 0 ? plan.projection.leafId : placeholder(i - 1),
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

function refuse(plan: Plan, action: ContextEditAction, code: RefusalCode, message: string): void {
  if (!plan.refused.some((r) => r.action === action)) plan.refused.push({ action, code, message });
}

function at(plan: Plan, id: string): ProjectedEntry {
  return plan.projection.entries[plan.position.get(id)!]!;
}

function roleOf(plan: Plan, id: string): EditableRole {
  return editableRole(at(plan, id).record)!;
}

function hiddenNow(plan: Plan, id: string): boolean {
  return at(plan, id).roles.length === 0;
}

function hiddenAfter(plan: Plan, id: string): boolean {
  const d = plan.desired.get(id);
  return d ? d.kind === "omit" : hiddenNow(plan, id);
}

function failed(plan: Plan, id: string): boolean {
  const stop = at(plan, id).record.stopReason;
  return stop === "error" || stop === "aborted";
}

/** The tool calls of `assistantId` will be sent after the plan. */
function callsSent(plan: Plan, assistantId: string | undefined): boolean {
  return assistantId !== undefined && !hiddenAfter(plan, assistantId) && !failed(plan, assistantId);
}

/** The accepted requests on targets of `role`, in context order. */
function requestsOf(plan: Plan, role: EditableRole): ContextEditAction[] {
  return [...plan.requested.values()]
    .filter((a) => roleOf(plan, a.targetId) === role)
    .sort((x, y) => plan.position.get(x.targetId)! - plan.position.get(y.targetId)!);
}

function desiredOf(action: ContextEditAction, cause: EditCause = REQUESTED): Desired {
  return action.action === "omit"
    ? { kind: "omit", cause }
    : action.action === "restore"
      ? { kind: "original", cause }
      : { kind: "content", content: action.content, cause };
}

function body(plan: Plan, id: string): SessionEntry {
  let b = plan.bodies.get(id);
  if (!b) plan.bodies.set(id, (b = plan.session.readEntry(at(plan, id).record)));
  return b;
}

function originalContent(plan: Plan, id: string): unknown {
  const messages = entryToContextMessages(body(plan, id));
  return (messages[0] as { content?: unknown } | undefined)?.content;
}

function noteFor(plan: Plan, resultId: string): string {
  const r = at(plan, resultId).record;
  const owner = plan.links.ownerOf.get(resultId);
  let subject: string | undefined;
  let toolName = r.toolName;
  if (owner !== undefined) {
    const known = plan.options.toolCallsOf?.(at(plan, owner).record);
    const call = known
      ? r.toolCallId === undefined
        ? undefined
        : known.get(r.toolCallId)
      : callNote(plan, owner, r.toolCallId);
    subject = call?.subject;
    if (!toolName && typeof call?.name === "string") toolName = call.name;
  }
  return resultNote({ ...(toolName ? { toolName } : {}), ...(subject ? { subject } : {}), tokens: r.tokens });
}

function callNote(plan: Plan, ownerId: string, toolCallId: string | undefined): ToolCallNote | undefined {
  const content = originalContent(plan, ownerId);
  const call = Array.isArray(content)
    ? (content as { type?: unknown; id?: unknown; name?: unknown; arguments?: unknown }[]).find(
        (b) => b && b.type === "toolCall" && b.id === toolCallId,
      )
    : undefined;
  return call && { name: call.name, subject: toolCallSubject(call.arguments) };
}

function sameAsNow(
  plan: Plan,
  entry: ProjectedEntry,
  role: EditableRole,
  replacement: ContextEditReplacement,
): boolean {
  if (replacement === null) return entry.roles.length === 0;
  if (entry.roles.length === 0) return false;
  const wanted = projectedContent(role, replacement.content);
  if (!entry.edit) {
    // Equal content has equal character counts (known since the read): most targets are large results.
    if (totalChars(messageChars({ role, content: wanted })) !== totalChars(entry.record.chars)) return false;
    return isDeepStrictEqual(wanted, originalContent(plan, entry.record.id));
  }
  const content = (plan.session.readEntry(entry.edit) as { replacement?: { content?: unknown } }).replacement?.content;
  return isDeepStrictEqual(
    wanted,
    content === undefined ? undefined : projectedContent(role, content as ContextEditContent),
  );
}

function lineBytes(projection: Projection, edit: DraftEdit, index: number): number {
  const entry = buildContextEditEntry({
    id: PLACEHOLDER_ID,
    parentId: index === 0 ? projection.leafId : PLACEHOLDER_ID,
    timestamp: PLACEHOLDER_TIME,
    targetId: edit.targetId,
    replacement: edit.replacement,
  });
  return Buffer.byteLength(JSON.stringify(entry)) + 1;
}

function earliestOf(plan: Plan, edit: PlannedContextEdit): NonNullable<ContextEditPreparation["earliest"]> {
  const system = currentSystemMessage(plan.projection);
  let prefix = system ? estimateTokens(system) : 0;
  for (let i = 0; i < edit.contextIndex; i++) {
    const e = plan.projection.entries[i]!;
    if (e.roles.some((r) => r !== "system")) prefix += contribution(e, plan.session).tokens;
  }
  return {
    entryId: edit.targetId,
    contextIndex: edit.contextIndex,
    messageIndex: edit.messageIndex,
    unchangedPrefixTokens: prefix,
  };
}

/** The context now: pi's pure chars/4 estimate, and the one "after" is compared with (see baselineTokens). */
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
 * An assistant's new content without `toolCall` blocks (a string becomes a text block), then the
 * original's `toolCall` blocks in order; `content` as given when the original has none.
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
