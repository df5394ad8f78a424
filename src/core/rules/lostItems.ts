/**
 * What a compaction lost: paths, commands, identifiers and numbers said or done in the summarized range
 * (what pi's summarizer received) that neither the summary nor the kept part contains, each with the
 * entry it came from. Tool results are not scanned (they would list every token of every file read).
 */

import { buildProjection, type ProjectedEntry } from "./context";
import type { CompactionPreparation } from "./compaction";
import type { EntryRecord } from "../read/entries";
import { projectEntryMessages, type EntryReader } from "./serialize";
import type { AgentMessage, ContextEditEntry } from "../types";
import { drain } from "../steps";
import { parseSpanNote } from "./spanSummary";

export const LOST_KINDS = ["path", "command", "identifier", "number"] as const;
export type LostKind = (typeof LOST_KINDS)[number];

export interface LostItem {
  kind: LostKind;
  text: string;
  /** A message entry, or the previous compaction for its summary. */
  entryId: string;
  count: number;
}

export interface LostReport {
  items: LostItem[];
  /** Per kind: distinct items found in the summarized range, and how many were lost. */
  totals: Record<LostKind, { found: number; lost: number }>;
  summarizedEntries: number;
  /** The range exceeded {@link LOST_SCAN_LIMIT} characters; the rest was not scanned. */
  truncated: boolean;
}

/** Characters scanned at most, so a 100 MB session stays responsive. */
export const LOST_SCAN_LIMIT = 4_000_000;

const EXTENSIONS =
  "ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|txt|py|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|yml|yaml|toml|ini|cfg|conf|css|scss|html|vue|svelte|sql|lock|xml|csv|log|env|swift|dart|lua|gradle|proto";
const PATH_RE = new RegExp(
  String.raw`(?<![\w@/.:-])(?:(?:~|\.{1,2})?/[\w@.+-]+(?:/[\w@.+-]+)*/?|[\w@.+-]+(?:/[\w@.+-]+)+/?|[\w-]+(?:\.[\w-]+)*\.(?:${EXTENSIONS}))(?![\w/])`,
  "g",
);
const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;
const CODE_RE = /`([^`\n]{2,80})`/g;
const IDENT_RE =
  /(?<![\w$.-])(?:[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?![\w$])/g;
const NUMBER_RE = /(?<![\w.])(\d+(?:\.\d+)*)(?:%|[a-zA-Z]{1,2})?(?![\w.]*\w)/g;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

interface MessageParts {
  texts: string[];
  paths: string[];
  commands: string[];
  /** All text the model sees of it (kept-part membership). */
  all: string[];
}

function contentTexts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content
    .filter((b) => isObject(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => (b as Obj).text as string);
}

function partsOf(message: AgentMessage): MessageParts {
  const parts: MessageParts = { texts: [], paths: [], commands: [], all: [] };
  const m = message as unknown as Obj;
  switch (message.role) {
    case "user":
    case "custom":
      parts.texts.push(...contentTexts(m.content));
      break;
    case "assistant":
      if (Array.isArray(m.content))
        for (const block of m.content) {
          if (!isObject(block)) continue;
          if (block.type === "text" && typeof block.text === "string") parts.texts.push(block.text);
          else if (block.type === "toolCall" && isObject(block.arguments)) {
            const args = block.arguments;
            if (typeof args.path === "string" && args.path) parts.paths.push(args.path);
            if (typeof args.command === "string" && args.command.trim()) parts.commands.push(args.command);
            parts.all.push(JSON.stringify(args));
          }
        }
      break;
    case "bashExecution":
      if (typeof m.command === "string" && m.command.trim()) parts.commands.push(m.command);
      if (typeof m.output === "string") parts.all.push(m.output);
      break;
    case "branchSummary":
    case "compactionSummary":
      if (typeof m.summary === "string") parts.texts.push(m.summary);
      break;
    case "toolResult":
      parts.all.push(...contentTexts(m.content));
      break;
    default:
      break;
  }
  parts.all.push(...parts.texts, ...parts.paths, ...parts.commands);
  return parts;
}

export function normalizeCommand(command: string): string {
  return command.replace(/\s+/g, " ").trim();
}

/** Paths first, then identifiers and numbers in what remains. */
export function textItems(text: string): { paths: string[]; identifiers: string[]; numbers: string[] } {
  const paths: string[] = [];
  const identifiers: string[] = [];
  const numbers: string[] = [];
  let rest = text.replace(URL_RE, " ");
  rest = rest.replace(CODE_RE, (_m, code: string) => {
    const c = code.trim();
    if (c.includes("/") || new RegExp(String.raw`\.(?:${EXTENSIONS})$`).test(c)) paths.push(c);
    else if (/^[A-Za-z_$][\w$.]*(?:\(\))?$/.test(c) && c.length >= 3) identifiers.push(c.replace(/\(\)$/, ""));
    return " ";
  });
  rest = rest.replace(PATH_RE, (p) => {
    if (/[A-Za-z]/.test(p) && !/^\d/.test(p)) paths.push(p.replace(/[.:,;]+$/, ""));
    return " ";
  });
  for (const id of rest.matchAll(IDENT_RE)) if (id[0].length >= 3) identifiers.push(id[0]);
  for (const num of rest.matchAll(NUMBER_RE)) if (num[1]!.replace(/\./g, "").length >= 2) numbers.push(num[0]);
  return { paths, identifiers, numbers };
}

function numberKey(text: string): string {
  return text.match(/^\d+(?:\.\d+)*/)?.[0] ?? text;
}

export interface LostInput {
  /** History + turn prefix, in order. */
  summarized: readonly ProjectedEntry[];
  kept: readonly ProjectedEntry[];
  /** The previous summary the summarizer updated, and its compaction. */
  previous?: { entryId: string; summary: string };
  summary: string;
  /** Paths are also compared relative to it. */
  cwd?: string;
  reader: EntryReader;
}

function messagesOf(reader: EntryReader, e: ProjectedEntry): AgentMessage[] {
  if (e.record.type === "compaction" || e.roles.length === 0) return [];
  const entry = reader.readEntry(e.record);
  const edit = e.edit ? (reader.readEntry(e.edit) as ContextEditEntry) : undefined;
  return projectEntryMessages(entry, edit).filter((m) => m.role !== "system");
}

const ENTRIES_PER_STEP = 100;

/** Never throws for odd content (an unreadable entry is skipped). */
export function findLostItems(input: LostInput): LostReport {
  return drain(lostItemSteps(input));
}

/** {@link findLostItems} yielding every {@link ENTRIES_PER_STEP} entries, so the caller can let the event loop run. */
export function* lostItemSteps(input: LostInput): Generator<void, LostReport> {
  const found = new Map<string, LostItem>();
  const add = (kind: LostKind, text: string, entryId: string) => {
    const t = text.trim();
    if (!t) return;
    const key = `${kind}\0${kind === "command" ? normalizeCommand(t) : t}`;
    const item = found.get(key);
    if (item) item.count++;
    else found.set(key, { kind, text: kind === "command" ? normalizeCommand(t) : t, entryId, count: 1 });
  };
  const addText = (text: string, entryId: string) => {
    const items = textItems(text);
    for (const p of items.paths) add("path", p, entryId);
    for (const i of items.identifiers) add("identifier", i, entryId);
    for (const n of items.numbers) add("number", n, entryId);
  };
  let scanned = 0;
  let truncated = false;
  let entries = 0;
  if (input.previous) addText(input.previous.summary, input.previous.entryId);
  let read = 0;
  for (const e of input.summarized) {
    if (e.record.type === "message" && e.record.role === "toolResult") continue; // contents, not items
    if (++read % ENTRIES_PER_STEP === 0) yield;
    if (scanned > LOST_SCAN_LIMIT) {
      truncated = true;
      break;
    }
    let messages: AgentMessage[];
    try {
      messages = messagesOf(input.reader, e);
    } catch {
      continue;
    }
    if (messages.length > 0) entries++;
    for (const m of messages) {
      const parts = partsOf(m);
      for (const p of parts.paths) add("path", p, e.record.id);
      for (const c of parts.commands) add("command", c, e.record.id);
      for (const t of parts.texts) {
        scanned += t.length;
        addText(t, e.record.id);
      }
    }
  }

  // what survives: the summary and everything the kept part shows the model
  const keptTexts: string[] = [input.summary];
  for (const e of input.kept) {
    if (++read % ENTRIES_PER_STEP === 0) yield;
    try {
      for (const m of messagesOf(input.reader, e)) keptTexts.push(...partsOf(m).all);
    } catch {
      // unreadable: nothing kept from it
    }
  }
  const haystack = keptTexts.join("\n");
  const collapsed = normalizeCommand(haystack);
  const keptNumbers = new Set<string>();
  for (const t of keptTexts) for (const num of textItems(t).numbers) keptNumbers.add(numberKey(num));
  const cwd = input.cwd?.replace(/\/+$/, "");
  const wordIn = (word: string) =>
    new RegExp(String.raw`(?<![\w$])${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\w$])`).test(haystack);
  const pathKept = (p: string) => {
    const variants = new Set([p, p.replace(/^\.\//, "")]);
    if (cwd && p.startsWith(`${cwd}/`)) variants.add(p.slice(cwd.length + 1));
    if (cwd && !p.startsWith("/")) variants.add(`${cwd}/${p.replace(/^\.\//, "")}`);
    for (const v of variants) if (v && haystack.includes(v)) return true;
    return false;
  };
  const totals = Object.fromEntries(LOST_KINDS.map((k) => [k, { found: 0, lost: 0 }])) as LostReport["totals"];
  const items: LostItem[] = [];
  for (const item of found.values()) {
    totals[item.kind].found++;
    const kept =
      item.kind === "path"
        ? pathKept(item.text)
        : item.kind === "command"
          ? collapsed.includes(item.text)
          : item.kind === "number"
            ? keptNumbers.has(numberKey(item.text))
            : wordIn(item.text);
    if (kept) continue;
    totals[item.kind].lost++;
    items.push(item);
  }
  items.sort((a, b) => LOST_KINDS.indexOf(a.kind) - LOST_KINDS.indexOf(b.kind));
  return { items, totals, summarizedEntries: entries, truncated };
}

/** The ranges pi prepared at a written compaction's parent; undefined when not on that path (hand-made, damaged). */
export function compactionRange(
  index: Parameters<typeof buildProjection>[0],
  compaction: EntryRecord,
): Omit<LostInput, "summary" | "reader" | "cwd"> | undefined {
  if (!compaction.parentId || !compaction.firstKeptEntryId) return undefined;
  const entries = buildProjection(index, compaction.parentId).entries;
  const previousIndex = entries.findIndex((e) => e.record.type === "compaction" && e.roles.length > 0);
  const start = previousIndex + 1;
  const firstKept = entries.findIndex((e, i) => i >= start && e.record.id === compaction.firstKeptEntryId);
  if (firstKept < 0) return undefined;
  const previous = previousIndex >= 0 ? entries[previousIndex]!.record : undefined;
  return {
    summarized: entries.slice(start, firstKept),
    kept: entries.slice(firstKept),
    ...(previous?.summary ? { previous: { entryId: previous.id, summary: previous.summary } } : {}),
  };
}

const lostMemo = new WeakMap<EntryRecord, LostReport | null>();

/** Memoised per record (a compaction never changes); null when its range or a body cannot be read. */
export function compactionLostItems(
  session: Parameters<typeof buildProjection>[0] & EntryReader & { cwd?: string | undefined },
  compaction: EntryRecord,
): LostReport | null {
  return drain(compactionLostItemSteps(session, compaction));
}

export function* compactionLostItemSteps(
  session: Parameters<typeof buildProjection>[0] & EntryReader & { cwd?: string | undefined },
  compaction: EntryRecord,
): Generator<void, LostReport | null> {
  const hit = lostMemo.get(compaction);
  if (hit !== undefined) return hit;
  let report: LostReport | null = null;
  try {
    const range = compactionRange(session, compaction);
    if (range)
      report = yield* lostItemSteps({
        ...range,
        summary: compaction.summary ?? "",
        reader: session,
        ...(session.cwd ? { cwd: session.cwd } : {}),
      });
  } catch {
    report = null;
  }
  lostMemo.set(compaction, report);
  return report;
}

/** Over a preparation's range (history, turn prefix, previous summary) and its kept part. */
export function preparationLostItems(
  preparation: Pick<
    CompactionPreparation,
    "messagesToSummarize" | "turnPrefixMessages" | "keptEntries" | "previousSummary" | "previousCompactionId"
  >,
  summary: string,
  reader: EntryReader,
  cwd?: string,
): LostReport {
  return findLostItems({
    summarized: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages],
    kept: preparation.keptEntries,
    ...(preparation.previousSummary !== undefined && preparation.previousCompactionId
      ? { previous: { entryId: preparation.previousCompactionId, summary: preparation.previousSummary } }
      : {}),
    summary,
    reader,
    ...(cwd ? { cwd } : {}),
  });
}

/** A scoped summary ("Summarize these messages") found on the path: its note and the span it replaced. */
export interface SpanSummaryRecord {
  edit: EntryRecord;
  targetId: string;
  note: NonNullable<ReturnType<typeof parseSpanNote>>;
}

export function spanSummaryOf(reader: EntryReader, edit: EntryRecord): SpanSummaryRecord | undefined {
  if (edit.type !== "context_edit" || edit.replacementIsNull !== false || !edit.targetId) return undefined;
  try {
    const content = (reader.readEntry(edit) as unknown as ContextEditEntry).replacement?.content;
    const text =
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content
              .map((b) =>
                b && (b as { type?: unknown }).type === "text" ? String((b as { text?: unknown }).text ?? "") : "",
              )
              .join("")
          : "";
    const note = parseSpanNote(text);
    return note ? { edit, targetId: edit.targetId, note } : undefined;
  } catch {
    return undefined;
  }
}

const spanLostMemo = new WeakMap<EntryRecord, LostReport | null>();

/** A scoped summary's losses, against the context right before its batch of edits; null when not rebuildable. */
export function* spanLostItemSteps(
  session: Parameters<typeof buildProjection>[0] & EntryReader & { cwd?: string | undefined },
  span: SpanSummaryRecord,
): Generator<void, LostReport | null> {
  const hit = spanLostMemo.get(span.edit);
  if (hit !== undefined) return hit;
  let report: LostReport | null = null;
  try {
    // the leaf before the batch: up the chain of context edits the note's edit belongs to
    let parent = span.edit.parentId;
    for (let guard = 0; parent && guard < 100_000; guard++) {
      const r = session.byId.get(parent);
      if (!r || r.type !== "context_edit") break;
      parent = r.parentId;
    }
    const entries = buildProjection(session, parent ?? null).entries;
    const from = entries.findIndex((e) => e.record.id === span.note.fromId);
    const to = entries.findIndex((e) => e.record.id === span.note.toId);
    if (from >= 0 && to >= from)
      report = yield* lostItemSteps({
        summarized: entries.slice(from, to + 1),
        kept: [...entries.slice(0, from), ...entries.slice(to + 1)],
        summary: span.note.summary,
        reader: session,
        ...(session.cwd ? { cwd: session.cwd } : {}),
      });
  } catch {
    report = null;
  }
  spanLostMemo.set(span.edit, report);
  return report;
}
