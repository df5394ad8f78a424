// Session health in the real extension host: a session with an orphaned tool result and a tool
// result separated from its call — the gauge's badge, the panel's problems, the Pi Session tree's
// decorated rows, the log; "Pi Context: Check Session Health" with its quick picks (real quick input,
// accepted), the one append, and pi 1.6.0 (the oracle) loading the repaired file with no orphaned
// tool result. Cancel and a healthy session write nothing.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { HealthCommandOutcome } from "../../src/health/command";
import { SessionBuilder } from "../support/session-builder";
import { EXTENSION_ID, repoRoot, testWorkspace, waitFor } from "./env";
import { makeAgentDir, piApi, sessionDir, setSetting, touchLater, useAgentDir, whenSession } from "./sessionHelpers";

interface Oracle {
  loadCheck(r: { file: string }): Promise<{ leafId: string; unchangedOnOpen: boolean }>;
  llm(r: { file: string }): Promise<{ orphanResults: { entryId: string }[] }>;
  close(): Promise<void>;
}

const check = (file: string, options?: object) =>
  vscode.commands.executeCommand<HealthCommandOutcome>(
    "piContext.checkHealth",
    file,
    options,
  ) as Promise<HealthCommandOutcome>;

/** Run the command and keep sending `action` to the quick input (accept its first item, close it) until it settles. */
async function checkWith(file: string, action: string, options?: object): Promise<HealthCommandOutcome> {
  let settled = false;
  const p = check(file, options).finally(() => (settled = true));
  while (!settled) {
    await new Promise((r) => setTimeout(r, 300));
    if (!settled) await vscode.commands.executeCommand(action);
  }
  return p;
}
const checkAccepting = (file: string, options?: object) =>
  checkWith(file, "workbench.action.acceptSelectedQuickOpenItem", options);

function brokenSession(cwd: string): string {
  const b = new SessionBuilder(cwd)
    .user("u1", "please read the file")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", arguments: { path: "src/a.ts" } }], usage: 120 })
    .custom("cm", "an extension's note between the call and its result")
    .result("t1", "c1", "contents of src/a.ts")
    .assistant("a2", { text: "done", usage: 200 })
    .result("t9", "zz", "a result whose call was lost")
    .assistant("a3", { text: "final answer", usage: 260 });
  return b.jsonl();
}

describe("session health", function () {
  this.timeout(60000);
  let api: PiContextApi;
  let agentDir: string;
  let oracle: Oracle;
  let counter = 0;

  async function install(text: string): Promise<string> {
    const dir = sessionDir(agentDir);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `2026-12-01T10-00-0${counter}Z_health-${++counter}.jsonl`);
    fs.writeFileSync(file, text);
    touchLater(file, counter * 2);
    await api.services.sessions.pin(file);
    await whenSession(api, (c) => c?.file === file, 8000, `the session ${path.basename(file)}`);
    return file;
  }

  before(async () => {
    api = await piApi();
    agentDir = makeAgentDir();
    // the builder's model p/m with a context window (else "unknown window" would be a finding too)
    fs.writeFileSync(
      path.join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          p: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "x",
            models: [{ id: "m", name: "m", contextWindow: 100000, maxTokens: 1000, input: ["text"] }],
          },
        },
      }),
    );
    await useAgentDir(api, agentDir);
    await setSetting("liveSession.guardSeconds", 0);
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as { OracleClient: { start(): Promise<Oracle> } };
    oracle = await mod.OracleClient.start();
    await vscode.commands.executeCommand("piContext.sessionTree.focus");
  });
  after(async () => {
    await setSetting("liveSession.guardSeconds", undefined);
    await api.services.sessions.followLatest();
    await useAgentDir(api, undefined);
    await oracle?.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    // leave the Pi container (its Context webview view was resolved by the tree's focus): the next
    // suites expect to open it themselves
    await vscode.commands.executeCommand("workbench.view.explorer");
  });

  it("is in the command palette as Pi Context: Check Session Health", async () => {
    // the manifest as VS Code loaded it: the %key% strings resolved from package.nls.json
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === "piContext.checkHealth");
    assert.strictEqual(cmd.title, "Check Session Health");
    assert.strictEqual(cmd.category, "Pi Context");
    assert.ok((await vscode.commands.getCommands(true)).includes("piContext.checkHealth"));
  });

  it("shows the findings: gauge badge, panel problems, decorated tree rows, the log", async () => {
    const file = await install(brokenSession(testWorkspace()));
    // the gauge
    await waitFor(() => api.statusBar.snapshot().tooltip.includes("**Session health:**"), 5000, "the health badge");
    const g = api.statusBar.snapshot();
    assert.match(g.text, /^(\$\(pinned\) )?\$\(error\) π/, g.text);
    assert.ok(
      g.tooltip.includes("**Session health:** $(error) 2 errors") &&
        g.tooltip.includes("2 repairable · [Check Session Health…](command:piContext.checkHealth)"),
      g.tooltip,
    );
    // the panel
    const controller = (await vscode.commands.executeCommand("piContext._panelController")) as {
      update(): Promise<void>;
      state?: { session?: { problems: { code: string; entryId?: string; repair?: string }[] } };
    };
    await controller.update();
    const problems = controller.state!.session!.problems;
    assert.deepStrictEqual(
      problems.filter((p) => p.repair === "context-edit").map((p) => [p.code, p.entryId]),
      [
        ["separated-result", "t1"],
        ["orphan-result", "t9"],
      ],
    );
    // the tree
    const provider = api.sessionTree.provider;
    await waitFor(() => provider.file === file && provider.healthOf("t9").length > 0, 5000, "the tree's findings");
    const model = provider.model!;
    const t9 = provider.resolveTreeItem(provider.getTreeItem(model.entryElement("t9")), model.entryElement("t9"));
    assert.match(String(t9.description), /^✖ Orphaned tool result/);
    assert.match(String(t9.contextValue), /\.problem$/);
    // the tooltip's Markdown keeps the text as typed (spaces as &nbsp;, punctuation escaped)
    const t9Tooltip = (t9.tooltip as vscode.MarkdownString).value.replace(/&nbsp;/g, " ").replace(/\\(.)/g, "$1");
    assert.match(t9Tooltip, /\$\(error\) Orphaned tool result: tool result t9 \(read, line 7\) answers read call zz/);
    assert.match(t9.accessibilityInformation!.label, /error: Orphaned tool result/);
    // t9 is folded under a2 (a tool result right after an answer): a2's row opens by itself, so the
    // flagged result is never hidden in a collapsed row; a healthy answer with a folded result does not
    assert.deepStrictEqual(model.foldedResults("a2"), ["t9"]);
    assert.strictEqual(
      provider.getTreeItem(model.entryElement("a2")).collapsibleState,
      vscode.TreeItemCollapsibleState.Expanded,
    );
    const cm = provider.resolveTreeItem(provider.getTreeItem(model.entryElement("cm")), model.entryElement("cm"));
    assert.match(String(cm.description), /Tool result separated from its call \(involved\)/);
    // the log
    await waitFor(() => api.health.logged().has("orphan-result@t9:7"), 5000, "the logged finding");
  });

  it("Check Session Health → Repair → Append: one append; pi 1.6.0 loads it with no orphaned result", async () => {
    const file = await install(brokenSession(testWorkspace()));
    const before = fs.readFileSync(file);
    const outcome = await checkAccepting(file);
    assert.strictEqual(outcome.kind, "repaired", JSON.stringify(outcome));
    if (outcome.kind !== "repaired") return;
    assert.strictEqual(outcome.appended, 2);
    assert.strictEqual(outcome.errorsBefore, 2);
    assert.strictEqual(outcome.errorsAfter, 0);
    const bytes = fs.readFileSync(file);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    const added = bytes
      .subarray(before.length)
      .toString()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepStrictEqual(
      added.map((e) => [e.type, e.targetId, e.replacement]),
      [
        ["context_edit", "t1", null],
        ["context_edit", "t9", null],
      ],
    );
    const load = await oracle.loadCheck({ file });
    assert.strictEqual(load.leafId, added[1].id);
    assert.strictEqual(load.unchangedOnOpen, true);
    assert.deepStrictEqual((await oracle.llm({ file })).orphanResults, []);
    // the surfaces follow: no error left
    await waitFor(() => !api.statusBar.snapshot().text.startsWith("$(error)"), 8000, "the gauge without errors");
    assert.strictEqual(api.sessionTree.provider.healthOf("t9").length, 0);
  });

  it("a last line without its newline: End the last line as pi does (asked first), then the repair; the skipped fragment, acknowledged, is a note", async () => {
    const fragment = '{"type":"message","id":"x1","parentId":"a3","timestamp":"2026';
    const file = await install(brokenSession(testWorkspace()) + fragment);
    const before = fs.readFileSync(file);
    // the first row ends the line, its question is accepted, then the repair's preview
    const outcome = await checkAccepting(file);
    assert.strictEqual(outcome.kind, "line-ended", JSON.stringify(outcome));
    if (outcome.kind !== "line-ended") return;
    assert.strictEqual(outcome.lineBytes, fragment.length);
    assert.strictEqual(outcome.then.kind, "repaired", JSON.stringify(outcome.then));
    const bytes = fs.readFileSync(file);
    assert.ok(bytes.subarray(0, before.length).equals(before), "earlier bytes untouched");
    assert.strictEqual(bytes[before.length], 0x0a, "pi's newline right after the fragment");
    const added = bytes
      .subarray(before.length + 1)
      .toString()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepStrictEqual(
      added.map((e) => [e.type, e.targetId]),
      [
        ["context_edit", "t1"],
        ["context_edit", "t9"],
      ],
    );
    const load = await oracle.loadCheck({ file });
    assert.strictEqual(load.unchangedOnOpen, true, "pi appends nothing when it opens it now");
    assert.strictEqual(load.leafId, added[1].id);
    assert.deepStrictEqual((await oracle.llm({ file })).orphanResults, []);
    // the fragment is a line pi skips: a warning in the tooltip until acknowledged, then a note
    const badge = () => api.statusBar.snapshot().tooltip;
    await waitFor(() => /\$\(warning\) 1 warning/.test(badge()), 8000, "the skipped line as a warning");
    const ack = await checkAccepting(file);
    assert.strictEqual(ack.kind, "acknowledged", JSON.stringify(ack));
    await waitFor(
      () => !/\$\(warning\)/.test(badge()) && /\$\(info\) \d+ notes?/.test(badge()),
      8000,
      "the skipped line as a note",
    );
    assert.ok(fs.readFileSync(file).equals(bytes), "the acknowledgement is not written into the session");
  });

  it("cancel in the preview writes nothing; a healthy session says so", async () => {
    const file = await install(brokenSession(testWorkspace()));
    const before = fs.readFileSync(file);
    const outcome = await checkWith(file, "workbench.action.closeQuickOpen", { repair: true });
    assert.strictEqual(outcome.kind, "declined", JSON.stringify(outcome));
    assert.ok(fs.readFileSync(file).equals(before));

    const healthy = await install(
      new SessionBuilder(testWorkspace())
        .user("u1", "hi")
        .assistant("a1", { text: "reading", calls: [{ id: "c1", arguments: { path: "src/a.ts" } }], usage: 10 })
        .result("t1", "c1", "contents of src/a.ts")
        .assistant("a2", { text: "hello", usage: 20 })
        .jsonl(),
    );
    assert.deepStrictEqual(await check(healthy), { kind: "healthy", file: healthy });
    // a healthy folded tool result keeps its answer's row closed
    const provider = api.sessionTree.provider;
    await waitFor(() => provider.file === healthy, 5000, "the tree on the healthy session");
    assert.deepStrictEqual(provider.model!.foldedResults("a1"), ["t1"]);
    assert.strictEqual(
      provider.getTreeItem(provider.model!.entryElement("a1")).collapsibleState,
      vscode.TreeItemCollapsibleState.Collapsed,
    );
  });
});
