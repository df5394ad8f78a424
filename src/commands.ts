/** The one command table: surfaces call each other through it, never `executeCommand` of our ids. */

import * as vscode from "vscode";
import type { CompactCommandOutcome, SurfaceActions, TreeService, TrimCommandOutcome } from "./services";

/** A command handler: VS Code passes the command's arguments. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- VS Code passes anything
export type CommandHandler = (...args: any[]) => unknown;

export class CommandTable {
  private readonly handlers = new Map<string, CommandHandler>();
  private registered = false;

  /** @throws Error when an id is taken, or after {@link register} (it would never reach VS Code). */
  add(handlers: Record<string, CommandHandler>): void {
    if (this.registered) throw new Error("command table: commands added after registration");
    for (const [id, handler] of Object.entries(handlers)) {
      if (this.handlers.has(id)) throw new Error(`command table: ${id} is added twice`);
      this.handlers.set(id, handler);
    }
  }

  /** @throws Error when no surface added `id`. */
  async run<T>(id: string, ...args: unknown[]): Promise<T> {
    const handler = this.handlers.get(id);
    if (!handler) throw new Error(`command table: no command ${id}`);
    return (await handler(...args)) as T;
  }

  ids(): string[] {
    return [...this.handlers.keys()].sort();
  }

  register(context: vscode.ExtensionContext): void {
    this.registered = true;
    for (const [id, handler] of this.handlers) context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  }
}

export function surfaceActions(table: CommandTable): SurfaceActions {
  return {
    compact: (file) => table.run<CompactCommandOutcome>("piContext.compact", file),
    openPanel: () => table.run("piContext.openPanel"),
    checkHealth: (file) => table.run("piContext.checkHealth", file),
    selectSession: () => table.run("piContext.selectSession"),
    trim: () => table.run<TrimCommandOutcome>("piContext.trim"),
    compactUpToHere: () => table.run("piContext.compactUpToHere"),
    summarizeSpan: (fromId, toId) =>
      fromId !== undefined ? table.run("piContext.summarizeSpan", fromId, toId) : table.run("piContext.summarizeSpan"),
    refresh: () => table.run("piContext.refresh"),
    setApiKey: () => table.run("piContext.setApiKey"),
    installBridge: () => table.run("piContext.installBridge"),
  };
}

export function treeService(table: CommandTable): TreeService {
  return {
    reveal: async (entryId) => (await table.run<boolean>("piContext.tree.reveal", entryId)) === true,
    revealLeaf: () => table.run("piContext.tree.revealLeaf"),
  };
}
