/**
 * Tool-call pairing of what pi sends, mirroring pi 1.6.0 `convertToLlm` and pi-ai's `transformMessages`
 * second pass: a pending call without result gets a "No result provided" filler at the next assistant or
 * user message; `error`/`aborted` assistants are dropped. Providers accept a result only in the run right
 * after its call, once (else HTTP 400). pi-ai's cross-model id normalisation is not modelled.
 */

import type { ProjectedEntry, Projection } from "./context";
import type { EntryRecord } from "../read/entries";
import type { SessionEntry } from "../types";

export interface PairingReader {
  readEntry(record: EntryRecord): SessionEntry;
}

/**
 * `orphan-result`: no earlier sent assistant made the call; `dropped-call-result`: its assistant was
 * dropped; `separated-result`: a message came between (filler there, real result orphaned);
 * `duplicate-result`; `missing-result` (info: pi-ai sends the filler).
 */
export type PairingKind =
  "orphan-result" | "dropped-call-result" | "separated-result" | "duplicate-result" | "missing-result";

/** `error`: providers reject the request; `info`: pi-ai repairs it silently. */
export type PairingSeverity = "error" | "info";

export interface PairingFinding {
  kind: PairingKind;
  severity: PairingSeverity;
  toolCallId: string;
  toolName?: string;
  resultEntryId?: string;
  callEntryId?: string;
  /** The entry whose message closed the call (absent: the end of the context). */
  separatorEntryId?: string;
  /** pi-ai inserts a synthetic "No result provided" result for this call. */
  filler: boolean;
}

export interface PairingReport {
  /** In the order pi-ai meets them. */
  findings: PairingFinding[];
  errors: number;
  fillers: number;
}

export const NO_RESULT_PROVIDED = "No result provided";

const USER_LIKE = new Set(["user", "custom", "branchSummary", "compactionSummary"]);

export interface ToolCallRef {
  id: string;
  name: string;
}

type LlmStep =
  | { kind: "user" }
  | { kind: "system" }
  | { kind: "assistant"; dropped: boolean; calls: ToolCallRef[] }
  | { kind: "toolResult"; toolCallId: string; toolName?: string };

/** The replacement's `toolCall` blocks when a context edit replaces the content, else the record's. */
export function sentToolCalls(entry: ProjectedEntry, reader: PairingReader): ToolCallRef[] {
  if (entry.roles.length === 0) return [];
  const edit = entry.edit;
  if (edit && !edit.replacementIsNull) return replacementToolCalls(edit, reader);
  return originalToolCalls(entry.record);
}

export function originalToolCalls(record: EntryRecord): ToolCallRef[] {
  const ids = record.toolCallIds ?? [];
  const names = record.toolNames ?? [];
  return ids.map((id, i) => ({ id, name: names[i] ?? "?" }));
}

export function toolCallsOfContent(content: unknown): ToolCallRef[] {
  if (!Array.isArray(content)) return [];
  const out: ToolCallRef[] = [];
  for (const block of content) {
    if (block && typeof block === "object" && (block as { type?: unknown }).type === "toolCall") {
      const b = block as { id?: unknown; name?: unknown };
      out.push({ id: typeof b.id === "string" ? b.id : "", name: typeof b.name === "string" ? b.name : "?" });
    }
  }
  return out;
}

/** Undefined for `null`; reads the edit's body. */
export function replacementContent(edit: EntryRecord, reader: PairingReader): unknown {
  const body = reader.readEntry(edit) as { replacement?: { content?: unknown } | null };
  return body.replacement?.content;
}

/** Records of a read file never change, so per-record caching is safe. */
const replacementCalls = new WeakMap<EntryRecord, ToolCallRef[]>();

export function replacementToolCalls(edit: EntryRecord, reader: PairingReader): ToolCallRef[] {
  let calls = replacementCalls.get(edit);
  if (!calls) replacementCalls.set(edit, (calls = toolCallsOfContent(replacementContent(edit, reader))));
  return calls;
}

function stepsOf(entry: ProjectedEntry, reader: PairingReader): LlmStep[] {
  const steps: LlmStep[] = [];
  const r = entry.record;
  for (const role of entry.roles) {
    if (role === "system") steps.push({ kind: "system" });
    else if (USER_LIKE.has(role)) steps.push({ kind: "user" });
    else if (role === "bashExecution") {
      if (!r.excludeFromContext) steps.push({ kind: "user" });
    } else if (role === "assistant") {
      const dropped = r.stopReason === "error" || r.stopReason === "aborted";
      steps.push({ kind: "assistant", dropped, calls: sentToolCalls(entry, reader) });
    } else if (role === "toolResult") {
      const step: LlmStep = { kind: "toolResult", toolCallId: r.toolCallId ?? "" };
      if (r.toolName !== undefined) step.toolName = r.toolName;
      steps.push(step);
    }
    // other roles: convertToLlm drops them
  }
  return steps;
}

interface PendingCall extends ToolCallRef {
  entryId: string;
}

/**
 * Pairing findings for what pi sends at the leaf, in pi-ai's order.
 * @throws {StaleSessionError} (from the reader) when a needed edit's line changed on disk.
 */
export function analyzePairing(projection: Projection, reader: PairingReader): PairingReport {
  const findings: PairingFinding[] = [];
  let pending: PendingCall[] = [];
  let existing = new Set<string>();
  // the run of results the provider accepts: the calls of the last sent assistant, answered ones
  let runCalls: Map<string, PendingCall> | null = null;
  let runAnswered = new Map<string, "result" | PairingFinding>();
  const fillersById = new Map<string, PairingFinding[]>();
  const droppedCalls = new Map<string, PendingCall>();
  const sentCalls = new Map<string, PendingCall>();
  // fillers reported as part of a `separated-result` finding instead of on their own
  const merged = new Set<PairingFinding>();

  const close = (closer: string | undefined) => {
    if (pending.length > 0) {
      for (const call of pending) {
        if (existing.has(call.id)) continue;
        const filler: PairingFinding = {
          kind: "missing-result",
          severity: "info",
          toolCallId: call.id,
          toolName: call.name,
          callEntryId: call.entryId,
          filler: true,
        };
        if (closer !== undefined) filler.separatorEntryId = closer;
        findings.push(filler);
        let list = fillersById.get(call.id);
        if (!list) fillersById.set(call.id, (list = []));
        list.push(filler);
        runAnswered.set(call.id, filler);
      }
      pending = [];
      existing = new Set();
    }
  };

  for (const entry of projection.entries) {
    const entryId = entry.record.id;
    for (const step of stepsOf(entry, reader)) {
      if (step.kind === "user") {
        close(entryId);
        runCalls = null;
        runAnswered = new Map();
      } else if (step.kind === "assistant") {
        close(entryId);
        const calls = step.calls.map((c) => ({ ...c, entryId }));
        if (step.dropped) {
          for (const c of calls) droppedCalls.set(c.id, c);
          continue; // dropped: the run of the previous assistant goes on
        }
        runCalls = new Map(calls.map((c) => [c.id, c]));
        runAnswered = new Map();
        for (const c of calls) sentCalls.set(c.id, c);
        if (calls.length > 0) {
          pending = calls;
          existing = new Set();
        }
      } else if (step.kind === "toolResult") {
        const id = step.toolCallId;
        existing.add(id);
        const call = runCalls?.get(id);
        const answered = runAnswered.get(id);
        if (call && answered === undefined) {
          runAnswered.set(id, "result");
          continue;
        }
        findings.push(orphanFinding(entryId, step, call, answered));
      }
    }
  }
  close(undefined);

  function orphanFinding(
    resultEntryId: string,
    step: Extract<LlmStep, { kind: "toolResult" }>,
    runCall: PendingCall | undefined,
    answered: "result" | PairingFinding | undefined,
  ): PairingFinding {
    const id = step.toolCallId;
    const finding = (kind: PairingKind, call: { name: string; entryId: string } | undefined): PairingFinding => {
      const f: PairingFinding = { kind, severity: "error", toolCallId: id, resultEntryId, filler: false };
      const name = call?.name ?? step.toolName;
      if (name !== undefined) f.toolName = name;
      if (call) f.callEntryId = call.entryId;
      return f;
    };
    // The call got a filler: in this run (closed by a dropped assistant), or in an earlier run.
    let filler: PairingFinding | undefined;
    // A filler stands for one call once: a second result of the same call is a duplicate.
    if (runCall) filler = answered !== "result" && answered && !merged.has(answered) ? answered : undefined;
    else
      filler = fillersById
        .get(id)
        ?.filter((f) => !merged.has(f))
        .pop();
    if (filler) {
      merged.add(filler);
      const f = finding("separated-result", { name: filler.toolName ?? "?", entryId: filler.callEntryId! });
      f.filler = true;
      if (filler.separatorEntryId !== undefined) f.separatorEntryId = filler.separatorEntryId;
      return f;
    }
    if (runCall) return finding("duplicate-result", runCall);
    const dropped = droppedCalls.get(id);
    if (dropped) return finding("dropped-call-result", dropped);
    const sent = sentCalls.get(id);
    return sent ? finding("duplicate-result", sent) : finding("orphan-result", undefined);
  }

  const reported = findings.filter((f) => !merged.has(f));
  let errors = 0;
  let fillers = 0;
  for (const f of reported) {
    if (f.severity === "error") errors++;
    if (f.filler) fillers++;
  }
  return { findings: reported, errors, fillers };
}

export interface ToolCallLinks {
  ownerOf: Map<string, string>;
  resultsOf: Map<string, string[]>;
}

/** Nearest earlier assistant whose original or sent calls include the result; omitted entries count (undo). */
export function toolCallLinks(entries: readonly ProjectedEntry[], reader: PairingReader): ToolCallLinks {
  const ownerOf = new Map<string, string>();
  const resultsOf = new Map<string, string[]>();
  const lastCaller = new Map<string, string>();
  for (const entry of entries) {
    const r = entry.record;
    if (r.type !== "message") continue;
    if (r.role === "assistant") {
      const ids = new Set(originalToolCalls(r).map((c) => c.id));
      if (entry.edit && !entry.edit.replacementIsNull)
        for (const c of replacementToolCalls(entry.edit, reader)) ids.add(c.id);
      for (const id of ids) lastCaller.set(id, r.id);
    } else if (r.role === "toolResult") {
      const owner = lastCaller.get(r.toolCallId ?? "");
      if (owner === undefined) continue;
      ownerOf.set(r.id, owner);
      let list = resultsOf.get(owner);
      if (!list) resultsOf.set(owner, (list = []));
      list.push(r.id);
    }
  }
  return { ownerOf, resultsOf };
}

/** E.g. `tool result e12 (read, call_1) has no matching call: providers reject the request`. */
export function describeFinding(f: PairingFinding): string {
  const what = `${f.toolName ?? "tool"} ${f.toolCallId || "(no id)"}`;
  switch (f.kind) {
    case "orphan-result":
      return `tool result ${f.resultEntryId} (${what}) answers no call in the context: providers reject the request`;
    case "dropped-call-result":
      return `tool result ${f.resultEntryId} (${what}) answers a call of failed assistant ${f.callEntryId}, which pi does not send: providers reject the request`;
    case "separated-result":
      return `tool result ${f.resultEntryId} (${what}) is separated from its call in ${f.callEntryId} by ${f.separatorEntryId ?? "the end of the context"}: pi sends "${NO_RESULT_PROVIDED}" there and the real result orphaned, which providers reject`;
    case "duplicate-result":
      return `tool result ${f.resultEntryId} (${what}) answers a call of ${f.callEntryId} that already has a result: providers reject the request`;
    case "missing-result":
      return `tool call ${what} in ${f.callEntryId} has no result: pi sends "${NO_RESULT_PROVIDED}"`;
  }
}
