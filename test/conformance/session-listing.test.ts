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
import { readSessionInfo, type SessionInfo } from "../../src/core/read/sessionInfo";
import { FIRST_MESSAGE_KEEP_CHARS, NO_MESSAGES, sessionLabel } from "../../src/core/rules/sessionLabel";
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
  };
}

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
    };
    assert.deepEqual(ours(info), expected, name);
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
