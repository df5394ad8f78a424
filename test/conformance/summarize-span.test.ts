/**
 * "Summarize these messages" judged by pi 1.6.0: on copies of the shared fixtures, spans of the
 * context (over tool groups, from and to tool results, an assistant with calls as the first
 * message) are summarized by our flow (`planSpanSummary` + `commitSpanSummary`, one append of
 * context edits). pi loads the file and its context is exactly what we predicted — the messages
 * before the span, the note in the span's first message, the messages after it, in order —; pi-ai's
 * `transformMessages` finds no tool result without its call, after the whole batch and after every
 * prefix of it (a write cut short anywhere leaves a context pi can send); pi's estimate equals the
 * "after" our preview computed for the written note. The bytes before the append are unchanged.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { commitSpanSummary, planSpanSummary } from "../../src/core/flows/spanSummary";
import { SessionFile } from "../../src/core/read/session";
import { buildProjection } from "../../src/core/rules/context";
import { REPO_ROOT } from "../support/paths";

interface Loaded {
  leafId: string | null;
  contextMessages: { entryId: string; role: string }[];
  unchangedOnOpen: boolean;
}
interface LlmView {
  estimate: { tokens: number };
  orphanResults: unknown[];
  projected: { entryId: string; messages?: { role: string; content: unknown }[] }[];
}
interface Oracle {
  loadCheck(request: { file: string }): Promise<Loaded>;
  llm(request: { file: string }): Promise<LlmView>;
  close(): Promise<void>;
}

const PI = path.join(REPO_ROOT, "test/fixtures/pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-span-"));
let oracle: Oracle;

before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
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

/** Spans of the fixture's context: [from, to] ids of visible messages, chosen to cover the cases. */
function spans(name: string): [string, string][] {
  const session = SessionFile.fromBytes(fs.readFileSync(path.join(PI, `${name}.jsonl`)));
  const entries = buildProjection(session).entries.filter(
    (e) => e.roles.some((r) => r !== "system") && e.record.type !== "compaction",
  );
  const ids = entries.map((e) => e.record.id);
  const roleOf = (i: number) => entries[i]!.record.role;
  const out: [string, string][] = [];
  const firstResult = entries.findIndex((e) => e.record.role === "toolResult");
  const firstCaller = entries.findIndex((e) => (e.record.toolCallIds?.length ?? 0) > 0);
  const n = ids.length;
  if (n >= 4) out.push([ids[1]!, ids[Math.min(n - 2, 4)]!]); // an early span
  if (n >= 8) out.push([ids[Math.floor(n / 3)]!, ids[Math.floor((2 * n) / 3)]!]); // the middle third
  if (firstResult > 0) out.push([ids[firstResult]!, ids[Math.min(n - 1, firstResult + 2)]!]); // from a tool result
  if (firstCaller >= 0 && firstCaller < n - 1) out.push([ids[firstCaller]!, ids[Math.min(n - 1, firstCaller + 3)]!]);
  if (n >= 3 && roleOf(n - 1) !== "toolResult") out.push([ids[n - 3]!, ids[n - 1]!]); // up to the leaf
  return out.filter(([a, b]) => a !== b);
}

describe("pi 1.6.0 loads what Summarize These Messages writes", () => {
  for (const name of ["long", "split", "overflow", "tree"]) {
    for (const [from, to] of spans(name)) {
      it(`${name}: ${from} … ${to}`, async () => {
        const file = copyOf(name);
        const bytes = fs.readFileSync(file);
        const plan = await planSpanSummary(file, from, to, {
          agentDir: path.join(PI, `${name}.agent`),
          guardSeconds: 0,
          procRoot: null,
          maxOutputTokens: 4096,
        });
        const result = await commitSpanSummary(plan, `## Goal\nWhat happened from ${from} to ${to}.`);
        const lines = fs.readFileSync(file).subarray(bytes.length).toString("utf8").split("\n").filter(Boolean);
        assert.equal(lines.length, result.entries.length);
        assert.ok(fs.readFileSync(file).subarray(0, bytes.length).equals(bytes), "bytes before the append unchanged");

        const loaded = await oracle.loadCheck({ file });
        assert.equal(loaded.unchangedOnOpen, true);
        assert.equal(loaded.leafId, result.entries.at(-1)!.id);
        // the context we predicted, message by message
        assert.deepEqual(
          loaded.contextMessages.map((m) => `${m.entryId} ${m.role}`),
          result.edits.projectionAfter.entries.flatMap((e) => e.roles.map((r) => `${e.record.id} ${r}`)),
        );
        const span = new Set(plan.span.messages.map((e) => e.record.id));
        const left = loaded.contextMessages.filter((m) => span.has(m.entryId));
        assert.deepEqual(
          left.map((m) => m.entryId),
          [plan.span.targetId],
          "only the note is left of the span",
        );
        const llm = await oracle.llm({ file });
        assert.deepEqual(llm.orphanResults, []);
        const note = llm.projected.find((p) => p.entryId === plan.span.targetId)!.messages![0]!;
        const text =
          typeof note.content === "string"
            ? note.content
            : (note.content as { text?: string }[]).map((b) => b.text ?? "").join("");
        assert.equal(text, result.note, "pi sends the note in place of the span");
        assert.equal(llm.estimate.tokens, result.edits.tokensAfter.tokens, "pi's estimate = our after");
        assert.equal(result.tokensAfter, llm.estimate.tokens);

        // every prefix of the batch: a context pi can send
        for (let k = 1; k < lines.length; k++) {
          const prefix = path.join(tmp, `${name}-prefix-${copies}-${k}.jsonl`);
          fs.writeFileSync(prefix, Buffer.concat([bytes, Buffer.from(lines.slice(0, k).join("\n") + "\n")]));
          const view = await oracle.llm({ file: prefix });
          assert.deepEqual(view.orphanResults, [], `after ${k} of ${lines.length} edits`);
        }
      });
    }
  }
});
