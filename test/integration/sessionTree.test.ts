// The "Pi Session" tree view in the real extension host, on copies of pi's tree fixture: items
// (texts, icons, states, context values), reveal, filter, live updates, labels, summaries, and
// "Switch to Here…" with and without a summary (scripted OpenAI-compatible server on 127.0.0.1,
// key in SecretStorage) — after each switch pi 1.6.0 (the oracle) loads the file at the chosen
// position. Cancel and the live guard leave the file byte-identical.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, afterEach, before, beforeEach, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { TreeElement } from "../../src/core/treeModel/elements";
import type { SwitchCommandOutcome } from "../../src/services";
import type { OpenPrompt } from "../../src/ui/prompter";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { SessionBuilder } from "../support/session-builder";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";
import {
  choosePick,
  fixture,
  installSession,
  makeAgentDir,
  piApi,
  sessionDir,
  setSetting,
  touchLater,
  useAgentDir,
  whenSession,
} from "./sessionHelpers";

interface Loaded {
  leafId: string;
  pathIds: string[];
  contextEntries: string[];
  contextMessages: { entryId: string; role: string }[];
  unchangedOnOpen: boolean;
}
interface Oracle {
  loadCheck(r: { file: string }): Promise<Loaded>;
  close(): Promise<void>;
}

const switchTo = (target: unknown, options?: object) =>
  vscode.commands.executeCommand<SwitchCommandOutcome>(
    "piContext.tree.switchToHere",
    target,
    options,
  ) as Promise<SwitchCommandOutcome>;

describe("session tree view", function () {
  this.timeout(60000);
  let api: PiContextApi;
  let server: ScriptedServer;
  let oracle: Oracle;
  let agentDir: string;
  let counter = 0;

  /** Install a fresh copy of tree.jsonl as the workspace's latest session and wait until the view shows it. */
  async function freshTree(): Promise<string> {
    const file = installSession(
      agentDir,
      fixture("tree").jsonl,
      `2026-11-30T07-00-0${counter}Z_tree-${++counter}.jsonl`,
    );
    touchLater(file, counter * 2);
    // pinned: our own appends (older mtime than earlier copies) must not make another copy the "latest"
    await api.services.sessions.pin(file);
    await whenSession(api, (c) => c?.file === file, 8000, `the session ${path.basename(file)}`);
    await waitFor(
      () => api.sessionTree.provider.file === file && api.sessionTree.provider.model?.leafId === "bb6f6d3c",
      5000,
      "the tree view on the new session",
    );
    return file;
  }

  const model = () => api.sessionTree.provider.model!;
  const promptCount = () => api.sessionTree.prompts.length;
  /** Wait for the tree view's next question (after `after` questions) and return it. */
  const nextPrompt = (after: number, what: string) =>
    waitFor(
      () => (api.sessionTree.prompts.length > after ? api.sessionTree.currentPrompt() : undefined),
      8000,
      what,
    ) as Promise<OpenPrompt>;
  const choose = choosePick;

  /** A row as VS Code shows it on hover: `getTreeItem`, then `resolveTreeItem` (which adds the tooltip). */
  const resolvedItem = (e: TreeElement) => {
    const provider = api.sessionTree.provider;
    return provider.resolveTreeItem(provider.getTreeItem(e), e);
  };
  const items = (parent?: TreeElement) =>
    api.sessionTree.provider.getChildren(parent).map((e) => ({ e, item: resolvedItem(e) }));
  const labelText = (item: vscode.TreeItem) => (typeof item.label === "string" ? item.label : item.label!.label);

  before(async () => {
    api = await piApi();
    server = await startScriptedServer();
    agentDir = makeAgentDir(fixture("tree").agent);
    await useAgentDir(api, agentDir);
    await setSetting("summarizer.provider", "openai");
    await setSetting("summarizer.openai.baseURL", server.baseURL);
    await setSetting("summarizer.openai.model", "tree-it-model");
    await setSetting("summarizer.openai.contextWindow", 128000);
    await setSetting("liveSession.guardSeconds", 0);
    assert.strictEqual(await vscode.commands.executeCommand("piContext.setApiKey", "sk-tree-it-7"), true);
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as {
      OracleClient: { start(): Promise<Oracle> };
    };
    oracle = await mod.OracleClient.start();
    await vscode.commands.executeCommand(`${"piContext.sessionTree"}.focus`);
  });
  after(async () => {
    for (const k of [
      "summarizer.provider",
      "summarizer.openai.baseURL",
      "summarizer.openai.model",
      "summarizer.openai.contextWindow",
      "liveSession.guardSeconds",
    ])
      await setSetting(k, undefined);
    await vscode.commands.executeCommand("piContext.tree.setFilter", "default");
    await vscode.commands.executeCommand("piContext.clearApiKey");
    await api.services.sessions.followLatest();
    await useAgentDir(api, undefined);
    await server.close();
    await oracle?.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    fs.rmSync(agentDir, { recursive: true, force: true });
  });
  beforeEach(() => server.reset());
  afterEach(async () => {
    // a failed test must not leave a question open for the next one
    if (api.sessionTree.currentPrompt()) await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
  });

  it("is contributed to the Pi Context container with its commands and menus", async () => {
    // the manifest as VS Code loaded it: the %key% strings resolved from package.nls.json
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const view = pkg.contributes.views["pi-context"].find((v: { id: string }) => v.id === "piContext.sessionTree");
    assert.strictEqual(view.name, "Pi Session");
    assert.ok(fs.existsSync(path.join(repoRoot, view.icon)));
    const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === "piContext.tree.switchToHere");
    assert.strictEqual(cmd.title, "Switch to Here…");
    const menus = pkg.contributes.menus["view/item/context"].filter(
      (m: { command: string }) => m.command === "piContext.tree.switchToHere",
    );
    assert.deepStrictEqual(menus.map((m: { group: string }) => m.group).sort(), ["1_switch@1", "inline@1"]);
    const all = await vscode.commands.getCommands(true);
    for (const c of [
      "piContext.tree.switchToHere",
      "piContext.tree.switchWithSummary",
      "piContext.tree.setLabel",
      "piContext.tree.clearLabel",
      "piContext.tree.openSummary",
      "piContext.tree.revealLeaf",
      "piContext.tree.reveal",
      "piContext.tree.setFilter",
      "piContext.tree.cancelSwitch",
    ])
      assert.ok(all.includes(c), c);
  });

  it("shows the tree: the active path as the top level, the 3-way branch point's other branches as groups, folded tool results, leaf", async () => {
    await freshTree();
    assert.strictEqual(api.sessionTree.treeView.title, "Pi Session"); // tree.jsonl has no session name
    assert.strictEqual(api.sessionTree.treeView.description, "[task:t1] do t1 · 34 entries · pinned");
    const top = items();
    assert.deepStrictEqual(
      top.map((t) => t.e.key),
      [
        "e:1eb270e4",
        "e:c8a901f3",
        "e:c707baf6",
        "e:a03949d4",
        "e:1c4d30f5",
        "e:88ee17e2",
        "e:3bcd7a02",
        "e:b6b95844",
        "e:07b460a3",
        "e:bb6f6d3c",
      ],
    );
    const user = top[1]!.item;
    assert.strictEqual(labelText(user), "[task:t1] do t1");
    assert.strictEqual((user.iconPath as vscode.ThemeIcon).id, "account");
    assert.strictEqual(
      ((user.iconPath as vscode.ThemeIcon).color as vscode.ThemeColor).id,
      "charts.blue",
      "on the active path",
    );
    const call = top[2]!.item;
    assert.strictEqual(
      call.collapsibleState,
      vscode.TreeItemCollapsibleState.Collapsed,
      "its tool result is folded under it",
    );
    assert.match(String(call.description), /scripted-big/);
    assert.strictEqual(top[3]!.item.description, "", "the model is not repeated on the next assistant row");
    assert.match(
      (top[3]!.item.tooltip as vscode.MarkdownString).value,
      /model scripted\\\/scripted\\-big/,
      "the model id, escaped (session text is never markup)",
    );
    const folded = items(top[2]!.e);
    assert.strictEqual(folded.length, 1);
    assert.strictEqual(labelText(folded[0]!.item), "read: src/alpha.ts");
    // the branch point opens on demand: its other branches (the active one continues the top level)
    const bp = top[6]!.item;
    assert.strictEqual(bp.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    assert.match(String(bp.description), /3 branches/);
    const branches = items(top[6]!.e);
    assert.deepStrictEqual(
      branches.map((b) => b.e.key),
      ["b:a41d08b8", "b:7daca6b9"],
    );
    assert.deepStrictEqual(
      branches.map((b) => b.item.collapsibleState),
      [vscode.TreeItemCollapsibleState.Collapsed, vscode.TreeItemCollapsibleState.Collapsed],
    );
    // a branch's row is its first entry: its text once, the rest of the branch below it
    assert.strictEqual(labelText(branches[0]!.item), "[task:t3] do t3");
    assert.strictEqual(branches[0]!.item.description, "branch of 11 entries");
    assert.strictEqual((branches[0]!.item.iconPath as vscode.ThemeIcon).id, "git-branch");
    assert.ok(!items(branches[0]!.e).some((c) => labelText(c.item) === "[task:t3] do t3"), "not repeated inside");
    // where the active path takes branch C: an entry row with the branch icon
    const c = top[7]!.item;
    assert.strictEqual(labelText(c), "[task:t6] do t6 on branch C");
    assert.strictEqual((c.iconPath as vscode.ThemeIcon).id, "git-branch");
    assert.strictEqual(((c.iconPath as vscode.ThemeIcon).color as vscode.ThemeColor).id, "charts.blue");
    assert.strictEqual(c.collapsibleState, vscode.TreeItemCollapsibleState.None);
    assert.match((c.tooltip as vscode.MarkdownString).value, /starts the branch with the current leaf/);
    const bs = branches[1]!.item;
    assert.match(labelText(bs), /^\[branch-A\] Branch summary: /);
    assert.deepStrictEqual((bs.label as vscode.TreeItemLabel).highlights, [[0, 10]]); // "[branch-A]"
    assert.strictEqual(bs.contextValue, "piEntry.summary.labeled.branch");
    assert.strictEqual(bs.command?.command, "piContext.tree.openSummary");
    const leaf = top[top.length - 1]!;
    assert.strictEqual(leaf.e.key, "e:bb6f6d3c");
    assert.match(String(leaf.item.description), /^● leaf/);
    assert.strictEqual((leaf.item.iconPath as vscode.ThemeIcon).id, "debug-stackframe");
    // the leaf is one of pi's cut points: "Compact Up to Here…" keeps just it
    assert.strictEqual(leaf.item.contextValue, "piEntry.leaf.editable.cut");
    assert.ok(leaf.item.tooltip instanceof vscode.MarkdownString && leaf.item.tooltip.isTrusted === false);
    // the tooltip is built on hover, not sent with every row; an item of an older model stays as it was
    const provider = api.sessionTree.provider;
    const bare = provider.getTreeItem(leaf.e);
    assert.strictEqual(bare.tooltip, undefined);
    assert.strictEqual(
      (provider.resolveTreeItem(bare, leaf.e).tooltip as vscode.MarkdownString).value,
      (leaf.item.tooltip as vscode.MarkdownString).value,
    );
    const stale = new vscode.TreeItem("old");
    stale.id = `old-generation/${leaf.e.key}`;
    assert.strictEqual(provider.resolveTreeItem(stale, leaf.e).tooltip, undefined);
  });

  it("says how many entries a parent cycle hides (no root above them), in the view's message", async () => {
    const entries = fs
      .readFileSync(fixture("tree").jsonl, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; id: string; parentId?: string | null; message?: { role: string } });
    const first = entries.findIndex((e) => e.type === "message" && e.message?.role === "user");
    entries[first]!.parentId = entries[first + 3]!.id; // the first user message's parent is below it
    const source = path.join(agentDir, "cycle-source.jsonl");
    fs.writeFileSync(source, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const file = installSession(agentDir, source, `2026-11-30T07-00-0${counter}Z_cycle-${++counter}.jsonl`);
    touchLater(file, counter * 2);
    await api.services.sessions.pin(file);
    await whenSession(api, (c) => c?.file === file, 8000, "the cycle session");
    await waitFor(() => api.sessionTree.provider.file === file, 5000, "the tree view on the cycle session");
    const view = api.sessionTree.treeView;
    await waitFor(() => view.message, 5000, "the view's message");
    assert.equal(
      view.message,
      "31 entries not shown: on a parent cycle, with no root above. Run Pi Context: Check Session Health.",
    );
    assert.equal(model().unreachableCount, 31);
    await freshTree();
    await waitFor(() => view.message === undefined, 5000, "no message on a whole tree");
  });

  it("reveals the leaf and any entry (selection follows), also inside a collapsed branch", async () => {
    await freshTree();
    await vscode.commands.executeCommand("piContext.tree.revealLeaf");
    await waitFor(() => api.sessionTree.treeView.selection[0]?.key === "e:bb6f6d3c", 5000, "the leaf to be selected");
    assert.strictEqual(api.sessionTree.treeView.visible, true);
    const e = await api.sessionTree.reveal("1812defc"); // a tool result folded under an assistant in branch A
    assert.strictEqual(e?.key, "e:1812defc");
    await waitFor(
      () => api.sessionTree.treeView.selection[0]?.key === "e:1812defc",
      5000,
      "the folded tool result to be selected",
    );
    // the command other features use (the panel's "reveal in tree")
    assert.strictEqual(await vscode.commands.executeCommand("piContext.tree.reveal", "a41d08b8"), true);
    await waitFor(
      () => api.sessionTree.treeView.selection[0]?.key === "b:a41d08b8",
      5000,
      "the revealed branch row to be selected",
    );
    assert.strictEqual(await vscode.commands.executeCommand("piContext.tree.reveal", "no-such-entry"), false);
    assert.strictEqual(api.sessionTree.revealStats.failed, 0, "VS Code found every revealed node");
  });

  it("filters like pi's /tree (user messages only, everything) and remembers the filter", async () => {
    await freshTree();
    assert.strictEqual(await vscode.commands.executeCommand("piContext.tree.setFilter", "user-only"), "user-only");
    assert.deepStrictEqual(
      items().map((t) => t.e.key),
      ["e:c8a901f3", "e:1c4d30f5", "e:b6b95844"],
    );
    assert.deepStrictEqual(
      items(items()[1]!.e).map((t) => t.e.key),
      ["b:a41d08b8", "b:60933bb1"],
    );
    assert.match(api.sessionTree.treeView.description ?? "", /User messages/);
    assert.strictEqual(model().displayLeafId, "b6b95844");
    await vscode.commands.executeCommand("piContext.tree.setFilter", "all");
    assert.strictEqual(items()[0]!.e.key, "e:2ff39b9e", "the model change is the root in 'everything'");
    await vscode.commands.executeCommand("piContext.tree.setFilter", "default");
    assert.strictEqual(items()[0]!.e.key, "e:1eb270e4");
  });

  it("updates live as pi appends (incremental, no rebuild)", async () => {
    const file = await freshTree();
    const m = model();
    const appended = {
      type: "message",
      id: "live0001",
      parentId: "bb6f6d3c",
      timestamp: new Date().toISOString(),
      message: { role: "user", content: [{ type: "text", text: "appended by pi" }], timestamp: Date.now() },
    };
    fs.appendFileSync(file, JSON.stringify(appended) + "\n");
    await api.services.sessions.refresh();
    await waitFor(() => model().leafId === "live0001", 5000, "the appended entry");
    assert.strictEqual(model(), m, "same model, synced incrementally");
    const run = items();
    assert.strictEqual(run[run.length - 1]!.e.key, "e:live0001");
    assert.match(String(run[run.length - 1]!.item.description), /● leaf/);
  });

  it("Switch to Here without a summary: a leaf marker; pi 1.6.0 resumes at the chosen entry", async () => {
    const file = await freshTree();
    const before = fs.readFileSync(file);
    const outcome = await switchTo(model().entryElement("895e5ef5"), { summarize: false, quiet: true });
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    if (outcome.kind !== "switched") return;
    assert.strictEqual(outcome.newLeafId, "895e5ef5");
    assert.deepStrictEqual(
      outcome.entries.map((e) => [e.type, e.parentId]),
      [["custom", "895e5ef5"]],
    );
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before), "existing bytes unchanged");
    const loaded = await oracle.loadCheck({ file });
    assert.strictEqual(loaded.unchangedOnOpen, true);
    assert.strictEqual(loaded.leafId, outcome.entries[0]!.id);
    assert.deepStrictEqual(loaded.pathIds.slice(-4), ["5e60ca97", "eefae3d2", "895e5ef5", outcome.entries[0]!.id]);
    assert.strictEqual(
      loaded.contextMessages[loaded.contextMessages.length - 1]!.entryId,
      "895e5ef5",
      "the marker adds nothing to the context",
    );
    assert.ok(loaded.contextMessages.some((m) => m.entryId === "7daca6b9" && m.role === "branchSummary"));
    assert.ok(
      !loaded.contextMessages.some((m) => m.entryId === "bb6f6d3c"),
      "the abandoned branch is out of the context",
    );
    // the view follows: the leaf is shown at 895e5ef5 and selected
    await waitFor(() => model().displayLeafId === "895e5ef5", 5000, "the view to show the new leaf");
    await waitFor(
      () => api.sessionTree.treeView.selection[0]?.key === "e:895e5ef5",
      5000,
      "the new leaf to be revealed",
    );
    // branch A now continues the active path in the top level; branch C is one of the others
    assert.deepStrictEqual(
      items(items()[6]!.e).map((t) => t.e.key),
      ["b:a41d08b8", "b:b6b95844"],
    );
    const branchA = resolvedItem(items()[7]!.e);
    assert.strictEqual(items()[7]!.e.key, "e:7daca6b9");
    assert.strictEqual(branchA.description, "139 tokens");
    assert.strictEqual((branchA.iconPath as vscode.ThemeIcon).id, "git-branch");
    assert.strictEqual(
      ((branchA.iconPath as vscode.ThemeIcon).color as vscode.ThemeColor).id,
      "charts.blue",
      "now the active branch",
    );
  });

  it("Switch to Here with a summary through pi's choices (quick pick): branch summary at the user message's parent; pi resumes there", async () => {
    const file = await freshTree();
    server.script({ chunks: ["## Goal\n", "Read delta on branch C.\n\n## Next Steps\n", "1. Continue."] });
    const asked = promptCount();
    const pending = switchTo(model().elementOf("a41d08b8"), { quiet: true });
    // pi's "Summarize branch?" list: No summary / Summarize / Summarize with custom prompt / label
    const prompt = await nextPrompt(asked, "pi's question");
    assert.strictEqual(prompt.title, "Switch to “[task:t3] do t3”: summarize the branch you leave?");
    assert.deepStrictEqual(api.sessionTree.prompts[asked]!.items, [
      "No summary",
      "Summarize",
      "Summarize with custom prompt",
      "$(tag) Add a label…",
    ]);
    assert.match(
      prompt.kind === "pick" ? prompt.quickPick.items[1]!.detail! : "",
      /^tree-it-model at http:\/\/127\.0\.0\.1:\d+\/v1 summarizes the 4 entries you leave \(3 messages, ≈\d+ tokens\) into a branch summary after “alpha edited\.”\.$/,
    );
    await choose(prompt, /^Summarize$/);
    const outcome = await pending;
    assert.strictEqual(promptCount(), asked + 1, "no further question");
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    if (outcome.kind !== "switched") return;
    assert.strictEqual(outcome.editorText, "[task:t3] do t3");
    assert.strictEqual(outcome.newLeafId, "3bcd7a02");
    assert.strictEqual(server.requests.length, 1);
    const req = server.requests[0]!;
    assert.strictEqual(req.authorization, "Bearer sk-tree-it-7");
    assert.strictEqual(req.body.model, "tree-it-model");
    const sent = req.body.messages!.find((m) => m.role === "user")!.content;
    assert.match(sent, /^<conversation>\n\[User\]: \[task:t6\] do t6 on branch C/);
    assert.doesNotMatch(sent, /Critical Context/);
    const entry = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.strictEqual(entry.type, "branch_summary");
    assert.strictEqual(entry.parentId, "3bcd7a02");
    assert.strictEqual(entry.fromId, "bb6f6d3c");
    assert.strictEqual(
      entry.summary,
      "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nRead delta on branch C.\n\n## Next Steps\n1. Continue.\n\n<read-files>\nsrc/delta.ts\n</read-files>",
    );
    assert.deepStrictEqual(entry.details, { readFiles: ["src/delta.ts"], modifiedFiles: [] });
    const loaded = await oracle.loadCheck({ file });
    assert.strictEqual(loaded.leafId, entry.id);
    assert.deepStrictEqual(loaded.pathIds.slice(-2), ["3bcd7a02", entry.id]);
    assert.deepStrictEqual(
      loaded.contextMessages.slice(-2).map((m) => `${m.entryId} ${m.role}`),
      ["3bcd7a02 assistant", `${entry.id} branchSummary`],
    );
    await waitFor(() => model().displayLeafId === entry.id, 5000, "the view to show the summary as the leaf");
    // the new summary is a fourth branch of the branch point: the one the active path takes
    assert.strictEqual(items(items()[6]!.e).length, 3);
    assert.strictEqual(items()[7]!.e.key, `e:${entry.id}`);
  });

  it("Switch to Here to a context with tool results without their call asks first (issue 43): Cancel writes nothing, Switch Anyway switches", async () => {
    // a batch written in the old order: the assistant's omit (e1) before its result's (e2)
    const source = path.join(agentDir, "unpaired-source.jsonl");
    fs.writeFileSync(
      source,
      new SessionBuilder()
        .user("u1", "q")
        .assistant("a1", { calls: [{ id: "c1" }], usage: 100 })
        .result("r1", "c1", "output")
        .assistant("a2", { text: "ok", usage: 120 })
        .edit("e1", "a1", null)
        .edit("e2", "r1", null)
        .jsonl(),
    );
    const file = installSession(agentDir, source, `2026-11-30T07-00-0${counter}Z_unpaired-${++counter}.jsonl`);
    touchLater(file, counter * 2);
    await api.services.sessions.pin(file);
    await whenSession(api, (c) => c?.file === file, 8000, "the unpaired session");
    await waitFor(() => api.sessionTree.provider.model?.leafId === "e2", 5000, "the tree view on it");
    const before = fs.readFileSync(file);
    let asked = promptCount();
    let pending = switchTo(model().entryElement("e1"), { quiet: true });
    let prompt = await nextPrompt(asked, "the warning");
    assert.match(prompt.title, /pi would send 1 tool result without their tool call: providers reject such requests$/);
    await choose(prompt, /Cancel$/);
    assert.strictEqual((await pending).kind, "declined");
    assert.ok(fs.readFileSync(file).equals(before), "nothing written");
    asked = promptCount();
    pending = switchTo(model().entryElement("e1"), { quiet: true });
    prompt = await nextPrompt(asked, "the warning again");
    await choose(prompt, /Switch Anyway$/);
    prompt = await nextPrompt(asked + 1, "pi's question");
    await choose(prompt, /^No summary$/);
    const outcome = await pending;
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    const loaded = await oracle.loadCheck({ file });
    assert.ok(loaded.pathIds.includes("e1") && !loaded.pathIds.includes("e2"), "pi resumes at e1");
  });

  it("sets and clears labels (label entries pi reads), shown as a highlighted prefix", async () => {
    const file = await freshTree();
    const set = (await vscode.commands.executeCommand(
      "piContext.tree.setLabel",
      model().entryElement("c8a901f3"),
      "  first task ",
    )) as { entryId: string; label: string | null };
    assert.strictEqual(set.label, "first task");
    const line = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.deepStrictEqual(
      { type: line.type, parentId: line.parentId, targetId: line.targetId, label: line.label },
      { type: "label", parentId: "bb6f6d3c", targetId: "c8a901f3", label: "first task" },
    );
    await waitFor(() => model().labels.get("c8a901f3")?.label === "first task", 5000, "the label in the view");
    const item = resolvedItem(model().entryElement("c8a901f3"));
    assert.strictEqual(labelText(item), "[first task] [task:t1] do t1");
    assert.strictEqual(item.contextValue, "piEntry.labeled.editable");
    await vscode.commands.executeCommand("piContext.tree.clearLabel", "c8a901f3");
    await waitFor(() => !model().labels.has("c8a901f3"), 5000, "the label to be cleared");
    const cleared = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.strictEqual("label" in cleared, false, "pi's clear: no label key");
    // typed into the box, titled by the entry's words
    const asked = promptCount();
    const typed = vscode.commands.executeCommand("piContext.tree.setLabel", model().elementOf("c8a901f3")) as Thenable<
      { label: string | null } | undefined
    >;
    const box = await nextPrompt(asked, "the label box");
    assert.strictEqual(box.title, "Label for “[task:t1] do t1”");
    assert.strictEqual(box.kind, "input");
    if (box.kind === "input") box.inputBox.value = "typed label";
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    assert.strictEqual((await typed)?.label, "typed label");
  });

  it("opens a branch summary as a markdown preview", async () => {
    await freshTree();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    assert.strictEqual(
      await vscode.commands.executeCommand("piContext.tree.openSummary", model().elementOf("7daca6b9")),
      true,
    );
    // the tab is titled by the summary's words, not its id
    const tab = await waitFor(
      () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .find((t) => t.label.includes("Branch summary – Scripted session goals")),
      5000,
      "the summary preview tab",
    );
    assert.ok(tab && !tab.label.includes("7daca6b9"), tab?.label);
    const doc = await waitFor(
      () =>
        vscode.workspace.textDocuments.find(
          (d) => d.uri.scheme === "pi-context-summary" && d.uri.path.startsWith("/preview/summary-7daca6b9/"),
        ),
      5000,
      "the summary document",
    );
    assert.match(doc!.getText(), /^The user explored a different conversation branch before returning here\./);
    // pi's file blocks as titled code blocks (the preview dropped the tags and ran the paths together), no HTML left
    assert.match(doc!.getText(), /\*\*(Read files|Modified files)\*\*\n\n```\n/);
    assert.doesNotMatch(doc!.getText(), /<[a-z]/);
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  it("cancel while summarizing writes nothing", async () => {
    const file = await freshTree();
    const before = fs.readFileSync(file);
    server.script({ text: "## Goal\nnever finishes", hang: true });
    const pending = switchTo("895e5ef5", { summarize: true, quiet: true });
    await server.waitForRequests(1, 10000);
    assert.strictEqual(await vscode.commands.executeCommand("piContext.tree.cancelSwitch"), true);
    const outcome = await pending;
    assert.strictEqual(outcome.kind, "cancelled", JSON.stringify(outcome));
    assert.ok(fs.readFileSync(file).equals(before), "byte-identical");
  });

  it("refusals come before questions: the live guard stops Switch to Here…, …with Summary… and Set Label… before they ask anything", async () => {
    const file = await freshTree();
    await setSetting("liveSession.guardSeconds", 3600);
    try {
      const before = fs.readFileSync(file);
      const asked = promptCount();
      for (const command of ["piContext.tree.switchToHere", "piContext.tree.switchWithSummary"]) {
        const outcome = (await vscode.commands.executeCommand(command, "a41d08b8")) as SwitchCommandOutcome;
        assert.strictEqual(outcome.kind, "error", `${command}: ${JSON.stringify(outcome)}`);
        if (outcome.kind === "error") assert.strictEqual(outcome.errorKind, "live");
      }
      assert.strictEqual(await vscode.commands.executeCommand("piContext.tree.setLabel", "c8a901f3"), undefined);
      assert.strictEqual(promptCount(), asked, "no question was asked");
      assert.strictEqual(server.requests.length, 0);
      assert.ok(fs.readFileSync(file).equals(before), "byte-identical");
    } finally {
      await setSetting("liveSession.guardSeconds", 0);
    }
  });

  it("Switch to Here with Summary… shows the messages it sends, the summarizer and the new position, and sends nothing before the confirmation", async () => {
    const file = await freshTree();
    const before = fs.readFileSync(file);
    const withSummary = () =>
      vscode.commands.executeCommand(
        "piContext.tree.switchWithSummary",
        model().elementOf("a41d08b8"),
      ) as Thenable<SwitchCommandOutcome>;
    let asked = promptCount();
    let pending = withSummary();
    let prompt = await nextPrompt(asked, "the confirmation");
    assert.strictEqual(prompt.title, "Switch to “[task:t3] do t3” with a branch summary?");
    const labels = api.sessionTree.prompts[asked]!.items!;
    assert.deepStrictEqual(labels.slice(0, 4), [
      "$(check) Summarize and Switch",
      "$(edit) Summarize with Custom Instructions…",
      "$(arrow-right) Switch Without a Summary",
      "$(close) Cancel",
    ]);
    // what is sent, oldest first (pi's prepareBranchEntries: the abandoned branch C without tool results)
    assert.deepStrictEqual(labels.slice(4), [
      "$(account) [task:t6] do t6 on branch C",
      "$(sparkle) → read",
      "$(sparkle) delta read on branch C.",
    ]);
    const go = prompt.kind === "pick" ? prompt.quickPick.items[0]! : undefined;
    assert.match(go?.description ?? "", /^tree-it-model at http:\/\/127\.0\.0\.1:\d+/);
    assert.match(
      go?.detail ?? "",
      /^One request: 3 messages, ≈\d+ tokens\. The branch summary goes after “alpha edited\.”, where pi resumes\.$/,
    );
    // accepting a listed message keeps the question open
    await choose(prompt, /delta read on branch C/);
    await new Promise((r) => setTimeout(r, 300));
    assert.strictEqual(api.sessionTree.currentPrompt()?.title, prompt.title);
    assert.strictEqual(server.requests.length, 0, "nothing is sent while asking");
    await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    assert.strictEqual((await pending).kind, "declined");
    assert.ok(fs.readFileSync(file).equals(before), "Escape: nothing written");
    // confirmed: one request, the branch summary after the new leaf
    server.script({ text: "## Goal\nConfirmed summary." });
    asked = promptCount();
    pending = withSummary();
    prompt = await nextPrompt(asked, "the confirmation again");
    await choose(prompt, /Summarize and Switch/);
    const outcome = await pending;
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    assert.strictEqual(promptCount(), asked + 1, "one question");
    assert.strictEqual(server.requests.length, 1);
    const entry = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.strictEqual(entry.type, "branch_summary");
    assert.strictEqual(entry.parentId, "3bcd7a02");
    assert.match(entry.summary, /## Goal\nConfirmed summary\./);
  });

  it("a summarizer without its API key asks for it when a summary is chosen, before the custom instructions; Escape goes back and nothing is sent", async () => {
    const file = await freshTree();
    const before = fs.readFileSync(file);
    await setSetting("summarizer.openai.baseURL", "https://api.openai.com/v1"); // OpenAI needs a key; none is stored for it
    try {
      const asked = promptCount();
      const pending = switchTo(model().elementOf("a41d08b8"));
      const first = await nextPrompt(asked, "pi's question");
      assert.match(
        first.kind === "pick" ? first.quickPick.items[1]!.detail! : "",
        /It needs an API key for https:\/\/api\.openai\.com: you are asked for it first\.$/,
      );
      await choose(first, /^Summarize with custom prompt$/);
      // the password box comes next (not the instructions); Escape there goes back to pi's question
      await waitFor(
        async () => {
          if (api.sessionTree.prompts.length > asked + 2) return true;
          if (api.sessionTree.prompts.length === asked + 2)
            await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
          return false;
        },
        8000,
        "the question again after Escape in the key box",
      );
      assert.deepStrictEqual(
        api.sessionTree.prompts.slice(asked).map((p) => `${p.kind}: ${p.title}`),
        [
          "pick: Switch to “[task:t3] do t3”: summarize the branch you leave?",
          "apiKey: API Key for https://api.openai.com",
          "pick: Switch to “[task:t3] do t3”: summarize the branch you leave?",
        ],
      );
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      assert.strictEqual((await pending).kind, "declined");
      assert.ok(fs.readFileSync(file).equals(before));
    } finally {
      await setSetting("summarizer.openai.baseURL", server.baseURL);
    }
  });

  it("the filter picker lists each filter once, by its title", async () => {
    await freshTree();
    const asked = promptCount();
    const pending = vscode.commands.executeCommand("piContext.tree.setFilter");
    const prompt = await nextPrompt(asked, "the filter picker");
    assert.deepStrictEqual(api.sessionTree.prompts[asked]!.items, [
      "$(check) Default",
      "No tools",
      "User messages",
      "Labeled",
      "Everything",
    ]);
    assert.ok(prompt.kind === "pick" && prompt.quickPick.items.every((i) => i.description === undefined));
    await choose(prompt, /^User messages$/);
    assert.strictEqual(await pending, "user-only");
    await vscode.commands.executeCommand("piContext.tree.setFilter", "default");
  });

  it("a failed assistant message shows its error in its row and tooltip (real session, HTTP 400); plain text rows; the model only where it changes", async () => {
    const file = installSession(
      agentDir,
      path.join(repoRoot, "test/fixtures/real-sessions/getspecstory-real_world.jsonl"),
      `2026-11-30T07-30-0${counter}Z_getspecstory.jsonl`,
    );
    await api.services.sessions.pin(file);
    await waitFor(
      () => api.sessionTree.provider.file === file && model().leafId === "7d7e89a8",
      8000,
      "the real session in the view",
    );
    const row = items().find((t) => t.e.key === "e:59c6b470")!;
    assert.match(labelText(row.item), /^Error 400: max_tokens must be greater than thinking\.budget_tokens\./);
    // the model changed here; the session's compaction keeps from this row (issue 41)
    assert.strictEqual(row.item.description, "kimi-k2p6-fast · ✂ compaction 9a57961b keeps from here");
    assert.strictEqual(((row.item.iconPath as vscode.ThemeIcon).color as vscode.ThemeColor).id, "errorForeground");
    const tip = (row.item.tooltip as vscode.MarkdownString).value;
    assert.match(tip, /^\*\*failed assistant message\*\*/);
    assert.match(tip, /The request failed:\*\* 400/);
    assert.doesNotMatch(`${tip}\n${labelText(row.item)}`, /(?<!\$)\(error\)/);
    assert.match(String(row.item.accessibilityInformation?.label), /^failed assistant message: Error 400: max_tokens/);
    const answer = items().find((t) => t.e.key === "e:4841084c")!;
    assert.match(labelText(answer.item), /^This project — pi-format-demo — is a small/);
    assert.strictEqual(answer.item.description, "", "same model as the answer before");
  });

  it("the view shows the session name as written (in its description; VS Code capitalises view titles)", async () => {
    const name = `2026-11-30T07-40-0${counter}Z_named.jsonl`;
    const file = path.join(sessionDir(agentDir), name);
    const b = new SessionBuilder({ id: "named", cwd: path.dirname(file), timestamp: new Date().toISOString() })
      .user("n1", "hello")
      .name("n2", "long scripted session");
    fs.writeFileSync(file, b.jsonl());
    await api.services.sessions.pin(file);
    await waitFor(
      () => api.sessionTree.provider.file === file && model().name === "long scripted session",
      8000,
      "the named session",
    );
    assert.strictEqual(api.sessionTree.treeView.title, "Pi Session");
    assert.strictEqual(api.sessionTree.treeView.description, "long scripted session · 2 entries · pinned");
  });

  it("session text in rows is text: control characters show as their \\u escape (label, text, description), like the CLI", async () => {
    const name = `2026-11-30T07-41-0${counter}Z_controls.jsonl`;
    const file = path.join(sessionDir(agentDir), name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const b = new SessionBuilder({ id: "controls", cwd: path.dirname(file), timestamp: new Date().toISOString() })
      .user("k1", "red \u001b[31malert\u0007 $(bug) done")
      .label("k2", "k1", "tag\u001b]0;title\u0007");
    fs.writeFileSync(file, b.jsonl());
    await api.services.sessions.pin(file);
    await waitFor(
      () => api.sessionTree.provider.file === file && model().node("k1") !== undefined,
      8000,
      "the session",
    );
    const item = resolvedItem(model().entryElement("k1"));
    const label = item.label as vscode.TreeItemLabel;
    assert.strictEqual(label.label, "[tag\\u001b]0;title\\u0007] red \\u001b[31malert\\u0007 $(bug) done");
    // the label prefix highlight covers the escaped label exactly
    assert.deepStrictEqual(label.highlights, [[0, "[tag\\u001b]0;title\\u0007]".length]]);
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(`${label.label}${String(item.description)}`));
  });

  it("refuses a live session (written seconds ago) and writes nothing", async () => {
    const file = await freshTree();
    await setSetting("liveSession.guardSeconds", 3600);
    try {
      const before = fs.readFileSync(file);
      const outcome = await switchTo("895e5ef5", { summarize: false, quiet: true });
      assert.strictEqual(outcome.kind, "error");
      if (outcome.kind === "error") {
        assert.strictEqual(outcome.errorKind, "live");
        assert.match(outcome.message, /Refusing to switch branches in this session/);
      }
      assert.ok(fs.readFileSync(file).equals(before), "byte-identical");
    } finally {
      await setSetting("liveSession.guardSeconds", 0);
    }
  });
});
