/**
 * A session that changes while a summary streams: the flows that write (compaction, branch switch
 * with a summary) abort the running request at once — the scripted server sees the client go away
 * long before its slow answer would end —, say so (`onSessionChanged` with the stage), then plan
 * again; only one request runs at a time and exactly one entry is written, on the new leaf.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { runCompactionFlow } from "../../../../src/core/flows/compact";
import { runSwitchFlow } from "../../../../src/core/flows/switch";
import { describeChange, watchSession, type ChangeStage } from "../../../../src/core/flows/watch";
import { expectationOf } from "../../../../src/core/flows/write";
import { SessionFile } from "../../../../src/core/read/session";
import { OpenAiSummarizer } from "../../../../src/summarizers/openai";
import { FIXTURES } from "../../../support/paths";
import { startScriptedServer, type ScriptedServer } from "../../../support/scripted-openai";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-watch-"));
let counter = 0;

/** The first `count` lines of a fixture (all when undefined), written an hour ago. */
function copy(name: string, count?: number): string {
  const all = fs
    .readFileSync(path.join(PI, `${name}.jsonl`), "utf8")
    .trimEnd()
    .split("\n");
  const file = path.join(tmp, `${name}-${++counter}.jsonl`);
  fs.writeFileSync(file, all.slice(0, count ?? all.length).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

function compactionLine(name: string): number {
  const lines = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
  return lines.findIndex((l) => l.includes('"type":"compaction"')) + 1;
}

function appendLabel(file: string, id: string, parentId: string): void {
  fs.appendFileSync(
    file,
    `${JSON.stringify({ type: "label", id, parentId, timestamp: new Date().toISOString(), targetId: parentId, label: "pi wrote" })}\n`,
  );
}

/** A slow answer: 40 pieces 150 ms apart (≈ 6 s to the end). */
const SLOW = { chunks: Array.from({ length: 40 }, (_, i) => `part ${i} `), chunkDelayMs: 150 };

let server: ScriptedServer;
const summarizer = () =>
  new OpenAiSummarizer({
    baseURL: server.baseURL,
    model: "scripted",
    contextWindow: 128000,
    maxOutputTokens: 2000,
    maxRetries: 0,
  });

before(async () => {
  server = await startScriptedServer();
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => server.reset());

describe("watchSession", () => {
  it("aborts its signal when the file is appended to, and follows the outer signal without `changed`", async () => {
    const file = copy("tree");
    const expectation = expectationOf(await SessionFile.open(file, { digest: true }));
    const watch = watchSession(expectation, undefined, 20);
    assert.equal(watch.check(), false);
    appendLabel(file, "ww000001", "bb6f6d3c");
    const started = Date.now();
    while (!watch.signal.aborted && Date.now() - started < 2000) await new Promise((r) => setTimeout(r, 10));
    assert.equal(watch.signal.aborted, true);
    assert.equal(watch.changed, true);
    watch.dispose();

    const outer = new AbortController();
    const second = watchSession(expectationOf(await SessionFile.open(file, { digest: true })), outer.signal, 20);
    outer.abort();
    assert.equal(second.signal.aborted, true);
    assert.equal(second.changed, false, "a cancel is not a change");
    second.dispose();
  });
});

describe("a session that changes during summarizing", () => {
  it("compaction: the running request is aborted at once (the server sees it), said, planned again; one request at a time", async () => {
    const file = copy("long", compactionLine("long") - 1);
    const stages: ChangeStage[] = [];
    const confirms: boolean[] = [];
    let appendedAt = 0;
    let abortSeenAfterMs = -1;
    let leaf = "";
    const disconnectsBefore = server.disconnects;
    server.script(SLOW, { text: "## Goal\nsecond" }, { text: "## Original Request\nprefix" });
    const outcome = await runCompactionFlow(
      file,
      summarizer(),
      { agentDir: path.join(PI, "long.agent"), guardSeconds: 0, procRoot: null, changePollMs: 50 },
      {
        confirm: async (plan, _fit, changed) => {
          confirms.push(changed);
          leaf ||= plan.preparation.leafId;
          return true;
        },
        onText: () => {
          if (appendedAt) return;
          appendedAt = Date.now();
          appendLabel(file, "ww000002", leaf);
        },
        onSessionChanged: (stage) => {
          stages.push(stage);
          abortSeenAfterMs = Date.now() - appendedAt;
        },
      },
    );
    // the server saw the abort: the slow answer (≈ 6 s) did not run to its end
    assert.equal(server.disconnects - disconnectsBefore, 1, "the first request was aborted");
    assert.deepEqual(stages, ["summary"]);
    assert.ok(abortSeenAfterMs >= 0 && abortSeenAfterMs < 2000, `aborted ${abortSeenAfterMs} ms after the append`);
    assert.deepEqual(confirms, [false, true], "a new preview, marked as changed");
    assert.equal(server.requests.length, 3, "1 aborted + history + split-turn prefix of the new plan");
    assert.equal(outcome.kind, "compacted");
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    assert.equal(lines.filter((l) => l.includes('"type":"compaction"')).length, 1 + 0, "exactly one written");
    const written = JSON.parse(lines.at(-1)!);
    assert.equal(written.type, "compaction");
    assert.equal(written.parentId, "ww000002", "on the new leaf");
    assert.match(written.summary, /second/);
    assert.equal(server.maxInFlight, 1, "never two requests at once");
  });

  it("branch switch with a summary: same (aborted, said, planned again, one summary written)", async () => {
    const file = copy("tree");
    const stages: ChangeStage[] = [];
    let decisions = 0;
    let appended = false;
    const disconnectsBefore = server.disconnects;
    server.script(SLOW, { text: "## Goal\nsecond" });
    const started = Date.now();
    const outcome = await runSwitchFlow(
      file,
      "895e5ef5",
      { summarize: true },
      summarizer(),
      { agentDir: path.join(PI, "tree.agent"), guardSeconds: 0, procRoot: null },
      {
        changePollMs: 50,
        decide: async () => {
          decisions++;
          return { summarize: true };
        },
        onText: () => {
          if (appended) return;
          appended = true;
          appendLabel(file, "ww000003", "bb6f6d3c");
        },
        onSessionChanged: (stage) => stages.push(stage),
      },
    );
    assert.ok(Date.now() - started < 5000, "did not wait for the slow answer to end");
    assert.equal(server.disconnects - disconnectsBefore, 1);
    assert.equal(server.maxInFlight, 1);
    assert.deepEqual(stages, ["summary"]);
    assert.equal(decisions, 2);
    assert.equal(server.requests.length, 2);
    assert.equal(outcome.kind, "switched");
    const lines = fs
      .readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const last = lines.at(-1)!;
    assert.equal(last.type, "branch_summary");
    assert.equal(last.fromId, "ww000003");
    assert.match(String(last.summary), /second/);
  });

  it("every stage has words that say what happened to the request", () => {
    assert.match(describeChange("preview"), /nothing was sent/);
    assert.match(describeChange("summary"), /request was stopped/);
    assert.match(describeChange("write"), /discarded/);
  });
});
