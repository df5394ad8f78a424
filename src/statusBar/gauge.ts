/** The status-bar context gauge; re-created when its placement settings change (no reload). */

import * as vscode from "vscode";
import { afterActivation } from "../ui/afterActivation";
import { PRODUCT_NAME } from "../shared/format";
import * as notify from "../ui/notify";
import type { Services } from "../services";
import { autoCompactsText } from "../shared/format";
import { nothingToCompact, type GaugeLevel } from "../viewModel/gauge";
import { buildGaugeView, TOOLTIP_COMMANDS, WarningTracker, type GaugeView } from "../viewModel/statusBar";

/** The default placement's id; other placements get {@link gaugeItemId}. */
export const GAUGE_ID = "piContext.gauge";

/**
 * One id per placement: VS Code remembers each id's alignment and priority, so a re-created item
 * under the same id would not move until the window reloads.
 */
export function gaugeItemId(alignment: "left" | "right", priority: number): string {
  if (alignment === "left" && priority === 100) return GAUGE_ID;
  return `${GAUGE_ID}.${alignment}.${String(priority).replace(/[^0-9A-Za-z-]/g, "_")}`;
}

/** What the gauge currently shows (for tests and the panel). */
export interface GaugeSnapshot extends GaugeView {
  /** The placement of the item as created (read back from the `StatusBarItem`, not from the settings). */
  alignment: "left" | "right";
  priority: number;
  /** The item's id (see {@link gaugeItemId}); the DOM id is `pi-context.pi-context.<itemId>`. */
  itemId: string;
  /** The theme colour id of the background, if any. */
  backgroundColor: string | undefined;
  accessibilityLabel: string | undefined;
  /** Notifications shown so far (level + message), newest last. */
  notifications: { level: GaugeLevel; message: string }[];
}

/** The gauge handle returned by {@link registerStatusBar}. */
export interface StatusBarGauge {
  snapshot(): GaugeSnapshot;
  /** Fires after every render. */
  readonly onDidRender: vscode.Event<GaugeSnapshot>;
}

/** Create the gauge and keep it up to date. */
export function registerStatusBar(services: Services): StatusBarGauge {
  const { context, sessions, log } = services;
  const rendered = new vscode.EventEmitter<GaugeSnapshot>();
  const tracker = new WarningTracker();
  const notifications: GaugeSnapshot["notifications"] = [];
  let item: vscode.StatusBarItem | undefined;
  let placement = "";
  let view: GaugeView | undefined;
  let background: string | undefined;

  const ensureItem = (): vscode.StatusBarItem => {
    const { alignment, priority } = services.config().statusBar;
    const key = `${alignment}:${priority}`;
    if (item && key === placement) return item;
    item?.dispose();
    placement = key;
    item = vscode.window.createStatusBarItem(
      gaugeItemId(alignment, priority),
      alignment === "right" ? vscode.StatusBarAlignment.Right : vscode.StatusBarAlignment.Left,
      priority,
    );
    item.name = PRODUCT_NAME;
    if (key !== "left:100") log.info(`status bar: gauge placed ${alignment}, priority ${priority}`);
    return item;
  };

  let hasSession: boolean | undefined;
  const render = (): void => {
    const config = services.config();
    const current = sessions.current;
    if (hasSession !== !!current) {
      // `piContext.hasSession`: hides actions that make no sense without a session (view title bar)
      hasSession = !!current;
      void vscode.commands.executeCommand("setContext", "piContext.hasSession", hasSession);
    }
    const v = buildGaugeView({
      ...(current
        ? {
            session: {
              file: current.file,
              pinned: current.pinned,
              label: current.label,
              liveSessions: current.liveSessions,
              updatedAt: current.updatedAt,
              modifiedAt: current.session.mtimeMs,
              ...(services.liveBridge.liveAnalysis(current) ?? { analysis: current.analysis }),
            },
          }
        : {}),
      ...(sessions.discovery ? { discovery: sessions.discovery } : {}),
      margin: config.warning.margin,
      colors: config.gauge.colors,
      locale: vscode.env.language,
    });
    view = v;
    const it = ensureItem();
    it.text = v.text;
    const tooltip = new vscode.MarkdownString(v.tooltip, true);
    tooltip.isTrusted = { enabledCommands: [...TOOLTIP_COMMANDS] };
    it.tooltip = tooltip;
    background =
      v.level === "error"
        ? "statusBarItem.errorBackground"
        : v.level === "warning"
          ? "statusBarItem.warningBackground"
          : undefined;
    it.backgroundColor = background ? new vscode.ThemeColor(background) : undefined;
    it.accessibilityInformation = { label: v.ariaLabel, role: "button" };
    it.command = {
      command: v.command,
      title:
        v.command === "piContext.openPanel" ? vscode.l10n.t("Open Context Panel") : vscode.l10n.t("Select Session…"),
    };
    it.show();

    // warning notifications (off by default; never repeated per level)
    if (current) {
      let compactionId: string | null = null;
      const records = current.session.records;
      for (let i = records.length - 1; i >= 0; i--) {
        if (records[i]!.type === "compaction") {
          compactionId = records[i]!.id;
          break;
        }
      }
      const notify = tracker.update(current.file, v.level, compactionId);
      if (notify && config.warning.enabled)
        showWarning(notify, current.analysis.inspect.tokensUntilCompaction, nothingToCompact(current.analysis.inspect));
    } else {
      tracker.update(undefined, "normal", null);
    }
    rendered.fire(snapshot());
  };

  const showWarning = (level: GaugeLevel, until: number | null, nothing: string | undefined): void => {
    const message =
      level === "error"
        ? vscode.l10n.t("pi's context is above the auto-compaction threshold: {0}.", autoCompactsText(nothing))
        : until !== null
          ? vscode.l10n.t("pi's context is within {0} tokens of auto-compaction.", until.toLocaleString("en-US"))
          : vscode.l10n.t("pi's context is within a few tokens of auto-compaction.");
    notifications.push({ level, message });
    log.info(`warning: ${message}`);
    const compact = vscode.l10n.t("Compact…");
    const openPanel = vscode.l10n.t("Open Context Panel");
    void notify.warn(message, compact, openPanel).then(
      (choice) => {
        if (choice === compact) void services.actions.compact();
        else if (choice === openPanel) void services.actions.openPanel();
      },
      () => undefined,
    );
  };

  const snapshot = (): GaugeSnapshot => {
    const v = view ?? buildGaugeView({ margin: services.config().warning.margin });
    const { alignment, priority } = services.config().statusBar;
    return {
      ...v,
      // what VS Code was given (the item's own readonly properties), so a test sees a wrong placement
      alignment: item ? (item.alignment === vscode.StatusBarAlignment.Right ? "right" : "left") : alignment,
      priority: item?.priority ?? priority,
      itemId: item?.id ?? gaugeItemId(alignment, priority),
      backgroundColor: background,
      accessibilityLabel: item?.accessibilityInformation?.label,
      notifications: [...notifications],
    };
  };

  // Re-render the relative parts of the tooltip ("Updated") is not needed; render on changes only.
  context.subscriptions.push(
    rendered,
    sessions.onDidChange(() => render()),
    services.liveBridge.onDidChange(() => render()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (
        e.affectsConfiguration("piContext.statusBar") ||
        e.affectsConfiguration("piContext.warning") ||
        e.affectsConfiguration("piContext.gauge")
      )
        render();
    }),
    { dispose: () => item?.dispose() },
  );
  // the first "no session yet" gauge right after activate() returns (its item and context key are
  // messages to the workbench: not on activation's path)
  context.subscriptions.push(
    afterActivation(() => {
      if (!view) render();
    }),
  );
  return { snapshot, onDidRender: rendered.event };
}
