/**
 * The "Pi Session" tree view (`piContext.sessionTree`, in the pi Context view container): the
 * current session's entry tree as pi's `/tree` shows it, live as pi appends, with "Switch to
 * Here…", labels, a filter like pi's and reveal-leaf. Layout and texts come from
 * `core/treeModel.ts`; switching is `core/switchFlow.ts` (shared with `pi-context switch`).
 *
 * Commands (all also callable with an entry id instead of a tree element, for scripts and tests):
 * - `piContext.tree.switchToHere(target, options?)`: pi's navigation ("Summarize branch?"). `options`:
 *   `summarize`, `customInstructions`, `label` skip the questions; resolves with a {@link SwitchCommandOutcome}.
 * - `piContext.tree.switchWithSummary(target)`: shows what a summary costs and writes (the entries
 *   sent, the new leaf, the summarizer) and asks before anything is sent.
 * - `piContext.tree.setLabel(target, label?)`, `piContext.tree.clearLabel(target)`.
 * - `piContext.tree.openSummary(target)`: a compaction / branch summary as a markdown preview.
 * - `piContext.tree.revealLeaf()`, `piContext.tree.reveal(entryId)` (the panel uses it),
 *   `piContext.tree.setFilter(filter?)`, `piContext.tree.copyId(target)`.
 * - `piContext.tree.cancelSwitch()`: cancel a running branch summary (same as the notification's Cancel).
 *
 * Order of questions: everything that can refuse without the user's input (the live-session
 * guard, a live bridge that cannot be used, a missing entry) is checked before a question is
 * asked; a summarizer without its API key asks for the key when the user confirms a summary,
 * before the custom instructions, and the same switch goes on.
 *
 * Reveal: the view reveals only elements the model resolves (`getParent` is `children`'s inverse,
 * pages and branch rows included), and only once the view is visible and VS Code has fetched what
 * it asked for since the last refresh (otherwise VS Code reports "Data tree node not found").
 */

import * as vscode from "vscode";
import { checkLiveSession, describeLive, LiveSessionError } from "../core/flows/live";
import { SummarizerError, type Summarizer } from "../core/flows/summarizer";
import {
  appendLabelChange,
  plannedWrites,
  runSwitchFlow,
  type SwitchChoice,
  type SwitchPlan,
} from "../core/flows/switch";
import type { TreeElement } from "../core/treeModel/elements";
import { isTreeFilter, TREE_FILTERS, type TreeFilter } from "../core/treeModel/filters";
import { SessionTreeModel } from "../core/treeModel/model";
import type { SessionFile } from "../core/read/session";
import type { CurrentSession, Services, SwitchCommandOutcome } from "../services";
import { emptyStateMessage } from "../viewModel/statusBar";
import { setVirtualDocument, SUMMARY_SCHEME, summaryOf } from "../ui/summaryDocuments";
import { formatDateTime, formatTokens, nothingWritten, plural } from "../shared/format";
import {
  describeRecord,
  entryWords,
  KIND_NAMES,
  nodeDisplay,
  summaryTitle,
  type NodeDisplay,
  type NodeKind,
} from "../viewModel/treeText";
import { fileTitle, shortModelName } from "../viewModel/treeTextLines";
import * as notify from "../ui/notify";

/** The view id (package.json `contributes.views`). */
export const SESSION_TREE_VIEW = "piContext.sessionTree";
const FILTER_STATE_KEY = "piContext.tree.filter";
/** VS Code has rendered a refresh when it asked for nothing for this long (ms). */
const QUIET_MS = 120;
/** At most this long is waited for the view to settle before a reveal is tried anyway (ms). */
const SETTLE_TIMEOUT_MS = 4000;
/** Entries listed in the "with summary" confirmation (the rest are counted). */
const CONFIRM_LIST_MAX = 30;

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

/**
 * A question the tree view asked, in order (`SessionTreeView.prompts`): what tests check for the
 * order of prompts. `apiKey` is the summarizer's password box (`askApiKey`); it never records the key.
 */
export interface PromptRecord {
  kind: "pick" | "input" | "apiKey";
  title: string;
  /** Quick pick: the items' labels. */
  items?: string[];
}

/** The question on screen (`SessionTreeView.currentPrompt()`): the real quick input, for tests to answer. */
export type OpenPrompt =
  | { kind: "pick"; title: string; quickPick: vscode.QuickPick<vscode.QuickPickItem> }
  | { kind: "input"; title: string; inputBox: vscode.InputBox };

/** Quick picks and input boxes of the tree view, recorded (see {@link PromptRecord}). */
class Prompter {
  readonly log: PromptRecord[] = [];
  current: OpenPrompt | undefined;

  /**
   * A quick pick; resolves with the accepted item or undefined (Escape).
   * @param keepOpen items that do not close the pick when accepted (e.g. listed entries).
   */
  pick<T extends vscode.QuickPickItem>(
    items: T[],
    options: { title: string; placeholder?: string; keepOpen?: (item: T) => boolean },
  ): Promise<T | undefined> {
    const qp = vscode.window.createQuickPick<T>();
    qp.title = options.title;
    if (options.placeholder) qp.placeholder = options.placeholder;
    qp.items = items;
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = true;
    this.log.push({
      kind: "pick",
      title: options.title,
      items: items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator).map((i) => i.label),
    });
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: T | undefined) => {
        if (done) return;
        done = true;
        if (
          this.current?.kind === "pick" &&
          this.current.quickPick === (qp as unknown as vscode.QuickPick<vscode.QuickPickItem>)
        )
          this.current = undefined;
        resolve(value);
        qp.dispose();
      };
      qp.onDidAccept(() => {
        const item = qp.activeItems[0] ?? qp.selectedItems[0];
        if (!item || options.keepOpen?.(item)) return;
        finish(item);
      });
      qp.onDidHide(() => finish(undefined));
      this.current = {
        kind: "pick",
        title: options.title,
        quickPick: qp as unknown as vscode.QuickPick<vscode.QuickPickItem>,
      };
      qp.show();
    });
  }

  /** An input box; resolves with the accepted text or undefined (Escape). */
  input(options: {
    title: string;
    prompt: string;
    value?: string;
    placeholder?: string;
    validate?: (value: string) => string | undefined;
  }): Promise<string | undefined> {
    const box = vscode.window.createInputBox();
    box.title = options.title;
    box.prompt = options.prompt;
    if (options.value !== undefined) box.value = options.value;
    if (options.placeholder) box.placeholder = options.placeholder;
    box.ignoreFocusOut = true;
    this.log.push({ kind: "input", title: options.title });
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: string | undefined) => {
        if (done) return;
        done = true;
        if (this.current?.kind === "input" && this.current.inputBox === box) this.current = undefined;
        resolve(value);
        box.dispose();
      };
      box.onDidChangeValue((v) => {
        box.validationMessage = options.validate?.(v);
      });
      box.onDidAccept(() => {
        const problem = options.validate?.(box.value);
        if (problem) {
          box.validationMessage = problem;
          return;
        }
        finish(box.value);
      });
      box.onDidHide(() => finish(undefined));
      this.current = { kind: "input", title: options.title, inputBox: box };
      box.show();
    });
  }
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
  /** A full refresh was fired and VS Code has not asked for the top level since. */
  private rootPending = true;
  /** When VS Code last asked for children (ms since epoch). */
  private lastFetch = 0;

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
    };
  }

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

  getChildren(element?: TreeElement): TreeElement[] {
    this.lastFetch = Date.now();
    if (!element) this.rootPending = false;
    return this.model ? this.model.children(element) : [];
  }

  getParent(element: TreeElement): TreeElement | undefined {
    return this.model?.parent(element);
  }

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

function tooltipOf(d: NodeDisplay, model: SessionTreeModel, branchSize?: number): vscode.MarkdownString {
  // Session text is untrusted: appendText escapes it; summaries go into a code block (nothing is rendered or fetched).
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown(`**${d.error && d.kind === "assistant" ? "failed " : ""}${KIND_NAMES[d.kind]}** · \`${d.id}\``);
  if (d.timestamp) md.appendText(` · ${formatDateTime(d.timestamp, vscode.env.language)}`);
  md.appendMarkdown("\n\n");
  if (d.label) {
    md.appendMarkdown("$(tag) ");
    md.appendText(d.label);
    md.appendMarkdown("\n\n");
  }
  if (branchSize !== undefined)
    md.appendMarkdown(
      `$(git-branch) starts a branch of ${plural(branchSize, "entry")}${model.branchIsActive(d.id) ? " (the branch with the current leaf)" : ""}\n\n`,
    );
  if (d.isLeaf)
    md.appendMarkdown(
      d.isFileLeaf
        ? "$(debug-stackframe) the current leaf: pi continues from here\n\n"
        : "$(debug-stackframe) the current leaf is a hidden entry right after this one\n\n",
    );
  else if (d.onActivePath) md.appendMarkdown("on the active path (part of what pi resumes with)\n\n");
  const r = model.record(d.id);
  if (r && (r.type === "compaction" || r.type === "branch_summary")) {
    if (r.type === "compaction")
      md.appendMarkdown(
        `tokens before: **${formatTokens(r.tokensBefore ?? NaN)}** → summary of ≈${formatTokens(r.tokens)} tokens · firstKeptEntryId \`${r.firstKeptEntryId ?? "?"}\`\n\n`,
      );
    else md.appendMarkdown(`summary of ≈${formatTokens(r.tokens)} tokens · from \`${r.fromId ?? "?"}\`\n\n`);
    const summary = r.summary ?? "";
    const head = summary.split("\n").slice(0, 30).join("\n");
    md.appendCodeblock(
      head.length > 2000 ? `${head.slice(0, 2000)}…` : head + (summary.length > head.length ? "\n…" : ""),
      "markdown",
    );
    md.appendMarkdown("\n\nClick to open the full summary.");
    return md;
  }
  // the entry's words, then what the row's description abbreviates
  const blocks: ((md: vscode.MarkdownString) => void)[] = [];
  if (d.errorMessage) {
    const message = d.errorMessage;
    blocks.push((m) => {
      m.appendMarkdown("$(error) **The request failed:** ");
      m.appendText(message);
    });
  }
  if (!d.errorInText) blocks.push((m) => m.appendText(d.text));
  let detail = d.errorMessage ? d.detail.replace(/^error\b.*$/, "").replace(/ {2}error\b.*$/, "") : d.detail;
  const short = d.model ? shortModelName(d.model) : "";
  if (short && detail.endsWith(short)) detail = detail.slice(0, -short.length);
  detail = detail.trim();
  if (detail) blocks.push((m) => m.appendText(detail));
  if (d.model) {
    const model = d.model;
    blocks.push((m) => {
      m.appendMarkdown("$(sparkle) model ");
      m.appendText(model);
    });
  }
  blocks.forEach((write, i) => {
    if (i > 0) md.appendMarkdown("\n\n");
    write(md);
  });
  if (d.branches) md.appendMarkdown(`\n\n$(git-branch) branch point: ${d.branches} branches`);
  return md;
}

/** What {@link registerSessionTree} returns (exposed to the integration tests through `activate()`). */
export interface SessionTreeView {
  provider: SessionTreeProvider;
  treeView: vscode.TreeView<TreeElement>;
  /** Reveal the leaf (opening the view when `show`); resolves with the revealed element. */
  revealLeaf(options?: RevealOptions): Promise<TreeElement | undefined>;
  /** Reveal an entry (or its nearest visible ancestor; a branch's first entry is its branch row). */
  reveal(entryId: string, options?: RevealOptions): Promise<TreeElement | undefined>;
  /** Questions asked so far, in order (titles and item labels; never a key). */
  readonly prompts: readonly PromptRecord[];
  /** The question on screen, if any (its real quick pick / input box). */
  currentPrompt(): OpenPrompt | undefined;
  /** Reveals done, retried after VS Code had not caught up (logged at debug level), and failed (logged as warnings). */
  readonly revealStats: { readonly done: number; readonly retried: number; readonly failed: number };
}

/** Options of {@link SessionTreeView.reveal}. */
export interface RevealOptions {
  select?: boolean;
  focus?: boolean;
  /** Open the view first when it is hidden (default: reveal only into a visible view). */
  show?: boolean;
}

function targetIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object") {
    const e = arg as Partial<TreeElement>;
    if (e.kind === "entry" && typeof (e as { id?: unknown }).id === "string") return (e as { id: string }).id;
    if (e.kind === "branch" && typeof (e as { headId?: unknown }).headId === "string")
      return (e as { headId: string }).headId;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Register the view, its commands and its live updates. */
export function registerSessionTree(services: Services): SessionTreeView {
  const stored = services.context.workspaceState.get<string>(FILTER_STATE_KEY);
  const provider = new SessionTreeProvider(isTreeFilter(stored) ? stored : "default");
  const treeView = vscode.window.createTreeView(SESSION_TREE_VIEW, {
    treeDataProvider: provider,
    showCollapseAll: true,
  });
  const prompter = new Prompter();
  const revealStats = { done: 0, retried: 0, failed: 0 };
  let running: AbortController | undefined;
  let revealPending = true;
  let visibleSince = treeView.visible ? Date.now() : 0;

  const setFilterContext = () =>
    void vscode.commands.executeCommand("setContext", "piContext.tree.filtered", provider.currentFilter !== "default");
  setFilterContext();

  const describeView = () => {
    const current = services.sessions.current;
    const model = provider.model;
    // The title stays "Pi Session": VS Code capitalises view titles, and a session name is shown as written.
    treeView.title = "Pi Session";
    if (!current || !model) {
      treeView.description = undefined;
      treeView.message = emptyStateMessage(services.sessions.discovery); // the gauge's and the panel's words
      return;
    }
    const filter = TREE_FILTERS.find((f) => f.filter === provider.currentFilter);
    const parts = [plural(model.entryCount, "entry")];
    if (model.name) parts.unshift(model.name);
    if (provider.currentFilter !== "default" && filter) parts.push(filter.title);
    if (current.pinned) parts.push("pinned");
    treeView.description = parts.join(" · ");
    treeView.message = current.session.invalid
      ? `${current.file.split(/[\\/]/).pop()} is not a pi session (its first line is not a session header).`
      : model.entryCount === 0
        ? "The session has no entries yet."
        : undefined;
  };

  /** Wait until the view is visible and VS Code has fetched what it asked for since the last refresh. */
  const settle = async (): Promise<boolean> => {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      if (treeView.visible && provider.settled && Date.now() - visibleSince >= QUIET_MS) return true;
      if (Date.now() > deadline) return treeView.visible;
      await sleep(40);
    }
  };

  const revealNow = async (entryId: string, options: RevealOptions): Promise<TreeElement | undefined> => {
    if (!treeView.visible) {
      if (!options.show) return undefined;
      await vscode.commands.executeCommand(`${SESSION_TREE_VIEW}.focus`);
    }
    for (let attempt = 1; ; attempt++) {
      if (!(await settle())) return undefined;
      const element = provider.model?.elementOf(entryId);
      if (!element) return undefined;
      try {
        await treeView.reveal(element, {
          select: options.select ?? true,
          focus: options.focus ?? false,
          expand: false,
        });
        revealStats.done++;
        return element;
      } catch (error) {
        const message = (error as Error).message;
        if (attempt < 3) {
          // VS Code was still applying a refresh: wait until it is done and try again
          revealStats.retried++;
          services.log.debug(`tree view: reveal ${entryId} (attempt ${attempt}): ${message}`);
          await sleep(200 * attempt);
          continue;
        }
        revealStats.failed++;
        services.log.warn(`tree view: could not reveal ${entryId}: ${message}`);
        return undefined;
      }
    }
  };
  let revealQueue: Promise<unknown> = Promise.resolve();
  /** Reveals run one at a time, each against the model as it is when its turn comes. */
  const reveal = (entryId: string, options: RevealOptions = {}): Promise<TreeElement | undefined> => {
    const next = revealQueue.then(() => revealNow(entryId, options));
    revealQueue = next.catch(() => undefined);
    return next;
  };
  const revealLeaf = async (options: RevealOptions = {}) => {
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

  /** Summarizer checks for the questions: pi's own model through the live bridge, else ours. */
  const questionContext = (bridge: boolean): QuestionContext => ({
    prompter,
    summarizer: async () => {
      if (bridge) return { label: "pi (with its own model)", needsKey: false, origin: "" };
      const origin = services.summarizers.keyOrigin();
      try {
        const s = await services.summarizers.get({ allowMissingKey: true });
        return { label: s.label, needsKey: s.needsApiKey === true, origin };
      } catch (error) {
        if (error instanceof SummarizerError)
          return { label: "the summarizer", needsKey: false, origin, problem: error.message };
        throw error;
      }
    },
    ready: async () => {
      if (bridge) return true;
      let s: Summarizer;
      try {
        s = await services.summarizers.get({ allowMissingKey: true });
      } catch (error) {
        if (!(error instanceof SummarizerError)) throw error;
        offerSettings(error.message);
        return false;
      }
      if (!s.needsApiKey) return true;
      prompter.log.push({ kind: "apiKey", title: `API Key for ${services.summarizers.keyOrigin()}` });
      return (await services.summarizers.ready(s)) !== undefined;
    },
  });

  services.context.subscriptions.push(
    provider,
    treeView,
    services.sessions.onDidChange(onSession),
    treeView.onDidChangeVisibility((e) => {
      if (e.visible) visibleSince = Date.now();
      if (e.visible && revealPending && provider.model) {
        revealPending = false;
        void revealLeaf({ select: false });
      }
    }),
    vscode.commands.registerCommand("piContext.tree.revealLeaf", () =>
      revealLeaf({ select: true, focus: true, show: true }),
    ),
    vscode.commands.registerCommand("piContext.tree.reveal", async (arg?: unknown) => {
      const id = targetIdOf(arg);
      if (!id || !provider.model?.elementOf(id)) return false;
      return (await reveal(id, { select: true, focus: true, show: true })) !== undefined;
    }),
    vscode.commands.registerCommand("piContext.tree.setFilterActive", (arg?: unknown) =>
      vscode.commands.executeCommand("piContext.tree.setFilter", arg),
    ),
    vscode.commands.registerCommand("piContext.tree.setFilter", async (arg?: unknown) => {
      let filter: TreeFilter | undefined = isTreeFilter(arg) ? arg : undefined;
      if (!filter) {
        const current = TREE_FILTERS.find((f) => f.filter === provider.currentFilter);
        const pick = await prompter.pick(
          TREE_FILTERS.map((f) => ({
            label: `${f.filter === provider.currentFilter ? "$(check) " : ""}${f.title}`,
            detail: f.description,
            filter: f.filter,
          })),
          {
            title: "Filter the Session Tree (pi's /tree filter modes)",
            placeholder: `Now: ${current?.title ?? provider.currentFilter}`,
          },
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
      const session = provider.session;
      const record = id ? session?.byId.get(id) : undefined;
      if (!id || !session || !record) return false;
      const text = summaryOf(session, id);
      if (text === undefined) return false;
      // a tab titled by the summary's words (not its id); summaries never change once written
      const uri = vscode.Uri.from({
        scheme: SUMMARY_SCHEME,
        path: `/preview/summary-${id}/${summaryTitle(record)}.md`,
      });
      setVirtualDocument(uri, text);
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
        // refusals first: nothing is asked when the label could not be written
        const bridge = await services.liveBridge.availability(file);
        if (bridge === "problem") return writeLabel(services, file, id, undefined); // the bridge reports why it cannot (nothing is written)
        if (bridge === "none") {
          const live = checkLiveSession(file, {
            guardSeconds: services.config().liveSession.guardSeconds,
            ...(provider.session?.cwd ? { sessionCwd: provider.session.cwd } : {}),
          });
          if (live.live) {
            const message = describeLive(live, "label entries in");
            services.log.warn(`label ${file}: ${message}`);
            void notify.warn(message);
            return undefined;
          }
        }
        label = await prompter.input({
          title: `Label for ${entryWords(provider.model?.record(id))}`,
          prompt:
            "pi shows labels in /tree; an empty label removes it. Written as a label entry, like pi's label editor.",
          value: provider.model?.labels.get(id)?.label ?? "",
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
    vscode.commands.registerCommand("piContext.tree.switchWithSummary", (arg?: unknown) =>
      switchToHere(arg, {}, "summary"),
    ),
    vscode.commands.registerCommand("piContext.tree.switchToHere", (arg?: unknown, optionsArg?: unknown) =>
      switchToHere(
        arg,
        optionsArg && typeof optionsArg === "object" ? (optionsArg as SwitchCommandOptions) : {},
        "ask",
      ),
    ),
  );

  /**
   * "Switch to Here…" (`ask`: pi's "Summarize branch?") and "Switch to Here with Summary…"
   * (`summary`: what the summary costs and writes, confirmed before anything is sent). Options
   * with `summarize` skip the questions.
   */
  async function switchToHere(
    arg: unknown,
    options: SwitchCommandOptions,
    mode: "ask" | "summary",
  ): Promise<SwitchCommandOutcome> {
    if (running) {
      void notify.info("a branch switch is already running.");
      return { kind: "busy" };
    }
    const targetId = targetIdOf(arg);
    const file = options.file ?? provider.file ?? services.sessions.current?.file;
    if (!targetId || !file) {
      void notify.info("pick an entry in the Pi Session view to switch to.");
      return { kind: "declined" };
    }
    const config = services.config();
    const controller = new AbortController();
    running = controller;
    void vscode.commands.executeCommand("setContext", "piContext.switching", true);
    const given: SwitchChoice | undefined =
      options.summarize !== undefined
        ? {
            summarize: options.summarize,
            ...(options.customInstructions ? { customInstructions: options.customInstructions } : {}),
            ...(options.label ? { label: options.label } : {}),
          }
        : undefined;
    const ask =
      (bridge: boolean) =>
      async (plan: SwitchPlan, changed: boolean): Promise<SwitchChoice | undefined> => {
        if (given) return given;
        const ctx = questionContext(bridge);
        return mode === "summary" ? confirmSummary(plan, changed, ctx) : askChoice(plan, changed, ctx);
      };
    let planned: SwitchPlan | undefined;
    try {
      // live bridge hook: a running pi with the bridge navigates itself (liveBridge.ts); else our flow + live guard
      const live = await services.liveBridge.routeSwitch(file, targetId, {
        ...(given ? { given } : {}),
        ask: ask(true),
        signal: controller.signal,
        ...(options.quiet ? { quiet: true } : {}),
      });
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
        given ?? { summarize: false },
        () => services.summarizers.get(),
        {
          agentDir: services.sessions.agentDir(),
          projectSettings: config.projectSettings,
          guardSeconds: config.liveSession.guardSeconds,
        },
        {
          signal: controller.signal,
          decide: async (plan, changed) => {
            planned = plan;
            // refusals before questions: the live guard (a no-op never gets here)
            if (plan.live.live)
              throw new LiveSessionError(describeLive(plan.live, "switch branches in"), plan.live.reasons);
            return ask(false)(plan, changed);
          },
          onUnauthorized: async (error, s) => {
            services.log.warn(`switch ${file}: ${error.message}`);
            prompter.log.push({ kind: "apiKey", title: `API Key for ${services.summarizers.keyOrigin()}` });
            return services.summarizers.withNewKey(s, error);
          },
          around: (task) =>
            Promise.resolve(
              vscode.window.withProgress(
                {
                  location: vscode.ProgressLocation.Notification,
                  title: `Switching to ${planned ? entryWords(planned.target) : "the entry"}`,
                  cancellable: true,
                },
                (progress, token) => {
                  token.onCancellationRequested(() => controller.abort());
                  let received = 0;
                  let lastReport = 0;
                  progress.report({ message: "summarizing the branch you leave…" });
                  return task({
                    signal: controller.signal,
                    onText: (delta) => {
                      received += delta.length;
                      const now = Date.now();
                      if (now - lastReport > 200) {
                        lastReport = now;
                        progress.report({
                          message: `receiving the branch summary… ≈${formatTokens(Math.ceil(received / 4))} tokens`,
                        });
                      }
                    },
                  });
                },
              ),
            ),
        },
      );
      if (outcome.kind === "declined") return { kind: "declined", file };
      const r = outcome.result;
      const text = r.editorText;
      if (outcome.kind === "noop") {
        void notify.info(`the session is already at ${entryWords(outcome.plan.target)}.`);
        return { kind: "noop", file, targetId, ...(text !== undefined ? { editorText: text } : {}) };
      }
      services.log.info(
        `switch ${file}: → ${r.newLeafId ?? "root"}; wrote ${r.entries.map((e) => `${e.type} ${e.id}`).join(", ") || "nothing"} (${r.bytesBefore} → ${r.bytesAfter} bytes)`,
      );
      revealPending = true;
      await services.sessions.refresh().catch(() => undefined);
      if (provider.model && treeView.visible) {
        revealPending = false;
        await revealLeaf({ select: true });
      }
      if (!options.quiet) offerResult(outcome.plan, r.entries.length, text);
      return {
        kind: "switched",
        file,
        targetId,
        newLeafId: r.newLeafId,
        entries: r.entries.map((e) => ({ type: e.type, id: e.id, parentId: e.parentId ?? null })),
        ...(text !== undefined ? { editorText: text } : {}),
      };
    } catch (error) {
      return report(services, file, error);
    } finally {
      running = undefined;
      void vscode.commands.executeCommand("setContext", "piContext.switching", false);
    }
  }

  return {
    provider,
    treeView,
    revealLeaf,
    reveal,
    prompts: prompter.log,
    currentPrompt: () => prompter.current,
    revealStats,
  };
}

/** An error about the summarizer's settings, with a way to them. */
function offerSettings(message: string): void {
  void notify.error(message, "Open Settings").then((choice) => {
    if (choice === "Open Settings")
      void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
  });
}

/** What the questions need to know about the summarizer. */
interface QuestionContext {
  prompter: Prompter;
  /** Its name, whether it still needs an API key (and for which origin), or why it cannot run. */
  summarizer(): Promise<{ label: string; needsKey: boolean; origin: string; problem?: string }>;
  /** Make it ready to send: asks for the API key when one is needed. False: cancelled (nothing stored). */
  ready(): Promise<boolean>;
}

/** The new position in words: the new leaf's text, or the start of the session. */
function newLeafWords(plan: SwitchPlan): string {
  return plan.newLeafId === null ? "the start of the session" : entryWords(plan.session.byId.get(plan.newLeafId));
}

function ancestorWords(plan: SwitchPlan): string {
  return plan.collection.commonAncestorId === null
    ? "the start of the session"
    : entryWords(plan.session.byId.get(plan.collection.commonAncestorId));
}

/**
 * pi's "Summarize branch?" (No summary / Summarize / Summarize with custom prompt), plus an optional
 * label. Choosing a summary makes the summarizer ready first (the API key is asked for here when
 * missing), then asks for custom instructions.
 */
async function askChoice(plan: SwitchPlan, changed: boolean, ctx: QuestionContext): Promise<SwitchChoice | undefined> {
  const leaving = plan.collection.entries.length;
  if (plan.skipPrompt || leaving === 0) return { summarize: false };
  const info = await ctx.summarizer();
  const target = entryWords(plan.target);
  const where = newLeafWords(plan);
  const messages = plan.preparation.messages.length;
  let label: string | undefined;
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "none" | "summarize" | "custom" | "label" };
    const summaryDetail =
      messages === 0
        ? `Nothing you leave converts to a message: pi's “No content to summarize” is written after ${where}; no model is called.`
        : info.problem
          ? `Not available: ${info.problem}`
          : `${info.label} summarizes the ${plural(leaving, "entry")} you leave (${plural(messages, "message")}, ≈${formatTokens(plan.preparation.totalTokens)} tokens) into a branch summary after ${where}.${info.needsKey ? ` It needs an API key for ${info.origin}: you are asked for it first.` : ""}`;
    const items: Item[] = [
      {
        action: "none",
        label: "No summary",
        detail: plannedWrites(plan, { summarize: false, ...(label ? { label } : {}) }).includes("leaf-marker")
          ? `Move the leaf to ${where}; a marker entry (no model context) makes pi resume there.`
          : `Move the leaf to ${where}.`,
      },
      {
        action: "summarize",
        label: "Summarize",
        ...(info.needsKey && messages > 0 ? { description: "asks for the API key first" } : {}),
        detail: summaryDetail,
      },
      {
        action: "custom",
        label: "Summarize with custom prompt",
        ...(info.needsKey && messages > 0 ? { description: "asks for the API key first" } : {}),
        detail: "Add your own focus for the summary.",
      },
      {
        action: "label",
        label: label ? `$(tag) Label: ${label}` : "$(tag) Add a label…",
        detail: label ? "Change or remove the label" : "Optional: label the new position (pi shows labels in /tree).",
      },
    ];
    const pick = await ctx.prompter.pick(items, {
      title: `${changed ? "The session changed — " : ""}Switch to ${target}: summarize the branch you leave?`,
      placeholder: `Leaving ${plural(leaving, "entry")}, back to ${ancestorWords(plan)}${plan.returnsText ? `; the leaf moves to the entry before ${target}` : ""}`,
    });
    if (!pick) return undefined;
    if (pick.action === "label") {
      const value = await ctx.prompter.input({
        title: "Label the New Position",
        prompt: "pi shows labels in /tree. Empty: no label.",
        value: label ?? "",
      });
      if (value !== undefined) label = value.trim() || undefined;
      continue;
    }
    const base: SwitchChoice = { summarize: pick.action !== "none", ...(label ? { label } : {}) };
    if (pick.action === "none") return base;
    if (messages > 0) {
      if (info.problem) {
        offerSettings(info.problem);
        continue;
      }
      if (!(await ctx.ready())) continue; // no key given: back to the choice, nothing sent
    }
    if (pick.action === "summarize") return base;
    const instructions = await ctx.prompter.input({
      title: "Custom Summarization Instructions",
      prompt: "What the branch summary should focus on (appended as “Additional focus”).",
    });
    if (instructions === undefined) continue; // pi: back to the choice
    return { ...base, ...(instructions.trim() ? { customInstructions: instructions.trim() } : {}) };
  }
}

/**
 * "Switch to Here with Summary…": what will happen (the messages sent, to which summarizer, where
 * the summary goes) and a confirmation before anything is sent. The API key is asked for after
 * the confirmation when the summarizer needs one; Escape there returns to this question.
 */
async function confirmSummary(
  plan: SwitchPlan,
  changed: boolean,
  ctx: QuestionContext,
): Promise<SwitchChoice | undefined> {
  const leaving = plan.collection.entries.length;
  const sent = plan.preparation.messages.map((m) => m.record);
  const target = entryWords(plan.target);
  const where = newLeafWords(plan);
  type Item = vscode.QuickPickItem & { action: "go" | "custom" | "plain" | "cancel" | "entry" };
  for (;;) {
    const info = await ctx.summarizer();
    const items: Item[] = [];
    if (leaving === 0)
      items.push({
        action: "go",
        label: "$(check) Switch",
        detail: `Nothing is left behind, so there is nothing to summarize: the leaf moves to ${where}. Nothing is sent.`,
      });
    else if (sent.length === 0)
      items.push({
        action: "go",
        label: "$(check) Switch and Write the Branch Summary",
        detail: `Nothing you leave converts to a message: pi's “No content to summarize” is written after ${where}; no model is called.`,
      });
    else {
      const key = info.needsKey
        ? ` ${info.origin} needs an API key: you enter it next (kept in VS Code's secret storage).`
        : "";
      items.push({
        action: "go",
        label: info.needsKey ? "$(key) Enter the API Key, Then Summarize and Switch" : "$(check) Summarize and Switch",
        description: info.label,
        detail: info.problem
          ? `Not available: ${info.problem}`
          : `One request: ${plural(sent.length, "message")}, ≈${formatTokens(plan.preparation.totalTokens)} tokens. The branch summary goes after ${where}, where pi resumes.${key}`,
      });
      items.push({
        action: "custom",
        label: "$(edit) Summarize with Custom Instructions…",
        detail: "Add your own focus for the summary, then send it.",
      });
    }
    if (leaving > 0)
      items.push({
        action: "plain",
        label: "$(arrow-right) Switch Without a Summary",
        detail: `Only move the leaf to ${where}; nothing is sent.`,
      });
    items.push({ action: "cancel", label: "$(close) Cancel", detail: "Nothing is sent, nothing is written." });
    if (sent.length > 0) {
      items.push({
        action: "entry",
        kind: vscode.QuickPickItemKind.Separator,
        label: `Sent to the summarizer: ${plural(sent.length, "message")} of the ${plural(leaving, "entry")} you leave`,
      });
      for (const r of sent.slice(0, CONFIRM_LIST_MAX)) {
        const d = describeRecord(r);
        items.push({ action: "entry", label: `$(${KIND_ICONS[d.kind]}) ${d.text}`, description: r.id });
      }
      if (sent.length > CONFIRM_LIST_MAX)
        items.push({ action: "entry", label: `… and ${plural(sent.length - CONFIRM_LIST_MAX, "more message")}` });
    }
    const pick = await ctx.prompter.pick(items, {
      title: `${changed ? "The session changed — " : ""}Switch to ${target} with a branch summary?`,
      placeholder: `Leaving ${plural(leaving, "entry")}, back to ${ancestorWords(plan)}${plan.returnsText ? `; the leaf moves to the entry before ${target}` : ""}`,
      keepOpen: (item) => item.action === "entry",
    });
    if (!pick || pick.action === "cancel") return undefined;
    if (pick.action === "plain") return { summarize: false };
    if (sent.length === 0) return { summarize: true };
    if (info.problem) {
      offerSettings(info.problem);
      continue;
    }
    if (!(await ctx.ready())) continue; // no key given: back here, nothing sent
    if (pick.action === "go") return { summarize: true };
    const instructions = await ctx.prompter.input({
      title: "Custom Summarization Instructions",
      prompt: "What the branch summary should focus on (appended as “Additional focus”).",
    });
    if (instructions === undefined) continue;
    return { summarize: true, ...(instructions.trim() ? { customInstructions: instructions.trim() } : {}) };
  }
}

let textCounter = 0;

/** Tell the user what happened; for a user-message target offer its text (pi puts it into the editor). */
function offerResult(plan: SwitchPlan, written: number, text: string | undefined): void {
  const where = newLeafWords(plan);
  const base =
    written > 0
      ? `moved the leaf to ${where}. pi resumes there the next time it opens the session.`
      : `the session already resumes at ${where}.`;
  if (text === undefined) {
    void notify.info(base);
    return;
  }
  const preview = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  void notify
    .info(`${base} The message you picked: “${preview.replace(/\s+/g, " ")}”`, "Copy Text", "Show Text")
    .then(async (choice) => {
      if (choice === "Copy Text") await vscode.env.clipboard.writeText(text);
      else if (choice === "Show Text") {
        const uri = vscode.Uri.from({
          scheme: SUMMARY_SCHEME,
          path: `/preview/message-${++textCounter}/${fileTitle(`Message ${entryWords(plan.target, 40)}`)}.md`,
        });
        setVirtualDocument(uri, text);
        await vscode.window.showTextDocument(uri, { preview: true });
      }
    });
}

async function writeLabel(
  services: Services,
  file: string,
  id: string,
  label: string | undefined,
): Promise<{ entryId: string; label: string | null } | undefined> {
  const live = await services.liveBridge.routeLabel(file, id, label); // a running pi with the bridge writes it
  if (live) return live.result;
  try {
    const r = await appendLabelChange(file, id, label, { guardSeconds: services.config().liveSession.guardSeconds });
    services.log.info(`label ${file}: ${id} → ${r.entry.label ?? "(cleared)"} (entry ${r.entry.id})`);
    await services.sessions.refresh().catch(() => undefined);
    return { entryId: r.entry.id, label: r.entry.label ?? null };
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`label ${file}: ${message}`);
    if (error instanceof LiveSessionError) void notify.warn(message);
    else void notify.error(`could not write the label: ${nothingWritten(message)}`);
    return undefined;
  }
}

/** One message for an error (never a loop), and the outcome. */
function report(services: Services, file: string, error: unknown): SwitchCommandOutcome {
  return notify.reportFlowFailure(services.log, {
    operation: "branch switch",
    logPrefix: "switch",
    file,
    error,
    configActions: ["Set API Key…", "Open Settings"],
  });
}
