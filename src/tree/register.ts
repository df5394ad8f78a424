/**
 * The "Pi Session" tree view and its commands (each also takes an entry id, for scripts and tests).
 * Structure from `core/treeModel/`, texts from `viewModel/treeText.ts`, switching `core/flows/switch.ts`.
 */

import * as vscode from "vscode";
import { entryIdOf, type TreeElement } from "../core/treeModel/elements";
import { isTreeFilter, TREE_FILTERS, type TreeFilter } from "../core/treeModel/filters";
import type { CurrentSession, Services, SwitchCommandOutcome } from "../services";
import { pluralText } from "../shared/format";
import { visibleText } from "../shared/untrusted";
import { emptyStateMessage } from "../viewModel/statusBar";
import { openSummary } from "./documents";
import { clearLabel, setLabel } from "./labels";
import { Prompter, type OpenPrompt, type PromptRecord } from "../ui/prompter";
import { SESSION_TREE_VIEW, SessionTreeProvider } from "./provider";
import { TreeRevealer, type RevealOptions, type RevealStats } from "./reveal";
import { SwitchCommand, type SwitchCommandOptions } from "./switchCommand";

const FILTER_STATE_KEY = "piContext.tree.filter";
/** After the gauge's update has gone to the workbench, before a user can open the view (ms). */
const PREPARE_DELAY_MS = 200;

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
  readonly revealStats: Readonly<RevealStats>;
}

/** The entry id a command was called with: an id, or a tree element (an entry or a branch row). */
const targetIdOf = entryIdOf;

/** Ask for one of pi's `/tree` filters (the current one checked); undefined on Escape. */
async function pickFilter(prompter: Prompter, now: TreeFilter): Promise<TreeFilter | undefined> {
  const current = TREE_FILTERS.find((f) => f.filter === now);
  const pick = await prompter.pick(
    TREE_FILTERS.map((f) => ({
      label: `${f.filter === now ? "$(check) " : ""}${f.title}`,
      detail: f.description,
      filter: f.filter,
    })),
    {
      title: vscode.l10n.t("Filter the Session Tree (pi's /tree filter modes)"),
      placeholder: vscode.l10n.t("Now: {0}", current?.title ?? now),
    },
  );
  return pick?.filter;
}

/** Register the view, its commands and its live updates. */
export function registerSessionTree(services: Services): SessionTreeView {
  const stored = services.context.workspaceState.get<string>(FILTER_STATE_KEY);
  const provider = new SessionTreeProvider(isTreeFilter(stored) ? stored : "default");
  const treeView = vscode.window.createTreeView(SESSION_TREE_VIEW, {
    treeDataProvider: provider,
    showCollapseAll: true,
    // a span of rows for "Summarize These Messages…"; the other row commands act on the row clicked
    canSelectMany: true,
  });
  const prompter = new Prompter();
  const revealer = new TreeRevealer(treeView, provider, services.log);
  const switcher = new SwitchCommand(services, provider, prompter, revealer);

  const setFilterContext = () =>
    void vscode.commands.executeCommand("setContext", "piContext.tree.filtered", provider.currentFilter !== "default");
  setFilterContext();

  const describeView = () => {
    const current = services.sessions.current;
    const model = provider.model;
    // The title stays "Pi Session": VS Code capitalises view titles, and a session name is shown as written.
    treeView.title = vscode.l10n.t("Pi Session");
    if (!current || !model) {
      treeView.description = undefined;
      // still looking: the gauge's and the panel's words; no folder / no session: the view's welcome
      // content (package.json viewsWelcome, keys from ui/welcome.ts) explains it, with command links
      const d = services.sessions.discovery;
      treeView.message = !d || d.phase === "starting" ? emptyStateMessage(d) : undefined;
      return;
    }
    const filter = TREE_FILTERS.find((f) => f.filter === provider.currentFilter);
    const parts = [pluralText(model.entryCount, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries"))];
    parts.unshift(current.label); // pi's label, as on every surface
    if (provider.currentFilter !== "default" && filter) parts.push(filter.title);
    if (current.pinned) parts.push(vscode.l10n.t("pinned"));
    treeView.description = visibleText(parts.join(" · "));
    treeView.message = current.session.invalid
      ? vscode.l10n.t(
          "{0} is not a pi session (its first line is not a session header).",
          current.file.split(/[\\/]/).pop() ?? current.file,
        )
      : model.entryCount === 0
        ? vscode.l10n.t("The session has no entries yet.")
        : model.unreachableCount > 0
          ? vscode.l10n.t(
              "{0} not shown: on a parent cycle, with no root above. Run Pi Context: Check Session Health.",
              pluralText(model.unreachableCount, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
            )
          : undefined;
  };

  // the top level and the leaf's place computed while nobody waits (20–60 ms on a 128 MB session),
  // not when the view is first shown (issue 17: the tree's first render)
  let prepareTimer: ReturnType<typeof setTimeout> | undefined;
  const schedulePrepare = () => {
    if (prepareTimer !== undefined) return;
    prepareTimer = setTimeout(() => {
      prepareTimer = undefined;
      try {
        provider.model?.prepare();
      } catch (error) {
        services.log.error(`tree view: ${(error as Error).stack ?? String(error)}`);
      }
    }, PREPARE_DELAY_MS);
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
    if (result.kind === "new" || result.leafMoved) {
      revealer.leafMoved();
      schedulePrepare();
    } else if (result.leafChanged) revealer.leafChanged();
    revealer.revealPendingLeaf();
  };

  const setFilter = async (arg?: unknown): Promise<TreeFilter> => {
    const filter = isTreeFilter(arg) ? arg : await pickFilter(prompter, provider.currentFilter);
    if (!filter) return provider.currentFilter;
    provider.setFilter(filter);
    await services.context.workspaceState.update(FILTER_STATE_KEY, filter);
    setFilterContext();
    describeView();
    if (treeView.visible) void revealer.revealLeaf({ select: false });
    return filter;
  };

  const commands: Record<string, (...args: unknown[]) => unknown> = {
    "piContext.tree.revealLeaf": () => revealer.revealLeaf({ select: true, focus: true, show: true }),
    "piContext.tree.reveal": async (arg?: unknown) => {
      const id = targetIdOf(arg);
      if (!id || !provider.model?.elementOf(id)) return false;
      return (await revealer.reveal(id, { select: true, focus: true, show: true })) !== undefined;
    },
    "piContext.tree.setFilterActive": (arg?: unknown) => setFilter(arg),
    "piContext.tree.setFilter": setFilter,
    "piContext.tree.openSummary": (arg?: unknown) => openSummary(provider.session, targetIdOf(arg)),
    "piContext.tree.copyId": async (arg?: unknown) => {
      const id = targetIdOf(arg);
      if (id) await vscode.env.clipboard.writeText(id);
      return id;
    },
    "piContext.tree.setLabel": (arg?: unknown, labelArg?: unknown) =>
      setLabel(services, provider, prompter, targetIdOf(arg), labelArg),
    "piContext.tree.clearLabel": (arg?: unknown) => clearLabel(services, provider, targetIdOf(arg)),
    "piContext.tree.cancelSwitch": () => switcher.cancel(),
    "piContext.tree.switchWithSummary": (arg?: unknown): Promise<SwitchCommandOutcome> =>
      switcher.run(targetIdOf(arg), {}, "summary"),
    "piContext.tree.switchToHere": (arg?: unknown, optionsArg?: unknown): Promise<SwitchCommandOutcome> =>
      switcher.run(
        targetIdOf(arg),
        optionsArg && typeof optionsArg === "object" ? (optionsArg as SwitchCommandOptions) : {},
        "ask",
      ),
  };

  const onLive = () => {
    const file = provider.file;
    provider.setPending(file ? services.liveBridge.pendingContextEdits(file).flatMap((b) => b.targetIds) : []);
  };

  services.context.subscriptions.push(
    provider,
    treeView,
    { dispose: () => clearTimeout(prepareTimer) },
    services.sessions.onDidChange(onSession),
    services.liveBridge.onDidChange(onLive),
    treeView.onDidChangeVisibility((e) => {
      if (e.visible) services.activity.note(); // its first render needs the CPU
      revealer.visibilityChanged(e.visible);
    }),
    treeView.onDidChangeSelection((e) => {
      services.activity.note();
      revealer.selectionChanged(e.selection);
    }),
    // the user's work in the tree: work that can wait (the panel's details) waits for a pause
    treeView.onDidExpandElement(() => services.activity.note()),
    treeView.onDidCollapseElement(() => services.activity.note()),
  );
  services.commands.add(commands);

  return {
    provider,
    treeView,
    revealLeaf: (options) => revealer.revealLeaf(options),
    reveal: (entryId, options) => revealer.reveal(entryId, options),
    prompts: prompter.log,
    currentPrompt: () => prompter.current,
    revealStats: revealer.stats,
  };
}
