/**
 * `pi-context tree <session.jsonl> [--filter default|no-tools|user-only|labeled-only|all] [--json]`:
 * the entry tree as the Pi Session view shows it (same tree model), for scripts and tests. Output
 * is linear in the number of entries and nothing recurses, however deep branches nest.
 * Exit codes: 0 done, 1 not a pi session, 2 usage.
 */

import { clipLabel } from "../core/rules/sessionLabel";
import * as path from "node:path";
import { openSession } from "../core/read/store";
import type { EntryReader } from "../core/rules/serialize";
import { isTreeFilter, TREE_FILTERS, type TreeFilter } from "../core/treeModel/filters";
import { SessionTreeModel } from "../core/treeModel/model";
import { plural } from "../shared/format";
import { lineText } from "../shared/untrusted";
import { nodeDisplay, type NodeDisplay } from "../viewModel/treeText";
import { checkFlags, formatUsage, NotASessionError, parseArgs, stringFlag, UsageError, type CliCommand } from "./args";

export const TREE_USAGE = `pi-context tree <session.jsonl> [--filter default|no-tools|user-only|labeled-only|all] [--json]`;

const ROLE_PREFIX: Partial<Record<NodeDisplay["kind"], string>> = {
  user: "user: ",
  assistant: "assistant: ",
  toolResult: "tool ",
  customMessage: "",
  system: "",
};

/**
 * One entry as a line of `pi-context tree` (without indentation). A failed assistant message
 * carries its error in its text (`Error: 400 …`) or detail; a failed tool result gets ` (error)`.
 */
export function formatTreeLine(d: NodeDisplay): string {
  const mark = d.onActivePath ? "•" : " ";
  const label = d.label ? `[${clipLabel(d.label)}] ` : "";
  const text = `${ROLE_PREFIX[d.kind] ?? ""}${d.text}${d.error && d.kind === "toolResult" ? " (error)" : ""}`;
  const detail = d.detail ? `  · ${d.detail}` : "";
  const branches = d.branches ? `  ⑂ ${d.branches} branches` : "";
  const leaf = d.isLeaf ? (d.isFileLeaf ? "  ← leaf" : "  ← leaf (shown here)") : "";
  return lineText(`${mark} ${d.id}  ${label}${text}${detail}${branches}${leaf}`);
}

/** Levels of indentation shown; deeper lines are indented this far and say their depth (`[40] `). */
export const MAX_TREE_INDENT = 32;

/** A line's indentation at `depth`: two spaces per level up to {@link MAX_TREE_INDENT}, then the depth as a number. */
function indentOf(depth: number): string {
  return depth <= MAX_TREE_INDENT ? "  ".repeat(depth) : `${"  ".repeat(MAX_TREE_INDENT)}[${depth}] `;
}

/**
 * The whole tree as indented text, one line per element in display order (`model.walk()`, no
 * recursion). The active path is the top level, root to leaf (the layout's active spine); the
 * other branches of a branch point on it are indented below the branch point. A branch starts
 * with its first entry, marked `⑂` and followed by the branch's size
 * (`⑂   a41d08b8  user: do t3  · branch of 11 entries`); the rest of the branch is indented below
 * it. The branch the active path continues with is marked `⑂` too, in the top level
 * (`⑂ • b6b95844  user: do t6`). Indentation stops growing at {@link MAX_TREE_INDENT} levels
 * (deeper lines name their depth), so the output grows linearly with the number of entries,
 * however deep the branches nest.
 */
export function formatTree(model: SessionTreeModel, reader?: EntryReader): string[] {
  const lines: string[] = [];
  for (const { element, depth } of model.walk()) {
    const indent = indentOf(depth);
    if (element.kind === "entry")
      lines.push(
        `${indent}${model.continuesBranch(element.id) ? "⑂ " : ""}${formatTreeLine(nodeDisplay(model, element.id, reader))}`,
      );
    else if (element.kind === "branch")
      lines.push(
        `${indent}⑂ ${formatTreeLine(nodeDisplay(model, element.headId, reader))}  · branch of ${plural(model.branchSize(element.headId), "entry")}`,
      );
    else lines.push(`${indent}… entries ${element.start + 1}–${element.end}`);
  }
  return lines;
}

/** One element of `tree --json`'s flat list (display order; the nesting is in `depth` and `parent`). */
export interface JsonTreeNode {
  /** `branch`: the first entry of a branch (its other entries follow with `parent` = this id). */
  kind: "entry" | "branch";
  id: string;
  /** Nesting level: 0 at the top. */
  depth: number;
  /** The id of the node this one is shown under (null at the top). */
  parent: string | null;
  entryKind?: string;
  text?: string;
  detail?: string;
  label?: string;
  error?: string;
  model?: string;
  leaf?: boolean;
  active?: boolean;
  /** Branches: entries in the branch (this one included). */
  entries?: number;
  /** An entry that starts the branch the active path continues with (listed in the top level, not as a branch). */
  startsBranch?: true;
}

/**
 * The tree as a flat list in display order, built from `model.walk()` (no recursion, so any depth
 * of nesting works); pages are not nodes (their entries hang under the page's parent).
 */
export function jsonTree(model: SessionTreeModel, reader: EntryReader): JsonTreeNode[] {
  const out: JsonTreeNode[] = [];
  /** The node id shown at each depth so far (the parent of the next deeper node). */
  const shownAt: (string | null)[] = [];
  /** Depth shift: pages are skipped, so their contents move one level up. */
  const pageDepths: number[] = [];
  for (const { element, depth } of model.walk()) {
    while (pageDepths.length > 0 && pageDepths[pageDepths.length - 1]! >= depth) pageDepths.pop();
    if (element.kind === "page") {
      pageDepths.push(depth);
      continue;
    }
    const level = depth - pageDepths.length;
    const id = element.kind === "entry" ? element.id : element.headId;
    const d = nodeDisplay(model, id, reader);
    const node: JsonTreeNode = {
      kind: element.kind,
      id,
      depth: level,
      parent: level > 0 ? (shownAt[level - 1] ?? null) : null,
      entryKind: d.kind,
      text: d.text,
      detail: d.detail,
      active: d.onActivePath,
      leaf: d.isLeaf,
    };
    if (d.label) node.label = d.label;
    if (d.errorMessage) node.error = d.errorMessage;
    if (d.model) node.model = d.model;
    if (element.kind === "branch") node.entries = model.branchSize(id);
    else if (model.continuesBranch(id)) node.startsBranch = true;
    shownAt[level] = id;
    shownAt.length = level + 1;
    out.push(node);
  }
  return out;
}

/**
 * `tree --json`: the header fields indented, the nodes one per line (so the output is linear in
 * the number of nodes and easy to read line by line).
 */
function formatJson(header: Record<string, unknown>, nodes: readonly JsonTreeNode[]): string {
  const head = JSON.stringify(header, null, 2).slice(0, -2); // without the closing "\n}"
  const body = nodes.map((n) => `    ${JSON.stringify(n)}`).join(",\n");
  return `${head},\n  "tree": [${nodes.length ? `\n${body}\n  ` : ""}]\n}`;
}

/** `pi-context tree`. */
export const treeCommand: CliCommand = async (argv, out) => {
  const args = parseArgs(argv, new Set(["json"]));
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError(`usage:\n${formatUsage(TREE_USAGE, 2)}`);
  checkFlags(args, new Set(["filter", "json"]), TREE_USAGE);
  const filter = stringFlag(args, "filter") ?? "default";
  if (!isTreeFilter(filter))
    throw new UsageError(`--filter must be one of ${TREE_FILTERS.map((f) => f.filter).join(", ")}.`);
  const session = await openSession(path.resolve(file));
  if (session.invalid || !session.header) throw new NotASessionError(file, session.size === 0);
  const model = new SessionTreeModel(session, { filter: filter as TreeFilter, pageSize: Number.MAX_SAFE_INTEGER });
  if (args.flags.has("json")) {
    const header = {
      file: session.filePath,
      name: model.name ?? null,
      leafId: model.leafId,
      displayLeafId: model.displayLeafId,
      filter,
      entries: model.entryCount,
      unreachable: model.unreachableCount,
      labels: Object.fromEntries([...model.labels].map(([k, v]) => [k, v.label])),
    };
    out(formatJson(header, jsonTree(model, session)));
    return 0;
  }
  out(lineText(`session  ${model.name ? `${clipLabel(model.name)} — ` : ""}${session.filePath}`));
  out(
    `leaf     ${model.leafId ?? "(none)"}${model.displayLeafId !== model.leafId ? ` (shown at ${model.displayLeafId ?? "—"})` : ""} · ${plural(model.entryCount, "entry")} · filter ${filter} · • = active path · ⑂ = a branch starts`,
  );
  if (model.unreachableCount > 0)
    out(
      `note     ${plural(model.unreachableCount, "entry")} not shown: on a parent cycle, with no root above (see \`pi-context doctor\`)`,
    );
  out("");
  for (const line of formatTree(model, session)) out(line);
  return 0;
};
