// Smoke suite: the extension loads in a real VS Code extension host and its basics work.
import * as assert from "assert";
import * as path from "path";
import * as vscode from "vscode";
import { describe, it, before } from "mocha";
import { EXTENSION_ID, repoRoot, testAgentDir, testHost, testWorkspace } from "./env";

describe("smoke", () => {
  let ext: vscode.Extension<unknown> | undefined;

  before(async () => {
    ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not installed in the extension host`);
    await ext.activate();
  });

  it("the extension is present, loaded from this repo, and active", () => {
    assert.ok(ext);
    assert.strictEqual(ext.isActive, true);
    assert.strictEqual(path.resolve(ext.extensionPath), repoRoot);
    assert.strictEqual(ext.packageJSON.name, "pi-context");
    assert.strictEqual(ext.extensionKind, vscode.ExtensionKind.Workspace);
  });

  it("one command table: every contributed command is in it and registered, and nothing else but two internal ones", async () => {
    const api = ext!.exports as { commands: string[] };
    const contributed = (ext!.packageJSON.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    // not in the palette: the panel controller for the tests, and the summary diff (links and the API)
    const internal = new Set(["piContext._panelController", "piContext.openSummaryDiff"]);
    assert.deepStrictEqual(
      api.commands.filter((id) => !internal.has(id)),
      contributed,
    );
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of api.commands) assert.ok(registered.has(id), `${id} is registered with VS Code`);
  });

  it("runs in the expected host", () => {
    if (testHost() === "code-server") {
      // code-server's Node extension host (recipe: remoteName is the server's authority, UI is Web)
      assert.strictEqual(vscode.env.remoteName, process.env.PI_CONTEXT_VSCODE_AUTHORITY);
      assert.match(vscode.env.remoteName ?? "", /^127\.0\.0\.1:\d+$/);
      assert.strictEqual(vscode.env.uiKind, vscode.UIKind.Web);
      assert.match(process.version, /^v24\./);
      // the runner's quiet user settings reached this window
      assert.strictEqual(vscode.workspace.getConfiguration("workbench").get("startupEditor"), "none");
      assert.strictEqual(vscode.workspace.getConfiguration("chat").get("disableAIFeatures"), true);
    } else {
      assert.strictEqual(vscode.env.remoteName, undefined);
      assert.strictEqual(vscode.env.uiKind, vscode.UIKind.Desktop);
    }
  });

  it("opens the fixture workspace and points pi at the fixture agent dir", () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.strictEqual(folders.length, 1);
    assert.strictEqual(folders[0].uri.fsPath, testWorkspace());
    assert.strictEqual(process.env.PI_CODING_AGENT_DIR, testAgentDir());
  });

  it("registers piContext.showLog and runs it", async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes("piContext.showLog"), "piContext.showLog is not registered");
    await vscode.commands.executeCommand("piContext.showLog");
  });
});
