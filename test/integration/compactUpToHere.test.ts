// "Pi Context: Compact Up to Here…" in the real extension host, on a copy of pi's long fixture pinned as
// the current session: the tree marks the rows pi can keep from (`.cut`) and the row a compaction
// keeps from; the command from a row (target = the tree element) writes a compaction that keeps
// from it (pi 1.6.0 loads it: checkpoint, summary, then that entry); from the palette a pick of the
// entries pi can keep from; a tool result is refused with the nearest entries, the file unchanged.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, before, beforeEach, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { CompactCommandOutcome } from "../../src/services";
import { buildProjection } from "../../src/core/rules/context";
import { validCutPoints } from "../../src/core/rules/compaction";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";
import { fixture, installSession, makeAgentDir, piApi, setSetting, whenSession } from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-up-to-here-"));
let counter = 0;

describe("compact up to here", function () {
  this.timeout(60000);
  let api: PiContextApi;
  let server: ScriptedServer;
  let agentDir: string;
  let file: string;

  /** A fresh copy of the long fixture, an hour old, pinned and shown in the tree. */
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

  const context = () => buildProjection(api.services.sessions.current!.session);
  const row = (id: string) => {
    const provider = api.sessionTree.provider;
    const element = provider.model!.elementOf(id);
    assert.ok(element, `a row for ${id}`);
    return { element, item: provider.getTreeItem(element) };
  };

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
    assert.strictEqual(await vscode.commands.executeCommand("piContext.setApiKey", "sk-it-up-to-here"), true);
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
    await server.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(async () => {
    server.reset();
    file = await current();
  });

  it("is contributed (palette, the tree row's menu on rows pi can keep from) and the tree marks the compaction's cut", async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === "piContext.compactUpToHere");
    assert.strictEqual(cmd.title, "Compact Up to Here…");
    const menu = pkg.contributes.menus["view/item/context"].find(
      (m: { command: string }) => m.command === "piContext.compactUpToHere",
    );
    assert.strictEqual(menu.when, "view == piContext.sessionTree && viewItem =~ /\\.cut/");
    const projection = context();
    const compaction = projection.compaction!;
    // the row the latest compaction keeps from says so
    const kept = row(compaction.firstKeptEntryId!);
    assert.match(String(kept.item.description), new RegExp(`✂ compaction ${compaction.id} keeps from here`));
    const user = projection.entries.filter((e) => e.record.role === "user").at(-1)!.record.id;
    assert.match(String(row(user).item.contextValue), /\.cut/);
    // the first entry of the context has nothing before it: no menu entry
    const first = validCutPoints(api.services.sessions.current!.session)[0]!;
    assert.doesNotMatch(String(row(first).item.contextValue), /\.cut/);
  });

  it("from a row: compacts up to it (split turn at an assistant), pi 1.6.0 loads checkpoint, summary, then that entry", async () => {
    const projection = context();
    const assistant = projection.entries.filter((e) => e.record.role === "assistant" && e.roles.length > 0).at(-1)!;
    const target = row(assistant.record.id).element;
    const before = fs.readFileSync(file);
    server.script({ text: "## Goal\nup to here" }, { text: "## Original Request\nthe turn's prefix" });
    const outcome = (await vscode.commands.executeCommand("piContext.compactUpToHere", target, {
      instructions: "",
      skipPreview: true,
    })) as CompactCommandOutcome;
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind !== "compacted") return;
    assert.strictEqual(outcome.firstKeptEntryId, assistant.record.id);
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before), "bytes before the append unchanged");
    const entry = JSON.parse(after.subarray(before.length).toString("utf8"));
    assert.strictEqual(entry.firstKeptEntryId, assistant.record.id);
    assert.match(entry.summary, /\*\*Turn Context \(split turn\):\*\*/);
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as {
      OracleClient: {
        start(): Promise<{
          loadCheck(r: {
            file: string;
          }): Promise<{ leafId: string; contextMessages: { entryId: string; role: string }[] }>;
          close(): Promise<void>;
        }>;
      };
    };
    const oracle = await mod.OracleClient.start();
    try {
      const loaded = await oracle.loadCheck({ file });
      assert.strictEqual(loaded.leafId, entry.id);
      assert.deepStrictEqual(
        loaded.contextMessages.slice(0, 3).map((m) => `${m.entryId} ${m.role}`),
        [`${entry.id} system`, `${entry.id} compactionSummary`, `${assistant.record.id} assistant`],
      );
    } finally {
      await oracle.close();
    }
  });

  it("from the palette: a pick of the entries pi can keep from (newest first), then the usual questions", async () => {
    const projection = context();
    const newest = [...projection.entries]
      .reverse()
      .find((e) => e.roles.some((r) => ["user", "assistant"].includes(r)))!.record.id;
    server.script({ text: "## Goal\nfrom the palette" }, { text: "## Original Request\nprefix" });
    let settled = false;
    const pending = (
      vscode.commands.executeCommand("piContext.compactUpToHere") as Promise<CompactCommandOutcome>
    ).finally(() => (settled = true));
    // the pick, the instructions box and the preview: accept each
    while (!settled) {
      await new Promise((r) => setTimeout(r, 250));
      if (!settled) await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    }
    const outcome = await pending;
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind === "compacted") assert.strictEqual(outcome.firstKeptEntryId, newest);
  });

  it("a tool result: refused with the nearest entries pi can keep from; nothing sent or written", async () => {
    const projection = context();
    const result = projection.entries.find((e) => e.record.role === "toolResult" && e.roles.length > 0)!;
    const before = fs.readFileSync(file);
    const outcome = (await vscode.commands.executeCommand("piContext.compactUpToHere", result.record.id, {
      instructions: "",
      skipPreview: true,
    })) as CompactCommandOutcome;
    assert.strictEqual(outcome.kind, "error", JSON.stringify(outcome));
    if (outcome.kind === "error") {
      assert.strictEqual(outcome.errorKind, "invalid-cut");
      assert.match(outcome.message, /is a tool result: pi never cuts between a tool call and its result\./);
      assert.match(outcome.message, /The nearest entries pi can keep from: /);
    }
    assert.ok(fs.readFileSync(file).equals(before));
    assert.strictEqual(server.requests.length, 0);
  });
});
