import * as vscode from "vscode";
import { readConfig } from "./config";
import type { Services } from "./services";
import { registerSessionCommands } from "./sessionCommands";
import { PiSessionSource } from "./sessions";

/** What `activate()` returns (`vscode.extensions.getExtension(…).exports`); used by the integration tests. */
export interface PiContextApi {
  services: Services;
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
  const api: PiContextApi = { services };

  // Feature modules: one registration line each (they push their disposables to context.subscriptions).
  registerSessionCommands(services);

  sessions.start();
  log.info("pi Context activated");
  return api;
}

export function deactivate(): void {}
