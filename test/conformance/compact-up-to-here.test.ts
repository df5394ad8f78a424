/**
 * "Compact up to here" judged by pi 1.6.0: on copies of the shared fixtures, our compaction flow
 * with `keepFrom` = each of pi's valid cut points (user, assistant mid-turn, after pi's own
 * compactions) appends one entry; pi loads the file with it as the leaf and its context is the
 * checkpoint system message, the summary, then exactly the entries we predicted as kept (in our
 * order, with their messages), tool calls and results paired (pi-ai's `transformMessages` finds no
 * orphan), and pi's projected estimate equals our preview's "after" without the summary plus the
 * summary message pi measures. The bytes before the append are unchanged.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { planCompaction, runCompactionFlow } from "../../src/core/flows/compact";
import { validCutPoints } from "../../src/core/rules/compaction";
import { SessionFile } from "../../src/core/read/session";
import { OpenAiSummarizer } from "../../src/summarizers/openai";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { REPO_ROOT } from "../support/paths";

interface Loaded {
  leafId: string | null;
  contextEntries: string[];
  contextMessages: { entryId: string; role: string; estimateTokens: number }[];
  unchangedOnOpen: boolean;
}
interface LlmView {
  leafId: string | null;
  estimate: { tokens: number };
  orphanResults: unknown[];
  fillers: unknown[];
  transformed: { role: string; entryId: string | null }[];
}
interface Oracle {
  loadCheck(request: { file: string }): Promise<Loaded>;
  llm(request: { file: string }): Promise<LlmView>;
  close(): Promise<void>;
}

const PI = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-compact-here-"));
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

let copies = 0;
function copyOf(name: string): string {
  const file = path.join(tmp, `${name}-${++copies}.jsonl`);
  fs.copyFileSync(path.join(PI, `${name}.jsonl`), file);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

/** Every valid cut point of the fixture's context but the first (nothing before it), at most `max`, spread evenly. */
function cutPoints(name: string, max: number): string[] {
  const session = SessionFile.fromBytes(fs.readFileSync(path.join(PI, `${name}.jsonl`)));
  const all = validCutPoints(session).slice(1);
  if (all.length <= max) return all;
  return Array.from({ length: max }, (_, i) => all[Math.round((i * (all.length - 1)) / (max - 1))]!);
}

describe("pi 1.6.0 loads what Compact Up to Here writes", () => {
  for (const [name, max] of [
    ["long", 8],
    ["split", 6],
    ["overflow", 4],
    ["tree", 6],
  ] as const) {
    for (const keepFrom of cutPoints(name, max)) {
      it(`${name}: keep from ${keepFrom}`, async () => {
        const file = copyOf(name);
        const agentDir = path.join(PI, `${name}.agent`);
        const bytes = fs.readFileSync(file);
        const plan = await planCompaction(file, {
          agentDir,
          guardSeconds: 0,
          procRoot: null,
          maxOutputTokens: 4096,
          keepFrom,
        });
        const prep = plan.preparation;
        const kept = prep.keptEntries.filter((e) => e.roles.some((r) => r !== "system"));
        if (plan.historyRequest) server.script({ text: `## Goal\nsummary up to ${keepFrom}` });
        if (plan.turnPrefixRequest) server.script({ text: `## Original Request\nprefix of ${keepFrom}` });
        const outcome = await runCompactionFlow(file, summarizer, {
          agentDir,
          guardSeconds: 0,
          procRoot: null,
          keepFrom,
        });
        assert.equal(outcome.kind, "compacted");
        if (outcome.kind !== "compacted") return;
        const entry = outcome.result.entry;
        assert.equal(entry.firstKeptEntryId, prep.firstKeptEntryId);
        assert.equal(entry.fromHook, false);
        assert.ok(fs.readFileSync(file).subarray(0, bytes.length).equals(bytes), "bytes before the append unchanged");

        const loaded = await oracle.loadCheck({ file });
        assert.equal(loaded.unchangedOnOpen, true, "pi opens the file without repairing it");
        assert.equal(loaded.leafId, entry.id);
        const [first, second, ...rest] = loaded.contextMessages;
        assert.deepEqual(
          [first, second].map((m) => m && `${m.entryId} ${m.role}`),
          [`${entry.id} system`, `${entry.id} compactionSummary`],
        );
        // the kept entries, in our order, each with as many messages as we predicted
        assert.deepEqual(
          rest.map((m) => `${m.entryId} ${m.role}`),
          kept.flatMap((e) => e.roles.filter((r) => r !== "system").map((r) => `${e.record.id} ${r}`)),
        );
        assert.equal(
          loaded.contextEntries[1]?.split(" ")[0],
          entry.firstKeptEntryId,
          "context continues at firstKeptEntryId",
        );

        const llm = await oracle.llm({ file });
        assert.deepEqual(llm.orphanResults, [], "no tool result without its call");
        assert.equal(
          llm.estimate.tokens,
          plan.preview.tokensAfterWithoutSummary + second!.estimateTokens,
          "pi's estimate = our preview's after (checkpoint + kept) + the summary",
        );
        assert.equal(outcome.result.tokensAfter, llm.estimate.tokens);
      });
    }
  }
});
