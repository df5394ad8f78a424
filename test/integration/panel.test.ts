// The Pi Context panel in the real extension host: it opens, its webview loads under the CSP and
// says `ready`, the host validates every message, openFile opens editor tabs (preview vs pinned),
// missing files open nothing, the summary diff opens the native diff editor, copy path works.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import { analyzeSession } from "../../src/core/rules/analyze";
import type { PanelControllerApi } from "../../src/panel/controller";
import { EXTENSION_ID, encodeSessionDirName, repoRoot, testWorkspace, waitFor } from "./env";

interface Api {
  services: {
    sessions: {
      current: { file: string } | undefined;
      refresh(): Promise<void>;
      followLatest(): Promise<void>;
      agentDir(): string;
    };
  };
}

function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}
function textTab(file: string): vscode.Tab | undefined {
  return allTabs().find((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === file);
}

describe("panel", function () {
  this.timeout(60000);
  let api: Api;
  let controller: PanelControllerApi;
  let agentDir: string;
  let sessionFile: string;
  const created: string[] = [];

  before(async () => {
    const ext = vscode.extensions.getExtension<Api>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    // A private agent dir with long.jsonl's settings/models (window 16000, reserve 4000).
    agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-panel-agent-"));
    const fixtureAgent = path.join(repoRoot, "test", "fixtures", "pi-1.6.0", "long.agent");
    for (const f of fs.readdirSync(fixtureAgent)) fs.copyFileSync(path.join(fixtureAgent, f), path.join(agentDir, f));
    const dir = path.join(agentDir, "sessions", encodeSessionDirName(testWorkspace()));
    fs.mkdirSync(dir, { recursive: true });
    const text = fs.readFileSync(path.join(repoRoot, "test", "fixtures", "pi-1.6.0", "long.jsonl"), "utf8");
    const nl = text.indexOf("\n");
    const header = JSON.parse(text.slice(0, nl));
    header.cwd = testWorkspace();
    sessionFile = path.join(dir, "2026-11-30T06-33-33-295Z_panel-long.jsonl");
    fs.writeFileSync(sessionFile, JSON.stringify(header) + text.slice(nl));
    await vscode.workspace
      .getConfiguration("piContext")
      .update("agentDir", agentDir, vscode.ConfigurationTarget.Global);
    await waitFor(() => api.services.sessions.agentDir() === agentDir, 10000, "agent dir setting");
    await api.services.sessions.followLatest();
    await api.services.sessions.refresh();
    await waitFor(
      () => api.services.sessions.current?.file === sessionFile,
      10000,
      "the panel fixture to be the current session",
    );
    controller = (await vscode.commands.executeCommand("piContext._panelController")) as PanelControllerApi;
    assert.ok(controller, "piContext._panelController returned nothing");
  });

  after(async () => {
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    await vscode.workspace
      .getConfiguration("piContext")
      .update("agentDir", undefined, vscode.ConfigurationTarget.Global);
    for (const f of created) fs.rmSync(f, { force: true });
    fs.rmSync(agentDir, { recursive: true, force: true });
  });

  it("Pi Context: Open Context Panel opens a webview panel whose script loads under the CSP and says ready", async () => {
    const before = controller.received.length;
    await vscode.commands.executeCommand("piContext.openPanel");
    assert.ok(controller.panel, "no panel");
    const tab = (await waitFor(
      () =>
        allTabs().find(
          (t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes("piContext.panel"),
        ),
      10000,
      "the panel tab",
    ))!;
    assert.strictEqual(tab.label, "Pi Context");
    await waitFor(
      () => controller.received.slice(before).some((r) => r.ok && (r.message as { type: string }).type === "ready"),
      20000,
      "the webview's ready message",
    );
    const html = controller.panel!.webview.html;
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'nonce-[A-Za-z0-9]{32}'/);
    // every resource is the extension's own dist/webview, through the webview resource scheme
    const base = controller
      .panel!.webview.asWebviewUri(vscode.Uri.file(path.join(repoRoot, "dist", "webview")))
      .toString();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepStrictEqual(
      refs.map((r) => r.startsWith(`${base}/`)),
      refs.map(() => true),
      `resources outside ${base}: ${refs.join(", ")}`,
    );
    assert.strictEqual(refs.length, 3);
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval/);
    // English (no l10n bundle): no bundle block, the document's language is VS Code's
    assert.strictEqual(vscode.l10n.bundle, undefined);
    assert.doesNotMatch(html, /pi-context-l10n/);
    assert.match(html, new RegExp(`<html lang="${vscode.env.language}">`));
  });

  it("shows pi's numbers for the session (same as the core's analyzeSession)", async () => {
    await controller.update();
    const state = controller.state!;
    const analysis = await analyzeSession(sessionFile, { agentDir });
    assert.strictEqual(state.session?.file, sessionFile);
    assert.strictEqual(state.gauge?.used, analysis.inspect.contextTokens);
    assert.strictEqual(state.gauge?.window, 16000);
    assert.strictEqual(state.gauge?.threshold, 12000);
    assert.strictEqual(state.breakdown?.total, analysis.inspect.contextTokens);
    assert.strictEqual(state.summaries.length, 4);
    assert.strictEqual(state.files?.cwd, testWorkspace());
    assert.strictEqual(state.capabilities.selectSession, true);
  });

  it("follows the session live: an appended entry reaches the panel state without a manual update", async () => {
    const before = controller.state!.session!.entryCount;
    const leaf = controller.state!.session!.leafId;
    const entry = {
      type: "message",
      id: "pnl00001",
      parentId: leaf,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: "one more question", timestamp: Date.now() },
    };
    fs.appendFileSync(sessionFile, JSON.stringify(entry) + "\n");
    await waitFor(
      () => controller.state?.session?.entryCount === before + 1,
      10000,
      "the appended entry in the panel state",
    );
    assert.strictEqual(controller.state!.session!.leafId, "pnl00001");
    const user = controller.state!.breakdown!.categories.find((c) => c.id === "user")!;
    assert.ok(user.top.some((e) => e.entryId === "pnl00001"));
  });

  it("showing the panel again posts the state it has, without a rebuild, unless the session changed meanwhile", async () => {
    const panel = controller.panel!;
    await waitFor(() => panel.visible && controller.state !== undefined, 10000, "the panel showing a state");
    // hidden behind an editor in its group, then shown again: nothing changed, no rebuild
    const doc = await vscode.workspace.openTextDocument({ content: "behind the panel" });
    await vscode.window.showTextDocument(doc, { viewColumn: panel.viewColumn, preview: false });
    await waitFor(() => !panel.visible, 10000, "the panel hidden");
    await new Promise((r) => setTimeout(r, 600)); // past the rebuild throttle
    const builds = controller.builds;
    const posts = controller.posts;
    const shown = controller.state;
    panel.reveal(undefined, false);
    await waitFor(() => controller.posts > posts, 10000, "the state posted to the panel again");
    assert.strictEqual(controller.builds, builds, "showing the panel again rebuilt the state");
    assert.strictEqual(controller.state, shown);
    // hidden while the session grows: shown again, it gets a new state with the new entry
    await vscode.window.showTextDocument(doc, { viewColumn: panel.viewColumn, preview: false });
    await waitFor(() => !panel.visible, 10000, "the panel hidden again");
    const entries = controller.state!.session!.entryCount;
    const entry = {
      type: "message",
      id: "pnl00002",
      parentId: controller.state!.session!.leafId,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: "asked while the panel was hidden", timestamp: Date.now() },
    };
    fs.appendFileSync(sessionFile, JSON.stringify(entry) + "\n");
    await waitFor(() => api.services.sessions.current?.file === sessionFile, 10000, "the session");
    await api.services.sessions.refresh();
    panel.reveal(undefined, false);
    await waitFor(() => controller.state?.session?.entryCount === entries + 1, 10000, "the new entry in the state");
    assert.ok(controller.builds > builds);
    assert.strictEqual(controller.state!.session!.leafId, "pnl00002");
  });

  it("validates every webview message and drops invalid ones", async () => {
    const n = controller.received.length;
    await controller.receive({ type: "bogus" });
    await controller.receive({ type: "openFile", path: "/x", preview: "yes" });
    await controller.receive({ type: "openFile", path: "/x", preview: true, extra: 1 });
    await controller.receive({ type: "requestCategory", category: "nope" });
    await controller.receive("openFile");
    await controller.receive(null);
    const verdicts = controller.received.slice(n);
    assert.deepStrictEqual(
      verdicts.map((v) => v.ok),
      [false, false, false, false, false, false],
    );
    assert.match(verdicts[0]!.error!, /unknown type/);
    assert.match(verdicts[2]!.error!, /unexpected field "extra"/);
  });

  it("refuses to open a path that is not a tracked file", async () => {
    const outside = path.join(os.tmpdir(), `pi-context-not-tracked-${process.pid}.txt`);
    fs.writeFileSync(outside, "secret");
    created.push(outside);
    await controller.receive({ type: "openFile", path: outside, preview: false });
    await new Promise((r) => setTimeout(r, 300));
    assert.strictEqual(textTab(outside), undefined);
  });

  it("openFile opens the tracked file in an editor tab: preview on click, pinned otherwise; the open-tab flag follows", async () => {
    const state = controller.state!;
    const alpha = state.files!.modifiedFiles.find((f) => f.path === "src/alpha.ts")!;
    const notes = state.files!.readFiles.find((f) => f.path === "notes.txt")!;
    assert.strictEqual(alpha.absolutePath, path.join(testWorkspace(), "src", "alpha.ts"));
    for (const f of [alpha, notes]) {
      fs.mkdirSync(path.dirname(f.absolutePath), { recursive: true });
      fs.writeFileSync(f.absolutePath, `// ${f.path}\n`);
      created.push(f.absolutePath);
    }
    await controller.update();
    assert.strictEqual(controller.state!.files!.modifiedFiles.find((f) => f.path === "src/alpha.ts")!.exists, true);
    assert.strictEqual(
      controller.state!.files!.modifiedFiles.find((f) => f.path === "src/alpha.ts")!.outsideWorkspace,
      false,
    );

    // only the panel's group: a plain click opens a preview tab there, like the Explorer (never a new group)
    const panelColumn = controller.panel!.viewColumn;
    assert.strictEqual(vscode.window.tabGroups.all.length, 1, "one editor group to start with");
    await controller.receive({ type: "openFile", path: alpha.absolutePath, preview: true });
    const t1 = (await waitFor(() => textTab(alpha.absolutePath), 10000, "src/alpha.ts tab"))!;
    assert.strictEqual(t1.isPreview, true);
    assert.strictEqual(t1.group.viewColumn, panelColumn, "in the panel's own group");
    assert.strictEqual(vscode.window.tabGroups.all.length, 1, "no new group");
    controller.panel!.reveal(panelColumn, true);
    await waitFor(() => controller.panel!.visible || undefined, 10000, "the panel visible again");
    // Ctrl/Cmd+click = to the side: a group beside the panel, pinned
    await controller.receive({ type: "openFile", path: notes.absolutePath, preview: false, toSide: true });
    const t2 = (await waitFor(() => textTab(notes.absolutePath), 10000, "notes.txt tab"))!;
    assert.strictEqual(t2.isPreview, false);
    assert.notStrictEqual(t2.group.viewColumn, panelColumn, "beside the panel");
    // now that there is another group, a plain click goes there and leaves the panel uncovered
    await controller.receive({ type: "openFile", path: alpha.absolutePath, preview: true });
    await waitFor(
      () =>
        t2.group.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === alpha.absolutePath)
          ? true
          : undefined,
      10000,
      "src/alpha.ts in the other group",
    );
    assert.ok(controller.panel!.visible, "the panel is not covered");
    await controller.update();
    assert.strictEqual(controller.state!.files!.readFiles.find((f) => f.path === "notes.txt")!.openInTab, true);
  });

  it("a tab change posts the tracked files' flags only when one changed", async () => {
    await waitFor(() => controller.state?.files !== undefined, 10000, "a state with tracked files");
    // an untracked document opened and closed: tabs change, no tracked file's flag does
    const posts = controller.fileStatusPosts;
    const doc = await vscode.workspace.openTextDocument({ content: "not a tracked file" });
    await vscode.window.showTextDocument(doc, { preview: false });
    await controller.postFileStatus();
    assert.strictEqual(controller.fileStatusPosts, posts, "nothing changed, nothing posted");
    // a tracked file opened in a tab (closed first if an earlier test left it open): its
    // openInTab flag changes and is posted
    const all = () => [...controller.state!.files!.readFiles, ...controller.state!.files!.modifiedFiles];
    const tracked = all().find((f) => f.exists !== false)!;
    assert.ok(tracked, `an existing tracked file: ${JSON.stringify(all())}`);
    const tabOf = () =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .find((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === tracked.absolutePath);
    const open = tabOf();
    if (open) {
      await vscode.window.tabGroups.close(open);
      await waitFor(
        () => all().find((f) => f.absolutePath === tracked.absolutePath)!.openInTab === false || undefined,
        10000,
        "closed",
      );
    }
    const closed = controller.fileStatusPosts;
    await vscode.window.showTextDocument(vscode.Uri.file(tracked.absolutePath), { preview: false });
    await waitFor(() => controller.fileStatusPosts > closed, 10000, "the changed flag posted");
    assert.strictEqual(all().find((f) => f.absolutePath === tracked.absolutePath)!.openInTab, true);
    await vscode.window.tabGroups.close(tabOf()!);
  });

  it("a missing tracked file is flagged and opens nothing (no popup)", async () => {
    const state = controller.state!;
    const missing = state.files!.modifiedFiles.find((f) => f.path === "docs/eta-6.md")!;
    assert.strictEqual(missing.exists, false);
    const tabs = allTabs().length;
    await controller.receive({ type: "openFile", path: missing.absolutePath, preview: true });
    await new Promise((r) => setTimeout(r, 300));
    assert.strictEqual(allTabs().length, tabs);
    assert.strictEqual(textTab(missing.absolutePath), undefined);
  });

  it("copyPath puts the absolute path on the clipboard", async () => {
    const alpha = controller.state!.files!.modifiedFiles.find((f) => f.path === "src/alpha.ts")!;
    await controller.receive({ type: "copyPath", path: alpha.absolutePath });
    assert.strictEqual(await vscode.env.clipboard.readText(), alpha.absolutePath);
  });

  it("openDiff opens the native diff editor on the two summaries", async () => {
    const s = controller.state!.summaries;
    await controller.receive({ type: "openDiff", fromId: s[2]!.entryId, toId: s[3]!.entryId });
    const tab = (await waitFor(
      () =>
        allTabs().find(
          (t) => t.input instanceof vscode.TabInputTextDiff && t.input.original.path.endsWith(`${s[2]!.entryId}.md`),
        ),
      10000,
      "the summary diff tab",
    ))!;
    const input = tab.input as vscode.TabInputTextDiff;
    const left = await vscode.workspace.openTextDocument(input.original);
    const right = await vscode.workspace.openTextDocument(input.modified);
    assert.strictEqual(left.getText(), s[2]!.text);
    assert.strictEqual(right.getText(), s[3]!.text);
  });

  it("problems are listed with file and line, and openProblem opens the session file at that line (no popup)", async () => {
    // a malformed line and an unknown entry type appended to the session
    const leaf = controller.state!.session!.leafId;
    fs.appendFileSync(
      sessionFile,
      "{ this line is broken\n" +
        JSON.stringify({ type: "future_kind", id: "fut00001", parentId: leaf, timestamp: new Date().toISOString() }) +
        "\n",
    );
    await waitFor(
      () => (controller.state?.session?.problems.length ?? 0) >= 2,
      10000,
      "the problems in the panel state",
    );
    const problems = controller.state!.session!.problems;
    const lines = fs.readFileSync(sessionFile, "utf8").split("\n");
    const brokenLine = lines.indexOf("{ this line is broken") + 1;
    const malformed = problems.find((p) => p.code === "malformed-line")!;
    assert.deepStrictEqual(
      [malformed.severity, malformed.title, malformed.file, malformed.line],
      ["warning", "Malformed line", sessionFile, brokenLine],
    );
    const unknown = problems.find((p) => p.code === "unknown-type")!;
    assert.strictEqual(unknown.severity, "info");
    assert.strictEqual(problems[problems.length - 1]!.severity, "info", "info last");
    // the same list is in the gauge's tooltip
    const api2 = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as {
      statusBar: { snapshot(): { tooltip: string } };
    };
    await waitFor(
      () => api2.statusBar.snapshot().tooltip.includes("**Malformed line**"),
      5000,
      "the tooltip's problem list",
    );
    assert.ok(
      api2.statusBar.snapshot().tooltip.includes("$(info) **Unknown entry type**"),
      api2.statusBar.snapshot().tooltip,
    );

    await controller.receive({ type: "openProblem", id: malformed.id });
    const editor = (await waitFor(
      () =>
        vscode.window.activeTextEditor?.document.uri.fsPath === sessionFile
          ? vscode.window.activeTextEditor
          : undefined,
      10000,
      "the session file in an editor",
    ))!;
    assert.strictEqual(editor.selection.active.line + 1, brokenLine);
    assert.notStrictEqual(editor.viewColumn, controller.panel!.viewColumn, "not on top of the panel");
    assert.strictEqual(textTab(sessionFile)!.isPreview, true);
    // an id that is not in the state: nothing opens, nothing throws
    const n = controller.received.length;
    await controller.receive({ type: "openProblem", id: "p999" });
    assert.strictEqual(controller.received[n]!.ok, true);
    await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
  });

  it("times and words: locale sent to the webview, updated = the file's mtime", async () => {
    await controller.update();
    const s = controller.state!;
    assert.strictEqual(s.locale, vscode.env.language);
    assert.strictEqual(s.session!.modifiedAt, fs.statSync(sessionFile).mtimeMs);
    assert.ok(s.session!.readAt >= s.session!.modifiedAt - 5);
    assert.strictEqual(s.gauge!.windowSourceText, "models.json: providers.scripted, model scripted-small");
  });

  it("requestCategory and actions run without errors; the view in the Pi container resolves too", async () => {
    const n = controller.received.length;
    await controller.receive({ type: "requestCategory", category: "toolResults" });
    await controller.receive({ type: "refresh" });
    await vscode.commands.executeCommand("piContext.panelView.focus");
    await waitFor(
      () =>
        controller.received.slice(n).filter((r) => r.ok && (r.message as { type: string }).type === "ready").length >=
        1,
      20000,
      "the view's ready message",
    );
    assert.ok(controller.received.slice(n).every((r) => r.ok));
  });
});
