/** The codicon of each entry kind, for the tree's rows and the entries listed in the switch confirmation. */

import type { NodeKind } from "../viewModel/treeText";

/** Codicon per entry kind. */
export const KIND_ICONS: Record<NodeKind, string> = {
  user: "account",
  assistant: "sparkle",
  toolResult: "tools",
  bashExecution: "terminal",
  system: "gear",
  customMessage: "extensions",
  message: "comment",
  compaction: "fold",
  branchSummary: "git-merge",
  modelChange: "server-process",
  thinkingLevel: "lightbulb",
  label: "tag",
  sessionInfo: "book",
  custom: "symbol-misc",
  leafMarker: "pinned",
  contextEdit: "diff-modified",
  usage: "graph",
  unknown: "question",
};
