/**
 * `pi-context tree <session.jsonl> [--filter default|no-tools|user-only|labeled-only|all] [--json]`:
 * the entry tree as the Pi Session view shows it (same tree model), for scripts and tests.
 * Exit codes: 0 done, 1 not a pi session, 2 usage.
 */

import * as path from "node:path";
import { SessionFile } from "../core/read/session";
import type { EntryReader } from "../core/rules/serialize";
import type { TreeElement } from "../core/treeModel/elements";
import { isTreeFilter, TREE_FILTERS, type TreeFilter } from "../core/treeModel/filters";
import { SessionTreeModel } from "../core/treeModel/model";
import { plural } from "../shared/format";
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
  const label = d.label ? `[${d.label}] ` : "";
  const text = `${ROLE_PREFIX[d.kind] ?? ""}${d.text}${d.error && d.kind === "toolResult" ? " (error)" : ""}`;
  const detail = d.detail ? `  · ${d.detail}` : "";
  const branches = d.branches ? `  ⑂ ${d.branches} branches` : "";
  const leaf = d.isLeaf ? (d.isFileLeaf ? "  ← leaf" : "  ← leaf (shown here)") : "";
  return `${mark} ${d.id}  ${label}${text}${detail}${branches}${leaf}`;
}

/**
 * The whole tree as indented text. A branch starts with its first entry, marked `⑂` and followed
 * by the branch's size (`⑂ • a41d08b8  user: do t3  · branch of 11 entries`); the rest of the
 * branch is indented below it.
 */
export function formatTree(model: SessionTreeModel, reader?: EntryReader): string[] {
  const lines: string[] = [];
  for (const { element, depth } of model.walk()) {
    const indent = "  ".repeat(depth);
    if (element.kind === "entry") lines.push(`${indent}${formatTreeLine(nodeDisplay(model, element.id, reader))}`);
    else if (element.kind === "branch")
      lines.push(
        `${indent}⑂ ${formatTreeLine(nodeDisplay(model, element.headId, reader))}  · branch of ${plural(model.branchSize(element.headId), "entry")}`,
      );
    else lines.push(`${indent}… entries ${element.start + 1}–${element.end}`);
  }
  return lines;
}

interface JsonNode {
  /** `branch`: the first entry of a branch (its other entries are its children). */
  kind: "entry" | "branch";
  id: string;
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
  children?: JsonNode[];
}

function jsonTree(model: SessionTreeModel, reader: EntryReader, parent?: TreeElement): JsonNode[] {
  const out: JsonNode[] = [];
  for (const e of model.children(parent)) {
    if (e.kind === "page") {
      out.push(...jsonTree(model, reader, e));
      continue;
    }
    const id = e.kind === "entry" ? e.id : e.headId;
    const d = nodeDisplay(model, id, reader);
    const node: JsonNode = {
      kind: e.kind,
      id,
      entryKind: d.kind,
      text: d.text,
      detail: d.detail,
      active: d.onActivePath,
      leaf: d.isLeaf,
    };
    if (d.label) node.label = d.label;
    if (d.errorMessage) node.error = d.errorMessage;
    if (d.model) node.model = d.model;
    if (e.kind === "branch") node.entries = model.branchSize(id);
    const children = jsonTree(model, reader, e);
    if (children.length) node.children = children;
    out.push(node);
  }
  return out;
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
  const session = await SessionFile.open(path.resolve(file));
  if (session.invalid || !session.header) throw new NotASessionError(file, session.size === 0);
  const model = new SessionTreeModel(session, { filter: filter as TreeFilter, pageSize: Number.MAX_SAFE_INTEGER });
  if (args.flags.has("json")) {
    out(
      JSON.stringify(
        {
          file: session.filePath,
          name: model.name ?? null,
          leafId: model.leafId,
          displayLeafId: model.displayLeafId,
          filter,
          entries: model.entryCount,
          labels: Object.fromEntries([...model.labels].map(([k, v]) => [k, v.label])),
          tree: jsonTree(model, session),
        },
        null,
        2,
      ),
    );
    return 0;
  }
  out(`session  ${model.name ? `${model.name} — ` : ""}${session.filePath}`);
  out(
    `leaf     ${model.leafId ?? "(none)"}${model.displayLeafId !== model.leafId ? ` (shown at ${model.displayLeafId ?? "—"})` : ""} · ${plural(model.entryCount, "entry")} · filter ${filter} · • = active path · ⑂ = a branch starts`,
  );
  out("");
  for (const line of formatTree(model, session)) out(line);
  return 0;
};
