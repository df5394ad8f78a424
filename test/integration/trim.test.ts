// Context surgery in the real extension host, on copies of the trim fixture
// (test/fixtures/trim/surgery.jsonl, its agent dir: 16,000-token window, reserve 4,000):
// "Pi Context: Trim Context…" (multi-select quick pick → action → preview → write), the preview's numbers
// equal `pi-context trim --dry-run --json`'s, the gauge drops after the write, pi 1.6.0 (the oracle)
// loads the file with the same estimate and no orphaned tool result; the Pi Session tree's context
// menu (Replace with Note… with the note box, Remove from Context with its cascade, Restore in
// Context) marks and unmarks the rows; Escape and Cancel leave the file byte-identical.
import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, afterEach, before, describe, it } from "mocha";
import type { TreeElement } from "../../src/core/treeModel/elements";
import type { PiContextApi } from "../../src/extension";
import type { TrimCommandOutcome } from "../../src/services";
import type { OpenPrompt } from "../../src/ui/prompter";
import { entryWords } from "../../src/viewModel/treeText";
import { EXTENSION_ID, repoRoot, waitFor } from "./env";
import {
  choosePick,
  installSession,
  makeAgentDir,
  piApi,
  setSetting,
  useAgentDir,
  whenSession,
} from "./sessionHelpers";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "trim", "surgery.jsonl");
const FIXTURE_AGENT = path.join(repoRoot, "test", "fixtures", "trim", "surgery.agent");

interface LlmView {
  estimate: { tokens: number };
  projected: { entryId: string; messages: { role: string; content: unknown }[] }[];
  orphanResults: unknown[];
}
interface Oracle {
  llm(r: { file: string }): Promise<LlmView>;
  close(): Promise<void>;
}

/** `node dist/cli.js …` → exit code and stdout. */
function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(repoRoot, "dist", "cli.js"), ...args],
      { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" }, timeout: 60000 },
      (error, out, err) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe("context surgery (trim)", function () {
  this.timeout(90000);
  let api: PiContextApi;
  let agentDir: string;
  let oracle: Oracle;
  let counter = 0;

  /** A fresh copy of the fixture (an hour old: not live), the current session, the tree on it. */
  async function fresh(): Promise<string> {
    const file = installSession(agentDir, FIXTURE, `2026-12-01T0${counter}-00-00Z_surgery-${++counter}.jsonl`);
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    await api.services.sessions.pin(file);
    await whenSession(api, (c) => c?.file === file, 10000, `the session ${path.basename(file)}`);
    await waitFor(
      () => api.sessionTree.provider.file === file && api.sessionTree.provider.model?.leafId === "a10",
      10000,
      "the tree view on the new session",
    );
    return file;
  }

  /** Wait for the trim command's next question (after `count` questions). */
  const nextPrompt = (count: number, what: string) =>
    waitFor(
      () => (api.trim.prompts.length > count ? api.trim.currentPrompt() : undefined),
      15000,
      what,
    ) as Promise<OpenPrompt>;
  const promptCount = () => api.trim.prompts.length;

  const choose = choosePick;

  /** Check the multi-select rows whose labels (or details) match, one by one as a user would (move, Space), then Enter. */
  async function pickMany(prompt: OpenPrompt, labels: RegExp[]): Promise<void> {
    assert.strictEqual(prompt.kind, "pick");
    if (prompt.kind !== "pick") return;
    const qp = prompt.quickPick;
    assert.ok(qp.canSelectMany, "the trim list is a multi-select quick pick");
    for (const re of labels) {
      const item = qp.items.find((i) => re.test(i.label) || re.test(i.detail ?? ""));
      assert.ok(item, `no row ${re} in ${qp.items.map((i) => i.label).join(" | ")}`);
      const moved = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          sub.dispose();
          resolve();
        }, 1500);
        const sub = qp.onDidChangeActive((active) => {
          if (active[0] !== item) return;
          clearTimeout(timer);
          sub.dispose();
          resolve();
        });
      });
      qp.activeItems = [item];
      await moved;
      await vscode.commands.executeCommand("workbench.action.quickPickManyToggle");
      // the workbench reports the new selection back to the extension host
      await waitFor(() => qp.selectedItems.includes(item), 8000, `${re} checked`);
    }
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
  }

  /** A row as VS Code shows it on hover: `getTreeItem`, then `resolveTreeItem` (which adds the tooltip). */
  const resolvedItem = (e: TreeElement) => {
    const provider = api.sessionTree.provider;
    return provider.resolveTreeItem(provider.getTreeItem(e), e);
  };
  const row = (id: string) => resolvedItem(api.sessionTree.provider.model!.entryElement(id));
  const readLines = (file: string) =>
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { type: string; id: string; parentId: string | null; targetId?: string });

  before(async () => {
    api = await piApi();
    agentDir = makeAgentDir(FIXTURE_AGENT);
    await useAgentDir(api, agentDir);
    await setSetting("liveSession.guardSeconds", 30);
    const mod = (await import(
      pathToFileURL(path.join(repoRoot, "test/conformance/oracle/oracle-client.mjs")).href
    )) as { OracleClient: { start(): Promise<Oracle> } };
    oracle = await mod.OracleClient.start();
  });
  after(async () => {
    await oracle?.close();
    await api.services.sessions.followLatest();
    await setSetting("liveSession.guardSeconds", undefined);
    await useAgentDir(api, undefined);
    fs.rmSync(agentDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    // a failed test must not leave a question open for the next one
    if (api.trim.currentPrompt()) await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
  });

  it("is in the command palette and the tree's context menu", async () => {
    // the manifest as VS Code loaded it: the %key% strings resolved from package.nls.json
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const title = (id: string) => pkg.contributes.commands.find((c: { command: string }) => c.command === id)?.title;
    assert.strictEqual(title("piContext.trim"), "Trim Context…");
    const menu = pkg.contributes.menus["view/item/context"].map((m: { command: string }) => m.command);
    for (const c of ["piContext.trim.remove", "piContext.trim.replaceWithNote", "piContext.trim.restore"])
      assert.ok(menu.includes(c), c);
    const all = await vscode.commands.getCommands(true);
    for (const c of ["piContext.trim", "piContext.trim.remove", "piContext.trim.apply", "piContext.trim.undo"])
      assert.ok(all.includes(c), c);
    assert.strictEqual(title("piContext.trim.undo"), "Undo Last Context Edit");
  });

  it("Pi Context: Trim Context…: titled with the session's label; Enter with nothing ticked is said (declined 'empty') and writes nothing", async () => {
    const file = await fresh();
    const bytes = fs.readFileSync(file);
    const start = promptCount();
    const running = vscode.commands.executeCommand<TrimCommandOutcome>("piContext.trim") as Promise<TrimCommandOutcome>;
    const list = await nextPrompt(start, "the trim list");
    assert.strictEqual(list.title, `Trim the context of "${api.services.sessions.current!.label}"`);
    await pickMany(list, []);
    const outcome = await running;
    assert.deepStrictEqual(outcome, { kind: "declined", file, stage: "empty" });
    assert.ok(fs.readFileSync(file).equals(bytes), "nothing written");
  });

  it("Pi Context: Trim Context…: pick a suggestion and an item, preview = the CLI's dry run, write; the gauge drops; pi agrees", async () => {
    const file = await fresh();
    const gaugeBefore = api.statusBar.snapshot().text;
    const tokensBefore = api.services.sessions.current!.analysis.inspect.contextTokens;
    assert.strictEqual(tokensBefore, 11900, "pi's usage of the last answer");

    const start = promptCount();
    const running = vscode.commands.executeCommand<TrimCommandOutcome>("piContext.trim") as Promise<TrimCommandOutcome>;
    const list = await nextPrompt(start, "the trim list");
    assert.match(list.title, /^Trim the context of /);
    const labels = api.trim.prompts[start]!.items!;
    assert.ok(
      labels.some((l) => /older read/i.test(l)),
      `a superseded-read suggestion in ${labels.join(" | ")}`,
    );
    // the group labels are short Separator rows (VS Code draws them beside the first row's
    // description: a long one cut that row's age — trial 5); the counts are in the placeholder
    if (list.kind === "pick") {
      const separators = list.quickPick.items.filter((i) => i.kind === vscode.QuickPickItemKind.Separator);
      assert.deepStrictEqual(
        separators.map((i) => i.label),
        ["Suggestions", "Largest items"],
      );
      assert.match(
        list.quickPick.placeholder ?? "",
        /^In context: \d+ items, [\d.]+k tokens · pick suggestions or items \(Space\), then Enter$/,
      );
      const first = list.quickPick.items.find(
        (i) => i.kind !== vscode.QuickPickItemKind.Separator && /tool result r6\b/.test(i.detail ?? ""),
      );
      assert.match(first?.description ?? "", /^6,000 tokens · \d+ turns? ago$/, "tokens and age in the description");
      assert.ok((first?.label.length ?? 99) <= 48 + 12, `a short label: ${first?.label}`);
    }
    // the superseded read (r1) as a suggestion, and the 24,000-char suite log (r6) as an item
    await pickMany(list, [/older read/i, /tool result r6\b/]);

    const action = await nextPrompt(start + 1, "what should happen");
    assert.match(action.title, /^1 item: what should happen\?/);
    await choose(action, /^\$\(check\) Trim$/);

    const preview = await nextPrompt(start + 2, "the preview");
    assert.strictEqual(preview.kind, "pick");
    if (preview.kind !== "pick") return;
    const go = preview.quickPick.items.find((i) => /Trim now/.test(i.label))!;
    const shown = /^Context ([\d,]+) → ([\d,]+) tokens/.exec(go.description ?? "");
    assert.ok(shown, `headline: ${go.description}`);
    const num = (s: string) => Number(s.replace(/,/g, ""));
    const resent = /re-sends ≈([\d,]+) uncached/.exec(preview.quickPick.placeholder ?? "");
    assert.ok(resent, `placeholder: ${preview.quickPick.placeholder}`);

    // the CLI's dry run of the same request on the same bytes
    const dry = await cli(["trim", file, "r1", "r6", "--dry-run", "--json", "--agent-dir", agentDir]);
    assert.strictEqual(dry.code, 0, dry.err);
    const j = JSON.parse(dry.out);
    assert.strictEqual(num(shown[1]!), j.pureTokensBefore);
    assert.strictEqual(num(shown[2]!), j.tokensAfter);
    assert.strictEqual(num(resent[1]!), j.cache.resentTokens);
    assert.deepEqual(
      j.drafts.map((d: { targetId: string; replacement: unknown }) => [d.targetId, d.replacement === null]),
      [
        ["r1", false],
        ["r6", false],
      ],
      "both tool results become notes (never orphaned)",
    );

    const size = fs.statSync(file).size;
    await choose(preview, /Trim now/);
    const outcome = await running;
    assert.strictEqual(outcome.kind, "edited", JSON.stringify(outcome));
    if (outcome.kind !== "edited") return;
    assert.deepEqual(
      outcome.entries.map((e) => e.targetId),
      ["r1", "r6"],
    );
    assert.strictEqual(outcome.tokensAfter, j.tokensAfter);

    // one append of exactly two context_edit lines, chained from the leaf
    const lines = readLines(file);
    const added = lines.slice(-2);
    assert.deepEqual(
      added.map((l) => [l.type, l.targetId]),
      [
        ["context_edit", "r1"],
        ["context_edit", "r6"],
      ],
    );
    assert.strictEqual(added[0]!.parentId, "a10");
    assert.strictEqual(added[1]!.parentId, added[0]!.id);
    assert.ok(fs.statSync(file).size > size);

    // the gauge drops to pi's estimate after the edit
    await waitFor(
      () => api.services.sessions.current?.analysis.inspect.contextTokens === j.tokensAfter,
      10000,
      `the gauge at ${j.tokensAfter} tokens`,
    );
    await waitFor(() => api.statusBar.snapshot().text !== gaugeBefore, 10000, "the gauge text to change");
    assert.ok(j.tokensAfter < tokensBefore - 5000, `${j.tokensAfter} < ${tokensBefore}`);

    // pi 1.6.0 loads the file with the same estimate, both results replaced, no orphaned result
    const pi = await oracle.llm({ file });
    assert.strictEqual(pi.estimate.tokens, j.tokensAfter);
    assert.deepEqual(pi.orphanResults, []);
    const content = (id: string) => JSON.stringify(pi.projected.find((p) => p.entryId === id)!.messages[0]!.content);
    assert.match(content("r6"), /pi-context/);
    assert.match(content("r1"), /pi-context/);
    assert.match(content("r4"), /fixed/, "the later read is untouched");

    // the tree marks both rows with their note; Restore is offered there
    await waitFor(() => /^note: /.test(String(row("r6").description)), 10000, "r6 marked in the tree");
    assert.match(String(row("r1").description), /^note: .*pi-context/);
    assert.match(row("r6").contextValue!, /\.editable.*\.edited/);
    assert.doesNotMatch(row("r6").contextValue!, /\.removed/);
    assert.doesNotMatch(row("r4").contextValue!, /\.edited/);
  });

  it("tree: Replace with Note… (the note box), Remove from Context with its cascade, Restore in Context", async () => {
    const file = await fresh();
    const model = () => api.sessionTree.provider.model!;

    // Replace with Note… on the failed npm test output: the box is prefilled with the planner's note
    let start = promptCount();
    const noting = vscode.commands.executeCommand<TrimCommandOutcome>(
      "piContext.trim.replaceWithNote",
      model().entryElement("r2"),
    ) as Promise<TrimCommandOutcome>;
    const box = await nextPrompt(start, "the note box");
    assert.strictEqual(box.kind, "input");
    if (box.kind !== "input") return;
    assert.match(box.inputBox.value, /bash/);
    // the entry by its text as the tree shows it, not its id
    assert.strictEqual(box.inputBox.title, `Replace ${entryWords(model().record("r2"))} with a note`);
    assert.doesNotMatch(box.inputBox.title ?? "", /\br2\b/);
    box.inputBox.value = "npm test failed: the tokenizer dropped the last token (fixed since)";
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    const preview = await nextPrompt(start + 1, "the preview");
    await choose(preview, /Trim now/);
    const noted = await noting;
    assert.strictEqual(noted.kind, "edited", JSON.stringify(noted));
    await waitFor(
      () => String(row("r2").description).startsWith("note: npm test failed: the tokenizer"),
      10000,
      "r2 marked with its note",
    );
    // the answer that made the call says so: its folded results are out of sight while it is collapsed
    assert.match(String(row("a1").description), /1 tool result edited/);
    assert.match(row("a1").accessibilityInformation!.label, /1 tool result edited/);

    // Remove from Context on the assistant that ran the suite: its result goes with it (cascade)
    start = promptCount();
    const removing = vscode.commands.executeCommand<TrimCommandOutcome>(
      "piContext.trim.remove",
      model().entryElement("a7"),
    ) as Promise<TrimCommandOutcome>;
    const removal = await nextPrompt(start, "the removal preview");
    assert.strictEqual(removal.kind, "pick");
    if (removal.kind !== "pick") return;
    const r6row = removal.quickPick.items.find((i) => /\br6\b/.test(i.detail ?? ""));
    assert.ok(r6row, "the cascaded result is listed in the preview");
    await choose(removal, /Trim now/);
    const removed = await removing;
    assert.strictEqual(removed.kind, "edited", JSON.stringify(removed));
    if (removed.kind !== "edited") return;
    assert.deepEqual(removed.entries.map((e) => e.targetId).sort(), ["a7", "r6"]);
    await waitFor(() => String(row("a7").description).startsWith("removed from context"), 10000, "a7 removed");
    assert.match(String(row("r6").description), /^removed from context/);
    assert.match(row("a7").contextValue!, /\.edited\.removed/);
    const pi = await oracle.llm({ file });
    assert.deepEqual(pi.orphanResults, []);
    for (const id of ["a7", "r6"])
      assert.deepEqual(pi.projected.find((p) => p.entryId === id)?.messages ?? [], [], `pi omits ${id}`);
    // the tree's rows and the analysis are updated by the same read, but not in the same tick
    await whenSession(
      api,
      (c) => c?.analysis.inspect.contextTokens === pi.estimate.tokens,
      10000,
      `pi's estimate ${pi.estimate.tokens} in the analysis`,
    );

    // Restore in Context on r2: the original output is back, the mark is gone
    start = promptCount();
    const restoring = vscode.commands.executeCommand<TrimCommandOutcome>(
      "piContext.trim.restore",
      model().entryElement("r2"),
    ) as Promise<TrimCommandOutcome>;
    const restore = await nextPrompt(start, "the restore preview");
    assert.strictEqual(restore.kind, "pick");
    if (restore.kind !== "pick") return;
    assert.ok(
      restore.quickPick.items.some((i) => /bytes/.test(i.detail ?? "")),
      "the preview says what the restore costs in file bytes",
    );
    // worded as what it is: a restore, which makes the context larger
    assert.match(restore.title, /^Restore items in the context of "/);
    assert.strictEqual(restore.quickPick.items[0]!.label, "$(history) Restore now");
    assert.match(restore.quickPick.items[0]!.description ?? "", /\(adds [\d,]+\)$/);
    await choose(restore, /Restore now/);
    assert.strictEqual((await restoring).kind, "edited");
    await waitFor(() => !/^note: /.test(String(row("r2").description)), 10000, "r2 unmarked");
    assert.doesNotMatch(row("r2").contextValue!, /\.edited/);
    const back = await oracle.llm({ file });
    assert.match(JSON.stringify(back.projected.find((p) => p.entryId === "r2")!.messages[0]!.content), /FAIL test/);
  });

  it("Pi Context: Undo Last Context Edit: the preview says which way and its bytes; the leaf moves back; pi loads the state before the trim", async () => {
    const file = await fresh();
    const piBefore = await oracle.llm({ file });
    const tokensBefore = api.services.sessions.current!.analysis.inspect.contextTokens;
    const trimmed = (await vscode.commands.executeCommand(
      "piContext.trim.apply",
      [{ entryId: "r6", choice: "default" }],
      { file, skipPreview: true, quiet: true },
    )) as TrimCommandOutcome;
    assert.strictEqual(trimmed.kind, "edited", JSON.stringify(trimmed));
    if (trimmed.kind !== "edited") return;
    const size = fs.statSync(file).size;
    const count = promptCount();
    const undoing = vscode.commands.executeCommand("piContext.trim.undo", {
      file,
      editIds: trimmed.entries.map((e) => e.id),
      quiet: true,
    }) as Thenable<{ kind: string; way?: string; tokensAfter?: number }>;
    const preview = await nextPrompt(count, "the undo preview");
    assert.strictEqual(preview.kind, "pick");
    if (preview.kind !== "pick") return;
    assert.match(preview.title, /^Undo the last context edit of "/);
    const go = preview.quickPick.items[0]!;
    assert.strictEqual(go.label, "$(discard) Undo now");
    assert.match(
      go.detail ?? "",
      /^Moves the session's leaf back before the edit: appends 1 line \((\d+) bytes\); the edit stays in the file on a side branch\. Restore original would append ([\d,]+) bytes\.$/,
    );
    const [, markerBytes, restoreBytes] = /\((\d+) bytes\).*append ([\d,]+) bytes/.exec(go.detail!)!;
    assert.ok(Number(restoreBytes!.replace(/,/g, "")) > 20 * Number(markerBytes), go.detail);
    assert.ok(
      preview.quickPick.items.some(
        (i) => /npm run test:all/.test(i.label) && i.description === "its original content again",
      ),
      preview.quickPick.items.map((i) => `${i.label} ${i.description ?? ""}`).join(" | "),
    );
    await choose(preview, /Undo now/);
    const outcome = await undoing;
    assert.strictEqual(outcome.kind, "undone", JSON.stringify(outcome));
    assert.strictEqual(outcome.way, "leaf");
    assert.strictEqual(fs.statSync(file).size - size, Number(markerBytes), "the bytes the preview said");
    const last = readLines(file).pop()!;
    assert.strictEqual(last.type, "custom");
    assert.strictEqual(last.parentId, "a10");
    assert.strictEqual(outcome.tokensAfter, tokensBefore);
    const piAfter = await oracle.llm({ file });
    assert.deepStrictEqual(piAfter.estimate, piBefore.estimate);
    assert.deepStrictEqual(
      piAfter.projected.filter((p) => p.messages.length),
      piBefore.projected.filter((p) => p.messages.length),
    );
    await whenSession(api, (c) => c?.analysis.inspect.contextTokens === tokensBefore, 10000, "the gauge back");
    // nothing more to undo: said, nothing written
    const again = (await vscode.commands.executeCommand("piContext.trim.undo", { file, quiet: true })) as {
      kind: string;
      message: string;
    };
    assert.strictEqual(again.kind, "nothing");
    assert.match(again.message, /^Nothing to undo: /);
  });

  it("Escape at every question and Cancel in the preview leave the file byte-identical", async () => {
    const file = await fresh();
    const bytes = fs.readFileSync(file);

    let start = promptCount();
    const escaped = vscode.commands.executeCommand<TrimCommandOutcome>("piContext.trim") as Promise<TrimCommandOutcome>;
    await nextPrompt(start, "the trim list");
    await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    assert.deepEqual(await escaped, { kind: "declined", file, stage: "pick" });

    start = promptCount();
    const cancelled = vscode.commands.executeCommand<TrimCommandOutcome>(
      "piContext.trim.remove",
      "r6",
    ) as Promise<TrimCommandOutcome>;
    const preview = await nextPrompt(start, "the preview");
    await choose(preview, /Cancel/);
    assert.deepEqual(await cancelled, { kind: "declined", file, stage: "preview" });

    // the live guard: a file written a moment ago is refused before anything is asked
    fs.utimesSync(file, new Date(), new Date());
    start = promptCount();
    const guarded = (await vscode.commands.executeCommand("piContext.trim.apply", [
      { entryId: "r6", choice: "default" },
    ])) as TrimCommandOutcome;
    assert.strictEqual(guarded.kind, "error", JSON.stringify(guarded));
    assert.strictEqual(promptCount(), start, "nothing was asked");
    assert.ok(fs.readFileSync(file).equals(bytes));
  });
});
