/** Tool calls in tree rows, as pi's `/tree` words them. */

import type { EntryRecord } from "../core/read/entries";
import type { EntryReader } from "../core/rules/serialize";
import type { SessionTreeModel } from "../core/treeModel/model";
import * as l10n from "@vscode/l10n";

/** pi's `formatToolCall` in the `/tree` selector, without brackets. */
export function formatToolCall(name: string, args: Record<string, unknown>): string {
  const str = (v: unknown) => (v === undefined || v === null ? "" : String(v));
  switch (name) {
    case "read": {
      const range = readLineRange(args.offset, args.limit);
      return `read: ${str(args.path || args.file_path)}${range}`;
    }
    case "write":
    case "edit":
      return `${name}: ${str(args.path || args.file_path)}`;
    case "bash": {
      const raw = str(args.command);
      const cmd = raw
        .replace(/[\n\t]/g, " ")
        .trim()
        .slice(0, 50);
      return `bash: ${cmd}${raw.length > 50 ? "..." : ""}`;
    }
    case "grep":
      return l10n.t("grep: /{0}/ in {1}", str(args.pattern), str(args.path || "."));
    case "find":
      return l10n.t("find: {0} in {1}", str(args.pattern), str(args.path || "."));
    case "ls":
      return `ls: ${str(args.path || ".")}`;
    default: {
      const json = JSON.stringify(args) ?? "";
      return `${name}: ${json.slice(0, 40)}${json.length > 40 ? "..." : ""}`;
    }
  }
}

function readLineRange(offset: unknown, limit: unknown): string {
  const num = (v: unknown) => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : num(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = num(limit);
  if (count === undefined) return "";
  return `:${start}-${start + count - 1}`;
}

/** Tool call names summarized: `read ×2, edit`. */
export function summarizeToolNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(", ");
}

/** Read once per record: records are immutable, so nothing goes stale. */
const callTexts = new WeakMap<EntryRecord, Map<string, string>>();

/** Undefined when the call is not found (the row then shows the tool name). */
export function toolCallText(model: SessionTreeModel, r: EntryRecord, reader?: EntryReader): string | undefined {
  if (r.type !== "message" || r.role !== "toolResult" || !r.toolCallId || !reader) return undefined;
  const assistant = model.callingAssistant(r.id);
  if (!assistant) return undefined;
  let calls = callTexts.get(assistant);
  if (!calls) {
    calls = readCallTexts(reader, assistant);
    callTexts.set(assistant, calls);
  }
  return calls.get(r.toolCallId);
}

function readCallTexts(reader: EntryReader, assistant: EntryRecord): Map<string, string> {
  const calls = new Map<string, string>();
  try {
    const entry = reader.readEntry(assistant) as unknown as { message?: { content?: unknown } };
    const content = entry.message?.content;
    if (Array.isArray(content)) {
      for (const block of content) {
        if (block && typeof block === "object" && (block as { type?: unknown }).type === "toolCall") {
          const b = block as { id?: unknown; name?: unknown; arguments?: unknown };
          if (typeof b.id === "string")
            calls.set(
              b.id,
              formatToolCall(
                String(b.name ?? "tool"),
                (b.arguments && typeof b.arguments === "object" ? b.arguments : {}) as Record<string, unknown>,
              ),
            );
        }
      }
    }
  } catch {
    // stale or unreadable line: fall back to the tool name
  }
  return calls;
}
