// "Pi Context: Compact Session…" in the real extension host: preview (quick pick), summary from the scripted
// OpenAI-compatible server on 127.0.0.1 (base URL setting + key in SecretStorage through
// `piContext.setApiKey`), append, summary diff editor, and pi 1.6.0 loading the result. Cancel and
// every error path leave the file byte-identical.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, before, beforeEach, describe, it } from "mocha";
import type { CompactCommandOutcome } from "../../src/services";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";
import { fixture, installSession, makeAgentDir, piApi, setSetting } from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-compact-"));
let counter = 0;

/** A copy of the fixture's first `count` lines, mtime one hour ago (not "live"). */
function fixtureCopy(name: string, count: number): string {
  const lines = fs.readFileSync(fixture(name).jsonl, "utf8").split("\n");
  const file = path.join(tmp, `${name}-${count}-${++counter}.jsonl`);
  fs.writeFileSync(file, lines.slice(0, count).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

/** Line number (1-based) of the n-th compaction in a fixture. */
function compactionLine(name: string, n: number): number {
  const lines = fs.readFileSync(fixture(name).jsonl, "utf8").split("\n");
  return lines.map((l, i) => (l.includes('"type":"compaction"') ? i + 1 : 0)).filter((x) => x > 0)[n]!;
}

const compact = (file: string, options?: object) =>
  vscode.commands.executeCommand<CompactCommandOutcome>(
    "piContext.compact",
    file,
    options,
  ) as Promise<CompactCommandOutcome>;

/** Run `piContext.compact` and keep accepting the quick input (input box, preview) until it settles. */
async function compactAccepting(file: string, options?: object, onTick?: () => void): Promise<CompactCommandOutcome> {
  let settled = false;
  const p = compact(file, options).finally(() => (settled = true));
  while (!settled) {
    await new Promise((r) => setTimeout(r, 250));
    onTick?.();
    if (!settled) await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
  }
  return p;
}

describe("compaction command", function () {
  this.timeout(60000);
  let server: ScriptedServer;
  let agentDir: string;

  before(async () => {
    await piApi();
    server = await startScriptedServer();
    agentDir = makeAgentDir(fixture("long").agent);
    await setSetting("agentDir", agentDir);
    await setSetting("summarizer.provider", "openai");
    await setSetting("summarizer.openai.baseURL", server.baseURL);
    await setSetting("summarizer.openai.model", "it-model");
    await setSetting("summarizer.openai.contextWindow", 128000);
    await setSetting("liveSession.guardSeconds", 30);
    assert.strictEqual(await vscode.commands.executeCommand("piContext.setApiKey", "sk-it-secret-42"), true);
  });
  after(async () => {
    for (const k of [
      "agentDir",
      "summarizer.provider",
      "summarizer.openai.baseURL",
      "summarizer.openai.model",
      "summarizer.openai.contextWindow",
      "liveSession.guardSeconds",
      "compaction.skipPreview",
    ])
      await setSetting(k, undefined);
    await vscode.commands.executeCommand("piContext.clearApiKey");
    await server.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });
  beforeEach(() => {
    server.reset();
  });

  it("is in the command palette with its title, and registers the key commands", async () => {
    // the manifest as VS Code loaded it: the %key% strings resolved from package.nls.json
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === "piContext.compact");
    assert.strictEqual(cmd.title, "Compact Session…");
    assert.strictEqual(cmd.category, "Pi Context");
    assert.ok(
      pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes("piContext.summarizer.openai.baseURL"),
    );
    const all = await vscode.commands.getCommands(true);
    for (const c of [
      "piContext.compact",
      "piContext.cancelCompaction",
      "piContext.setApiKey",
      "piContext.clearApiKey",
      "piContext.openSummaryDiff",
    ])
      assert.ok(all.includes(c), c);
  });

  it("previews, summarizes against the scripted server, appends, opens the summary diff; pi 1.6.0 loads it", async () => {
    const line = compactionLine("long", 1); // pi compacted here (updates summary #1)
    const file = fixtureCopy("long", line - 1);
    const before = fs.readFileSync(file);
    server.script({ chunks: ["## Goal\n", "Integration summary ", "of the long session."] });
    // instructions through the input box (accepted empty) and the preview accepted: real quick input
    const outcome = await compactAccepting(file);
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind !== "compacted") return;
    assert.strictEqual(server.requests.length, 1);
    const req = server.requests[0]!;
    assert.strictEqual(req.authorization, "Bearer sk-it-secret-42", "key from SecretStorage");
    assert.strictEqual(req.body.model, "it-model");
    assert.strictEqual(req.body.stream, true);
    assert.ok(req.body.messages![1]!.content.includes("<previous-summary>\n## Goal\nScripted session goals: t1"));
    assert.ok(!req.body.messages![1]!.content.includes("Additional focus"));

    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before), "bytes before the append unchanged");
    const entry = JSON.parse(after.subarray(before.length).toString("utf8"));
    assert.strictEqual(entry.type, "compaction");
    assert.strictEqual(entry.id, outcome.entryId);
    assert.strictEqual(entry.summary.split("\n\n<read-files>")[0], "## Goal\nIntegration summary of the long session.");
    assert.strictEqual(entry.fromHook, false);
    assert.ok(entry.systemMessage);
    assert.ok(outcome.tokensAfter !== null && outcome.tokensAfter < outcome.tokensBefore);
    assert.ok(outcome.previousCompactionId);

    // the summary diff: previous summary ↔ new, virtual markdown documents
    const tab = await waitFor(
      () => {
        const t = vscode.window.tabGroups.activeTabGroup.activeTab;
        return t?.input instanceof vscode.TabInputTextDiff ? t : undefined;
      },
      5000,
      "the summary diff editor",
    );
    const input = tab!.input as vscode.TabInputTextDiff;
    assert.strictEqual(input.original.scheme, "pi-context-summary");
    assert.strictEqual(input.modified.scheme, "pi-context-summary");
    const left = await vscode.workspace.openTextDocument(input.original);
    const right = await vscode.workspace.openTextDocument(input.modified);
    assert.strictEqual(right.getText(), entry.summary);
    assert.ok(left.getText().startsWith("## Goal\nScripted session goals: t1"));
    assert.strictEqual(right.languageId, "markdown");

    // pi itself loads the file: leaf = our entry, context = checkpoint + summary + kept entries
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as {
      OracleClient: {
        start(): Promise<{
          loadCheck(r: { file: string }): Promise<{
            leafId: string;
            contextMessages: { entryId: string; role: string }[];
            contextEntries: string[];
            unchangedOnOpen: boolean;
          }>;
          close(): Promise<void>;
        }>;
      };
    };
    const oracle = await mod.OracleClient.start();
    try {
      const loaded = await oracle.loadCheck({ file });
      assert.strictEqual(loaded.unchangedOnOpen, true);
      assert.strictEqual(loaded.leafId, entry.id);
      assert.deepStrictEqual(
        loaded.contextMessages.slice(0, 2).map((m) => `${m.entryId} ${m.role}`),
        [`${entry.id} system`, `${entry.id} compactionSummary`],
      );
      assert.strictEqual(loaded.contextEntries[1]!.split(" ")[0], entry.firstKeptEntryId);
    } finally {
      await oracle.close();
    }
  });

  it("custom instructions (argument) and the split turn: two requests, pi's merge", async () => {
    const file = fixtureCopy("long", compactionLine("long", 0) - 1);
    server.script({ text: "## Goal\nH" }, { text: "## Original Request\nP" });
    const outcome = await compact(file, { instructions: "the parser", skipPreview: true });
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    assert.strictEqual(server.requests.length, 2);
    assert.ok(server.requests.every((r) => r.body.messages![1]!.content.endsWith("Additional focus: the parser")));
    const entry = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!);
    assert.ok(
      entry.summary.startsWith(
        "## Goal\nH\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nP\n\n<read-files>",
      ),
    );
  });

  it("declining the preview sends nothing and writes nothing", async () => {
    const file = fixtureCopy("long", compactionLine("long", 0) - 1);
    const before = fs.readFileSync(file);
    let settled = false;
    const p = compact(file, { instructions: "" }).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 1500));
    while (!settled) {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      await new Promise((r) => setTimeout(r, 250));
    }
    const outcome = await p;
    assert.strictEqual(outcome.kind, "declined");
    assert.strictEqual(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(before));
  });

  it("cancel while streaming (piContext.cancelCompaction) leaves the file byte-identical", async () => {
    const file = fixtureCopy("long", compactionLine("long", 1) - 1);
    const before = fs.readFileSync(file);
    server.script({ chunks: ["## Goal\n", "…"], hang: true });
    const p = compact(file, { instructions: "", skipPreview: true });
    await server.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.strictEqual(await vscode.commands.executeCommand("piContext.cancelCompaction"), true);
    const outcome = await p;
    assert.strictEqual(outcome.kind, "cancelled", JSON.stringify(outcome));
    assert.ok(fs.readFileSync(file).equals(before));
    await waitFor(() => server.disconnects >= 1, 3000, "the HTTP request to be aborted");
  });

  const failures: { name: string; answer: Parameters<ScriptedServer["script"]>[0]; errorKind: string }[] = [
    { name: "HTTP 500", answer: { status: 500, errorMessage: "boom" }, errorKind: "http" },
    { name: "network failure", answer: { destroy: true }, errorKind: "network" },
    { name: "empty answer", answer: { text: "" }, errorKind: "empty" },
    { name: "length stop", answer: { text: "## Goal\ncut", finishReason: "length" }, errorKind: "length" },
    { name: "tool call", answer: { toolCall: true }, errorKind: "tool-call" },
  ];
  for (const f of failures) {
    it(`${f.name}: error outcome, file byte-identical`, async () => {
      const file = fixtureCopy("long", compactionLine("long", 1) - 1);
      const before = fs.readFileSync(file);
      server.script(f.answer, f.answer, f.answer);
      const outcome = await compact(file, { instructions: "", skipPreview: true });
      assert.strictEqual(outcome.kind, "error", JSON.stringify(outcome));
      if (outcome.kind === "error") assert.strictEqual(outcome.errorKind, f.errorKind, outcome.message);
      assert.ok(fs.readFileSync(file).equals(before));
    });
  }

  it("refuses a session written a moment ago (live guard), before sending anything", async () => {
    const file = fixtureCopy("long", compactionLine("long", 1) - 1);
    fs.utimesSync(file, new Date(), new Date());
    const before = fs.readFileSync(file);
    const outcome = await compact(file, { instructions: "", skipPreview: true });
    assert.strictEqual(outcome.kind, "error");
    if (outcome.kind === "error") {
      assert.strictEqual(outcome.errorKind, "live");
      assert.match(outcome.message, /Quit pi/);
    }
    assert.strictEqual(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(before));
  });

  /** Resolves with the outcome, or "waiting" when the command still waits for input after `ms`. */
  async function settlesWithin(
    p: Promise<CompactCommandOutcome>,
    ms: number,
  ): Promise<CompactCommandOutcome | "waiting"> {
    return Promise.race([p, new Promise<"waiting">((r) => setTimeout(() => r("waiting"), ms))]);
  }

  /** Run `piContext.compact`, accept `accepts` quick inputs (preview / instructions), then press Escape on the next one. */
  async function compactThenEscape(
    file: string,
    options: object | undefined,
    accepts: number,
  ): Promise<CompactCommandOutcome> {
    let settled = false;
    const p = compact(file, options).finally(() => (settled = true));
    for (let i = 0; i < accepts && !settled; i++) {
      await new Promise((r) => setTimeout(r, 1200));
      if (!settled) await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    }
    await new Promise((r) => setTimeout(r, 1200));
    while (!settled) {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      await new Promise((r) => setTimeout(r, 250));
    }
    return p;
  }

  it("nothing to compact: said at once, before the instructions box", async () => {
    const file = fixtureCopy("long", compactionLine("long", 0)); // the leaf is a compaction
    // no `instructions` option: if the box were shown, the command would still wait
    const outcome = await settlesWithin(compact(file), 5000);
    assert.notStrictEqual(outcome, "waiting", "the instructions box was shown");
    assert.strictEqual((outcome as CompactCommandOutcome).kind, "nothing");
    assert.match((outcome as { message: string }).message, /^Already compacted/);
    assert.strictEqual(server.requests.length, 0);
  });

  it("live guard: refused at once, before the instructions box, naming the setting (not a CLI flag)", async () => {
    const file = fixtureCopy("long", compactionLine("long", 1) - 1);
    fs.utimesSync(file, new Date(), new Date());
    const outcome = await settlesWithin(compact(file), 5000);
    assert.notStrictEqual(outcome, "waiting", "the instructions box was shown");
    const o = outcome as CompactCommandOutcome;
    assert.strictEqual(o.kind, "error");
    if (o.kind === "error") {
      assert.strictEqual(o.errorKind, "live");
      assert.match(o.message, /piContext\.liveSession\.guardSeconds/);
      assert.doesNotMatch(o.message, /--guard-seconds/);
    }
  });

  it("OpenAI without a stored key: the preview is shown (no key needed); declining it sends nothing", async () => {
    await setSetting("summarizer.openai.baseURL", "");
    try {
      const file = fixtureCopy("long", compactionLine("long", 1) - 1);
      const before = fs.readFileSync(file);
      const outcome = await compactThenEscape(file, { instructions: "" }, 0); // the first quick input is the preview: Escape
      assert.strictEqual(outcome.kind, "declined", JSON.stringify(outcome));
      if (outcome.kind === "declined") assert.strictEqual(outcome.stage, "preview");
      assert.ok(fs.readFileSync(file).equals(before));
    } finally {
      await setSetting("summarizer.openai.baseURL", server.baseURL);
    }
  });

  it("OpenAI without a stored key: the key is asked after 'Compact now' (Escape: nothing sent, nothing stored)", async () => {
    await setSetting("summarizer.openai.baseURL", "");
    try {
      const file = fixtureCopy("long", compactionLine("long", 1) - 1);
      const before = fs.readFileSync(file);
      // instructions box (accept empty) → preview (accept "Compact now") → key box (Escape)
      const outcome = await compactThenEscape(file, undefined, 2);
      assert.strictEqual(outcome.kind, "declined", JSON.stringify(outcome));
      if (outcome.kind === "declined") assert.strictEqual(outcome.stage, "api-key");
      assert.ok(fs.readFileSync(file).equals(before));
      const api = await piApi();
      assert.strictEqual(
        await api.services.context.secrets.get("piContext.summarizer.apiKey:https://api.openai.com"),
        undefined,
      );
      // skipPreview: the key box comes right after the instructions
      const skipped = await compactThenEscape(file, { instructions: "", skipPreview: true }, 0);
      assert.strictEqual(skipped.kind === "declined" && skipped.stage, "api-key");
    } finally {
      await setSetting("summarizer.openai.baseURL", server.baseURL);
    }
    assert.strictEqual(server.requests.length, 0);
  });

  it("HTTP 401 from the server: the key box appears mid-compaction (Escape: the 401 error, file unchanged)", async () => {
    const file = fixtureCopy("long", compactionLine("long", 1) - 1);
    const before = fs.readFileSync(file);
    server.script({ status: 401, errorMessage: "key please" });
    const outcome = await compactThenEscape(file, { instructions: "", skipPreview: true }, 0);
    assert.strictEqual(outcome.kind, "error", JSON.stringify(outcome));
    if (outcome.kind === "error") {
      assert.strictEqual(outcome.errorKind, "http");
      assert.match(outcome.message, /HTTP 401/);
      assert.match(outcome.message, /"Pi Context: Set API Key…"/);
      assert.doesNotMatch(outcome.message, /PI_CONTEXT_API_KEY|OPENAI_API_KEY/);
    }
    assert.strictEqual(server.requests.length, 1);
    assert.ok(fs.readFileSync(file).equals(before));
  });

  it("Clear API Key logs a removal only when a key was stored", async () => {
    const api = await piApi();
    const logFile = path.join(api.services.context.logUri.fsPath, "Pi Context.log");
    const origin = new URL(server.baseURL).origin;
    const start = `clear-start-${Date.now()}`;
    const end = `clear-end-${Date.now()}`;
    api.services.log.info(start);
    await vscode.commands.executeCommand("piContext.clearApiKey"); // removes the suite's key
    await vscode.commands.executeCommand("piContext.clearApiKey"); // nothing stored now
    api.services.log.info(end);
    const text = await waitFor(
      () => {
        const t = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "";
        return t.includes(end) ? t : undefined;
      },
      10000,
      "the log file",
    );
    const between = text!.slice(text!.indexOf(start), text!.indexOf(end));
    assert.strictEqual(between.split(`API key removed for ${origin}`).length - 1, 1, `one removal logged:\n${between}`);
    assert.strictEqual(await vscode.commands.executeCommand("piContext.setApiKey", "sk-it-secret-42"), true);
  });

  it("vscode-lm provider without any language model: a clear configuration error, nothing written", async () => {
    const file = fixtureCopy("long", compactionLine("long", 1) - 1);
    const before = fs.readFileSync(file);
    await setSetting("summarizer.provider", "vscode-lm");
    await setSetting("summarizer.vscodeLm.vendor", "no-such-vendor");
    try {
      const r = await compact(file, { instructions: "", skipPreview: true });
      assert.strictEqual(r.kind, "error");
      if (r.kind === "error") {
        assert.strictEqual(r.errorKind, "config");
        assert.match(r.message, /No VS Code language model is available for vendor "no-such-vendor"/);
      }
    } finally {
      await setSetting("summarizer.provider", "openai");
      await setSetting("summarizer.vscodeLm.vendor", undefined);
    }
    assert.ok(fs.readFileSync(file).equals(before));
    assert.strictEqual(server.requests.length, 0);
  });

  it("compacts the current session by default (no file argument)", async () => {
    const lines = fs.readFileSync(fixture("split").jsonl, "utf8").split("\n");
    const source = path.join(tmp, "split-current.jsonl");
    fs.writeFileSync(source, lines.slice(0, compactionLine("split", 0) - 1).join("\n") + "\n");
    const file = installSession(agentDir, source);
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const api = await piApi();
    await api.services.sessions.pin(file);
    await waitFor(() => api.services.sessions.current?.file === file, 5000, "the session to be current");
    server.script({ text: "## Goal\ncurrent" }, { text: "## Original Request\nprefix" });
    const outcome = (await vscode.commands.executeCommand("piContext.compact", undefined, {
      instructions: "",
      skipPreview: true,
    })) as CompactCommandOutcome;
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind === "compacted") assert.strictEqual(outcome.file, file);
    await api.services.sessions.followLatest();
  });
});
