/**
 * The "Pi Session" tree view (`piContext.sessionTree`, in the Pi Context view container): the
 * current session's entry tree as pi's `/tree` shows it, live as pi appends, with "Switch to
 * Here…", labels, a filter like pi's and reveal-leaf. Layout and texts come from
 * `core/treeModel.ts`; switching is `core/switchFlow.ts` (shared with `pi-context switch`).
 *
 * Commands (all also callable with an entry id instead of a tree element, for scripts and tests):
 * - `piContext.tree.switchToHere(target, options?)`: pi's navigation. `options`: `summarize`,
 *   `customInstructions`, `label` skip the questions; resolves with a {@link SwitchCommandOutcome}.
 * - `piContext.tree.switchWithSummary(target)`: the same, summarising without asking.
 * - `piContext.tree.setLabel(target, label?)`, `piContext.tree.clearLabel(target)`.
 * - `piContext.tree.openSummary(target)`: a compaction / branch summary as a markdown preview.
 * - `piContext.tree.revealLeaf()`, `piContext.tree.reveal(entryId)` (the panel uses it),
 *   `piContext.tree.setFilter(filter?)`, `piContext.tree.copyId(target)`.
 * - `piContext.tree.cancelSwitch()`: cancel a running branch summary (same as the notification's Cancel).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { describeLive, LiveSessionError } from "./core/live";
import { isCancellation, SummarizerError } from "./core/summarizer";
import { appendLabelChange, plannedWrites, runSwitchFlow, type SwitchChoice, type SwitchPlan } from "./core/switchFlow";
import { formatTokenCount, isTreeFilter, SessionTreeModel, TREE_FILTERS, type NodeDisplay, type NodeKind, type TreeElement, type TreeFilter } from "./core/treeModel";
import { SessionChangedError, UnsafeSessionWriteError } from "./core/write";
import type { SessionFile } from "./core/session";
import type { CurrentSession, Services } from "./services";
import { emptyStateMessage } from "./statusBarModel";
import { getSummarizer } from "./summarizers";
import { setVirtualDocument, SUMMARY_SCHEME, summaryUri } from "./summaryDocuments";

/** The view id (package.json `contributes.views`). */
export const SESSION_TREE_VIEW = "piContext.sessionTree";
const FILTER_STATE_KEY = "piContext.tree.filter";

/** Codicon per entry kind. */
const KIND_ICONS: Record<NodeKind, string> = {
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

const KIND_NAMES: Record<NodeKind, string> = {
  user: "user message",
  assistant: "assistant message",
  toolResult: "tool result",
  bashExecution: "bash execution",
  system: "system prompt",
  customMessage: "custom message",
  message: "message",
  compaction: "compaction",
  branchSummary: "branch summary",
  modelChange: "model change",
  thinkingLevel: "thinking level change",
  label: "label",
  sessionInfo: "session name",
  custom: "custom entry",
  leafMarker: "leaf marker (pi-context)",
  contextEdit: "context edit",
  usage: "usage record",
  unknown: "unknown entry",
};

/** What `piContext.tree.switchToHere` resolves with. */
export type SwitchCommandOutcome =
  | { kind: "switched"; file: string; targetId: string; newLeafId: string | null; entries: { type: string; id: string; parentId: string | null }[]; editorText?: string }
  | { kind: "noop"; file: string; targetId: string; editorText?: string }
  | { kind: "declined" | "cancelled"; file?: string; message?: string }
  | { kind: "busy" }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** Options of `piContext.tree.switchToHere` (each one given skips its question). */
export interface SwitchCommandOptions {
  summarize?: boolean;
  customInstructions?: string;
  label?: string;
  /** The session file (default: the current session). */
  file?: string;
  /** Do not offer the target's text in a notification (tests). */
  quiet?: boolean;
}

/** Serves the tree to VS Code: elements are the model's interned {@link TreeElement}s. */
export class SessionTreeProvider implements vscode.TreeDataProvider<TreeElement> {
  private readonly changed = new vscode.EventEmitter<TreeElement | TreeElement[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** The model of the current session (undefined: no session). */
  model: SessionTreeModel | undefined;
  session: SessionFile | undefined;
  file: string | undefined;
  private generation = 0;

  constructor(private filter: TreeFilter) {}

  get currentFilter(): TreeFilter {
    return this.filter;
  }

  /**
   * Follow the current session: a new file gets a new model; the same file syncs incrementally.
   * @returns what the view should do next.
   */
  update(current: CurrentSession | undefined): { kind: "none" | "cleared" | "new" | "changed"; leafMoved: boolean } {
    if (!current) {
      if (!this.model) return { kind: "none", leafMoved: false };
      this.model = undefined;
      this.session = undefined;
      this.file = undefined;
      this.changed.fire(undefined);
      return { kind: "cleared", leafMoved: false };
    }
    if (!this.model || this.session !== current.session) {
      this.session = current.session;
      this.file = current.file;
      this.generation++;
      this.model = new SessionTreeModel(current.session, { filter: this.filter, reader: current.session });
      this.changed.fire(undefined);
      return { kind: "new", leafMoved: true };
    }
    const change = this.model.sync();
    if (change.all || change.elements.includes(null)) this.changed.fire(undefined);
    else if (change.elements.length > 0) this.changed.fire(change.elements.filter((e): e is TreeElement => e !== null));
    return { kind: change.added > 0 || change.rebuilt ? "changed" : "none", leafMoved: change.rebuilt || (change.leafChanged && change.all) };
  }

  setFilter(filter: TreeFilter): void {
    this.filter = filter;
    if (this.model) {
      this.model.setFilter(filter);
      this.changed.fire(undefined);
    }
  }

  /** Fire a full refresh (e.g. after the active path moved). */
  refreshAll(): void {
    this.changed.fire(undefined);
  }

  getChildren(element?: TreeElement): TreeElement[] {
    return this.model ? this.model.children(element) : [];
  }

  getParent(element: TreeElement): TreeElement | undefined {
    return this.model?.parent(element);
  }

  getTreeItem(element: TreeElement): vscode.TreeItem {
    const model = this.model;
    if (!model) return new vscode.TreeItem("(no session)");
    const id = `${this.generation}/${element.key}`;
    if (element.kind === "branch") {
      const head = model.display(element.headId);
      const active = model.branchIsActive(element.headId);
      const prefix = head.label ? `[${head.label}] ` : "";
      const item = new vscode.TreeItem({ label: prefix + head.text, ...(prefix ? { highlights: [[0, prefix.length - 1]] as [number, number][] } : {}) }, active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = id;
      item.description = `${model.branchSize(element.headId)} entries${active ? " · active" : ""}`;
      item.iconPath = new vscode.ThemeIcon("git-branch", active ? new vscode.ThemeColor("charts.blue") : undefined);
      item.contextValue = "piBranch";
      item.tooltip = new vscode.MarkdownString(`Branch starting at \`${element.headId}\` (${KIND_NAMES[head.kind]})${active ? " — holds the current leaf" : ""}`);
      return item;
    }
    if (element.kind === "page") {
      const bounds = model.pageBounds(element);
      const item = new vscode.TreeItem(`Entries ${element.start + 1}–${element.end}`, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = id;
      item.description = bounds.first ? model.display(bounds.first).text : "";
      item.iconPath = new vscode.ThemeIcon("list-flat", model.pageIsActive(element) ? new vscode.ThemeColor("charts.blue") : undefined);
      item.contextValue = "piPage";
      return item;
    }
    const d = model.display(element.id);
    const labelPrefix = d.label ? `[${d.label}] ` : "";
    const state = d.branches ? (d.onActivePath ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed) : d.folded ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem({ label: labelPrefix + d.text, ...(labelPrefix ? { highlights: [[0, labelPrefix.length - 1]] as [number, number][] } : {}) }, state);
    item.id = id;
    const parts: string[] = [];
    if (d.isLeaf) parts.push("● leaf");
    if (d.branches) parts.push(`${d.branches} branches`);
    if (d.detail) parts.push(d.detail);
    item.description = parts.join(" · ");
    item.iconPath = d.isLeaf
      ? new vscode.ThemeIcon("debug-stackframe", new vscode.ThemeColor("charts.green"))
      : new vscode.ThemeIcon(KIND_ICONS[d.kind], d.error ? new vscode.ThemeColor("errorForeground") : d.onActivePath ? new vscode.ThemeColor("charts.blue") : undefined);
    item.contextValue = `piEntry${d.hasSummary ? ".summary" : ""}${d.label ? ".labeled" : ""}${d.isLeaf ? ".leaf" : ""}`;
    item.tooltip = tooltipOf(d, model);
    item.accessibilityInformation = { label: `${KIND_NAMES[d.kind]}${d.label ? `, label ${d.label}` : ""}: ${d.text}${d.isLeaf ? ", current leaf" : d.onActivePath ? ", on the active path" : ""}`, role: "treeitem" };
    if (d.hasSummary) item.command = { command: "piContext.tree.openSummary", title: "Open Summary", arguments: [element] };
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function tooltipOf(d: NodeDisplay, model: SessionTreeModel): vscode.MarkdownString {
  // Session text is untrusted: appendText escapes it; summaries go into a code block (nothing is rendered or fetched).
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown(`**${KIND_NAMES[d.kind]}** · \`${d.id}\``);
  if (d.timestamp) md.appendText(` · ${d.timestamp.replace("T", " ").replace(/\.\d+Z$/, "Z")}`);
  md.appendMarkdown("\n\n");
  if (d.label) {
    md.appendMarkdown("$(tag) ");
    md.appendText(d.label);
    md.appendMarkdown("\n\n");
  }
  if (d.isLeaf) md.appendMarkdown(d.isFileLeaf ? "$(debug-stackframe) the current leaf: pi continues from here\n\n" : "$(debug-stackframe) the current leaf is a hidden entry right after this one\n\n");
  else if (d.onActivePath) md.appendMarkdown("on the active path (part of what pi resumes with)\n\n");
  const r = model.record(d.id);
  if (r && (r.type === "compaction" || r.type === "branch_summary")) {
    if (r.type === "compaction") md.appendMarkdown(`tokens before: **${formatTokenCount(r.tokensBefore ?? NaN)}** → summary of ≈${formatTokenCount(r.tokens)} tokens · firstKeptEntryId \`${r.firstKeptEntryId ?? "?"}\`\n\n`);
    else md.appendMarkdown(`summary of ≈${formatTokenCount(r.tokens)} tokens · from \`${r.fromId ?? "?"}\`\n\n`);
    const summary = r.summary ?? "";
    const head = summary.split("\n").slice(0, 30).join("\n");
    md.appendCodeblock(head.length > 2000 ? `${head.slice(0, 2000)}…` : head + (summary.length > head.length ? "\n…" : ""), "markdown");
    md.appendMarkdown("\n\nClick to open the full summary.");
    return md;
  }
  md.appendText(d.text);
  if (d.detail) {
    md.appendMarkdown("\n\n");
    md.appendText(d.detail);
  }
  if (d.branches) md.appendMarkdown(`\n\n$(git-branch) branch point: ${d.branches} branches`);
  return md;
}

/** What {@link registerSessionTree} returns (exposed to the integration tests through `activate()`). */
export interface SessionTreeView {
  provider: SessionTreeProvider;
  treeView: vscode.TreeView<TreeElement>;
  /** Reveal (and select) the leaf; resolves with the revealed element. */
  revealLeaf(options?: { select?: boolean; focus?: boolean }): Promise<TreeElement | undefined>;
  /** Reveal an entry (or its nearest visible ancestor). */
  reveal(entryId: string, options?: { select?: boolean; focus?: boolean }): Promise<TreeElement | undefined>;
}

function targetIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object") {
    const e = arg as Partial<TreeElement>;
    if (e.kind === "entry" && typeof (e as { id?: unknown }).id === "string") return (e as { id: string }).id;
    if (e.kind === "branch" && typeof (e as { headId?: unknown }).headId === "string") return (e as { headId: string }).headId;
  }
  return undefined;
}

/** Register the view, its commands and its live updates. */
export function registerSessionTree(services: Services): SessionTreeView {
  const stored = services.context.workspaceState.get<string>(FILTER_STATE_KEY);
  const provider = new SessionTreeProvider(isTreeFilter(stored) ? stored : "default");
  const treeView = vscode.window.createTreeView(SESSION_TREE_VIEW, { treeDataProvider: provider, showCollapseAll: true });
  let running: AbortController | undefined;
  let revealPending = true;

  const setFilterContext = () => void vscode.commands.executeCommand("setContext", "piContext.tree.filtered", provider.currentFilter !== "default");
  setFilterContext();

  const describeView = () => {
    const current = services.sessions.current;
    const model = provider.model;
    if (!current || !model) {
      treeView.title = "Pi Session";
      treeView.description = undefined;
      treeView.message = emptyStateMessage(services.sessions.discovery); // the gauge's and the panel's words
      return;
    }
    treeView.title = model.name ?? "Pi Session";
    const filter = TREE_FILTERS.find((f) => f.filter === provider.currentFilter);
    const parts = [`${model.entryCount.toLocaleString("en-US")} entries`];
    if (provider.currentFilter !== "default" && filter) parts.push(filter.title);
    if (current.pinned) parts.push("pinned");
    treeView.description = parts.join(" · ");
    treeView.message = current.session.invalid ? `${path.basename(current.file)} is not a pi session (its first line is not a session header).` : model.entryCount === 0 ? "The session has no entries yet." : undefined;
  };

  const reveal = async (entryId: string, options: { select?: boolean; focus?: boolean } = {}): Promise<TreeElement | undefined> => {
    const element = provider.model?.elementOf(entryId);
    if (!element) return undefined;
    try {
      await treeView.reveal(element, { select: options.select ?? true, focus: options.focus ?? false, expand: false });
    } catch (error) {
      services.log.warn(`tree view: reveal ${entryId}: ${(error as Error).message}`);
    }
    return element;
  };
  const revealLeaf = async (options: { select?: boolean; focus?: boolean } = {}) => {
    const leaf = provider.model?.displayLeafId;
    return leaf ? reveal(leaf, options) : undefined;
  };

  const onSession = (current: CurrentSession | undefined) => {
    let result: ReturnType<SessionTreeProvider["update"]>;
    try {
      result = provider.update(current);
    } catch (error) {
      services.log.error(`tree view: ${(error as Error).stack ?? String(error)}`);
      return;
    }
    describeView();
    if (result.kind === "new" || result.leafMoved) revealPending = true;
    if (revealPending && treeView.visible && provider.model) {
      revealPending = false;
      void revealLeaf({ select: false });
    }
  };

  services.context.subscriptions.push(
    provider,
    treeView,
    services.sessions.onDidChange(onSession),
    treeView.onDidChangeVisibility((e) => {
      if (e.visible && revealPending && provider.model) {
        revealPending = false;
        void revealLeaf({ select: false });
      }
    }),
    vscode.commands.registerCommand("piContext.tree.revealLeaf", () => revealLeaf({ select: true, focus: true })),
    vscode.commands.registerCommand("piContext.tree.reveal", (arg?: unknown) => {
      const id = targetIdOf(arg);
      return id ? reveal(id, { select: true, focus: true }).then((e) => e !== undefined) : false;
    }),
    vscode.commands.registerCommand("piContext.tree.setFilterActive", (arg?: unknown) => vscode.commands.executeCommand("piContext.tree.setFilter", arg)),
    vscode.commands.registerCommand("piContext.tree.setFilter", async (arg?: unknown) => {
      let filter: TreeFilter | undefined = isTreeFilter(arg) ? arg : undefined;
      if (!filter) {
        const pick = await vscode.window.showQuickPick(
          TREE_FILTERS.map((f) => ({ label: `${f.filter === provider.currentFilter ? "$(check) " : ""}${f.title}`, description: f.filter, detail: f.description, filter: f.filter })),
          { title: "Pi Session: Filter (like pi's /tree filter modes)", placeHolder: `now: ${provider.currentFilter}` },
        );
        filter = pick?.filter;
      }
      if (!filter) return provider.currentFilter;
      provider.setFilter(filter);
      await services.context.workspaceState.update(FILTER_STATE_KEY, filter);
      setFilterContext();
      describeView();
      if (treeView.visible) void revealLeaf({ select: false });
      return filter;
    }),
    vscode.commands.registerCommand("piContext.tree.openSummary", async (arg?: unknown) => {
      const id = targetIdOf(arg);
      const file = provider.file;
      if (!id || !file) return false;
      const uri = summaryUri(file, id);
      await vscode.commands.executeCommand("markdown.showPreview", uri).then(undefined, async () => {
        await vscode.window.showTextDocument(uri, { preview: true });
      });
      return true;
    }),
    vscode.commands.registerCommand("piContext.tree.copyId", async (arg?: unknown) => {
      const id = targetIdOf(arg);
      if (id) await vscode.env.clipboard.writeText(id);
      return id;
    }),
    vscode.commands.registerCommand("piContext.tree.setLabel", async (arg?: unknown, labelArg?: unknown) => {
      const id = targetIdOf(arg);
      const file = provider.file;
      if (!id || !file) return undefined;
      let label = typeof labelArg === "string" ? labelArg : undefined;
      if (label === undefined) {
        label = await vscode.window.showInputBox({
          title: `Label for ${id}`,
          prompt: "pi shows labels in /tree (an empty label clears it). Written as a label entry, like pi's label editor.",
          value: provider.model?.labels.get(id)?.label ?? "",
          ignoreFocusOut: true,
        });
        if (label === undefined) return undefined;
      }
      return writeLabel(services, file, id, label);
    }),
    vscode.commands.registerCommand("piContext.tree.clearLabel", async (arg?: unknown) => {
      const id = targetIdOf(arg);
      const file = provider.file;
      if (!id || !file) return undefined;
      return writeLabel(services, file, id, undefined);
    }),
    vscode.commands.registerCommand("piContext.tree.cancelSwitch", () => {
      if (!running) return false;
      running.abort();
      return true;
    }),
    vscode.commands.registerCommand("piContext.tree.switchWithSummary", (arg?: unknown) => switchToHere(arg, { summarize: true })),
    vscode.commands.registerCommand("piContext.tree.switchToHere", (arg?: unknown, optionsArg?: unknown) => switchToHere(arg, optionsArg && typeof optionsArg === "object" ? (optionsArg as SwitchCommandOptions) : {})),
  );

  async function switchToHere(arg: unknown, options: SwitchCommandOptions): Promise<SwitchCommandOutcome> {
    if (running) {
      void vscode.window.showInformationMessage("pi Context: a branch switch is already running.");
      return { kind: "busy" };
    }
    const targetId = targetIdOf(arg);
    const file = options.file ?? provider.file ?? services.sessions.current?.file;
    if (!targetId || !file) {
      void vscode.window.showInformationMessage("pi Context: pick an entry in the Pi Session view to switch to.");
      return { kind: "declined" };
    }
    const config = services.config();
    const controller = new AbortController();
    running = controller;
    void vscode.commands.executeCommand("setContext", "piContext.switching", true);
    const given: SwitchChoice = { summarize: options.summarize ?? false, ...(options.customInstructions ? { customInstructions: options.customInstructions } : {}), ...(options.label ? { label: options.label } : {}) };
    try {
      // live bridge hook: a running pi with the bridge navigates itself (liveBridge.ts); else our flow + live guard
      const live = await services.liveBridge?.routeSwitch(file, targetId, { ...(options.summarize !== undefined ? { given } : {}), ask: askChoice, signal: controller.signal, ...(options.quiet ? { quiet: true } : {}) });
      if (live) {
        if (live.kind === "switched") {
          revealPending = true;
          await services.sessions.refresh().catch(() => undefined);
        }
        return live;
      }
      const outcome = await runSwitchFlow(
        file,
        targetId,
        given,
        () => getSummarizer(services),
        { agentDir: services.sessions.agentDir(), projectSettings: config.projectSettings, guardSeconds: config.liveSession.guardSeconds },
        {
          signal: controller.signal,
          decide: async (plan, changed) => {
            if (plan.live.live && !plan.noop) throw new LiveSessionError(describeLive(plan.live, "switch branches in"), plan.live.reasons);
            if (options.summarize !== undefined) return given;
            return askChoice(plan, changed);
          },
          around: (task) =>
            Promise.resolve(
              vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "Switching branch", cancellable: true }, (progress, token) => {
                token.onCancellationRequested(() => controller.abort());
                let received = 0;
                let lastReport = 0;
                progress.report({ message: "summarising the branch you leave…" });
                return task({
                  signal: controller.signal,
                  onText: (delta) => {
                    received += delta.length;
                    const now = Date.now();
                    if (now - lastReport > 200) {
                      lastReport = now;
                      progress.report({ message: `receiving the branch summary… ≈${formatTokenCount(Math.ceil(received / 4))} tokens` });
                    }
                  },
                });
              }),
            ),
        },
      );
      if (outcome.kind === "declined") return { kind: "declined", file };
      const r = outcome.result;
      const text = r.editorText;
      if (outcome.kind === "noop") {
        void vscode.window.showInformationMessage("pi Context: already at this point.");
        return { kind: "noop", file, targetId, ...(text !== undefined ? { editorText: text } : {}) };
      }
      services.log.info(`switch ${file}: → ${r.newLeafId ?? "root"}; wrote ${r.entries.map((e) => `${e.type} ${e.id}`).join(", ") || "nothing"} (${r.bytesBefore} → ${r.bytesAfter} bytes)`);
      revealPending = true;
      await services.sessions.refresh().catch(() => undefined);
      if (provider.model && treeView.visible) {
        revealPending = false;
        await revealLeaf({ select: true });
      }
      if (!options.quiet) offerResult(outcome.plan, r.entries.length, text);
      return { kind: "switched", file, targetId, newLeafId: r.newLeafId, entries: r.entries.map((e) => ({ type: e.type, id: e.id, parentId: e.parentId ?? null })), ...(text !== undefined ? { editorText: text } : {}) };
    } catch (error) {
      return report(services, file, error);
    } finally {
      running = undefined;
      void vscode.commands.executeCommand("setContext", "piContext.switching", false);
    }
  }

  return { provider, treeView, revealLeaf, reveal };
}

/** pi's "Summarize branch?" (No summary / Summarize / Summarize with custom prompt), plus an optional label. */
async function askChoice(plan: SwitchPlan, changed: boolean): Promise<SwitchChoice | undefined> {
  const leaving = plan.collection.entries.length;
  if (plan.skipPrompt || leaving === 0) return { summarize: false };
  let label: string | undefined;
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "none" | "summarize" | "custom" | "label" };
    const messages = plan.preparation.messages.length;
    const items: Item[] = [
      { action: "none", label: "No summary", detail: plannedWrites(plan, { summarize: false, ...(label ? { label } : {}) }).includes("leaf-marker") ? "Move the leaf; a marker entry (no model context) makes pi resume here." : "Move the leaf." },
      { action: "summarize", label: "Summarize", detail: `Summarise the ${leaving} entries you leave (${messages} messages, ≈${formatTokenCount(plan.preparation.totalTokens)} tokens) into a branch summary at the new position.` },
      { action: "custom", label: "Summarize with custom prompt", detail: "Add your own focus for the summary." },
      { action: "label", label: label ? `$(tag) Label: ${label}` : "$(tag) Add a label…", detail: label ? "Change or remove the label" : "Optional: label the new position (pi shows labels in /tree)." },
    ];
    const target = plan.returnsText ? `the user message ${plan.target.id} (the leaf moves to its parent)` : plan.target.id;
    const pick = await vscode.window.showQuickPick(items, {
      title: `${changed ? "The session changed — " : ""}Switch to ${target}: summarize branch?`,
      placeHolder: `Leaving ${leaving} entries back to ${plan.collection.commonAncestorId ?? "the root"}`,
      ignoreFocusOut: true,
    });
    if (!pick) return undefined;
    if (pick.action === "label") {
      const value = await vscode.window.showInputBox({ title: "Label the new position", prompt: "Empty = no label", value: label ?? "", ignoreFocusOut: true });
      if (value !== undefined) label = value.trim() || undefined;
      continue;
    }
    const base: SwitchChoice = { summarize: pick.action !== "none", ...(label ? { label } : {}) };
    if (pick.action !== "custom") return base;
    const instructions = await vscode.window.showInputBox({
      title: "Custom summarization instructions",
      prompt: "What the branch summary should focus on (appended as “Additional focus”).",
      ignoreFocusOut: true,
    });
    if (instructions === undefined) continue; // pi: back to the choice
    return { ...base, ...(instructions.trim() ? { customInstructions: instructions.trim() } : {}) };
  }
}

let textCounter = 0;

/** Tell the user what happened; for a user-message target offer its text (pi puts it into the editor). */
function offerResult(plan: SwitchPlan, written: number, text: string | undefined): void {
  const where = plan.newLeafId ?? "the start of the session";
  const base = written > 0 ? `pi Context: switched to ${where}. pi resumes there the next time it opens the session.` : `pi Context: the session already resumes at ${where}.`;
  if (text === undefined) {
    void vscode.window.showInformationMessage(base);
    return;
  }
  const preview = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  void vscode.window.showInformationMessage(`${base} The message you picked: “${preview.replace(/\s+/g, " ")}”`, "Copy Text", "Show Text").then(async (choice) => {
    if (choice === "Copy Text") await vscode.env.clipboard.writeText(text);
    else if (choice === "Show Text") {
      const uri = vscode.Uri.from({ scheme: SUMMARY_SCHEME, path: `/preview/message-${plan.target.id}-${++textCounter}.md` });
      setVirtualDocument(uri, text);
      await vscode.window.showTextDocument(uri, { preview: true });
    }
  });
}

async function writeLabel(services: Services, file: string, id: string, label: string | undefined): Promise<{ entryId: string; label: string | null } | undefined> {
  const live = await services.liveBridge?.routeLabel(file, id, label); // live bridge hook (liveBridge.ts)
  if (live) return live.result;
  try {
    const r = await appendLabelChange(file, id, label, { guardSeconds: services.config().liveSession.guardSeconds });
    services.log.info(`label ${file}: ${id} → ${r.entry.label ?? "(cleared)"} (entry ${r.entry.id})`);
    await services.sessions.refresh().catch(() => undefined);
    return { entryId: r.entry.id, label: r.entry.label ?? null };
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`label ${file}: ${message}`);
    if (error instanceof LiveSessionError) void vscode.window.showWarningMessage(`pi Context: ${message}`);
    else void vscode.window.showErrorMessage(`pi Context: could not write the label: ${message}${/[Nn]othing was written/.test(message) ? "" : " Nothing was written."}`);
    return undefined;
  }
}

/** One message for an error (never a loop), and the outcome. */
function report(services: Services, file: string, error: unknown): SwitchCommandOutcome {
  const message = error instanceof Error ? error.message : String(error);
  services.log.warn(`switch ${file}: ${error instanceof Error ? error.name : "error"}: ${message}`);
  if (isCancellation(error)) {
    void vscode.window.showInformationMessage("pi Context: branch switch cancelled. Nothing was written.");
    return { kind: "cancelled", file, message };
  }
  if (error instanceof LiveSessionError) {
    void vscode.window.showWarningMessage(`pi Context: ${message}`);
    return { kind: "error", file, errorKind: "live", message };
  }
  if (error instanceof SummarizerError && error.kind === "config") {
    void vscode.window.showErrorMessage(`pi Context: ${message}`, "Set API Key…", "Open Settings").then((choice) => {
      if (choice === "Set API Key…") void vscode.commands.executeCommand("piContext.setApiKey");
      else if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
    });
    return { kind: "error", file, errorKind: "config", message };
  }
  const kind = error instanceof SummarizerError ? error.kind : error instanceof SessionChangedError ? "changed" : error instanceof UnsafeSessionWriteError ? "unsafe" : "error";
  const suffix = /[Nn]othing was (written|sent)/.test(message) ? "" : " Nothing was written.";
  void vscode.window.showErrorMessage(`pi Context: branch switch failed: ${message}${suffix}`);
  return { kind: "error", file, errorKind: kind, message };
}

