/**
 * "Find what to cut": context items largest first, and suggestions with the tokens each saves by the
 * planner's own numbers (`core/rules/editPlan.ts`). Items already edited or refused by pi's
 * `appendContextEdit` are never suggested. Nothing here writes.
 */

import { isDeepStrictEqual } from "node:util";
import type { EntryRecord } from "../core/read/entries";
import type { SessionView } from "../core/read/overlay";
import { buildProjection, type ProjectedEntry, type Projection } from "../core/rules/context";
import { editableRole, projectedContent, toolCallSubject, type ContextEditContent } from "../core/rules/contextEdit";
import { prepareContextEdits, type ToolCallNote } from "../core/rules/editPlan";
import { toolCallLinks, type ToolCallLinks } from "../core/rules/pairing";
import { contentText, entryToContextMessages } from "../core/rules/serialize";
import { contribution, estimatePureContextTokens } from "../core/rules/tokens";
import { formatTokens, pluralText } from "../shared/format";
import type {
  TrimEditState,
  TrimItem,
  TrimListModel,
  TrimRequestItem,
  TrimSuggestion,
  TrimSuggestionKind,
} from "../shared/trim";
import { resolveToolPath } from "./trackedFiles";
import { trimActions, trimKindOf } from "./trimActions";
import { describeRecord } from "./treeText";
import { oneLine } from "./treeTextLines";
import { formatToolCall, summarizeToolNames } from "./treeTextTools";
import * as l10n from "@vscode/l10n";
import { parseSpanNote } from "../core/rules/spanSummary";

/** Tool results at least this large (tokens) are suggested. */
export const LARGE_RESULT_TOKENS = 4000;

/** Options of {@link buildTrimList}. */
export interface TrimListOptions {
  limit?: number;
  largeResultTokens?: number;
  savings?: boolean;
  cwd?: string;
  home?: string;
}

/** The arguments themselves are not kept: a `write` call's can be a whole file. */
interface CallInfo extends ToolCallNote {
  text: string;
  read?: { path: unknown; offset: unknown; limit: unknown };
}

const callsCache = new WeakMap<EntryRecord, Map<string, CallInfo> | null>();

function readCalls(session: SessionView, assistant: EntryRecord): Map<string, CallInfo> | null {
  let calls = callsCache.get(assistant);
  if (calls !== undefined) return calls;
  calls = new Map();
  try {
    const content = (session.readEntry(assistant) as unknown as { message?: { content?: unknown } }).message?.content;
    if (Array.isArray(content))
      for (const b of content as { type?: unknown; id?: unknown; name?: unknown; arguments?: unknown }[]) {
        if (!b || b.type !== "toolCall" || typeof b.id !== "string" || calls.has(b.id)) continue;
        const args = b.arguments && typeof b.arguments === "object" ? (b.arguments as Record<string, unknown>) : {};
        const name = String(b.name ?? "tool");
        const call: CallInfo = {
          name: b.name,
          subject: toolCallSubject(b.arguments),
          text: formatToolCall(name, args),
        };
        if (name === "read") call.read = { path: args.path ?? args.file_path, offset: args.offset, limit: args.limit };
        calls.set(b.id, call);
      }
  } catch {
    calls = null; // an unreadable body: the item shows the tool name only
  }
  callsCache.set(assistant, calls);
  return calls;
}

function callsOf(session: SessionView, assistant: EntryRecord): Map<string, CallInfo> {
  return readCalls(session, assistant) ?? new Map();
}

interface Context {
  session: SessionView;
  projection: Projection;
  links: ToolCallLinks;
  lastUser: number;
}

function callOf(ctx: Context, record: EntryRecord): CallInfo | undefined {
  if (record.role !== "toolResult" || !record.toolCallId) return undefined;
  const owner = ctx.links.ownerOf.get(record.id);
  const assistant = owner !== undefined ? ctx.session.byId.get(owner) : undefined;
  return assistant ? callsOf(ctx.session, assistant).get(record.toolCallId) : undefined;
}

function notEditableReason(record: EntryRecord): string {
  switch (trimKindOf(record)) {
    case "bashExecution":
      return l10n.t("pi does not edit bash executions (commands typed with !)");
    case "system":
      return l10n.t("pi does not edit system messages");
    case "compactionSummary":
      return l10n.t("a compaction summary is changed by compacting again, not by a context edit");
    case "branchSummary":
      return l10n.t("pi does not edit branch summaries");
    default:
      return l10n.t("pi does not edit this kind of entry");
  }
}

/** A restore (pi has no "unedit"), compared as pi projects it. */
function isRestored(ctx: Context, entry: ProjectedEntry, content: unknown): boolean {
  const role = editableRole(entry.record);
  if (role === undefined || (typeof content !== "string" && !Array.isArray(content))) return false;
  const original = (entryToContextMessages(ctx.session.readEntry(entry.record)) as { content?: unknown }[])[0]?.content;
  return isDeepStrictEqual(projectedContent(role, content as ContextEditContent), original);
}

function editState(ctx: Context, entry: ProjectedEntry): TrimEditState | undefined {
  const edit = entry.edit;
  if (!edit) return undefined;
  const state: TrimEditState = {
    kind: entry.roles.length === 0 ? "removed" : "replaced",
    editId: edit.id,
    originalTokens: entry.record.tokens,
  };
  if (state.kind === "replaced") {
    try {
      const content = (ctx.session.readEntry(edit) as { replacement?: { content?: unknown } | null }).replacement
        ?.content;
      if (isRestored(ctx, entry, content)) return undefined;
      state.note = oneLine(contentText(content, " "), 120);
      const span = parseSpanNote(contentText(content, "\n"));
      if (span) state.span = { count: span.count, tokens: span.tokens, fromId: span.fromId, toId: span.toId };
    } catch {
      state.note = l10n.t("(the edit could not be read)");
    }
  }
  return state;
}

function itemOf(ctx: Context, entry: ProjectedEntry, index: number, turnsAgo: number): TrimItem | undefined {
  const record = entry.record;
  const kind = trimKindOf(record);
  if (kind === "system" || kind === "other") return undefined;
  if (entry.roles.length === 0 && !entry.edit) return undefined; // an older compaction
  const editable = editableRole(record) !== undefined;
  const tokens = kind === "compactionSummary" ? record.tokens : contribution(entry, ctx.session).tokens;
  const item: TrimItem = {
    entryId: record.id,
    kind,
    text: "",
    tokens,
    timestamp: record.timestamp,
    turnsAgo,
    contextIndex: index,
    editable,
    images: record.images ?? 0,
    failed: Boolean(record.isError) || record.stopReason === "error" || record.stopReason === "aborted",
  };
  if (!editable) item.notEditable = notEditableReason(record);
  const edit = editable ? editState(ctx, entry) : undefined;
  if (edit) item.edit = edit;
  return item;
}

function describeItem(ctx: Context, item: TrimItem): void {
  const record = ctx.session.byId.get(item.entryId)!;
  if (item.kind === "toolResult") {
    const call = callOf(ctx, record);
    item.tool = call ? call.text : (record.toolName ?? "tool");
    item.text = record.preview ? oneLine(record.preview, 120) : "";
    return;
  }
  if (item.kind === "assistant" && record.toolNames?.length) item.tool = `→ ${summarizeToolNames(record.toolNames)}`;
  const text = oneLine(describeRecord(record).text, 120);
  item.text = text === item.tool ? "" : text;
}

export function describeEntries(session: SessionView, ids: Iterable<string>): Map<string, string> {
  const projection = buildProjection(session);
  const ctx: Context = { session, projection, links: toolCallLinks(projection.entries, session), lastUser: -1 };
  const out = new Map<string, string>();
  for (const id of ids) {
    const record = session.byId.get(id);
    if (!record) continue;
    const call = callOf(ctx, record);
    out.set(id, call ? call.text : oneLine(describeRecord(record).text, 120));
  }
  return out;
}

/** @throws {StaleSessionError} when a needed body changed on disk. */
export function buildTrimList(session: SessionView, options: TrimListOptions = {}): TrimListModel {
  const projection = buildProjection(session);
  const entries = projection.entries;
  const ctx: Context = { session, projection, links: toolCallLinks(entries, session), lastUser: -1 };
  const items: TrimItem[] = [];
  let users = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    const item = itemOf(ctx, entry, i, users);
    if (item) items.push(item);
    if (entry.roles.length > 0 && entry.record.type === "message" && entry.record.role === "user") {
      if (ctx.lastUser < 0) ctx.lastUser = i;
      users++;
    }
  }
  items.reverse(); // context order
  const suggestions = suggest(ctx, items, options);
  const sorted = [...items].sort((a, b) => b.tokens - a.tokens || b.contextIndex - a.contextIndex);
  const shown = options.limit !== undefined ? sorted.slice(0, options.limit) : sorted;
  for (const item of shown) describeItem(ctx, item);
  return {
    leafId: projection.leafId,
    items: shown,
    itemCount: items.length,
    editedCount: items.filter((i) => i.edit).length,
    suggestions,
    pureTokens: estimatePureContextTokens(projection, session),
  };
}

function scannedCallName(ctx: Context, record: EntryRecord): string | undefined {
  if (record.role !== "toolResult" || !record.toolCallId) return undefined;
  const owner = ctx.links.ownerOf.get(record.id);
  const assistant = owner !== undefined ? ctx.session.byId.get(owner) : undefined;
  const i = assistant?.toolCallIds?.indexOf(record.toolCallId) ?? -1;
  return i >= 0 ? assistant!.toolNames?.[i] : undefined;
}

function readOf(ctx: Context, record: EntryRecord, cwd: string | undefined, home: string | undefined) {
  // another tool by its scanned name: its assistant's body is not read
  const scanned = scannedCallName(ctx, record);
  if (scanned !== undefined && scanned !== "read" && scanned !== "?") return undefined;
  const read = callOf(ctx, record)?.read;
  if (!read) return undefined;
  const p = read.path;
  if (typeof p !== "string" || !p.trim()) return undefined;
  const file = home !== undefined ? resolveToolPath(p, cwd, home) : resolveToolPath(p, cwd);
  const whole = read.offset == null && read.limit == null;
  return { file, range: `${String(read.offset ?? "")}:${String(read.limit ?? "")}`, whole };
}

function suggest(ctx: Context, items: readonly TrimItem[], options: TrimListOptions): TrimSuggestion[] {
  const session = ctx.session;
  const cwd = options.cwd ?? (session as { cwd?: string }).cwd;
  const large = options.largeResultTokens ?? LARGE_RESULT_TOKENS;
  const candidates = items.filter((i) => i.editable && !i.edit && i.tokens > 0);
  const taken = new Set<string>();
  const groups = new Map<TrimSuggestionKind, TrimRequestItem[]>();
  const add = (kind: TrimSuggestionKind, item: TrimRequestItem) => {
    let list = groups.get(kind);
    if (!list) groups.set(kind, (list = []));
    list.push(item);
    taken.add(item.entryId);
  };

  const laterReads = new Map<string, { whole: boolean; ranges: Set<string> }>();
  for (let i = candidates.length - 1; i >= 0; i--) {
    const item = candidates[i]!;
    if (item.kind !== "toolResult" || item.failed) continue;
    const read = readOf(ctx, session.byId.get(item.entryId)!, cwd, options.home);
    if (!read) continue;
    const later = laterReads.get(read.file);
    if (later && (later.whole || later.ranges.has(read.range)))
      add("superseded-read", { entryId: item.entryId, choice: "default" });
    const seen = later ?? { whole: false, ranges: new Set<string>() };
    if (read.whole) seen.whole = true;
    seen.ranges.add(read.range);
    laterReads.set(read.file, seen);
  }
  groups.get("superseded-read")?.reverse();
  for (const item of candidates) {
    if (taken.has(item.entryId)) continue;
    if (item.images > 0 && (item.kind === "toolResult" || item.kind === "user" || item.kind === "custom"))
      add("image", { entryId: item.entryId, choice: "strip-images" });
  }
  for (const item of candidates)
    if (!taken.has(item.entryId) && item.kind === "toolResult" && item.tokens >= large)
      add("large-result", { entryId: item.entryId, choice: "default" });
  for (const item of candidates)
    if (!taken.has(item.entryId) && item.kind === "toolResult" && item.failed)
      add("failed-output", { entryId: item.entryId, choice: "default" });
  for (const id of abandonedAnswers(ctx)) add("abandoned-retry", { entryId: id, choice: "remove" });

  const out: TrimSuggestion[] = [];
  for (const kind of ["superseded-read", "image", "large-result", "failed-output", "abandoned-retry"] as const) {
    const actions = groups.get(kind);
    if (!actions?.length) continue;
    const tokensSaved = options.savings !== false ? suggestionSavings(session, actions) : 0;
    out.push({ kind, ...wording(kind, actions.length, large), actions, tokensSaved });
  }
  return out;
}

const savingsCache = new WeakMap<object, { state: string; byActions: Map<string, number> }>();

function sessionState(session: SessionView): string {
  const s = session as SessionView & { duplicateIds?: number; size?: number };
  return `${s.records.length}:${s.byId.size}:${s.duplicateIds ?? 0}:${s.size ?? ""}:${s.records[s.records.length - 1]?.id ?? ""}:${s.leafId}`;
}

/** Pure estimate now − after by the planner; memoised while the session is unchanged (planning reads every body). */
export function suggestionSavings(session: SessionView, actions: readonly TrimRequestItem[]): number {
  const state = sessionState(session);
  let cache = savingsCache.get(session);
  if (!cache || cache.state !== state) savingsCache.set(session, (cache = { state, byActions: new Map() }));
  const key = JSON.stringify(actions);
  let saved = cache.byActions.get(key);
  if (saved === undefined) {
    const plan = prepareContextEdits(session, trimActions(session, actions), {
      toolCallsOf: (assistant) => readCalls(session, assistant) ?? undefined,
    });
    saved = Math.max(0, plan.baselineTokens - plan.tokensAfter.tokens);
    cache.byActions.set(key, saved);
  }
  return saved;
}

/** Runs whose last answer failed or was aborted and a later user message followed; never the current run. */
function abandonedAnswers(ctx: Context): string[] {
  const entries = ctx.projection.entries;
  const out: string[] = [];
  let run: ProjectedEntry[] = [];
  const close = () => {
    const answers = run.filter((e) => e.record.type === "message" && e.record.role === "assistant");
    const last = answers[answers.length - 1];
    if (last && (last.record.stopReason === "error" || last.record.stopReason === "aborted"))
      for (const a of answers) if (a.roles.length > 0 && !a.edit) out.push(a.record.id);
    run = [];
  };
  for (let i = 0; i < entries.length && i <= ctx.lastUser; i++) {
    const e = entries[i]!;
    if (e.roles.length > 0 && e.record.type === "message" && e.record.role === "user") close();
    else run.push(e);
  }
  return out;
}

function wording(kind: TrimSuggestionKind, n: number, large: number): { title: string; detail: string } {
  switch (kind) {
    case "superseded-read":
      return {
        title: l10n.t(
          "{0} of files read again later",
          pluralText(n, l10n.t("{0} older read"), l10n.t("{0} older reads")),
        ),
        detail: l10n.t("The model read these files again afterwards; the older outputs are replaced by a short note."),
      };
    case "image":
      return {
        title: l10n.t("{0} with images", pluralText(n, l10n.t("{0} item"), l10n.t("{0} items"))),
        detail: l10n.t("Screenshots and other images (about 1,200 tokens each): kept without the images, with a note."),
      };
    case "large-result":
      return {
        title: l10n.t(
          "{0} of {1}+ tokens",
          pluralText(n, l10n.t("{0} tool result"), l10n.t("{0} tool results")),
          formatTokens(large),
        ),
        detail: l10n.t(
          "Large tool outputs, replaced by a short note that names the tool, what it worked on and its size.",
        ),
      };
    case "failed-output":
      return {
        title: l10n.t("{0} of failed tool calls", pluralText(n, l10n.t("{0} output"), l10n.t("{0} outputs"))),
        detail: l10n.t(
          "Tool calls that failed (errors, missing files, failed commands): their outputs become a short note.",
        ),
      };
    case "abandoned-retry":
      return {
        title: l10n.t("{0} of abandoned attempts", pluralText(n, l10n.t("{0} answer"), l10n.t("{0} answers"))),
        detail: l10n.t(
          "Runs that ended in an error or were aborted and were then asked again: their answers are removed, with their tool results.",
        ),
      };
  }
}

/** How an entry of the context shows in the tree and the panel: editable, and its edit if any. */
export interface EditMark {
  editable: boolean;
  edit?: TrimEditState;
}

const marksCache = new WeakMap<Projection, Map<string, EditMark>>();

/** Memoised per projection. */
export function editMarks(session: SessionView): ReadonlyMap<string, EditMark> {
  const projection = buildProjection(session);
  let marks = marksCache.get(projection);
  if (marks) return marks;
  marks = new Map();
  const ctx: Context = { session, projection, links: { ownerOf: new Map(), resultsOf: new Map() }, lastUser: -1 };
  for (const entry of projection.entries) {
    if (editableRole(entry.record) === undefined) continue;
    const mark: EditMark = { editable: true };
    const edit = editState(ctx, entry);
    if (edit) mark.edit = edit;
    marks.set(entry.record.id, mark);
  }
  marksCache.set(projection, marks);
  return marks;
}

/** From the last user message on: pi appends to it while it answers. */
export function runningTurnIds(projection: Projection): Set<string> {
  const entries = projection.entries;
  let start = entries.length;
  for (let i = entries.length - 1; i >= 0; i--) {
    const r = entries[i]!.record;
    if (r.type === "message" && r.role === "user" && entries[i]!.roles.length > 0) {
      start = i;
      break;
    }
  }
  return new Set(entries.slice(start).map((e) => e.record.id));
}
