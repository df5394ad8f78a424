/** The texts of the session tree's rows, as pi 1.6.0's `/tree` shows them (`getEntryDisplayText`). */

import { PI_CONTEXT_CUSTOM_TYPE, type EntryRecord } from "../core/read/entries";
import type { EntryReader } from "../core/rules/serialize";
import type { SessionTreeModel, TreeNode } from "../core/treeModel/model";
import { formatTokens, localisedRecord, pluralText, tokensText } from "../shared/format";
import { fileTitle, oneLine, plainText, readableError, shortModelName, summaryHeadline } from "./treeTextLines";
import { summarizeToolNames, toolCallText } from "./treeTextTools";
import * as l10n from "@vscode/l10n";

/** Entry kinds, for icons and texts. */
export type NodeKind =
  | "user"
  | "assistant"
  | "toolResult"
  | "bashExecution"
  | "system"
  | "customMessage"
  | "message"
  | "compaction"
  | "branchSummary"
  | "modelChange"
  | "thinkingLevel"
  | "label"
  | "sessionInfo"
  | "custom"
  | "leafMarker"
  | "contextEdit"
  | "usage"
  | "unknown";

/** Each kind in words (tooltips, screen readers): `user message`, `branch summary`, … */
export const KIND_NAMES: Readonly<Record<NodeKind, string>> = localisedRecord({
  user: () => l10n.t("user message"),
  assistant: () => l10n.t("assistant message"),
  toolResult: () => l10n.t("tool result"),
  bashExecution: () => l10n.t("bash execution"),
  system: () => l10n.t("system prompt"),
  customMessage: () => l10n.t("custom message"),
  message: () => l10n.t("message"),
  compaction: () => l10n.t("compaction"),
  branchSummary: () => l10n.t("branch summary"),
  modelChange: () => l10n.t("model change"),
  thinkingLevel: () => l10n.t("thinking level change"),
  label: () => l10n.t("label"),
  sessionInfo: () => l10n.t("session name"),
  custom: () => l10n.t("custom entry"),
  leafMarker: () => l10n.t("leaf marker (Pi Context)"),
  contextEdit: () => l10n.t("context edit"),
  usage: () => l10n.t("usage record"),
  unknown: () => l10n.t("unknown entry"),
});

/** Single-line and untrusted: they come from the session. */
export interface NodeDisplay
  extends
    RecordDescription,
    Pick<TreeNode, "id" | "label" | "isLeaf" | "isFileLeaf" | "onActivePath" | "branches" | "folded"> {
  hasSummary: boolean;
  timestamp: string;
}

/** Without `reader` a tool result's row shows the tool name instead of pi's call text. */
export function nodeDisplay(model: SessionTreeModel, id: string, reader?: EntryReader): NodeDisplay {
  const node = model.node(id);
  const r = node.record;
  if (!r) {
    return {
      id,
      kind: "unknown",
      text: l10n.t("(missing entry)"),
      detail: "",
      isLeaf: false,
      isFileLeaf: false,
      onActivePath: false,
      branches: 0,
      folded: 0,
      error: false,
      hasSummary: false,
      timestamp: "",
    };
  }
  const described = describeRecord(r, toolCallText(model, r, reader));
  const { kind, text, error } = described;
  let detail = described.detail;
  if (described.model !== undefined && node.modelChanged)
    detail = [detail, shortModelName(described.model)].filter(Boolean).join("  ");
  const out: NodeDisplay = {
    id,
    kind,
    text,
    detail,
    isLeaf: node.isLeaf,
    isFileLeaf: node.isFileLeaf,
    onActivePath: node.onActivePath,
    branches: node.branches,
    folded: node.folded,
    error,
    hasSummary: node.hasSummary,
    timestamp: node.timestamp,
  };
  if (described.errorMessage !== undefined) out.errorMessage = described.errorMessage;
  if (described.errorInText) out.errorInText = true;
  if (described.model !== undefined) out.model = described.model;
  if (node.label !== undefined) out.label = node.label;
  return out;
}

/** `“Read README.md and NOTES.md”`, shortened to `max`; the id for entries without words. */
export function entryWords(r: EntryRecord | undefined, max = 48): string {
  if (!r) return l10n.t("the start of the session");
  const text = describeRecord(r).text.trim();
  if (!text) return r.id;
  return `“${text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text}”`;
}

/** From the first of `indexes` that has it; `null` is the session's start; an unknown id stays its id. */
export function entryWordsOf(
  id: string | null,
  ...indexes: ({ byId: ReadonlyMap<string, EntryRecord> } | undefined)[]
): string {
  if (id === null) return entryWords(undefined);
  for (const index of indexes) {
    const record = index?.byId.get(id);
    if (record) return entryWords(record);
  }
  return id;
}

/** The tab title of a summary: `Branch summary – Build the LRU cache`, `Compaction summary – …`. */
export function summaryTitle(r: EntryRecord): string {
  const headline = summaryHeadline(r.summary ?? "");
  return fileTitle(
    `${r.type === "compaction" ? l10n.t("Compaction summary") : l10n.t("Branch summary")}${headline ? ` – ${headline}` : ""}`,
  );
}

/** What {@link describeRecord} tells about one record. */
export interface RecordDescription {
  kind: NodeKind;
  text: string;
  detail: string;
  error: boolean;
  errorMessage?: string;
  errorInText?: boolean;
  model?: string;
}

/** pi's `getEntryDisplayText` on records; a failed answer without text shows its error as pi's `/tree`. */
export function describeRecord(r: EntryRecord, toolCall?: string): RecordDescription {
  switch (r.type) {
    case "message":
      return describeMessage(r, toolCall);
    case "custom_message":
      return {
        kind: "customMessage",
        text: `[${r.customType ?? "custom"}] ${oneLine(plainText(r.preview ?? ""))}`.trim(),
        detail: r.display ? "" : l10n.t("hidden in pi"),
        error: false,
      };
    case "compaction":
      return {
        kind: "compaction",
        text: l10n.t(
          "Compaction: {0} tokens → summary",
          r.tokensBefore !== undefined ? formatTokens(r.tokensBefore) : "?",
        ),
        detail: l10n.t("{0}-token summary{1}", formatTokens(r.tokens), r.fromHook ? l10n.t(" (extension)") : ""),
        error: false,
      };
    case "branch_summary":
      return {
        kind: "branchSummary",
        text: l10n.t("Branch summary: {0}", summaryHeadline(r.summary ?? "") || l10n.t("(empty)")),
        detail: tokensText(r.tokens, formatTokens),
        error: false,
      };
    case "model_change":
      return {
        kind: "modelChange",
        text: l10n.t("Model: {0}{1}", r.provider ? `${r.provider}/` : "", r.modelId ?? "?"),
        detail: "",
        error: false,
      };
    case "thinking_level_change":
      return { kind: "thinkingLevel", text: l10n.t("Thinking: {0}", r.thinkingLevel ?? "?"), detail: "", error: false };
    case "label":
      return {
        kind: "label",
        text: l10n.t("Label: {0}", r.label ? oneLine(r.label) : l10n.t("(cleared)")),
        detail: r.targetId ? l10n.t("on {0}", r.targetId) : "",
        error: false,
      };
    case "session_info":
      return {
        kind: "sessionInfo",
        text: l10n.t("Title: {0}", r.name?.trim() ? oneLine(r.name) : l10n.t("(empty)")),
        detail: "",
        error: false,
      };
    case "custom":
      if (r.customType === PI_CONTEXT_CUSTOM_TYPE) {
        return { kind: "leafMarker", text: l10n.t("Leaf moved here"), detail: l10n.t("by Pi Context"), error: false };
      }
      return { kind: "custom", text: l10n.t("Custom: {0}", r.customType ?? "?"), detail: "", error: false };
    case "context_edit":
      return {
        kind: "contextEdit",
        text: l10n.t("Context {0}: {1}", r.replacementIsNull ? "omit" : "replace", r.targetId ?? "?"),
        detail: "",
        error: false,
      };
    case "usage":
      return {
        kind: "usage",
        text: l10n.t("Usage: {0}/{1}", r.provider ?? "?", r.model ?? "?"),
        detail: "",
        error: false,
      };
    default:
      return { kind: "unknown", text: `[${r.type || "unknown"}]`, detail: "", error: false };
  }
}

function describeMessage(r: EntryRecord, toolCall: string | undefined): RecordDescription {
  switch (r.role) {
    case "user": {
      const images = r.images ? pluralText(r.images, l10n.t("{0} image"), l10n.t("{0} images")) : "";
      const text = r.preview ? oneLine(plainText(r.preview)) : "";
      return {
        kind: "user",
        text: text || (images ? `(${images})` : l10n.t("(empty)")),
        detail: text && images ? images : "",
        error: false,
      };
    }
    case "assistant":
      return describeAssistant(r);
    case "toolResult":
      return {
        kind: "toolResult",
        text: toolCall ?? r.toolName ?? l10n.t("tool"),
        detail: r.preview ? oneLine(r.preview, 120) : "",
        error: Boolean(r.isError),
      };
    case "bashExecution":
      return {
        kind: "bashExecution",
        text: `$ ${oneLine(r.preview ?? "")}`,
        detail: r.excludeFromContext ? l10n.t("not sent to the model") : "",
        error: false,
      };
    case "system":
      return {
        kind: "system",
        text: l10n.t("System prompt"),
        detail: tokensText(r.systemTokens, formatTokens),
        error: false,
      };
    case "custom":
      return {
        kind: "customMessage",
        text: `[${r.customType ?? "custom"}] ${oneLine(plainText(r.preview ?? ""))}`.trim(),
        detail: "",
        error: false,
      };
    default:
      return { kind: "message", text: `[${r.role ?? "message"}]`, detail: "", error: false };
  }
}

function describeAssistant(r: EntryRecord): RecordDescription {
  const tools = r.toolNames?.length ? `→ ${summarizeToolNames(r.toolNames)}` : "";
  const error = r.stopReason === "error" || r.stopReason === "aborted";
  const errorMessage = error && r.errorMessage ? oneLine(r.errorMessage) : undefined;
  let text = r.preview ? oneLine(plainText(r.preview)) : "";
  let errorDetail = "";
  if (!text)
    text =
      r.stopReason === "aborted"
        ? l10n.t("(aborted)")
        : errorMessage
          ? `Error${readableError(errorMessage)}`
          : r.stopReason === "error"
            ? l10n.t("(error)")
            : tools || l10n.t("(no content)");
  else if (errorMessage) errorDetail = `error${readableError(errorMessage)}`;
  else if (error) errorDetail = r.stopReason === "aborted" ? "aborted" : l10n.t("stopped with an error");
  const detail = [text === tools ? "" : tools, errorDetail].filter(Boolean).join("  ");
  const model =
    r.model !== undefined || r.provider !== undefined
      ? `${r.provider ? `${r.provider}/` : ""}${r.model ?? "?"}`
      : undefined;
  const out: RecordDescription = { kind: "assistant", text, detail, error };
  if (errorMessage !== undefined) out.errorMessage = errorMessage;
  if (errorMessage !== undefined && !errorDetail) out.errorInText = true;
  if (model !== undefined) out.model = model;
  return out;
}
