/**
 * The panel's drill-down of "System prompt & tools" (the fixed part of the context: pi's system
 * message by part), as `viewModel/fixedContext.ts` builds it and `webview/sections/fixedContext.ts`
 * renders it. Browser-safe (no `vscode`, no `node:`). Every text is plain text (shown as text).
 * Token numbers are pi's estimate of the system message (`estimateTokens`, chars/4), split by part.
 */

/** One part: a tool's declaration, a section, a context file, a skill. */
export interface FixedItemModel {
  /** `core/rules/fixedContext.ts` `FixedPartKind` (`tool`, `mcp-tool`, `context-file`, …). */
  kind: string;
  /** The kind in words (`built-in tool`, `context file`). */
  kindLabel: string;
  /** The name shown (a context file's file name, a tool's name). */
  name: string;
  /** The full name (a context file's path as pi wrote it). */
  fullName: string;
  tokens: number;
  /** What it cost over the branch's requests, and for tools whether the model called it. */
  use: string;
  /** How to leave it out in pi (its flags and settings), or why it stays. */
  removal: string;
  /** A tool the model never called on the branch (while it was sent with every request). */
  unused?: boolean;
}

/** A group of parts (tools, MCP, context files, skills, pi's prompt, extension sections). */
export interface FixedGroupModel {
  id: string;
  label: string;
  /** Σ of its items' tokens. */
  tokens: number;
  /** Largest first. */
  items: FixedItemModel[];
}

/** The fixed part of the context at the leaf. */
export interface FixedContextModel {
  /** pi's estimate of the system message (Σ of the groups). */
  total: number;
  /** `sections` (pi ≥ 0.87), `content` (no sections: one prompt part), `none` (no system message in the file). */
  layout: "sections" | "content" | "none";
  /** Largest first. */
  groups: FixedGroupModel[];
  /** How it is counted, and why it is one part or unknown. */
  notes: string[];
  /** What it cost over the branch's requests so far (absent before the first request). */
  session?: string;
}
