import * as vscode from "vscode";
import { registerCompaction } from "./compaction/command";
import { registerLiveBridge } from "./liveBridge/service";
import { readConfig } from "./config";
import type { Services } from "./services";
import { registerPanel } from "./panel/controller";
import { registerSessionCommands } from "./sessions/commands";
import { PiSessionSource } from "./sessions/source";
import { registerStatusBar, type StatusBarGauge } from "./statusBar/gauge";
import { registerSessionTree, type SessionTreeView } from "./tree/register";

/** What `activate()` returns (`vscode.extensions.getExtension(…).exports`); used by the integration tests. */
export interface PiContextApi {
  services: Services;
  /** The status-bar gauge (what it shows: `statusBar.snapshot()`). */
  statusBar: StatusBarGauge;
  /** The "Pi Session" tree view (provider, TreeView, reveal). */
  sessionTree: SessionTreeView;
}

/**
 * Extension entry point: builds the {@link Services} and registers each feature. No logic lives
 * here, and no file I/O happens on this path (session discovery starts asynchronously).
 */
export function activate(context: vscode.ExtensionContext): PiContextApi {
  const log = vscode.window.createOutputChannel("pi Context", { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(vscode.commands.registerCommand("piContext.showLog", () => log.show()));

  const sessions = new PiSessionSource({ log, config: () => readConfig() });
  context.subscriptions.push(sessions);
  const services: Services = { context, log, sessions, config: () => readConfig() };

  // Feature modules: one registration line each (they push their disposables to context.subscriptions).
  registerSessionCommands(services);
  registerLiveBridge(services); // before the status bar: it renders the live numbers
  const statusBar = registerStatusBar(services);
  registerPanel(services);
  registerCompaction(services);
  const sessionTree = registerSessionTree(services);

  sessions.start();
  log.info("pi Context activated");
  return { services, statusBar, sessionTree };
}

export function deactivate(): void {}
