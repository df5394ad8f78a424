import * as vscode from "vscode";
import { readConfig } from "./config";
import type { Services } from "./services";
import { registerSessionCommands } from "./sessionCommands";
import { PiSessionSource } from "./sessions";
import { registerStatusBar, type StatusBarGauge } from "./statusBar";

/** What `activate()` returns (`vscode.extensions.getExtension(…).exports`); used by the integration tests. */
export interface PiContextApi {
  services: Services;
  /** The status-bar gauge (what it shows: `statusBar.snapshot()`). */
  statusBar: StatusBarGauge;
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
  const statusBar = registerStatusBar(services);

  sessions.start();
  log.info("pi Context activated");
  return { services, statusBar };
}

export function deactivate(): void {}
