// Welcome content, walkthrough and localised manifest in the real extension host: VS Code resolves
// the %key% strings of package.json from package.nls.json, the welcome context keys follow the
// session state and the live bridge (installed / removed), and "Get Started" opens the walkthrough.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import { sessionStateOf } from "../../src/ui/welcome";
import { emptyStateMessage } from "../../src/viewModel/statusBar";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";

describe("welcome content and walkthrough", function () {
  this.timeout(60000);

  it("VS Code loads the manifest with package.nls.json's strings (no %key% left)", () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const nls = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.nls.json"), "utf8"));
    const c = ext.packageJSON.contributes;
    assert.strictEqual(ext.packageJSON.displayName, "Pi Context");
    const compact = c.commands.find((x: { command: string }) => x.command === "piContext.compact");
    assert.strictEqual(compact.title, nls["command.compact.title"]);
    assert.strictEqual(compact.title, "Compact Session…");
    const left = JSON.stringify(c).match(/"%[\w.-]+%"/g) ?? [];
    assert.deepStrictEqual(left, [], "unresolved keys");
    assert.match(c.viewsWelcome[0].contents, /^No folder is open\./);
    // the tree's empty state speaks of the tree, the Context view's (and the gauge's) of the gauge (trial 5)
    const welcome = (when: string) =>
      String(c.viewsWelcome.find((w: { when: string }) => w.when === `piContext.sessionState == ${when}`).contents);
    const ready = { phase: "ready" as const, workspace: true, searchedDirs: [], sessionCount: 0 };
    for (const [when, state] of [
      ["noSession", ready],
      ["noFolder", { ...ready, workspace: false }],
    ] as const) {
      const tree = welcome(when);
      const contextView = emptyStateMessage(state);
      assert.match(tree, /session tree|this tree/, tree);
      assert.match(contextView, /gauge/, contextView);
      assert.ok(!tree.startsWith(contextView), `${when}: the same sentence in both views`);
      assert.match(tree, /\[Select Session…\]\(command:piContext\.selectSession\)/);
    }
    assert.strictEqual(c.walkthroughs[0].steps[0].title, "What the gauge measures");
  });

  it("the welcome keys follow the session state and the live bridge's install and remove", async () => {
    const api = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as PiContextApi;
    await waitFor(
      () => (api.services.sessions.discovery && api.services.sessions.discovery.phase !== "starting") || undefined,
      20000,
      "the first scan",
    );
    assert.strictEqual(api.welcome().sessionState, sessionStateOf(api.services));
    assert.notStrictEqual(api.welcome().sessionState, "noFolder", "the test host has a folder open");
    const bridge = path.join(api.services.sessions.agentDir(), "extensions", "pi-context-bridge.js");
    const before = fs.existsSync(bridge);
    try {
      await api.liveBridge.install({ confirm: false });
      assert.ok(fs.existsSync(bridge));
      assert.strictEqual(api.welcome().bridgeInstalled, true);
      await api.liveBridge.remove({ confirm: false });
      assert.ok(!fs.existsSync(bridge));
      assert.strictEqual(api.welcome().bridgeInstalled, false);
    } finally {
      if (before) await api.liveBridge.install({ confirm: false });
    }
  });

  it("Pi Context: Get Started opens the walkthrough", async () => {
    const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    const n = tabs().length;
    await vscode.commands.executeCommand("piContext.getStarted");
    const tab = (await waitFor(
      () => tabs().find((t) => /Walkthrough|Welcome|Get Started/i.test(t.label)),
      15000,
      "the walkthrough tab",
    ))!;
    assert.ok(tabs().length > n, tab.label);
    console.log(`walkthrough tab: ${tab.label}`);
    await vscode.window.tabGroups.close(tab);
  });
});
