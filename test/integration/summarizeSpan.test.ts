// "Pi Context: Summarize These Messages…" in the real extension host, on a copy of pi's long fixture
// pinned as the current session, with the scripted OpenAI-compatible server as the summarizer:
// the tree's selection gives the span; the preview (the pick) says what is summarized and its
// price; one append; pi 1.6.0 loads the file (the note in place of the span, the rest as before);
// the tree marks the note's row (`.span`); "Restore Summarized Messages" brings the span back
// (pi's context as before the summary); an end outside the context is refused, nothing written.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, before, beforeEach, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { SummarizeCommandOutcome, TrimCommandOutcome } from "../../src/services";
import { buildProjection } from "../../src/core/rules/context";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";
import { choosePick, fixture, installSession, makeAgentDir, piApi, setSetting, whenSession } from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-span-"));
let counter = 0;

interface Loaded {
  leafId: string;
  contextMessages: { entryId: string; role: string }[];
}
interface Oracle {
  loadCheck(r: { file: string }): Promise<Loaded>;
  llm(r: { file: string }): Promise<{ orphanResults: unknown[] }>;
  close(): Promise<void>;
}

describe("summarize these messages", function () {
  this.timeout(60000);
  let api: PiContextApi;
  let server: ScriptedServer;
  let agentDir: string;
  let file: string;
  let oracle: Oracle;

  async function current(): Promise<string> {
    const source = path.join(tmp, `long-${++counter}.jsonl`);
    fs.copyFileSync(fixture("long").jsonl, source);
    const copy = installSession(agentDir, source);
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(copy, old, old);
    await api.services.sessions.pin(copy);
    await whenSession(api, (c) => c?.file === copy, 8000, "the copy to be current");
    await waitFor(() => api.sessionTree.provider.file === copy, 5000, "the tree on the copy");
    return copy;
  }

  /** Visible messages of the context (ids), oldest first. */
  const messages = () =>
    buildProjection(api.services.sessions.current!.session)
      .entries.filter((e) => e.roles.some((r) => r !== "system") && e.record.type !== "compaction")
      .map((e) => e.record);
  const element = (id: string) => api.sessionTree.provider.model!.elementOf(id)!;

  before(async () => {
    api = await piApi();
    server = await startScriptedServer();
    agentDir = makeAgentDir(fixture("long").agent);
    await setSetting("agentDir", agentDir);
    await setSetting("summarizer.provider", "openai");
    await setSetting("summarizer.openai.baseURL", server.baseURL);
    await setSetting("summarizer.openai.model", "it-model");
    await setSetting("summarizer.openai.contextWindow", 128000);
    await setSetting("liveSession.guardSeconds", 30);
    assert.strictEqual(await vscode.commands.executeCommand("piContext.setApiKey", "sk-it-span"), true);
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as {
      OracleClient: { start(): Promise<Oracle> };
    };
    oracle = await mod.OracleClient.start();
  });
  after(async () => {
    for (const k of [
      "agentDir",
      "summarizer.provider",
      "summarizer.openai.baseURL",
      "summarizer.openai.model",
      "summarizer.openai.contextWindow",
      "liveSession.guardSeconds",
    ])
      await setSetting(k, undefined);
    await vscode.commands.executeCommand("piContext.clearApiKey");
    await api.services.sessions.followLatest();
    await oracle?.close();
    await server.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(async () => {
    server.reset();
    file = await current();
  });

  it("is contributed: the palette, the tree row's menu (several rows can be selected), Restore on the note's row", async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const title = (id: string) => pkg.contributes.commands.find((c: { command: string }) => c.command === id)?.title;
    assert.strictEqual(title("piContext.summarizeSpan"), "Summarize These Messages…");
    assert.strictEqual(title("piContext.trim.restoreSpan"), "Restore Summarized Messages");
    const menu = (id: string) =>
      pkg.contributes.menus["view/item/context"].find((m: { command: string }) => m.command === id)?.when;
    assert.strictEqual(menu("piContext.summarizeSpan"), "view == piContext.sessionTree && viewItem =~ /\\.editable/");
    assert.strictEqual(menu("piContext.trim.restoreSpan"), "view == piContext.sessionTree && viewItem =~ /\\.span/");
  });

  it("from a selection of rows, through the preview: one append, pi loads the note in place of the span; Restore brings it back", async () => {
    const before = fs.readFileSync(file);
    const original = await oracle.loadCheck({ file });
    const list = messages();
    const from = list.find((r, i) => i > 2 && r.role === "user")!;
    const to = list[list.indexOf(from) + 4]!;
    server.script({ text: "## Goal\nWhat happened in the span." });
    const count = api.trim.prompts.length;
    const running = vscode.commands.executeCommand("piContext.summarizeSpan", element(from.id), [
      element(to.id),
      element(from.id),
    ]) as Thenable<SummarizeCommandOutcome>;
    // the instructions box: Enter; then the preview
    await waitFor(() => (api.trim.prompts.length > count ? api.trim.currentPrompt() : undefined), 10_000, "the box");
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    const preview = (await waitFor(
      () => (api.trim.prompts.length > count + 1 ? api.trim.currentPrompt() : undefined),
      10_000,
      "the preview",
    ))!;
    assert.strictEqual(preview.kind, "pick");
    if (preview.kind !== "pick") return;
    assert.match(preview.quickPick.title ?? "", /^Summarize \d+ messages \(\S+ … \S+\)\?$/);
    const labels = preview.quickPick.items.map((i) => i.label);
    assert.ok(
      labels.some((l) => /\$\(credit-card\)/.test(l)),
      labels.join(" | "),
    );
    assert.ok(
      labels.some((l) => /Prompt cache: the next request sends/.test(l)),
      labels.join(" | "),
    );
    await choosePick(preview, /Summarize now/);
    const outcome = await running;
    assert.strictEqual(outcome.kind, "summarized", JSON.stringify(outcome));
    if (outcome.kind !== "summarized") return;
    assert.strictEqual(outcome.fromId, from.id);
    assert.ok(fs.readFileSync(file).subarray(0, before.length).equals(before), "only appended");
    assert.strictEqual(server.requests.length, 1);
    assert.strictEqual(server.requests[0]!.authorization, "Bearer sk-it-span");

    const loaded = await oracle.loadCheck({ file });
    const span = new Set(outcome.entries.map((e) => e.targetId));
    assert.deepEqual(
      loaded.contextMessages.filter((m) => span.has(m.entryId)).map((m) => m.entryId),
      [outcome.targetId],
      "only the note is left of the span",
    );
    assert.deepEqual((await oracle.llm({ file })).orphanResults, []);
    // the tree: the note's row says what it replaces
    await waitFor(
      () => /\.span/.test(String(api.sessionTree.provider.getTreeItem(element(outcome.targetId)).contextValue)),
      5000,
      "the note's row marked",
    );
    const item = api.sessionTree.provider.getTreeItem(element(outcome.targetId));
    assert.match(String(item.description), /✎ summary of \d+ messages \(\S+ … \S+\)/);

    const restored = (await vscode.commands.executeCommand("piContext.trim.restoreSpan", outcome.targetId, {
      skipPreview: true,
    })) as TrimCommandOutcome;
    assert.strictEqual(restored.kind, "edited", JSON.stringify(restored));
    const back = await oracle.loadCheck({ file });
    assert.deepEqual(
      back.contextMessages.map((m) => `${m.entryId} ${m.role}`),
      original.contextMessages.map((m) => `${m.entryId} ${m.role}`),
      "pi's context as before the summary",
    );
  });

  it("an end outside the context: refused before anything is asked or sent, the file unchanged", async () => {
    const before = fs.readFileSync(file);
    const outcome = (await vscode.commands.executeCommand("piContext.summarizeSpan", "nope", messages()[3]!.id, {
      instructions: "",
      skipPreview: true,
    })) as SummarizeCommandOutcome;
    assert.strictEqual(outcome.kind, "error", JSON.stringify(outcome));
    if (outcome.kind === "error") assert.match(outcome.message, /There is no entry nope/);
    assert.ok(fs.readFileSync(file).equals(before));
    assert.strictEqual(server.requests.length, 0);
  });
});
