/**
 * Conformance of `pi-context compact`'s writes: after each compaction our flow appends (on copies
 * of the shared fixtures, at every leaf where pi compacted, plus the file's final leaf), pi 1.6.0
 * loads the file with our entry as the leaf, and its context is exactly pi's own context after its
 * own compaction at that leaf — checkpoint system message, the summary, the kept entries — with
 * only the compaction's id differing. pi's `--verify-compactions` re-derives our entry's
 * firstKeptEntryId / tokensBefore / split-turn marker / file lists from the file. The bytes before
 * our append are unchanged.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { planCompaction, runCompactionFlow } from "../../src/core/flows/compact";
import { formatFileOperations } from "../../src/core/rules/files";
import { SPLIT_TURN_SEPARATOR } from "../../src/core/flows/prompts";
import { OpenAiSummarizer } from "../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { REPO_ROOT } from "../support/paths";

interface Loaded {
  leafId: string | null;
  pathIds: string[];
  contextEntries: string[];
  contextMessages: { entryId: string; role: string; estimateTokens: number }[];
  sessionContextRoles: string[];
  unchangedOnOpen: boolean;
}
interface Oracle {
  loadCheck(request: { file: string }): Promise<Loaded>;
  oracle(request: {
    file: string;
    args: string[];
  }): Promise<{ verifyCompactions?: { compactionId: string; match: boolean }[] } & Record<string, unknown>>;
  close(): Promise<void>;
}

const PI = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-compact-oracle-"));
let oracle: Oracle;
let server: ScriptedServer;
let summarizer: OpenAiSummarizer;

before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
  server = await startScriptedServer();
  summarizer = new OpenAiSummarizer({
    baseURL: server.baseURL,
    apiKey: "k-oracle",
    model: "m",
    contextWindow: 200000,
    maxOutputTokens: 4096,
    maxRetries: 0,
  });
});
after(async () => {
  await oracle?.close();
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function lines(name: string): string[] {
  return fs
    .readFileSync(path.join(PI, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

function writePrefix(name: string, count: number, tag: string): string {
  const file = path.join(tmp, `${name}-${tag}.jsonl`);
  fs.writeFileSync(file, lines(name).slice(0, count).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

/**
 * Script the answers pi got for a compaction it wrote (recovered from its summary): the history
 * answer only when pi asked for one (a split turn with no history messages reuses the previous
 * summary or `No prior history.`), then the turn-prefix answer.
 */
async function scriptPiAnswers(
  file: string,
  agentDir: string,
  entry: { summary: string; details: { readFiles: string[]; modifiedFiles: string[] } },
): Promise<void> {
  const plan = await planCompaction(file, { agentDir, guardSeconds: 0, procRoot: null, maxOutputTokens: 4096 });
  const body = entry.summary.slice(
    0,
    entry.summary.length - formatFileOperations(entry.details.readFiles, entry.details.modifiedFiles).length,
  );
  const i = body.lastIndexOf(SPLIT_TURN_SEPARATOR);
  const history = i < 0 ? body : body.slice(0, i);
  if (plan.historyRequest) server.script({ text: history });
  else assert.equal(history, plan.preparation.previousSummary ?? "No prior history.");
  if (plan.turnPrefixRequest) server.script({ text: body.slice(i + SPLIT_TURN_SEPARATOR.length) });
}

const withoutId = (loaded: Loaded, id: string) => ({
  leafId: loaded.leafId === id ? "<compaction>" : loaded.leafId,
  pathIds: loaded.pathIds.map((x) => (x === id ? "<compaction>" : x)),
  contextEntries: loaded.contextEntries.map((x) => x.replace(id, "<compaction>")),
  contextMessages: loaded.contextMessages.map((m) => ({
    ...m,
    entryId: m.entryId === id ? "<compaction>" : m.entryId,
  })),
  sessionContextRoles: loaded.sessionContextRoles,
});

describe("pi 1.6.0 loads what `compact` writes", () => {
  for (const name of ["long", "split", "overflow"]) {
    const all = lines(name);
    all.forEach((line, index) => {
      if (!line.includes('"type":"compaction"')) return;
      const piEntry = JSON.parse(line) as {
        id: string;
        summary: string;
        details: { readFiles: string[]; modifiedFiles: string[] };
      };
      it(`${name}: at the leaf pi compacted (${piEntry.id}), pi's context is the same as after its own compaction`, async () => {
        const ours = writePrefix(name, index, `ours-${piEntry.id}`);
        const theirs = writePrefix(name, index + 1, `pi-${piEntry.id}`);
        const before = fs.readFileSync(ours);
        await scriptPiAnswers(ours, path.join(PI, `${name}.agent`), piEntry);
        const outcome = await runCompactionFlow(ours, summarizer, {
          agentDir: path.join(PI, `${name}.agent`),
          guardSeconds: 0,
          procRoot: null,
        });
        assert.equal(outcome.kind, "compacted");
        const id = outcome.kind === "compacted" ? outcome.result.entry.id : "";
        assert.ok(fs.readFileSync(ours).subarray(0, before.length).equals(before), "bytes before the append unchanged");

        const loaded = await oracle.loadCheck({ file: ours });
        assert.equal(loaded.unchangedOnOpen, true, "pi opens the file without repairing it");
        assert.equal(loaded.leafId, id);
        assert.equal(loaded.contextMessages[0]!.role, "system", "checkpoint system message first");
        assert.equal(loaded.contextMessages[0]!.entryId, id);
        assert.equal(loaded.contextMessages[1]!.role, "compactionSummary");
        assert.equal(loaded.contextMessages[1]!.entryId, id);
        const reference = await oracle.loadCheck({ file: theirs });
        assert.deepEqual(withoutId(loaded, id), withoutId(reference, piEntry.id));

        const verified = await oracle.oracle({
          file: ours,
          args: ["--agent-dir", path.join(PI, `${name}.agent`), "--verify-compactions"],
        });
        const mine = verified.verifyCompactions?.find((v) => v.compactionId === id);
        assert.ok(mine, "pi re-derived our compaction");
        assert.equal(mine.match, true, JSON.stringify(mine));
      });
    });
  }

  it("split: at the file's final leaf (after pi's compaction: a fresh non-split cut that updates pi's summary)", async () => {
    const all = lines("split");
    const file = writePrefix("split", all.length, "final");
    const before = fs.readFileSync(file);
    const plan = await planCompaction(file, {
      agentDir: path.join(PI, "split.agent"),
      guardSeconds: 0,
      procRoot: null,
      maxOutputTokens: 4096,
    });
    assert.equal(plan.preview.isSplitTurn, false);
    assert.ok(plan.preparation.previousSummary, "updates pi's summary");
    server.script({ text: "## Goal\nfinal-leaf summary" });
    const outcome = await runCompactionFlow(file, summarizer, {
      agentDir: path.join(PI, "split.agent"),
      guardSeconds: 0,
      procRoot: null,
    });
    assert.equal(outcome.kind, "compacted");
    const entry = outcome.kind === "compacted" ? outcome.result.entry : undefined;
    assert.ok(entry);
    assert.ok(fs.readFileSync(file).subarray(0, before.length).equals(before));
    const loaded = await oracle.loadCheck({ file });
    assert.equal(loaded.unchangedOnOpen, true);
    assert.equal(loaded.leafId, entry.id);
    assert.deepEqual(
      loaded.contextMessages.slice(0, 2).map((m) => `${m.entryId} ${m.role}`),
      [`${entry.id} system`, `${entry.id} compactionSummary`],
    );
    const keptIds = loaded.contextEntries.slice(1).map((e) => e.split(" ")[0]);
    assert.equal(keptIds[0], entry.firstKeptEntryId, "context continues at firstKeptEntryId");
    const verified = await oracle.oracle({
      file,
      args: ["--agent-dir", path.join(PI, "split.agent"), "--verify-compactions"],
    });
    assert.equal(verified.verifyCompactions?.find((v) => v.compactionId === entry.id)?.match, true);
  });
});
