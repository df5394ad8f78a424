/** Full messages for summarization and pi 1.6.0's text serialisation of a conversation (`compaction/utils.js`). */

import type { ProjectedEntry } from "./context";
import type { EntryRecord } from "../read/entries";
import type { BranchMessage } from "./branch";
import type { AgentMessage, ContextEditEntry, SessionEntry } from "../types";

export interface EntryReader {
  readEntry(record: EntryRecord): SessionEntry;
}

type Obj = Record<string, unknown>;

function ms(timestamp: unknown): number {
  return new Date(timestamp as string).getTime();
}

export function entryToContextMessages(entry: SessionEntry): AgentMessage[] {
  const e = entry as unknown as Obj;
  switch (entry.type) {
    case "message": {
      const message = e.message as Obj;
      if (message.role === "system" && message.content == null)
        return [{ ...message, content: "" } as unknown as AgentMessage];
      if (
        (message.role === "user" || message.role === "assistant" || message.role === "toolResult") &&
        message.content == null
      ) {
        return [{ ...message, content: [] } as unknown as AgentMessage];
      }
      return [message as unknown as AgentMessage];
    }
    case "custom_message":
      return [
        {
          role: "custom",
          customType: e.customType,
          content: e.content ?? [],
          display: e.display,
          details: e.details,
          timestamp: ms(e.timestamp),
        } as unknown as AgentMessage,
      ];
    case "branch_summary":
      return e.summary
        ? [
            {
              role: "branchSummary",
              summary: e.summary,
              fromId: e.fromId,
              timestamp: ms(e.timestamp),
            } as unknown as AgentMessage,
          ]
        : [];
    case "compaction": {
      const summary = {
        role: "compactionSummary",
        summary: e.summary,
        tokensBefore: e.tokensBefore,
        timestamp: ms(e.timestamp),
      } as unknown as AgentMessage;
      return e.systemMessage ? [e.systemMessage as AgentMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

/** pi's `projectContextEntry(entry, edit)`. */
export function projectEntryMessages(entry: SessionEntry, edit: ContextEditEntry | undefined): AgentMessage[] {
  const messages = entryToContextMessages(entry);
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    if (
      message.role !== "user" &&
      message.role !== "assistant" &&
      message.role !== "toolResult" &&
      message.role !== "custom"
    )
      return message;
    const content =
      (message.role === "assistant" || message.role === "toolResult") && typeof replacement?.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement?.content;
    return { ...message, content } as AgentMessage;
  });
}

/** As pi's compaction gets them: edits applied, compactions and system messages dropped. */
export function compactionMessages(reader: EntryReader, entries: readonly ProjectedEntry[]): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (const e of entries) {
    if (e.record.type === "compaction" || e.roles.length === 0) continue;
    const entry = reader.readEntry(e.record);
    const edit = e.edit ? (reader.readEntry(e.edit) as ContextEditEntry) : undefined;
    for (const m of projectEntryMessages(entry, edit)) if (m.role !== "system") out.push(m);
  }
  return out;
}

export function branchMessages(reader: EntryReader, messages: readonly BranchMessage[]): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (const m of messages) {
    const entry = reader.readEntry(m.record) as unknown as Obj;
    const edit = m.edit ? (reader.readEntry(m.edit) as ContextEditEntry) : undefined;
    switch (m.record.type) {
      case "branch_summary":
        out.push({
          role: "branchSummary",
          summary: entry.summary,
          fromId: entry.fromId,
          timestamp: ms(entry.timestamp),
        } as unknown as AgentMessage);
        break;
      case "compaction":
        out.push({
          role: "compactionSummary",
          summary: entry.summary,
          tokensBefore: entry.tokensBefore,
          timestamp: ms(entry.timestamp),
        } as unknown as AgentMessage);
        break;
      case "custom_message":
        if (edit) out.push(...projectEntryMessages(entry as unknown as SessionEntry, edit).slice(0, 1));
        else
          out.push({
            role: "custom",
            customType: entry.customType,
            content: entry.content,
            display: entry.display,
            details: entry.details,
            timestamp: ms(entry.timestamp),
          } as unknown as AgentMessage);
        break;
      default:
        out.push(
          ...(edit
            ? projectEntryMessages(entry as unknown as SessionEntry, edit).slice(0, 1)
            : [entry.message as AgentMessage]),
        );
    }
  }
  return out;
}

/** pi's summary wrappers (`messages.js`). */
export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
export const BRANCH_SUMMARY_PREFIX =
  "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
export const BRANCH_SUMMARY_SUFFIX = "</summary>";

/** Roles system/user/assistant/toolResult only. */
export type LlmMessage = Extract<AgentMessage, { role: "system" | "user" | "assistant" | "toolResult" }>;

export function bashExecutionToText(m: {
  command: string;
  output: string;
  exitCode?: number | null;
  cancelled?: boolean;
  truncated?: boolean;
  fullOutputPath?: string;
}): string {
  let text = `Ran \`${m.command}\`\n`;
  text += m.output ? `\`\`\`\n${m.output}\n\`\`\`` : "(no output)";
  if (m.cancelled) text += "\n\n(command cancelled)";
  else if (m.exitCode !== null && m.exitCode !== undefined && m.exitCode !== 0)
    text += `\n\nCommand exited with code ${m.exitCode}`;
  if (m.truncated && m.fullOutputPath) text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
  return text;
}

/** pi's `convertToLlm`: bash → user text (unless excluded), custom → user, summaries → user in `<summary>` tags. */
export function convertToLlm(messages: readonly AgentMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "bashExecution":
        if (m.excludeFromContext) break;
        out.push({ role: "user", content: [{ type: "text", text: bashExecutionToText(m) }], timestamp: m.timestamp });
        break;
      case "custom":
        out.push({
          role: "user",
          content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
          timestamp: m.timestamp,
        });
        break;
      case "branchSummary":
        out.push({
          role: "user",
          content: [{ type: "text", text: BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX }],
          timestamp: m.timestamp,
        });
        break;
      case "compactionSummary":
        out.push({
          role: "user",
          content: [{ type: "text", text: COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX }],
          timestamp: m.timestamp,
        });
        break;
      case "system":
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      default:
        break;
    }
  }
  return out;
}

export function contentText(content: unknown, separator = "\n"): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as Obj).type === "text")
    .map((b) => (b as Obj).text)
    .join(separator);
}

/** What a user/custom message target puts back in the editor when pi navigates to it (`navigateTree` `editorText`). */
export function entryEditorText(entry: SessionEntry): string | undefined {
  const e = entry as unknown as { type: string; message?: { role?: string; content?: unknown }; content?: unknown };
  if (e.type === "message" && e.message?.role === "user") return contentText(e.message.content, "");
  if (e.type === "custom_message") return contentText(e.content, "");
  return undefined;
}

export const TOOL_RESULT_MAX_CHARS = 2000;

/** pi's `sliceHead`: at most `maxUnits` UTF-16 units without splitting a surrogate pair. */
export function sliceHead(text: string, maxUnits: number): string {
  const end = Math.max(0, maxUnits);
  const high = text.charCodeAt(end - 1);
  const low = text.charCodeAt(end);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff
    ? text.slice(0, end - 1)
    : text.slice(0, end);
}

function truncateForSummary(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${sliceHead(text, maxChars)}\n\n[... ${text.length - maxChars} more characters truncated]`;
}

/** pi's `serializeConversation(convertToLlm(messages))`: `[User]: …` parts, tool results cut at 2000 chars. */
export function serializeConversation(messages: readonly LlmMessage[]): string {
  const parts: string[] = [];
  for (const msg of messages) {
    if (msg.role === "user") {
      const content = contentText(msg.content, "");
      if (content) parts.push(`[User]: ${content}`);
    } else if (msg.role === "assistant") {
      const blocks = Array.isArray(msg.content) ? msg.content : [];
      const toolCalls: string[] = [];
      for (const block of blocks) {
        if (block.type === "toolCall") {
          const args = (block.arguments ?? {}) as Obj;
          const argsStr = Object.entries(args)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(", ");
          toolCalls.push(`${block.name}(${argsStr})`);
        }
      }
      if (blocks.some((b) => b.type === "text")) parts.push(`[Assistant]: ${contentText(blocks)}`);
      if (toolCalls.length > 0) parts.push(`[Assistant tool calls]: ${toolCalls.join("; ")}`);
    } else if (msg.role === "toolResult") {
      const content = contentText(msg.content, "");
      if (content) parts.push(`[Tool result]: ${truncateForSummary(content, TOOL_RESULT_MAX_CHARS)}`);
    }
  }
  return parts.join("\n\n");
}
