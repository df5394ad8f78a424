/**
 * Conformance of Fork Session Here / Clone Session / `pi-context fork` (src/core/flows/fork.ts)
 * with pi 1.6.0 — pi is the judge twice:
 * - pi's own code path: the oracle runs `AgentSessionRuntime.fork`'s position rule and
 *   `SessionManager.createBranchedSession` on a copy, for every entry of the pi fixtures (branches,
 *   branch summaries, labels, compactions, a context edit, a session name), case 15 and random
 *   trees; the real pi CLI in RPC mode runs its `fork` and `clone` commands on a session pi itself
 *   wrote and on the tree fixture. Our file equals pi's, line for line and key for key (only the
 *   new session id, its time and the re-created labels' random ids differ), or both refuse alike;
 * - pi opens our file (`loadCheck`): unchanged on open, and its context, model and thinking level
 *   equal the source's at the fork's leaf.
 *
 * Runs: PI_CONTEXT_FORK_RUNS random trees (default 60).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { forkSession, NothingToForkError, type ForkResult } from "../../src/core/flows/fork";
import { SessionFile } from "../../src/core/read/session";
import { buildSession, recipeArb } from "../support/random-session";
import { PiRpc, readSessionLines, writeScriptedAgentDir } from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { REPO_ROOT } from "../support/paths";
import { SessionBuilder } from "../support/session-builder";

type Line = Record<string, unknown>;
interface PiFork {
  targetLeafId: string | null;
  selectedText: string | null;
  empty: boolean;
  written?: boolean;
  parentSession?: string;
  fileName?: string;
  created?: string[];
  lines?: Line[] | null;
}
interface Loaded {
  leafId: string | null;
  pathIds: string[];
  pathTypes: string[];
  contextMessages: { entryId: string; role: string; estimateTokens: number }[];
  model: unknown;
  thinkingLevel: unknown;
  unchangedOnOpen: boolean;
}
interface Oracle {
  fork(request: { file: string; entryId: string; position?: "before" | "at" }): Promise<PiFork>;
  loadCheck(request: { file: string; leaf?: string }): Promise<Loaded>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_FORK_RUNS ?? 60);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-fork-oracle-"));
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

let counter = 0;
/** `text` as a session file in a folder of its own (a fork lands next to its source). */
function copyOf(text: string): string {
  const dir = path.join(tmp, `s${counter++}`);
  fs.mkdirSync(dir);
  const file = path.join(dir, "source.jsonl");
  fs.writeFileSync(file, text);
  return file;
}

const FILE_NAME =
  /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.jsonl$/;

/**
 * A fork's lines with what is pi's to draw at random replaced: the header's id and time, and the
 * ids of the re-created labels (the entries after the path); `parentSession` as `<source>`.
 */
function normalized(lines: readonly Line[], pathCount: number): string[] {
  const ids = new Map<unknown, string>();
  lines.slice(1 + pathCount).forEach((l, i) => ids.set(l.id, `label-${i}`));
  const [header, ...entries] = lines;
  const out = [JSON.stringify({ ...header, id: "<id>", timestamp: "<time>", parentSession: "<source>" })];
  for (const e of entries)
    out.push(
      JSON.stringify(ids.has(e.id) ? { ...e, id: ids.get(e.id), parentId: ids.get(e.parentId) ?? e.parentId } : e),
    );
  return out;
}

function linesOf(file: string): Line[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l) as Line);
}

const stats = { forks: 0, before: 0, labels: 0, compactions: 0, empty: 0, noConversation: 0, refused: 0 };

/**
 * Fork `entryId` of a copy of `text` at `position` with our flow and with pi's, and check ours
 * against pi's file and pi's context at the fork's leaf.
 */
async function forkAndCheck(text: string, entryId: string, position: "before" | "at"): Promise<void> {
  const source = copyOf(text);
  const bytes = fs.readFileSync(source);
  let pi: PiFork | undefined;
  let piError: string | undefined;
  try {
    pi = await oracle.fork({ file: source, entryId, position });
  } catch (error) {
    piError = (error as Error).message.replace(/^pi oracle: /, "");
  }
  let ours: ForkResult | undefined;
  let ourError: unknown;
  try {
    ours = await forkSession(source, entryId, { position });
  } catch (error) {
    ourError = error;
  }
  assert.ok(fs.readFileSync(source).equals(bytes), "the source is untouched");
  const where = `${entryId} ${position}`;
  if (piError !== undefined) {
    stats.refused++;
    assert.ok(ourError instanceof Error, `${where}: pi refused (${piError}), we forked`);
    assert.equal(ourError.message, piError, where);
    assert.deepEqual(fs.readdirSync(path.dirname(source)), ["source.jsonl"], "nothing written");
    return;
  }
  assert.ok(pi);
  if (pi.empty || pi.written === false) {
    if (pi.empty) stats.empty++;
    else stats.noConversation++;
    assert.ok(
      ourError instanceof NothingToForkError,
      `${where}: pi writes no file, we ${String(ourError ?? "forked")}`,
    );
    assert.equal(ourError.selectedText ?? null, pi.selectedText, where);
    assert.deepEqual(fs.readdirSync(path.dirname(source)), ["source.jsonl"], "nothing written");
    return;
  }
  assert.equal(ourError, undefined, `${where}: pi forked, we refused: ${String(ourError)}`);
  assert.ok(ours && pi.lines);
  assert.equal(ours.selectedText ?? null, pi.selectedText, `${where}: the text given back`);
  assert.deepEqual(pi.created, [pi.fileName], "pi created one file, next to its source");
  assert.match(pi.fileName!, FILE_NAME);
  const name = FILE_NAME.exec(path.basename(ours.file));
  assert.ok(name, `pi's file name: ${path.basename(ours.file)}`);
  assert.equal(path.dirname(ours.file), path.dirname(source));
  const mine = linesOf(ours.file);
  assert.equal(mine[0]!.id, name[1], "the name carries the session id");
  assert.equal(mine[0]!.parentSession, source);
  assert.equal(pi.lines[0]!.parentSession, pi.parentSession);
  assert.deepEqual(normalized(mine, ours.pathCount), normalized(pi.lines, ours.pathCount), `${where}: pi's file`);
  // pi opens ours as it is, and its context there is the source's at the fork's leaf
  const loaded = await oracle.loadCheck({ file: ours.file });
  const atLeaf = await oracle.loadCheck({ file: source, leaf: pi.targetLeafId! });
  assert.equal(loaded.unchangedOnOpen, true, "pi did not need to repair the fork");
  assert.equal(loaded.leafId, ours.leafId, "pi resumes at our last entry");
  assert.deepEqual(loaded.contextMessages, atLeaf.contextMessages, `${where}: pi's context`);
  assert.deepEqual(loaded.model, atLeaf.model, "model");
  assert.equal(loaded.thinkingLevel, atLeaf.thinkingLevel, "thinking level");
  assert.deepEqual(
    loaded.pathIds.slice(0, ours.pathCount),
    atLeaf.pathIds.filter((_, i) => atLeaf.pathTypes[i] !== "label"),
    "the source's path without its labels",
  );
  stats.forks++;
  if (position === "before") stats.before++;
  if (ours.labelCount > 0) stats.labels++;
  if (mine.some((l) => l.type === "compaction")) stats.compactions++;
}

/** Every entry of a file: user messages before and at, every other entry at. */
async function everyEntry(file: string): Promise<void> {
  const text = fs.readFileSync(file, "utf8");
  const session = await SessionFile.open(file);
  for (const r of session.records) {
    if (r.type === "message" && r.role === "user") await forkAndCheck(text, r.id, "before");
    await forkAndCheck(text, r.id, "at");
  }
  await forkAndCheck(text, "no-such-entry", "at");
}

describe("fork vs pi 1.6.0 (createBranchedSession)", () => {
  for (const name of ["tree", "long", "split", "overflow"])
    it(`${name}.jsonl: every entry`, async () => {
      await everyEntry(path.join(REPO_ROOT, `test/fixtures/pi-1.6.0/${name}.jsonl`));
    });

  it("the shared cases and a real session: every entry; a v1 session is refused (pi would rewrite it)", async () => {
    const cases = path.join(REPO_ROOT, "test/fixtures/cases");
    for (const dir of fs.readdirSync(cases).sort()) {
      const folder = path.join(cases, dir);
      if (!fs.statSync(folder).isDirectory()) continue;
      for (const f of fs.readdirSync(folder).filter((n) => /^session.*\.jsonl$/.test(n))) {
        const file = path.join(folder, f);
        if ((await SessionFile.open(file)).fileVersion < 3) {
          const copy = copyOf(fs.readFileSync(file, "utf8"));
          await assert.rejects(forkSession(copy, null), /format version 1: pi rewrites such a file/);
          continue;
        }
        await everyEntry(file);
      }
    }
    await everyEntry(path.join(REPO_ROOT, "test/fixtures/real-sessions/getspecstory-real_world.jsonl"));
  });

  it("covered: forks before and at, labels, compactions, refusals and pi's no-file cases", () => {
    assert.ok(
      stats.forks >= 280 && stats.before >= 35 && stats.labels >= 100 && stats.compactions >= 100,
      JSON.stringify(stats),
    );
    assert.ok(stats.refused >= 5 && stats.noConversation >= 5 && stats.empty >= 1, JSON.stringify(stats));
  });

  it("labels pi re-creates: several on the path, one cleared, one on another branch, a compaction kept after a label", async () => {
    const text = new SessionBuilder({ id: "s", cwd: "/tmp/p", timestamp: "2026-01-01T00:00:00.000Z" })
      .user("u1", "one")
      .label("l1", "u1", "first")
      .assistant("a1", { text: "ok", usage: { input: 10, output: 2 } })
      .label("l2", "a1", "answer")
      .compaction("c1", "l2", "so far", 12)
      .user("u2", "two")
      .label("l3", "u1", "")
      .label("l4", "u1", "first again")
      .assistant("x1", { text: "other branch", usage: { input: 1, output: 1 }, parent: "u1" })
      .label("l5", "x1", "elsewhere")
      .label("l6", "c1", "compacted")
      .jsonl();
    for (const id of ["u1", "l1", "a1", "l2", "c1", "u2", "l3", "l4", "x1", "l5", "l6"])
      await forkAndCheck(text, id, "at");
    await forkAndCheck(text, "u2", "before");
  });

  it(`random trees (${RUNS}): a random entry, before and at`, async () => {
    let skipped = 0;
    await fc.assert(
      fc.asyncProperty(recipeArb, fc.nat(), async (recipe, pick) => {
        const built = buildSession(recipe);
        const session = SessionFile.fromBytes(built.jsonl);
        // pi rewrites v1/v2 files when it opens them: we refuse those (unit-tested), pi's fork is of the migrated file
        if (session.fileVersion < 3 || session.records.length === 0) {
          skipped++;
          return;
        }
        const target = session.records[pick % session.records.length]!;
        await forkAndCheck(built.jsonl, target.id, "at");
        if (target.type === "message" && target.role === "user") await forkAndCheck(built.jsonl, target.id, "before");
      }),
      { numRuns: RUNS },
    );
    assert.ok(skipped < RUNS / 2, `skipped ${skipped}`);
  });
});

describe("fork vs pi 1.6.0 in RPC mode (its fork and clone commands)", () => {
  const home = path.join(tmp, "home");
  const agentDir = path.join(tmp, "agent");
  const project = path.join(tmp, "project");
  let server: ScriptedServer;
  const running: PiRpc[] = [];

  before(async () => {
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(path.join(project, "notes.txt"), "notes\n");
    server = await startScriptedServer({ text: "Fallback answer." });
    writeScriptedAgentDir(agentDir, { baseURL: server.baseURL, contextWindow: 200_000 });
  });
  after(async () => {
    for (const pi of running) await pi.kill().catch(() => undefined);
    await server?.close();
  });

  async function startPi(args: string[] = []): Promise<PiRpc> {
    const pi = await PiRpc.start({ cwd: project, agentDir, home, args });
    running.push(pi);
    return pi;
  }

  /** pi's own command on `file` (pi opened with `--session`): the new file pi switched to. */
  async function piCommand(file: string, command: Record<string, unknown>): Promise<{ file: string; text?: string }> {
    const pi = await startPi(["--session", file]);
    try {
      const response = await pi.command(command);
      assert.equal(response.data.cancelled, false);
      const state = await pi.command({ type: "get_state" });
      const forked = String(state.data.sessionFile);
      assert.notEqual(forked, file);
      return { file: forked, ...(typeof response.data.text === "string" ? { text: response.data.text } : {}) };
    } finally {
      await pi.close();
    }
  }

  function assertSameFork(ours: ForkResult, piFile: string, source: string): void {
    assert.equal(path.dirname(piFile), path.dirname(source), "pi's fork is next to its source too");
    assert.match(path.basename(piFile), FILE_NAME);
    const theirs = readSessionLines(piFile) as unknown as Line[];
    assert.equal(theirs[0]!.parentSession, source);
    assert.deepEqual(normalized(linesOf(ours.file), ours.pathCount), normalized(theirs, ours.pathCount));
  }

  it("a session pi wrote: /fork before each later user message, /clone", async () => {
    const pi = await startPi();
    server.script(
      { toolCall: true, tool: { id: "call-1", name: "read", arguments: JSON.stringify({ path: "notes.txt" }) } },
      { text: "Read the notes." },
    );
    await pi.prompt("read notes.txt");
    server.script({ text: "Second answer." });
    await pi.prompt("second question");
    server.script({ text: "Third answer." });
    await pi.prompt("third question");
    const state = await pi.command({ type: "get_state" });
    const source = String(state.data.sessionFile);
    await pi.close();
    const bytes = fs.readFileSync(source);
    const users = readSessionLines(source).filter((l) => l.type === "message" && l.message?.role === "user");
    assert.equal(users.length, 3);
    for (const user of users.slice(1)) {
      const ours = await forkSession(source, user.id);
      const theirs = await piCommand(source, { type: "fork", entryId: user.id });
      assert.equal(theirs.text, ours.selectedText, "the text pi gives back");
      assertSameFork(ours, theirs.file, source);
    }
    const ours = await forkSession(source, null);
    const theirs = await piCommand(source, { type: "clone" });
    assertSameFork(ours, theirs.file, source);
    assert.ok(fs.readFileSync(source).equals(bytes), "neither fork touched the source");
  });

  it("the tree fixture (branches, branch summaries, a label): /fork before its user messages, /clone", async () => {
    const text = fs
      .readFileSync(path.join(REPO_ROOT, "test/fixtures/pi-1.6.0/tree.jsonl"), "utf8")
      .replace('"cwd":"/home/user/sessgen-tree-A8orak/project"', JSON.stringify({ cwd: project }).slice(1, -1));
    const session = SessionFile.fromBytes(text);
    // the first user message has only the setup entries before it: pi writes no file for that fork
    const users = session.records.filter((r) => r.type === "message" && r.role === "user").slice(1);
    assert.ok(users.length >= 4);
    for (const user of users.slice(0, 4)) {
      const source = copyOf(text);
      const ours = await forkSession(source, user.id);
      const theirs = await piCommand(source, { type: "fork", entryId: user.id });
      assert.equal(theirs.text, ours.selectedText);
      assertSameFork(ours, theirs.file, source);
    }
    const source = copyOf(text);
    const ours = await forkSession(source, null);
    assert.ok(ours.labelCount + ours.pathCount > 5);
    assertSameFork(ours, (await piCommand(source, { type: "clone" })).file, source);
  });
});
