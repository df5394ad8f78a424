import * as vscode from "vscode";

/** Extension entry point: wires services, registers commands and views. No logic lives here. */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("pi Context", { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(
    vscode.commands.registerCommand("piContext.showLog", () => log.show()),
  );
  log.info("pi Context activated");
}

export function deactivate(): void {}
