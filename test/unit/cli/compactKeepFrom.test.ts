/**
 * `pi-context compact FILE --keep-from ENTRY` ("Compact up to here") on a copy of pi's long fixture,
 * against the scripted OpenAI-compatible server: the dry run names the chosen cut and plans what
 * `prepareCompactionAt` plans; the write keeps from that entry; an entry pi would not cut at is
 * refused (exit 1, the nearest valid entries named, the file byte-identical, nothing sent).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { SessionFile } from "../../../src/core/read/session";
import { prepareCompactionAt, validCutPoints } from "../../../src/core/rules/compaction";
import { buildProjection } from "../../../src/core/rules/context";
import { startScriptedServer, type ScriptedServer } from "../../support/scripted-openai";
import { FIXTURES } from "../../support/paths";
import { runCli, writeOldSession } from "../../support/cli";

const LONG = path.join(FIXTURES, "pi-1.6.0", "long.jsonl");
const AGENT = path.join(FIXTURES, "pi-1.6.0", "long.agent");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-keep-from-"));
let server: ScriptedServer;
let saved: NodeJS.ProcessEnv;
let n = 0;

before(async () => {
  server = await startScriptedServer();
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  saved = { ...process.env };
  delete process.env.OPENAI_API_KEY;
  process.env.PI_CONTEXT_API_KEY = "sk-cli-keep";
  server.reset();
});
afterEach(() => {
  process.env = saved;
});

function fresh(): string {
  return writeOldSession(path.join(tmp, `s${++n}.jsonl`), fs.readFileSync(LONG, "utf8"));
}

const session = SessionFile.fromBytes(fs.readFileSync(LONG));
const cuts = validCutPoints(session);
/** A user message in the middle of the context. */
const userCut = cuts.find((id, i) => i > cuts.length / 2 && session.byId.get(id)?.role === "user")!;
/** A tool result of the context (after pi's latest compaction). */
const toolResult = buildProjection(session).entries.find(
  (e) => e.record.role === "toolResult" && e.roles.length > 0,
)!.record;
const common = (file: string) => [
  "compact",
  file,
  "--agent-dir",
  AGENT,
  "--base-url",
  server.baseURL,
  "--model",
  "m",
  "--guard-seconds",
  "0",
];

describe("pi-context compact --keep-from", () => {
  it("--dry-run --json: the chosen cut, planned as prepareCompactionAt plans it; the text names the cut", async () => {
    const file = fresh();
    const bytes = fs.readFileSync(file);
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
    const expected = prepareCompactionAt(session, settings, session, userCut);
    assert.ok(!("reason" in expected));
    const r = await runCli([...common(file), "--keep-from", userCut, "--dry-run", "--json"]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as { preview: { firstKeptEntryId: string; summarizedEntryIds: string[] } };
    assert.equal(j.preview.firstKeptEntryId, expected.firstKeptEntryId);
    assert.deepEqual(
      j.preview.summarizedEntryIds,
      expected.messagesToSummarize.map((e) => e.record.id),
    );
    const text = await runCli([...common(file), "--keep-from", userCut, "--dry-run"]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`^cut +at the chosen entry ${userCut} \\(Compact up to here\\)$`, "m"));
    assert.match(
      text.out,
      new RegExp(`^kept +\\d+ entries from ${expected.firstKeptEntryId} \\(firstKeptEntryId\\)`, "m"),
    );
    // at the file's leaf pi's own /compact has nothing to compact (the kept tail is under keepRecentTokens)
    const own = await runCli([...common(file), "--dry-run"]);
    assert.equal(own.code, 1);
    assert.equal(own.err, "Nothing to compact (session too small).");
    assert.equal(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(bytes));
  });

  it("--yes writes a compaction that keeps from the chosen entry", async () => {
    const file = fresh();
    server.script({ text: "## Goal\nUp to here" }, { text: "## Original Request\nprefix" });
    const r = await runCli([...common(file), "--keep-from", userCut, "--yes", "--json"]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as { compacted: boolean; entry: { firstKeptEntryId: string; fromHook: boolean } };
    assert.equal(j.compacted, true);
    assert.equal(j.entry.firstKeptEntryId, userCut);
    assert.equal(j.entry.fromHook, false);
    const after = SessionFile.fromBytes(fs.readFileSync(file));
    assert.equal(after.records.at(-1)!.firstKeptEntryId, userCut);
  });

  it("a tool result: exit 1, why, and the nearest entries pi can keep from; nothing sent or written", async () => {
    const file = fresh();
    const bytes = fs.readFileSync(file);
    const r = await runCli([...common(file), "--keep-from", toolResult.id, "--yes"]);
    assert.equal(r.code, 1);
    const invalid = prepareCompactionAt(
      session,
      { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
      session,
      toolResult.id,
    );
    assert.ok("nearest" in invalid);
    const [before, afterIt] = invalid.nearest;
    assert.equal(
      r.err,
      `Entry ${toolResult.id} is a tool result: pi never cuts between a tool call and its result. The nearest entries pi can keep from: ${before} (assistant), ${afterIt} (${session.byId.get(afterIt!)!.role}).`,
    );
    assert.equal(server.requests.length, 0);
    assert.ok(fs.readFileSync(file).equals(bytes));
    const empty = await runCli([...common(file), "--keep-from", " ", "--dry-run"]).catch((e: Error) => e);
    assert.ok(empty instanceof Error || empty.code === 2, "an empty --keep-from is a usage error");
  });

  it("an unknown entry: exit 1, said as such, without claiming the context has nowhere to cut", async () => {
    const file = fresh();
    const r = await runCli([...common(file), "--keep-from", "nosuch", "--dry-run"]);
    assert.equal(r.code, 1);
    assert.equal(r.err, "There is no entry nosuch in this session.");
  });
});
