// Our default keybindings against VS Code's own defaults in this very VS Code: no key (or chord
// prefix) of ours is bound by VS Code, on Linux and Windows (`key`) and macOS (`mac`).
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { describe, it } from "mocha";
import { repoRoot } from "./env";

interface Binding {
  key: string;
  command: string;
  when?: string;
  mac?: string;
}

/** VS Code's default keybindings of this platform (Preferences: Open Default Keyboard Shortcuts (JSON)). */
async function defaultKeybindings(): Promise<Binding[]> {
  await vscode.commands.executeCommand("workbench.action.openDefaultKeybindingsFile");
  const editor = await new Promise<vscode.TextEditor>((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      const e = vscode.window.activeTextEditor;
      if (e && e.document.uri.toString().includes("keybindings")) resolve(e);
      else if (Date.now() - started > 10000) reject(new Error("the default keybindings did not open"));
      else setTimeout(tick, 100);
    };
    tick();
  });
  const text = editor.document.getText();
  await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
  // JSON with comments (// lines)
  return JSON.parse(text.replace(/^\s*\/\/.*$/gm, "")) as Binding[];
}

const normal = (key: string) =>
  key
    .toLowerCase()
    .split(/\s+/)
    .map((part) => part.split("+").sort().join("+"))
    .join(" ");

describe("default keybindings", () => {
  it("Compact, Open Panel, Select Session and Trim Context have keys VS Code does not use", async function () {
    this.timeout(30000);
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
    const ours: Binding[] = pkg.contributes.keybindings ?? [];
    for (const command of ["piContext.compact", "piContext.openPanel", "piContext.selectSession", "piContext.trim"])
      assert.ok(
        ours.some((b) => b.command === command),
        `a keybinding for ${command}`,
      );
    const defaults = await defaultKeybindings();
    assert.ok(defaults.length > 300, `VS Code's defaults (${defaults.length})`);
    const taken = new Map<string, string>();
    for (const d of defaults) {
      if (d.command.startsWith("-") || d.command.startsWith("piContext.")) continue; // the file lists ours too
      const k = normal(d.key);
      taken.set(k, d.command);
      // a chord's first part is taken too: VS Code waits for the second key
      if (k.includes(" ")) taken.set(`${k.split(" ")[0]} *`, d.command);
    }
    console.log(`default keybindings: ${defaults.length}`);
    for (const b of ours) {
      const k = normal(process.platform === "darwin" && b.mac ? b.mac : b.key);
      assert.ok(!taken.has(k), `${b.key} (${b.command}) is VS Code's ${taken.get(k)}`);
      const first = k.split(" ")[0]!;
      if (!k.includes(" "))
        assert.ok(!taken.has(`${first} *`), `${b.key} is the start of VS Code's chord ${taken.get(`${first} *`)}`);
      else assert.ok(!taken.has(first), `${b.key}: its first key is VS Code's ${taken.get(first)}`);
    }
  });
});
