/**
 * One compact record per session entry, without its bodies (a session can be hundreds of MB of tool
 * output and screenshots; `SessionFile.readEntry` re-reads a body when needed). Rules mirror pi 1.6.0
 * `session-manager.js` (`sessionEntryToContextMessages`) and `compaction/*.js`.
 */

import {
  estimateProblem,
  estimateTokens,
  messageChars,
  readUsage,
  calculateContextTokens,
  totalChars,
  type CharBreakdown,
  type EstimateProblem,
  type UsageNumbers,
} from "./estimate";
import type { FileListDetails, MessageRole, SystemMessage } from "../types";

export type FileOpKind = "read" | "write" | "edit";

export interface FileOp {
  kind: FileOpKind;
  /** As the tool call wrote it (not normalised). */
  path: string;
}

export interface EntryRecord {
  /** File order, 0-based; the header is not an entry. */
  index: number;
  line: number;
  /** Bytes, without the newline. */
  offset: number;
  byteLength: number;
  id: string;
  parentId: string | null;
  type: string;
  timestamp: string;

  role?: string;
  /** Σ pi `estimateTokens` over the non-system messages it contributes when not edited. */
  tokens: number;
  chars: CharBreakdown;
  system?: SystemMessage;
  systemTokens: number;
  /** Where pi's `estimateTokens` fails (throws or `NaN`) on those messages; absent: pi counts them. */
  estimateProblem?: EstimateProblem;
  systemEstimateProblem?: EstimateProblem;

  /** Message missing or null: pi keeps it, but building a context through it throws (`message.role`). */
  messageMissing?: true;
  stopReason?: string;
  usage?: UsageNumbers;
  /** `calculateContextTokens(usage)` when finite and > 0, else 0 (pi ignores such usage). */
  usageTokens: number;
  provider?: string;
  model?: string;
  /** pi's `responseModel`: the model that actually answered (OpenRouter `auto` …). */
  responseModel?: string;
  /** ms; pi-ai sets it when the request starts. */
  messageTime?: number;
  /** `pi-virtual` marks a virtual model's failed routing. */
  api?: string;
  errorMessage?: string;
  toolNames?: string[];
  /** Parallel to {@link toolNames} (`""` without a string id); what pi-ai pairs tool results with. */
  toolCallIds?: string[];
  fileOps?: FileOp[];
  toolName?: string;
  toolCallId?: string;
  isError?: boolean;
  /** `bashExecution` with `!!`: not sent to the model (but still counted by pi's estimator). */
  excludeFromContext?: boolean;
  images?: number;
  preview?: string;

  summary?: string;
  firstKeptEntryId?: string;
  tokensBefore?: number;
  fromHook?: boolean;
  details?: Partial<FileListDetails>;
  fromId?: string;

  targetId?: string;
  replacementIsNull?: boolean;
  /** A replacement pi's `appendContextEdit` never writes (pi's projection throws or sends no content). */
  replacementInvalid?: boolean;

  /** `undefined` or empty clears. */
  label?: string;
  name?: string;
  thinkingLevel?: string;
  modelId?: string;
  usageKind?: string;
  customType?: string;
  display?: boolean;
  /** Only pi-context's own `custom` entries keep their (small) `data`. */
  data?: unknown;
}

export const PREVIEW_LENGTH = 160;

/** The entry pi-context appends to persist a branch switch without a summary. */
export const PI_CONTEXT_CUSTOM_TYPE = "pi-context/leaf";

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** pi's `appendContextEdit` check: `null`, or an object with a string or array `content`. */
function validReplacement(value: unknown): boolean {
  if (value === null) return true;
  if (!isObject(value) || !("content" in value)) return false;
  return typeof value.content === "string" || Array.isArray(value.content);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** First line for a preview (leading whitespace dropped, clipped), reading no more of a long text than needed. */
function firstLine(text: string): string {
  const start = text.search(/\S/);
  if (start < 0) return "";
  const head = text.slice(start, start + PREVIEW_LENGTH + 2);
  const nl = head.search(/\r?\n/);
  return clipPreview(nl >= 0 ? head.slice(0, nl) : head);
}

function clipPreview(line: string): string {
  return line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH - 1)}…` : line;
}

/** A copy: V8 keeps a slice of ≥ 13 units as a view that would keep the whole line alive. */
export function ownCopy(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, "utf16le").toString("utf16le");
}

function previewOf(value: unknown): string | undefined {
  return typeof value === "string" && value ? firstLine(value) : undefined;
}

function previewSource(source: unknown): string | undefined {
  if (typeof source === "string") return source;
  if (!Array.isArray(source)) return undefined;
  for (const block of source) {
    if (isObject(block) && block.type === "text" && typeof block.text === "string" && block.text) return block.text;
  }
  return undefined;
}

function countImages(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const block of content) if (isObject(block) && block.type === "image") n++;
  return n;
}

/** pi `addFileOp`: tool name exactly `read`/`write`/`edit` and a non-empty string `arguments.path`. */
function addFileOp(name: unknown, args: unknown, into: FileOp[]): void {
  if (!isObject(args)) return;
  const path = str(args.path);
  if (!path) return;
  if (name === "read") into.push({ kind: "read", path });
  else if (name === "write") into.push({ kind: "write", path });
  else if (name === "edit") into.push({ kind: "edit", path });
}

/** pi `extractFileOpsFromMessage`: assistant `toolCall` blocks, or a tool result's `nestedCalls.calls`. */
export function fileOpsOfMessage(message: unknown): FileOp[] {
  const ops: FileOp[] = [];
  if (!isObject(message)) return ops;
  if (message.role === "toolResult") {
    const nested = message.nestedCalls;
    const calls = isObject(nested) ? nested.calls : undefined;
    if (Array.isArray(calls)) for (const call of calls) if (isObject(call)) addFileOp(call.name, call.arguments, ops);
    return ops;
  }
  if (message.role !== "assistant" || !Array.isArray(message.content)) return ops;
  for (const block of message.content) {
    if (isObject(block) && block.type === "toolCall" && "arguments" in block && "name" in block)
      addFileOp(block.name, block.arguments, ops);
  }
  return ops;
}

function stringArray(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  for (const item of value) {
    const s = str(item);
    if (s !== undefined) out.push(s);
  }
  return out;
}

export interface LineLocation {
  index: number;
  line: number;
  offset: number;
  byteLength: number;
}

export interface RecordError {
  code: "not-an-object" | "missing-id";
  message: string;
}

/** The record of one parsed entry line (migrated to v3), keeping none of its long strings, or why pi cannot use it. */
export function buildRecord(value: unknown, at: LineLocation): EntryRecord | RecordError {
  if (!isObject(value))
    return {
      code: "not-an-object",
      message:
        "line is valid JSON but not an object (pi 1.6.0 still counts it as an entry: as the last line it becomes pi's leaf, with an empty context)",
    };
  const id = str(value.id);
  if (id === undefined) {
    const what = value.id === undefined ? "no id" : `a ${typeof value.id} id ${JSON.stringify(value.id)}`;
    return {
      code: "missing-id",
      message: `${String(str(value.type) ?? "entry")} with ${what}, not a string (pi 1.6.0 keeps it in its tree under that id, so its leaf, path and tokens can differ from these)`,
    };
  }
  const parentId = str(value.parentId) ?? null;
  const type = str(value.type) ?? "";
  const record: EntryRecord = {
    index: at.index,
    line: at.line,
    offset: at.offset,
    byteLength: at.byteLength,
    id,
    parentId,
    type,
    timestamp: str(value.timestamp) ?? "",
    tokens: 0,
    chars: { text: 0, thinking: 0, toolCalls: 0, images: 0, tools: 0 },
    systemTokens: 0,
    usageTokens: 0,
  };
  switch (type) {
    case "message": {
      const message = value.message;
      // pi keeps it in its tree, but building a context through it throws (it reads message.role)
      if (message === undefined || message === null) record.messageMissing = true;
      // pi keeps a message that is `false`, a string, a number or an array: no role, no tokens
      if (isObject(message)) fillMessage(record, message);
      break;
    }
    case "compaction": {
      record.summary = str(value.summary) ?? "";
      record.firstKeptEntryId = str(value.firstKeptEntryId);
      record.tokensBefore = typeof value.tokensBefore === "number" ? value.tokensBefore : undefined;
      record.fromHook = Boolean(value.fromHook);
      record.details = readDetails(value.details);
      const summaryMessage = { role: "compactionSummary", summary: value.summary };
      record.chars = messageChars(summaryMessage);
      record.tokens = estimateTokens(summaryMessage);
      setProblem(record, summaryMessage);
      if (value.systemMessage) {
        const system = normaliseSystem(value.systemMessage);
        record.system = system;
        record.systemTokens = estimateTokens(system);
        const problem = estimateProblem(system);
        if (problem) record.systemEstimateProblem = problem;
      }
      const usage = readUsage(value.usage);
      if (usage) record.usage = usage;
      break;
    }
    case "branch_summary": {
      record.summary = str(value.summary) ?? "";
      record.fromId = str(value.fromId);
      record.fromHook = Boolean(value.fromHook);
      record.details = readDetails(value.details);
      if (typeof value.summary === "string" && value.summary) {
        const summaryMessage = { role: "branchSummary", summary: value.summary };
        record.chars = messageChars(summaryMessage);
        record.tokens = estimateTokens(summaryMessage);
      }
      const usage = readUsage(value.usage);
      if (usage) record.usage = usage;
      break;
    }
    case "custom_message": {
      record.customType = str(value.customType);
      record.display = Boolean(value.display);
      const message = { role: "custom", content: value.content ?? [] };
      setChars(record, message);
      setProblem(record, message);
      setPreview(record, value.content);
      record.images = countImages(value.content);
      break;
    }
    case "context_edit":
      record.targetId = str(value.targetId);
      record.replacementIsNull = value.replacement === null;
      if (!validReplacement(value.replacement)) record.replacementInvalid = true;
      break;
    case "label":
      record.targetId = str(value.targetId);
      record.label = str(value.label);
      break;
    case "session_info":
      record.name = str(value.name);
      break;
    case "model_change":
      record.provider = str(value.provider);
      record.modelId = str(value.modelId);
      break;
    case "thinking_level_change":
      record.thinkingLevel = str(value.thinkingLevel);
      break;
    case "custom":
      record.customType = str(value.customType);
      if (record.customType?.startsWith("pi-context/")) record.data = value.data;
      break;
    case "usage": {
      record.usageKind = str(value.kind);
      record.provider = str(value.provider);
      record.model = str(value.model);
      const usage = readUsage(value.usage);
      if (usage) record.usage = usage;
      break;
    }
    default:
      break;
  }
  return record;
}

function readDetails(details: unknown): Partial<FileListDetails> | undefined {
  if (!isObject(details)) return undefined;
  const out: Partial<FileListDetails> = {};
  const readFiles = stringArray(details.readFiles);
  const modifiedFiles = stringArray(details.modifiedFiles);
  if (readFiles) out.readFiles = readFiles;
  if (modifiedFiles) out.modifiedFiles = modifiedFiles;
  return out;
}

/** pi's projection: `content == null` becomes `""`. */
function normaliseSystem(message: unknown): SystemMessage {
  const system = message as SystemMessage;
  if (isObject(system) && system.content == null) return { ...system, content: "" };
  return system;
}

/** Taken while the line is in memory, so a record never depends on the file staying as it was. */
function setPreview(record: EntryRecord, field: unknown): void {
  const preview = previewOf(previewSource(field));
  if (preview !== undefined) record.preview = ownCopy(preview);
}

function setProblem(record: EntryRecord, message: unknown): void {
  const problem = estimateProblem(message);
  if (problem) record.estimateProblem = problem;
}

function setChars(record: EntryRecord, message: unknown): void {
  record.chars = messageChars(message);
  record.tokens = Math.ceil(totalChars(record.chars) / 4);
}

function fillMessage(record: EntryRecord, message: Obj): void {
  const role = str(message.role) ?? "";
  record.role = role;
  if (role === "system") {
    const system = normaliseSystem(message);
    record.system = system;
    record.systemTokens = estimateTokens(system);
    const problem = estimateProblem(system);
    if (problem) record.systemEstimateProblem = problem;
    return;
  }
  setChars(record, message);
  // pi's projection gives user/assistant/toolResult messages without content an empty list
  const projected =
    (role === "user" || role === "assistant" || role === "toolResult") && message.content == null
      ? { ...message, content: [] }
      : message;
  setProblem(record, projected);
  switch (role) {
    case "assistant": {
      record.stopReason = str(message.stopReason);
      record.provider = str(message.provider);
      record.model = str(message.model);
      record.api = str(message.api);
      const responseModel = str(message.responseModel);
      if (responseModel !== undefined) record.responseModel = responseModel;
      if (typeof message.timestamp === "number") record.messageTime = message.timestamp;
      if (message.errorMessage !== undefined) {
        const error = previewOf(message.errorMessage);
        if (error) record.errorMessage = ownCopy(error);
      }
      const usage = readUsage(message.usage);
      if (usage) {
        record.usage = usage;
        const tokens = calculateContextTokens(usage);
        record.usageTokens = Number.isFinite(tokens) && tokens > 0 ? tokens : 0;
      }
      const names: string[] = [];
      const ids: string[] = [];
      if (Array.isArray(message.content)) {
        for (const block of message.content) {
          if (isObject(block) && block.type === "toolCall") {
            names.push(str(block.name) ?? "?");
            ids.push(str(block.id) ?? "");
          }
        }
      }
      if (names.length > 0) {
        record.toolNames = names;
        record.toolCallIds = ids;
      }
      const ops = fileOpsOfMessage(message);
      if (ops.length > 0) record.fileOps = ops;
      setPreview(record, message.content);
      break;
    }
    case "toolResult": {
      record.toolName = str(message.toolName);
      record.toolCallId = str(message.toolCallId);
      record.isError = Boolean(message.isError);
      // pi counts a tool result's own usage (a tool that called a model) in the session totals
      const toolUsage = readUsage(message.usage);
      if (toolUsage) record.usage = toolUsage;
      const ops = fileOpsOfMessage(message);
      if (ops.length > 0) record.fileOps = ops;
      setPreview(record, message.content);
      record.images = countImages(message.content);
      break;
    }
    case "user":
    case "custom":
      setPreview(record, message.content);
      record.images = countImages(message.content);
      if (role === "custom") record.customType = str(message.customType);
      break;
    case "bashExecution":
      record.excludeFromContext = Boolean(message.excludeFromContext);
      setPreview(record, message.command);
      break;
    default:
      break;
  }
}

/** Roles pi's `sessionEntryToContextMessages` produces, before context edits. */
export function entryRoles(record: EntryRecord): MessageRole[] {
  switch (record.type) {
    case "message":
      return record.messageMissing ? [] : [record.role as MessageRole];
    case "custom_message":
      return ["custom"];
    case "branch_summary":
      return record.summary ? ["branchSummary"] : [];
    case "compaction":
      return record.system ? ["system", "compactionSummary"] : ["compactionSummary"];
    default:
      return [];
  }
}
