/** The data provider of the "Pi Session" view: a {@link SessionTreeModel} synced incrementally. */

import * as vscode from "vscode";
import type { TreeElement } from "../core/treeModel/elements";
import type { TreeFilter } from "../core/treeModel/filters";
import { SessionTreeModel } from "../core/treeModel/model";
import type { SessionFile } from "../core/read/session";
import type { CurrentSession } from "../services";
import { formatTokens, pluralText } from "../shared/format";
import { visibleText } from "../shared/untrusted";
import { clipLabel } from "../core/rules/sessionLabel";
import { checkHealth } from "../core/health/doctor";
import type { HealthFinding } from "../core/health/types";
import { findingsByEntry, rowHealth } from "../viewModel/health";
import { KIND_NAMES, nodeDisplay } from "../viewModel/treeText";
import { editMarks, type EditMark } from "../viewModel/trimList";
import { KIND_ICONS } from "./icons";
import { validCutPoints } from "../core/rules/compaction";
import { buildProjection } from "../core/rules/context";
import { tooltipOf } from "./tooltip";

/** Which rows are pi's cut points, and which compactions keep from a row. */
interface CutMarks {
  ids: ReadonlySet<string>;
  keptBy: ReadonlyMap<string, string[]>;
}

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
  /** Entries with context edits a running pi has not applied yet (shown as pending). */
  private pending = new Set<string>();
  /** What the edit marks looked like at the last refresh (a change refreshes the rows). */
  private marksKey = "";
  /** The session doctor's findings per entry (rows of affected entries show them). */
  private health = new Map<string, HealthFinding[]>();
  private healthKey = "";
  /** pi's valid cut points at the leaf and the compactions' first kept entries (per session and size). */
  private cutCache: { session: SessionFile; size: number; cuts: CutMarks } | undefined;

  constructor(private filter: TreeFilter) {}

  /** The filter in use (also for the next session's model). */
  get currentFilter(): TreeFilter {
    return this.filter;
  }

  /** A new file gets a new model; the same file syncs incrementally. */
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
    const healthChanged = this.updateHealth(current);
    if (!this.model || this.session !== current.session) {
      this.session = current.session;
      this.file = current.file;
      this.generation++;
      this.model = new SessionTreeModel(current.session, { filter: this.filter });
      this.marksKey = this.currentMarksKey();
      this.refreshAll();
      return { kind: "new", leafMoved: true };
    }
    const change = this.model.sync();
    const marksKey = this.currentMarksKey();
    const marksChanged = marksKey !== this.marksKey;
    this.marksKey = marksKey;
    // a context edit changes how its target (an older row) is shown: refresh the rows
    if (change.all || change.elements.includes(null) || marksChanged || healthChanged) this.refreshAll();
    else if (change.elements.length > 0) this.changed.fire(change.elements.filter((e): e is TreeElement => e !== null));
    return {
      kind: change.added > 0 || change.rebuilt ? "changed" : "none",
      leafMoved: change.rebuilt || (change.leafChanged && change.all),
      leafChanged: change.leafChanged,
    };
  }

  /** The context edits of the session at its leaf (which rows are editable, removed, replaced). */
  private marks(): ReadonlyMap<string, EditMark> {
    if (!this.session) return new Map();
    try {
      return editMarks(this.session);
    } catch {
      return new Map(); // a body changed on disk: the next refresh reads it again
    }
  }

  /** pi's valid cut points of the context at the leaf (but the first), and the compactions keeping from each. */
  private cuts(): CutMarks {
    const session = this.session;
    if (!session) return { ids: new Set(), keptBy: new Map() };
    if (this.cutCache?.session === session && this.cutCache.size === session.records.length) return this.cutCache.cuts;
    const keptBy = new Map<string, string[]>();
    let ids = new Set<string>();
    try {
      ids = new Set(validCutPoints(session).slice(1));
      for (const r of buildProjection(session).path)
        if (r.type === "compaction" && r.firstKeptEntryId)
          keptBy.set(r.firstKeptEntryId, [...(keptBy.get(r.firstKeptEntryId) ?? []), r.id]);
    } catch {
      // a body changed on disk: the next refresh reads it again
    }
    const cuts = { ids, keptBy };
    this.cutCache = { session, size: session.records.length, cuts };
    return cuts;
  }

  private currentMarksKey(): string {
    // the latest compaction decides which rows are cut points (and what its cut marks)
    let key = `${this.session ? (buildProjection(this.session).compaction?.id ?? "") : ""};`;
    for (const [id, m] of this.marks()) if (m.edit) key += `${id}:${m.edit.editId};`;
    return key;
  }

  /** Mark the entries whose edits a running pi has not applied yet; refreshes when that changed. */
  setPending(ids: Iterable<string>): void {
    const next = new Set(ids);
    if (next.size === this.pending.size && [...next].every((id) => this.pending.has(id))) return;
    this.pending = next;
    if (this.model) this.refreshAll();
  }

  /** @returns true when the decorated rows changed. */
  private updateHealth(current: CurrentSession): boolean {
    let map: Map<string, HealthFinding[]>;
    try {
      map = findingsByEntry(checkHealth(current.analysis));
    } catch {
      map = new Map(); // the doctor never throws for session content; never let a row fail on it
    }
    const key = [...map].map(([id, fs]) => `${id}:${fs.map((f) => `${f.code}/${f.severity}`).join(",")}`).join(";");
    this.health = map;
    if (key === this.healthKey) return false;
    this.healthKey = key;
    return true;
  }

  /** True when a tool result folded under `id` has an error or a warning of the doctor. */
  private foldsAProblem(model: SessionTreeModel, id: string): boolean {
    return model
      .foldedResults(id)
      .some((r) => (this.health.get(r) ?? []).some((f) => f.severity === "error" || f.severity === "warning"));
  }

  /** The findings shown on an entry's row (tests). */
  healthOf(entryId: string): readonly HealthFinding[] {
    return this.health.get(entryId) ?? [];
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

  /** VS Code fetched the top level and then nothing for {@link QUIET_MS}: a reveal finds its nodes. */
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
   * Context value `piEntry[.summary][.labeled][.leaf][.branch][.editable][.cut][.edited[.removed][.span]]`
   * (`.cut`: pi can keep from it). The tooltip waits for hover ({@link resolveTreeItem}).
   */
  getTreeItem(element: TreeElement): vscode.TreeItem {
    const model = this.model;
    if (!model) return new vscode.TreeItem(vscode.l10n.t("(no session)"));
    const id = `${this.generation}/${element.key}`;
    if (element.kind === "page") {
      const bounds = model.pageBounds(element);
      const item = new vscode.TreeItem(
        vscode.l10n.t("Entries {0}–{1}", element.start + 1, element.end),
        vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = id;
      item.description = bounds.first ? visibleText(nodeDisplay(model, bounds.first, this.session).text) : "";
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
    // session text as VS Code shows a plain label: control characters as their visible escape
    const labelPrefix = d.label ? `[${visibleText(clipLabel(d.label))}] ` : "";
    const expandable = model.hasChildren(element);
    // only the active root's group opens by itself (several roots); the spine is the top level,
    // and a branch point's other branches open on demand (each open level costs a round trip)
    // and an answer whose folded tool results the doctor flags opens too: a problem is never hidden
    const open = (branch && d.onActivePath) || (!branch && expandable && this.foldsAProblem(model, d.id));
    const state = !expandable
      ? vscode.TreeItemCollapsibleState.None
      : open
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(
      {
        label: labelPrefix + visibleText(d.text),
        ...(labelPrefix ? { highlights: [[0, labelPrefix.length - 1]] as [number, number][] } : {}),
      },
      state,
    );
    item.id = id;
    const health = rowHealth(d.id, this.health.get(d.id) ?? []);
    const parts: string[] = [];
    if (health) parts.push(health.badge);
    if (d.isLeaf) parts.push(vscode.l10n.t("● leaf"));
    if (branch)
      parts.push(
        vscode.l10n.t("branch of {0}", pluralText(size, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries"))),
      );
    if (d.branches) parts.push(vscode.l10n.t("{0} branches", d.branches));
    if (d.detail) parts.push(d.detail);
    const cuts = d.onActivePath ? this.cuts() : undefined;
    const keptBy = cuts?.keptBy.get(d.id);
    if (keptBy) parts.push(vscode.l10n.t("✂ compaction {0} keeps from here", keptBy.join(", ")));
    const mark = d.onActivePath ? this.marks().get(d.id) : undefined;
    const pending = this.pending.has(d.id);
    const edit = mark?.edit;
    // an answer's tool results fold under it: their edits (and pending ones) show on its row too,
    // or a collapsed row would hide them — unless the answer itself is removed (they go with it)
    const folded = !branch && expandable && d.onActivePath && edit?.kind !== "removed" ? model.foldedResults(d.id) : [];
    const resultsEdited = folded.filter((r) => this.marks().get(r)?.edit).length;
    const resultsPending = folded.filter((r) => this.pending.has(r)).length;
    const resultsText = [
      resultsEdited
        ? pluralText(resultsEdited, vscode.l10n.t("{0} tool result edited"), vscode.l10n.t("{0} tool results edited"))
        : "",
      resultsPending
        ? pluralText(
            resultsPending,
            vscode.l10n.t("{0} tool result pending in pi"),
            vscode.l10n.t("{0} tool results pending in pi"),
          )
        : "",
    ]
      .filter(Boolean)
      .join(", ");
    if (resultsText) parts.unshift(resultsText);
    if (pending) parts.unshift(vscode.l10n.t("pending in pi"));
    if (edit)
      parts.unshift(
        edit.kind === "removed"
          ? vscode.l10n.t("removed from context")
          : edit.span
            ? vscode.l10n.t(
                "✎ summary of {0} ({1} … {2})",
                pluralText(edit.span.count, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
                edit.span.fromId,
                edit.span.toId,
              )
            : `note: ${edit.note ?? ""}`,
      );
    item.description = visibleText(parts.join(" · "));
    const color =
      health?.severity === "error"
        ? new vscode.ThemeColor("list.errorForeground")
        : health?.severity === "warning"
          ? new vscode.ThemeColor("list.warningForeground")
          : d.error
            ? new vscode.ThemeColor("errorForeground")
            : pending
              ? new vscode.ThemeColor("charts.purple")
              : edit?.kind === "removed"
                ? new vscode.ThemeColor("disabledForeground")
                : edit
                  ? new vscode.ThemeColor("charts.yellow")
                  : d.onActivePath
                    ? new vscode.ThemeColor("charts.blue")
                    : undefined;
    item.iconPath = d.isLeaf
      ? new vscode.ThemeIcon("debug-stackframe", new vscode.ThemeColor("charts.green"))
      : new vscode.ThemeIcon(branch || model.continuesBranch(d.id) ? "git-branch" : KIND_ICONS[d.kind], color);
    item.contextValue = `piEntry${d.hasSummary ? ".summary" : ""}${d.label ? ".labeled" : ""}${d.isLeaf ? ".leaf" : ""}${branch ? ".branch" : ""}${mark?.editable ? ".editable" : ""}${cuts?.ids.has(d.id) ? ".cut" : ""}${edit ? `.edited${edit.kind === "removed" ? ".removed" : ""}${edit.span ? ".span" : ""}` : ""}${health ? ".problem" : ""}`;
    const where = `${d.isLeaf ? vscode.l10n.t(", current leaf") : d.onActivePath ? vscode.l10n.t(", on the active path") : ""}${edit ? (edit.kind === "removed" ? vscode.l10n.t(", removed from the context") : vscode.l10n.t(", replaced in the context")) : ""}${pending ? vscode.l10n.t(", context edit pending") : ""}${resultsText ? `, ${resultsText}` : ""}`;
    // read out as text: the session's control characters and bidi overrides as their visible escape
    item.accessibilityInformation = {
      label: visibleText(
        `${branch ? vscode.l10n.t("start of a branch of {0}, ", pluralText(size, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries"))) : ""}${d.error ? vscode.l10n.t("failed ") : ""}${KIND_NAMES[d.kind]}${d.label ? vscode.l10n.t(", label {0}", clipLabel(d.label)) : ""}: ${d.text}${where}${health ? `, ${health.severity}: ${health.badge.slice(2)}` : ""}`,
      ),
      role: "treeitem",
    };
    if (d.hasSummary)
      item.command = {
        command: "piContext.tree.openSummary",
        title: vscode.l10n.t("Open Summary"),
        arguments: [element],
      };
    return item;
  }

  /** Built on hover: built for every row, tooltips were most of what the tree sent to the workbench. */
  resolveTreeItem(item: vscode.TreeItem, element: TreeElement): vscode.TreeItem {
    const model = this.model;
    if (!model || element.kind === "page" || item.id !== `${this.generation}/${element.key}`) return item;
    const branch = element.kind === "branch";
    const d = nodeDisplay(model, branch ? element.headId : element.id, this.session);
    const size = branch ? model.branchSize(element.headId) : 0;
    const health = rowHealth(d.id, this.health.get(d.id) ?? []);
    const edit = d.onActivePath ? this.marks().get(d.id)?.edit : undefined;
    const pending = this.pending.has(d.id);
    const tooltip = tooltipOf(d, model, branch ? size : undefined, health);
    if (edit || pending) {
      tooltip.appendMarkdown("\n\n---\n\n");
      if (edit?.kind === "removed")
        tooltip.appendMarkdown(
          vscode.l10n.t(
            "$(trash) **Removed from the context** by context edit `{0}` ({1} tokens): pi no longer sends it. *Restore in Context* brings it back.",
            edit.editId,
            formatTokens(edit.originalTokens),
          ),
        );
      else if (edit) {
        tooltip.appendMarkdown(
          vscode.l10n.t("$(note) **Replaced in the context** by context edit `{0}`; pi sends instead: ", edit.editId),
        );
        tooltip.appendText(visibleText(edit.note ?? ""));
      }
      if (pending)
        tooltip.appendMarkdown(
          vscode.l10n.t(
            "{0}$(watch) **Pending**: a context edit waits for the running pi's next turn boundary.",
            edit ? "\n\n" : "",
          ),
        );
    }
    item.tooltip = tooltip;
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
