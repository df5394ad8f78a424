/**
 * Where pi 1.6.0 has no token number: its `estimateTokens` throws or counts `NaN` on a message, so its
 * footer, auto-compaction check and `/compact` fail and pi-context must not call its own count "pi's".
 * Mirrors which messages pi measures, in pi's order (`compaction.js` `estimateProjectedContextTokens`,
 * `prepareCompaction`'s cut-point walk, where a `NaN` never reaches `keepRecentTokens`).
 */

import type { ProjectedEntry, Projection } from "./context";
import { hasValidUsage, type BodyReader } from "./tokens";
import { estimateProblem, type EstimateProblem } from "../read/estimate";
import type { EntryRecord } from "../read/entries";
import * as l10n from "@vscode/l10n";

export interface EstimateFailure extends EstimateProblem {
  entryId: string;
  /** ≤ 0 for an entry not in the file yet. */
  line: number;
  entry: string;
  /** The context edit whose replacement pi measures there. */
  editId?: string;
  /** `context`: pi throws already building the context (`buildSessionProjection`), so cannot open it. */
  stage?: "context";
}

const EDITABLE = new Set(["user", "assistant", "toolResult", "custom"]);

function roleOf(record: EntryRecord): string | undefined {
  if (record.type === "message") return record.role;
  if (record.type === "custom_message") return "custom";
  return undefined;
}

const editedProblems = new WeakMap<EntryRecord, Map<string, (EstimateProblem & { stage?: "context" }) | null>>();

/** Where pi fails on the non-system messages of a projected entry (its context edit applied). */
export function entryEstimateFailure(entry: ProjectedEntry, reader: BodyReader): EstimateFailure | undefined {
  const record = entry.record;
  if (entry.roles.length === 0 || (entry.roles.length === 1 && entry.roles[0] === "system")) return undefined;
  const role = roleOf(record);
  const edit = entry.edit;
  if (edit && !edit.replacementIsNull && role !== undefined && EDITABLE.has(role)) {
    let byRole = editedProblems.get(edit);
    if (!byRole) editedProblems.set(edit, (byRole = new Map()));
    let problem = byRole.get(role);
    if (problem === undefined) {
      problem = editedProblem(reader.readEntry(edit) as { replacement?: unknown }, role) ?? null;
      byRole.set(role, problem);
    }
    return problem ? failureOf(record, problem, edit.id) : undefined;
  }
  return record.estimateProblem ? failureOf(record, record.estimateProblem) : undefined;
}

/** pi's `projectContextEntry` + `estimateTokens` on an editable message replaced by `body.replacement`. */
function editedProblem(
  body: { replacement?: unknown },
  role: string,
): (EstimateProblem & { stage?: "context" }) | undefined {
  if (!("replacement" in body) || body.replacement === undefined)
    return {
      kind: "throws",
      reason: "its context edit has no replacement (pi throws reading replacement.content)",
      stage: "context",
    };
  const replacement = body.replacement;
  const content =
    replacement !== null && typeof replacement === "object"
      ? (replacement as { content?: unknown }).content
      : undefined;
  const projected =
    (role === "assistant" || role === "toolResult") && typeof content === "string"
      ? [{ type: "text", text: content }]
      : content;
  const problem = estimateProblem({ role, content: projected });
  return problem && { ...problem, reason: `${problem.reason} (from its context edit's replacement)` };
}

function systemFailure(entry: ProjectedEntry): EstimateFailure | undefined {
  if (entry.roles[0] !== "system") return undefined;
  const problem = entry.record.systemEstimateProblem;
  return problem ? failureOf(entry.record, problem) : undefined;
}

function describeEntry(record: EntryRecord): string {
  const role = record.type === "message" ? record.role : record.type === "custom_message" ? "custom" : undefined;
  const kind = role !== undefined ? l10n.t("{0} message", role) : record.type.replace(/_/g, " ");
  return record.line > 0
    ? l10n.t("{0} {1} (line {2})", kind, record.id, record.line)
    : l10n.t("{0} {1}", kind, record.id);
}

function failureOf(
  record: EntryRecord,
  problem: EstimateProblem & { stage?: "context" },
  editId?: string,
): EstimateFailure {
  return {
    ...problem,
    entryId: record.id,
    line: record.line,
    entry: describeEntry(record),
    ...(editId !== undefined ? { editId } : {}),
  };
}

/**
 * Where pi cannot build the context: a branch into a parent cycle (`getBranch` never returns), a message
 * entry without message on the path, or a context edit without replacement (`projectContextEntry`).
 */
export function contextFailure(projection: Projection, reader: BodyReader): EstimateFailure | undefined {
  const cycleAt = projection.pathInfo.cycleAt;
  const looping = cycleAt === undefined ? undefined : projection.path.find((r) => r.id === cycleAt);
  if (looping)
    return failureOf(looping, {
      kind: "throws",
      reason:
        "the branch runs into a parent cycle here (pi's getBranch follows parentId without end, until it runs out of memory)",
      stage: "context",
    });
  const missing = projection.path.find((r) => r.messageMissing);
  if (missing)
    return failureOf(missing, {
      kind: "throws",
      reason: "it has no message (pi throws reading message.role of every message entry on the branch)",
      stage: "context",
    });
  for (const e of projection.entries) {
    const failure = e.edit && !e.edit.replacementIsNull ? entryEstimateFailure(e, reader) : undefined;
    if (failure?.stage === "context") return failure;
  }
  return undefined;
}

function firstOf(failures: Iterable<EstimateFailure | undefined>): EstimateFailure | undefined {
  let nan: EstimateFailure | undefined;
  for (const f of failures) {
    if (!f) continue;
    if (f.kind === "throws") return f;
    nan ??= f;
  }
  return nan;
}

function* allMessages(entries: readonly ProjectedEntry[], reader: BodyReader): Generator<EstimateFailure | undefined> {
  for (const e of entries) {
    yield systemFailure(e);
    yield entryEstimateFailure(e, reader);
  }
}

/** Where pi's `estimateProjectedContextTokens` (footer, auto-compaction) fails; an empty branch trusts no usage. */
export function projectedEstimateFailure(
  projection: Projection,
  reader: BodyReader,
  branch: readonly EntryRecord[] = projection.path,
): EstimateFailure | undefined {
  const context = contextFailure(projection, reader);
  if (context) return context;
  const entries = projection.entries;
  let usageAt = -1;
  for (let i = entries.length - 1; i >= 0; i--)
    if (hasValidUsage(entries[i]!)) {
      usageAt = i;
      break;
    }
  const trailing = firstOf(allMessages(entries.slice(usageAt + 1), reader));
  if (trailing?.kind === "throws") return trailing;
  if (usageAt >= 0) {
    const usageId = entries[usageAt]!.record.id;
    const usageIndex = branch.findIndex((e) => e.id === usageId);
    let latestInvalidating = -1;
    for (let i = branch.length - 1; i >= 0; i--)
      if (branch[i]!.type === "context_edit" || branch[i]!.type === "compaction") {
        latestInvalidating = i;
        break;
      }
    if (usageIndex > latestInvalidating) return trailing;
  }
  return firstOf(entries.map((e) => entryEstimateFailure(e, reader)));
}

/** Where pi's `prepareCompaction` fails: `tokensBefore`, then the `findProjectedCutPoint` walk. */
export function compactionEstimateFailure(
  projection: Projection,
  reader: BodyReader,
  walk: { startIndex: number; keepRecentTokens: number; tokensOf: (entry: ProjectedEntry) => number },
): EstimateFailure | undefined {
  const before = projectedEstimateFailure(projection, reader);
  if (before?.kind === "throws") return before;
  const entries = projection.entries;
  let accumulated = 0;
  let nan = before;
  for (let i = entries.length - 1; i >= walk.startIndex; i--) {
    const e = entries[i]!;
    const failure = firstOf([systemFailure(e), entryEstimateFailure(e, reader)]);
    if (failure?.kind === "throws") return failure;
    nan ??= failure;
    const tokens = failure ? Number.NaN : walk.tokensOf(e);
    if (tokens === 0) continue;
    accumulated += tokens;
    if (accumulated >= walk.keepRecentTokens) break;
  }
  return nan;
}

/** `its estimateTokens throws on assistant message a1 (line 3): a text block's text is missing`. */
export function estimateFailureCause(f: EstimateFailure): string {
  return f.kind === "throws"
    ? l10n.t("its estimateTokens throws on {0}: {1}", f.entry, f.reason)
    : l10n.t("its estimateTokens counts NaN for {0}: {1}", f.entry, f.reason);
}

/** `pi 1.6.0 cannot estimate this context: ` + {@link estimateFailureCause}. */
export function estimateFailureText(f: EstimateFailure): string {
  if (f.stage === "context") return l10n.t("pi 1.6.0 cannot open this session, at {0}: {1}", f.entry, f.reason);
  return f.kind === "throws"
    ? l10n.t("pi 1.6.0 cannot estimate this context: {0}", estimateFailureCause(f))
    : l10n.t("pi 1.6.0 has no number for this context: {0}", estimateFailureCause(f));
}
