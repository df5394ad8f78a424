/**
 * The data provider of the "Pi Session" view: follows the current session with a
 * {@link SessionTreeModel} (a new file gets a new model, appends sync incrementally) and turns its
 * elements into tree items (texts from `viewModel/treeText.ts`, icons, colours, context values,
 * tooltips, screen-reader labels).
 */

import * as vscode from "vscode";
import type { TreeElement } from "../core/treeModel/elements";
import type { TreeFilter } from "../core/treeModel/filters";
import { SessionTreeModel } from "../core/treeModel/model";
import type { SessionFile } from "../core/read/session";
import type { CurrentSession } from "../services";
import { plural } from "../shared/format";
import { KIND_NAMES, nodeDisplay } from "../viewModel/treeText";
import { KIND_ICONS } from "./icons";
import { tooltipOf } from "./tooltip";

/** The view id (package.json `contributes.views`). */
export const SESSION_TREE_VIEW = "piContext.sessionTree";
/** VS Code has rendered a refresh when it asked for nothing for this long (ms). */
export const QUIET_MS = 120;

/** Serves the tree to VS Code: elements are the model's interned {@link TreeElement}s. */
export class SessionTreeProvider implements vscode.TreeDataProvider<TreeElement> {
  private readonly changed = new vscode.EventEmitter<TreeElement | TreeElement[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** The model of the current session (undefined: no session). */
  model: SessionTreeModel | undefined;
  session: SessionFile | undefined;
  file: string | undefined;
  private generation = 0;
  /** A full refresh was fired and VS Code has not asked for the top level since. */
  private rootPending = true;
  /** When VS Code last asked for children (ms since epoch). */
  private lastFetch = 0;

  constructor(private filter: TreeFilter) {}

  /** The filter in use (also for the next session's model). */
  get currentFilter(): TreeFilter {
    return this.filter;
  }

  /**
   * Follow the current session: a new file gets a new model; the same file syncs incrementally.
   * @returns what the view should do next.
   */
  update(current: CurrentSession | undefined): {
    kind: "none" | "cleared" | "new" | "changed";
    /** The active path moved (a rebuild, a switch): the view should show the new leaf. */
    leafMoved: boolean;
    /** The file's leaf is another entry now (e.g. entries appended below it). */
    leafChanged?: boolean;
  } {
    if (!current) {
      if (!this.model) return { kind: "none", leafMoved: false };
      this.model = undefined;
      this.session = undefined;
      this.file = undefined;
      this.refreshAll();
      return { kind: "cleared", leafMoved: false };
    }
    if (!this.model || this.session !== current.session) {
      this.session = current.session;
      this.file = current.file;
      this.generation++;
      this.model = new SessionTreeModel(current.session, { filter: this.filter });
      this.refreshAll();
      return { kind: "new", leafMoved: true };
    }
    const change = this.model.sync();
    if (change.all || change.elements.includes(null)) this.refreshAll();
    else if (change.elements.length > 0) this.changed.fire(change.elements.filter((e): e is TreeElement => e !== null));
    return {
      kind: change.added > 0 || change.rebuilt ? "changed" : "none",
      leafMoved: change.rebuilt || (change.leafChanged && change.all),
      leafChanged: change.leafChanged,
    };
  }

  /** Switch the filter and refresh the whole tree. */
  setFilter(filter: TreeFilter): void {
    this.filter = filter;
    if (this.model) {
      this.model.setFilter(filter);
      this.refreshAll();
    }
  }

  /** Fire a full refresh (e.g. after the active path moved). */
  refreshAll(): void {
    this.rootPending = true;
    this.changed.fire(undefined);
  }

  /**
   * True when VS Code has asked for the top level since the last full refresh and for nothing
   * during the last {@link QUIET_MS} ms: what it shows matches the model, so a reveal finds its nodes.
   */
  get settled(): boolean {
    return !this.rootPending && Date.now() - this.lastFetch >= QUIET_MS;
  }

  /** The model's children (`undefined` = top level); notes when VS Code asked (see {@link settled}). */
  getChildren(element?: TreeElement): TreeElement[] {
    this.lastFetch = Date.now();
    if (!element) this.rootPending = false;
    return this.model ? this.model.children(element) : [];
  }

  /** The model's parent (the inverse of {@link getChildren}, for `TreeView.reveal`). */
  getParent(element: TreeElement): TreeElement | undefined {
    return this.model?.parent(element);
  }

  /**
   * A page row (`Entries 101–200`, described by its first entry), or an entry / branch row: label
   * prefix, text, description (leaf, branch size, branches, detail), icon and colour, context value
   * `piEntry[.summary][.labeled][.leaf][.branch]`, tooltip, screen-reader label; summaries open on click.
   */
  getTreeItem(element: TreeElement): vscode.TreeItem {
    const model = this.model;
    if (!model) return new vscode.TreeItem("(no session)");
    const id = `${this.generation}/${element.key}`;
    if (element.kind === "page") {
      const bounds = model.pageBounds(element);
      const item = new vscode.TreeItem(
        `Entries ${element.start + 1}–${element.end}`,
        vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = id;
      item.description = bounds.first ? nodeDisplay(model, bounds.first, this.session).text : "";
      item.iconPath = new vscode.ThemeIcon(
        "list-flat",
        model.pageIsActive(element) ? new vscode.ThemeColor("charts.blue") : undefined,
      );
      item.contextValue = "piPage";
      return item;
    }
    // an entry, or a branch: the branch's row is its first entry (its children are the rest)
    const branch = element.kind === "branch";
    const d = nodeDisplay(model, branch ? element.headId : element.id, this.session);
    const size = branch ? model.branchSize(element.headId) : 0;
    const labelPrefix = d.label ? `[${d.label}] ` : "";
    const expandable = model.hasChildren(element);
    const open = branch ? d.onActivePath : d.branches > 0 && d.onActivePath;
    const state = !expandable
      ? vscode.TreeItemCollapsibleState.None
      : open
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(
      {
        label: labelPrefix + d.text,
        ...(labelPrefix ? { highlights: [[0, labelPrefix.length - 1]] as [number, number][] } : {}),
      },
      state,
    );
    item.id = id;
    const parts: string[] = [];
    if (d.isLeaf) parts.push("● leaf");
    if (branch) parts.push(`branch of ${plural(size, "entry")}`);
    if (d.branches) parts.push(`${d.branches} branches`);
    if (d.detail) parts.push(d.detail);
    item.description = parts.join(" · ");
    const color = d.error
      ? new vscode.ThemeColor("errorForeground")
      : d.onActivePath
        ? new vscode.ThemeColor("charts.blue")
        : undefined;
    item.iconPath = d.isLeaf
      ? new vscode.ThemeIcon("debug-stackframe", new vscode.ThemeColor("charts.green"))
      : new vscode.ThemeIcon(branch ? "git-branch" : KIND_ICONS[d.kind], color);
    item.contextValue = `piEntry${d.hasSummary ? ".summary" : ""}${d.label ? ".labeled" : ""}${d.isLeaf ? ".leaf" : ""}${branch ? ".branch" : ""}`;
    item.tooltip = tooltipOf(d, model, branch ? size : undefined);
    const where = d.isLeaf ? ", current leaf" : d.onActivePath ? ", on the active path" : "";
    item.accessibilityInformation = {
      label: `${branch ? `start of a branch of ${plural(size, "entry")}, ` : ""}${d.error ? "failed " : ""}${KIND_NAMES[d.kind]}${d.label ? `, label ${d.label}` : ""}: ${d.text}${where}`,
      role: "treeitem",
    };
    if (d.hasSummary)
      item.command = { command: "piContext.tree.openSummary", title: "Open Summary", arguments: [element] };
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
