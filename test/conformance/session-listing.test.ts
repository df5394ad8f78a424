/**
 * Conformance of the session listing with pi 1.6.0's own `SessionManager.listAll(dir)`
 * (`buildSessionInfo`): for every file pi lists, our `readSessionInfo` gives the same id, cwd,
 * name, parent session, message count and first message, and `sessionLabel` gives pi's `/resume`
 * label; files pi does not list are not sessions for us either. Random session trees (fast-check)
 * plus hand-made edge files (BOM — the one difference: pi's listing skips such a file —, blank and broken lines before the header, names cleared and
 * renamed, control characters, text blocks, multi-megabyte lines across reads, another key order,
 * torn lines, forks). Reading incrementally (a prefix, then the rest) equals reading fresh.
 *
 * Runs: PI_CONTEXT_LISTING_RUNS random sessions (default 200).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { appendSessionName } from "../../src/core/flows/name";
import {
  readSessionInfo,
  readSessionInfoSync,
  sessionModifiedMs,
  type SessionInfo,
} from "../../src/core/read/sessionInfo";
import { FIRST_MESSAGE_KEEP_CHARS, NO_MESSAGES, sessionLabel } from "../../src/core/rules/sessionLabel";
import { runCli } from "../support/cli";
import { buildSession, recipeArb } from "../support/random-session";
import { REPO_ROOT } from "../support/paths";

interface PiInfo {
  path: string;
  id: string;
  cwd: string;
  name: string | null;
  parentSessionPath: string | null;
  messageCount: number;
  firstMessage: string;
  /** null: pi's `modified` is an invalid date. */
  modified: number | null;
}
/** A row of pi's `/resume` list (its TUI component, threaded). */
interface PiResumeRow {
  path: string;
  depth: number;
  modified: number | null;
  label: string;
}
interface Oracle {
  request(request: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PI_CONTEXT_LISTING_RUNS ?? 200);
let oracle: Oracle;
let tmp: string;

before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-listing-"));
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const header = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-12-01T08:00:00.000Z", cwd: "/w/app", ...extra });
let n = 0;
const entry = (type: string, fields: Record<string, unknown>) =>
  JSON.stringify({ type, id: `e${++n}`, parentId: null, timestamp: "2026-12-01T08:00:01.000Z", ...fields });
const user = (content: unknown) => entry("message", { message: { role: "user", content, timestamp: 1764576001000 } });
const assistant = (text: string) =>
  entry("message", {
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      api: "x",
      provider: "p",
      model: "m",
      usage: {},
      stopReason: "stop",
      timestamp: 1764576002000,
    },
  });

/** Hand-made files: name → content. */
function edgeFiles(): Record<string, string> {
  const big = "x".repeat(3 * 1024 * 1024 + 17);
  return {
    "header-only.jsonl": `${header("h1")}\n`,
    "bom.jsonl": `\uFEFF${header("h2")}\n${user("with a BOM")}\n`,
    "junk-before-header.jsonl": `\n   \nnot json\n${header("h3")}\n${user("after junk")}\n`,
    "not-a-session.jsonl": `${entry("message", { message: { role: "user", content: "x" } })}\n${header("h4")}\n`,
    "names.jsonl": [
      header("h5"),
      user("first question"),
      entry("session_info", { name: "  Old name  " }),
      assistant("a"),
      entry("session_info", { name: "" }),
      entry("session_info", { name: "New\tname\u0007 with controls" }),
      "",
    ].join("\n"),
    "cleared.jsonl": [
      header("h6"),
      user("q"),
      entry("session_info", { name: "gone" }),
      entry("session_info", { name: "   " }),
      "",
    ].join("\n"),
    "blocks.jsonl": [
      header("h7"),
      user([{ type: "image", data: "AAAA", mimeType: "image/png" }]),
      user([{ type: "text", text: "" }]),
      user([
        { type: "text", text: "part one" },
        { type: "image", data: "B", mimeType: "image/png" },
        { type: "text", text: "part\ntwo" },
      ]),
      "",
    ].join("\n"),
    "big-first-message.jsonl": [
      header("h8"),
      assistant("before"),
      user(`${big} tail`),
      assistant(big),
      user("second"),
      "",
    ].join("\n"),
    "key-order.jsonl": [
      header("h9"),
      JSON.stringify({
        id: "k1",
        parentId: null,
        timestamp: "t",
        type: "message",
        message: { content: "reordered keys", role: "user" },
      }),
      JSON.stringify({ name: "reordered name", type: "session_info", id: "k2", parentId: "k1", timestamp: "t" }),
      "",
    ].join("\n"),
    "torn.jsonl": [header("h10"), user("q"), assistant("a").slice(0, 40), assistant("b"), ""].join("\n"),
    "fork.jsonl": [header("h11", { parentSession: "/w/sessions/parent.jsonl" }), user("forked")].join("\n") + "\n",
    "crlf.jsonl": `${header("h12")}\r\n${user("crlf line")}\r\n${entry("session_info", { name: "crlf name" })}\r\n`,
    "no-user.jsonl": [
      header("h13"),
      assistant("only the assistant"),
      entry("model_change", { provider: "p", modelId: "m" }),
      "",
    ].join("\n"),
    "not-an-object-first.jsonl": `5\n${header("h14")}\n`,
  };
}

/** Our listing facts that pi's `SessionInfo` also has, in pi's terms. */
function ours(info: SessionInfo) {
  return {
    id: info.id,
    cwd: info.cwd ?? "",
    name: info.name ?? null,
    parentSessionPath: info.parentSession ?? null,
    messageCount: info.messageCount,
    firstMessage: info.firstMessage ?? NO_MESSAGES,
    modified: nullIfNaN(sessionModifiedMs(info)),
  };
}

const nullIfNaN = (n: number): number | null => (Number.isNaN(n) ? null : n);

async function compareDir(dir: string): Promise<number> {
  const pi = (await oracle.request({ type: "sessionInfos", dir })) as PiInfo[];
  const byPath = new Map(pi.map((p) => [p.path, p]));
  let compared = 0;
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    const info = await readSessionInfo(file);
    const theirs = byPath.get(file);
    if (!theirs) {
      // one deliberate difference: a UTF-8 BOM before the header (JSON.parse rejects the line, so pi's
      // listing skips the file; our reader, like SessionFile, accepts it and warns when the file is opened)
      if (name === "bom.jsonl") assert.equal(info.state, "session");
      else assert.notEqual(info.state, "session", `${name}: pi does not list it, we call it a session`);
      continue;
    }
    assert.equal(info.state, "session", `${name}: pi lists it`);
    const expected = {
      id: theirs.id,
      cwd: theirs.cwd,
      name: theirs.name,
      parentSessionPath: theirs.parentSessionPath,
      messageCount: theirs.messageCount,
      firstMessage: theirs.firstMessage.slice(0, FIRST_MESSAGE_KEEP_CHARS),
      modified: theirs.modified,
    };
    assert.deepEqual(ours(info), expected, name);
    assert.deepEqual(readSessionInfoSync(file), info, `${name}: the synchronous read = the asynchronous one`);
    // the label: pi's rule on pi's own SessionInfo
    const piText = (theirs.name ?? theirs.firstMessage).replace(/[\x00-\x1f\x7f]/g, " ").trim();
    const label = sessionLabel(info);
    assert.equal(label, sessionLabel({ name: theirs.name ?? undefined, firstMessage: theirs.firstMessage }), name);
    // pi's text where pi blanks nothing we keep; beyond pi, controls other than tab and line breaks
    // stay in the label, for each surface to show as \uXXXX (docs/security.md)
    const raw = theirs.name ?? theirs.firstMessage;
    const ourText = raw.replace(/[\t\n\v\f\r\x85\u2028\u2029]/g, " ").trim();
    if (ourText.length <= 80) assert.equal(label, ourText || NO_MESSAGES, name);
    if (piText.length <= 80 && !/[\x00-\x08\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(raw))
      assert.equal(label, piText || NO_MESSAGES, name);
    // incremental: a prefix first (cut at a random line), then the whole file
    const bytes = fs.readFileSync(file);
    const cut = bytes.lastIndexOf(0x0a, Math.floor(bytes.length / 2));
    if (cut > 0) {
      const partial = path.join(tmp, "partial.jsonl");
      fs.writeFileSync(partial, bytes.subarray(0, cut + 1));
      const first = await readSessionInfo(partial);
      fs.appendFileSync(partial, bytes.subarray(cut + 1));
      const again = await readSessionInfo(partial, first);
      const fresh = await readSessionInfo(partial);
      assert.deepEqual({ ...again, mtimeMs: 0 }, { ...fresh, mtimeMs: 0 }, `${name}: incremental = fresh`);
      fs.rmSync(partial);
    }
    compared++;
  }
  return compared;
}

describe("session listing = pi's SessionManager.listAll", () => {
  it("hand-made edge files", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "edge-"));
    for (const [name, content] of Object.entries(edgeFiles())) fs.writeFileSync(path.join(dir, name), content);
    const compared = await compareDir(dir);
    assert.equal(compared, Object.keys(edgeFiles()).length - 3); // two are not sessions, pi skips the BOM file
  });

  it("the shared pi 1.6.0 fixtures", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "fixtures-"));
    const from = path.join(REPO_ROOT, "test", "fixtures", "pi-1.6.0");
    for (const name of fs.readdirSync(from))
      if (name.endsWith(".jsonl")) fs.copyFileSync(path.join(from, name), path.join(dir, name));
    assert.ok((await compareDir(dir)) >= 4);
  });

  it(`${RUNS} random session trees`, async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "random-"));
    const samples = fc.sample(recipeArb, { numRuns: RUNS, seed: 15 });
    samples.forEach((recipe, i) => fs.writeFileSync(path.join(dir, `r${i}.jsonl`), buildSession(recipe).jsonl));
    assert.equal(await compareDir(dir), RUNS);
  });

  it("Pi Context: Name Session's session_info entry is the name pi lists (pi's /name normalisation), renamed again", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "named-"));
    const file = path.join(dir, "tree.jsonl");
    fs.copyFileSync(path.join(REPO_ROOT, "test", "fixtures", "pi-1.6.0", "tree.jsonl"), file);
    const before = fs.readFileSync(file);
    const r = await appendSessionName(file, "  My\r\nSession  ", { guardSeconds: 0, procRoot: null });
    assert.equal(r.entry.name, "My Session");
    assert.ok(fs.readFileSync(file).subarray(0, before.length).equals(before), "the file only grew");
    let [pi] = (await oracle.request({ type: "sessionInfos", dir })) as PiInfo[];
    assert.equal(pi!.name, "My Session");
    assert.equal(sessionLabel(await readSessionInfo(file)), "My Session");
    await appendSessionName(file, "Renamed", { guardSeconds: 0, procRoot: null });
    [pi] = (await oracle.request({ type: "sessionInfos", dir })) as PiInfo[];
    assert.equal(pi!.name, "Renamed");
    await assert.rejects(
      appendSessionName(file, " \n ", { guardSeconds: 0, procRoot: null }),
      /Session name cannot be empty/,
    );
    await compareDir(dir);
  });
});

/** One session file: header, then `lines` (already JSON), written with `mtimeMs` as its mtime. */
function writeTimed(file: string, headerFields: Record<string, unknown>, lines: string[], mtimeMs: number): void {
  const head = JSON.stringify({
    type: "session",
    version: 3,
    id: path.basename(file, ".jsonl"),
    cwd: "/w/app",
    ...headerFields,
  });
  fs.writeFileSync(file, [head, ...lines].join("\n") + "\n");
  const when = new Date(mtimeMs);
  fs.utimesSync(file, when, when);
}

const T = Date.parse("2026-12-01T08:00:00.000Z");
let m = 0;
/** A message entry in pi's layout (`type`, `id`, `parentId`, `timestamp`, `message` last). */
const msg = (message: Record<string, unknown>, entryTime = T): string =>
  JSON.stringify({
    type: "message",
    id: `m${++m}`,
    parentId: null,
    timestamp: new Date(entryTime).toISOString(),
    message,
  });
const userAt = (at: number, text = "q"): string => msg({ role: "user", content: text, timestamp: at });
const assistantAt = (
  at: number,
  extra: Record<string, unknown> = {},
  content: unknown[] = [{ type: "text", text: "a" }],
) =>
  msg({
    role: "assistant",
    content,
    api: "x",
    provider: "p",
    model: "m",
    usage: {},
    stopReason: "stop",
    timestamp: at,
    ...extra,
  });

/**
 * Sessions whose file times, header times and message times disagree, in one folder of `agentDir`
 * for the cwd `/w/app`: what pi's `/resume` order is made of (see `resumeOrder`).
 */
function orderFiles(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const at = (name: string) => path.join(dir, `${name}.jsonl`);
  const big = "y".repeat(2.5 * 1024 * 1024);
  // activity after the file's mtime (a copy, a sync)
  writeTimed(
    at("a-copied"),
    { timestamp: new Date(T).toISOString() },
    [userAt(T + 100_000), assistantAt(T + 101_000)],
    T + 10_000,
  );
  // an append that is no message (a label, our own edits) made the file newer
  writeTimed(
    at("b-labelled"),
    { timestamp: new Date(T).toISOString() },
    [
      userAt(T + 50_000),
      JSON.stringify({
        type: "label",
        id: "l1",
        parentId: null,
        timestamp: new Date(T + 900_000).toISOString(),
        targetId: "m1",
        label: "x",
      }),
    ],
    T + 900_000,
  );
  // no messages: the header time
  writeTimed(at("c-empty"), { timestamp: new Date(T + 70_000).toISOString() }, [], T + 1_000_000);
  // no header time either: the mtime
  writeTimed(at("d-no-time"), {}, [], T + 60_000);
  // a message time that is no number: the entry's time
  writeTimed(
    at("e-string-time"),
    { timestamp: new Date(T).toISOString() },
    [msg({ role: "user", content: "q", timestamp: "soon" }, T + 80_000)],
    T,
  );
  // a tool call's argument named timestamp is not the message's
  writeTimed(
    at("f-tool-argument"),
    { timestamp: new Date(T).toISOString() },
    [
      userAt(T + 1000),
      assistantAt(T + 30_000, {}, [
        { type: "toolCall", id: "c1", name: "t", arguments: { timestamp: T + 999_999_999 } },
      ]),
    ],
    T,
  );
  // the same time as a-copied: the file name decides (descending)
  writeTimed(at("g-tie"), { timestamp: new Date(T).toISOString() }, [userAt(T + 101_000)], T);
  // another key order: parsed
  writeTimed(
    at("h-key-order"),
    { timestamp: new Date(T).toISOString() },
    [
      userAt(T + 1000),
      JSON.stringify({
        message: { timestamp: T + 90_000, content: "z", role: "assistant" },
        type: "message",
        id: "h1",
        parentId: null,
        timestamp: "t",
      }),
    ],
    T,
  );
  // a negative message time only: pi's max starts at 0, so the header time
  writeTimed(at("i-negative"), { timestamp: new Date(T + 20_000).toISOString() }, [userAt(-5)], T + 2_000_000);
  // a user message over two 1 MB reads, its time at its end
  writeTimed(
    at("j-spanning"),
    { timestamp: new Date(T).toISOString() },
    [userAt(T + 1000, "first"), userAt(T + 40_000, big)],
    T,
  );
  // a spanning assistant line whose end after the time is longer than what is kept of it: read again
  writeTimed(
    at("k-long-tail"),
    { timestamp: new Date(T).toISOString() },
    [userAt(T + 1000), assistantAt(T + 45_000, { errorMessage: "e".repeat(10_000) }, [{ type: "text", text: big }])],
    T,
  );
  // forks: l under a-copied (older than it), m under b-labelled (newest of all: b's family first)
  writeTimed(
    at("l-fork-of-a"),
    { timestamp: new Date(T).toISOString(), parentSession: at("a-copied") },
    [userAt(T + 5000)],
    T + 3_000_000,
  );
  writeTimed(
    at("m-fork-of-b"),
    { timestamp: new Date(T).toISOString(), parentSession: at("b-labelled") },
    [userAt(T + 2_000_000)],
    T,
  );
  // other roles carry no activity
  writeTimed(
    at("n-tool-results"),
    { timestamp: new Date(T).toISOString() },
    [
      userAt(T + 3000),
      msg({
        role: "toolResult",
        toolCallId: "c",
        toolName: "t",
        content: [],
        isError: false,
        timestamp: T + 5_000_000,
      }),
    ],
    T,
  );
  // a number with an exponent, and CRLF line ends
  fs.writeFileSync(
    at("o-exponent"),
    `${JSON.stringify({ type: "session", version: 3, id: "o", cwd: "/w/app", timestamp: new Date(T).toISOString() })}\r\n` +
      `{"type":"message","id":"o1","parentId":null,"timestamp":"t","message":{"role":"user","content":"q","timestamp":1.7649e12}}\r\n`,
  );
  // a key after `message`: not pi's layout, parsed
  writeTimed(
    at("p-key-after"),
    { timestamp: new Date(T).toISOString() },
    [`${userAt(T + 1000).slice(0, -1)},"extra":{"timestamp":${T + 7_000_000}}}`],
    T,
  );
}

/** `pi-context sessions --json` rows. */
async function cliRows(
  args: string[],
): Promise<{ file: string; depth: number; label: string; modified: string | null }[]> {
  const run = await runCli(["sessions", "--json", ...args]);
  assert.equal(run.code, 0, run.err);
  return JSON.parse(run.out) as { file: string; depth: number; label: string; modified: string | null }[];
}

/** pi's rows in our terms: the label by pi's display rule, the time as `--json` prints it. */
function piRows(rows: PiResumeRow[]) {
  return rows.map((r) => ({
    file: r.path,
    depth: r.depth,
    label: sessionLabel({ firstMessage: r.label }),
    modified: r.modified === null ? null : new Date(r.modified).toISOString(),
  }));
}

describe("pi-context sessions = pi's /resume list (SessionManager.list, threaded)", () => {
  it("file, header and message times that disagree, ties, forks, lines over two reads", async () => {
    const agentDir = fs.mkdtempSync(path.join(tmp, "order-"));
    const dir = path.join(agentDir, "sessions", "--w-app--");
    orderFiles(dir);
    const pi = (await oracle.request({ type: "resumeList", cwd: "/w/app", dir })) as PiResumeRow[];
    assert.equal(pi.length, 16);
    const ours = await cliRows(["--cwd", "/w/app", "--agent-dir", agentDir]);
    assert.deepEqual(
      ours.map(({ file, depth, label, modified }) => ({ file, depth, label, modified })),
      piRows(pi),
    );
    // what makes this test: pi's order is not the files' mtime order
    const byMtime = [...ours].sort((a, b) => fs.statSync(b.file).mtimeMs - fs.statSync(a.file).mtimeMs);
    assert.notDeepEqual(
      byMtime.map((r) => r.file),
      ours.map((r) => r.file),
    );
    assert.equal(path.basename(ours[0]!.file), "b-labelled.jsonl");
    assert.equal(path.basename(ours[1]!.file), "m-fork-of-b.jsonl");
    assert.equal(ours[1]!.depth, 1);
  });

  it("random session trees with random file times and forks", async () => {
    const agentDir = fs.mkdtempSync(path.join(tmp, "random-order-"));
    const dir = path.join(agentDir, "sessions", "--w-app--");
    fs.mkdirSync(dir, { recursive: true });
    const samples = fc.sample(fc.tuple(recipeArb, fc.nat(10_000_000), fc.nat(20)), { numRuns: 60, seed: 44 });
    samples.forEach(([recipe, mtimeOffset, forkOf], i) => {
      const file = path.join(dir, `r${String(i).padStart(3, "0")}.jsonl`);
      let jsonl = buildSession(recipe).jsonl.replace('"cwd":"/tmp/rand"', '"cwd":"/w/app"');
      if (forkOf < i && i % 3 === 0)
        jsonl = jsonl.replace(
          '"cwd":"/w/app"',
          `"cwd":"/w/app","parentSession":${JSON.stringify(path.join(dir, `r${String(forkOf).padStart(3, "0")}.jsonl`))}`,
        );
      fs.writeFileSync(file, jsonl);
      const when = new Date(T + mtimeOffset);
      fs.utimesSync(file, when, when);
    });
    const pi = (await oracle.request({ type: "resumeList", cwd: "/w/app", dir })) as PiResumeRow[];
    const ours = await cliRows(["--cwd", "/w/app", "--agent-dir", agentDir]);
    assert.equal(ours.length, 60);
    assert.deepEqual(
      ours.map(({ file, depth, label, modified }) => ({ file, depth, label, modified })),
      piRows(pi),
    );
  });

  it("--all = pi's listAll of every folder (mtime, then name, under equal times)", async () => {
    const agentDir = fs.mkdtempSync(path.join(tmp, "all-order-"));
    orderFiles(path.join(agentDir, "sessions", "--w-app--"));
    const other = path.join(agentDir, "sessions", "--w-other--");
    fs.mkdirSync(other, { recursive: true });
    // equal message times in two folders: pi's listAll starts from mtime order
    writeTimed(
      path.join(other, "x-older-file.jsonl"),
      { cwd: "/w/other", timestamp: new Date(T).toISOString() },
      [userAt(T + 101_000)],
      T + 1,
    );
    writeTimed(
      path.join(other, "y-newer-file.jsonl"),
      { cwd: "/w/other", timestamp: new Date(T).toISOString() },
      [userAt(T + 101_000)],
      T + 2,
    );
    const pi = (await oracle.request({
      type: "resumeList",
      cwd: "/w/app",
      dir: other,
      scope: "all",
      agentDir,
    })) as PiResumeRow[];
    assert.equal(pi.length, 18);
    const ours = await cliRows(["--all", "--agent-dir", agentDir]);
    assert.deepEqual(
      ours.map(({ file, depth, label, modified }) => ({ file, depth, label, modified })),
      piRows(pi),
    );
  });
});
