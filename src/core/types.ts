/**
 * pi 1.6.0 session file types (session format version 3), named as pi names them.
 *
 * Source: `@earendil-works/pi-coding-agent@1.6.0` `dist/core/session-manager.d.ts`,
 * `dist/core/messages.d.ts` and pi-ai's `types.d.ts`; see `docs/session-format.md` in that package.
 * Session files are never validated by pi, so every field read from a file may be missing or of the
 * wrong type: code that reads these types must be defensive.
 */

export const CURRENT_SESSION_VERSION = 3;

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
  reasoning?: number;
  totalTokens: number;
  cost?: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    total: number;
    totalFromProvider?: boolean;
  };
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: unknown[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api?: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: unknown;
  nestedCalls?: { calls: { id?: string; name: string; arguments?: Record<string, unknown> }[]; complete?: boolean };
  isError: boolean;
  timestamp: number;
}

export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | null | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  excludeFromContext?: boolean;
  timestamp: number;
}

export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  timestamp: number;
}

export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** Every message role pi can put into a session's model context (`AgentMessage` in pi). */
export type AgentMessage =
  | SystemMessage
  | UserMessage
  | AssistantMessage
  | ToolResultMessage
  | BashExecutionMessage
  | CustomMessage
  | BranchSummaryMessage
  | CompactionSummaryMessage;

export type MessageRole = AgentMessage["role"];

/** First line of every session file; not part of the entry tree. */
export interface SessionHeader {
  type: "session";
  version?: number;
  id: string;
  timestamp?: string;
  cwd?: string;
  parentSession?: string;
}

export interface EntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

/** `details` pi writes on compactions and branch summaries it generated itself. */
export interface FileListDetails {
  readFiles: string[];
  modifiedFiles: string[];
}

export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  usage?: Usage;
  fromHook?: boolean;
  systemMessage?: SystemMessage;
}

export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: unknown;
  usage?: Usage;
  fromHook?: boolean;
}

export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  targetId: string;
  replacement: null | { content: string | (TextContent | ImageContent | ThinkingContent | ToolCall)[] };
}

export interface UsageEntry extends EntryBase {
  type: "usage";
  kind: string;
  provider: string;
  model: string;
  usage: Usage;
  note?: string;
}

export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}

export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label?: string;
}

export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

/** Every entry type pi 1.6.0 writes. Unknown types are kept as plain {@link EntryBase}. */
export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | ContextEditEntry
  | UsageEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

export const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set([
  "message",
  "model_change",
  "thinking_level_change",
  "compaction",
  "branch_summary",
  "context_edit",
  "usage",
  "custom",
  "custom_message",
  "label",
  "session_info",
]);

/** Severity of a problem found while reading a session or settings file. */
export type DiagnosticSeverity = "error" | "warning" | "info";

/** A problem found in an input file: where, what, and how we degraded. */
export interface Diagnostic {
  severity: DiagnosticSeverity;
  /** Stable machine-readable kind, e.g. `malformed-line`, `truncated-final-line`, `parent-cycle`. */
  code: string;
  message: string;
  /** 1-based physical line number in the file, when the problem is tied to a line. */
  line?: number;
  /** Byte offset of that line. */
  offset?: number;
  /** A line pi skips that is no entry at all: its length in bytes and the SHA-256 of its bytes (to acknowledge it). */
  lineBytes?: number;
  lineSha256?: string;
  entryId?: string;
  /** Other entries involved (e.g. the members of a parent cycle). */
  relatedIds?: string[];
}
