/**
 * `pi-context trim` / `pi-context restore` on the trim session: the dry run (text and JSON: the
 * drafts it would append, tokens before → after), the write (exactly the planned lines, chained
 * from the leaf, one append), refusals and guards with `compact`'s exit codes (1 refused or failed
 * with the file byte-identical, 2 usage), restore, and "nothing to change".
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { TRIM_AGENT_DIR, trimSession } from "../../support/trim-session";
import { runCli } from "../../support/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-cli-trim-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

/** A fresh copy of the trim session, an hour old (the live-session guard does not refuse it). */
function fresh(): string {
  const file = path.join(tmp, `s${++n}.jsonl`);
  fs.writeFileSync(file, trimSession().jsonl());
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

const run = runCli;

const AGENT = ["--agent-dir", TRIM_AGENT_DIR];

describe("pi-context trim / restore", () => {
  it("--dry-run --json prints the drafts it would append and tokens before → after; nothing is written", async () => {
    const file = fresh();
    const before = fs.readFileSync(file);
    const { code, out } = await run(["trim", file, "r6", "a7", "--dry-run", "--json", ...AGENT]);
    assert.equal(code, 0);
    const j = JSON.parse(out);
    assert.equal(j.dryRun, true);
    assert.equal(j.leafId, "a10");
    // tool results are hidden before assistants: every prefix of the batch is pairing-safe (issue 43)
    assert.deepEqual(j.drafts, [
      { type: "context_edit", targetId: "r6", replacement: null },
      { type: "context_edit", targetId: "a7", replacement: null },
    ]);
    assert.deepEqual(
      j.edits.map((e: { targetId: string; effect: string; cascade: boolean }) => [e.targetId, e.effect, e.cascade]),
      [
        ["r6", "omit", false],
        ["a7", "omit", false],
      ],
    );
    assert.equal(j.tokensBefore, 11900);
    assert.equal(j.tokensAfter, j.pureTokensBefore - j.tokensSaved);
    assert.ok(j.tokensSaved > 6000);
    assert.equal(j.untilCompactionAfter, 12000 - j.tokensAfter);
    assert.equal(j.cache.earliestEntryId, "a7");
    assert.deepEqual(fs.readFileSync(file), before);
  });

  it("restore --dry-run of unedited entries: nothing would be written, before = after (both pi's number)", async () => {
    const file = fresh();
    const { code, out } = await run(["restore", file, "r1", "r4", "u2", "--dry-run", "--json", ...AGENT]);
    assert.equal(code, 0);
    const j = JSON.parse(out);
    assert.deepEqual(j.drafts, []);
    assert.deepEqual(j.unchanged, ["r1", "r4", "u2"]);
    assert.deepEqual([j.tokensBefore, j.baselineTokens, j.tokensAfter, j.tokensSaved], [11900, 11900, 11900, 0]);
    const text = await run(["restore", file, "r1", "r4", "u2", "--dry-run", ...AGENT]);
    assert.match(text.out, /^Nothing would be written\.$/m);
    assert.match(text.out, /^Context unchanged \(11,900 tokens\)\.$/m);
  });

  it("writes the planned edits in one append, chained from the leaf; tokens read back", async () => {
    const file = fresh();
    const size = fs.statSync(file).size;
    const { code, out, err } = await run(["trim", file, "r1", "u2", ...AGENT]);
    assert.equal(code, 0, err);
    assert.match(err, /r1 {2}replaced by a note: read: src\/parser\.ts — 1,500 → \d+ tokens/);
    assert.match(out, /^Trimmed: wrote 2 context edits after entry a10 \(\w{8} → u2, \w{8} → r1\)\.$/m);
    const lines = fs
      .readFileSync(file, "utf8")
      .slice(size)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((e) => [e.type, e.targetId, e.replacement]),
      [
        ["context_edit", "u2", null],
        [
          "context_edit",
          "r1",
          { content: [{ type: "text", text: "[pi-context: output of read src/parser.ts removed — 1,500 tokens]" }] },
        ],
      ],
    );
    assert.equal(lines[0].parentId, "a10");
    assert.equal(lines[1].parentId, lines[0].id);
    const after = analyzeLoaded(await SessionFile.open(file), { agentDir: TRIM_AGENT_DIR }).inspect.contextTokens;
    assert.match(out, new RegExp(`^Tokens: [\\d,]+ → ${after.toLocaleString("en-US")} \\(pi's estimate\\)\\.$`, "m"));
    // again: nothing to change, nothing written
    const again = await run(["trim", file, "r1", "u2", ...AGENT]);
    assert.equal(again.code, 0);
    assert.match(again.out, /^Nothing to change: 2 entries already show what was asked\. Nothing was written\.$/);
    const once = await run(["trim", file, "r1", ...AGENT]);
    assert.equal(once.code, 0);
    assert.match(once.out, /^Nothing to change: 1 entry already shows what was asked\. Nothing was written\.$/);
    // restore: the original again; says what it costs in bytes
    const restored = await run(["restore", file, "r1", "--dry-run", ...AGENT]);
    assert.equal(restored.code, 0);
    assert.match(restored.out, /Restoring writes the original content into the session file again: 6,\d{3} bytes\./);
    const r = await run(["restore", file, "r1", "--json", ...AGENT]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.written, true);
    assert.equal(j.entries[0].targetId, "r1");
    assert.deepEqual(j.entries[0].replacement.content[0].text.slice(0, 30), "export const parser line 0: xx");
  });

  it("--note replaces with the given text (an assistant keeps its tool calls)", async () => {
    const file = fresh();
    const size = fs.statSync(file).size;
    const { code, err } = await run(["trim", file, "a1", "--note", "Looked at the parser; ran the tests.", ...AGENT]);
    assert.equal(code, 0, err);
    const edit = JSON.parse(fs.readFileSync(file, "utf8").slice(size).trim());
    assert.deepEqual(edit.replacement.content, [
      { type: "text", text: "Looked at the parser; ran the tests." },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/parser.ts" } },
      { type: "toolCall", id: "c2", name: "bash", arguments: { command: "npm test" } },
    ]);
  });

  it("two trims in a row on an idle session both succeed; one right after another program wrote is refused, --force goes ahead", async () => {
    const file = fresh();
    const first = await run(["trim", file, "r6", ...AGENT]);
    assert.equal(first.code, 0, first.err);
    // written by pi-context a moment ago: our own write is no evidence (issue 40)
    const second = await run(["trim", file, "r3", ...AGENT]);
    assert.equal(second.code, 0, second.err);
    assert.doesNotMatch(second.err, /Refusing/);
    // another program (pi) writes: the same command is refused, nothing written, --force offered
    fs.utimesSync(file, new Date(), new Date());
    const bytes = fs.readFileSync(file);
    const refused = await run(["restore", file, "r6", ...AGENT]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /written \d s ago by another program/);
    assert.match(refused.err, /If you know no pi has this session open, --force goes ahead\./);
    assert.deepEqual(fs.readFileSync(file), bytes);
    const forced = await run(["restore", file, "r6", "--force", ...AGENT]);
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.out, /^Restored: wrote 1 context edit/m);
  });

  it("refuses (exit 1, file byte-identical): an unknown or not editable entry, a live session; usage errors exit 2", async () => {
    const file = fresh();
    const before = fs.readFileSync(file);
    const unknown = await run(["trim", file, "r1", "nope", ...AGENT]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /Refused: nope: Entry nope not found\. Nothing was written/);
    const system = await run(["trim", file, "s", ...AGENT]);
    assert.equal(system.code, 1);
    assert.match(system.err, /s: Entry s does not contribute editable model content\./);
    const dry = await run(["trim", file, "nope", "--dry-run", ...AGENT]);
    assert.equal(dry.code, 1, "a dry run with refusals exits 1 too");
    assert.deepEqual(fs.readFileSync(file), before);
    // written just now: the live-session guard refuses (as compact does)
    fs.utimesSync(file, new Date(), new Date());
    const live = await run(["trim", file, "r1", ...AGENT]);
    assert.equal(live.code, 1);
    assert.match(live.err, /Refusing to edit the context of this session/);
    assert.match(live.err, /--guard-seconds/);
    assert.deepEqual(fs.readFileSync(file), before);
    // a value flag followed by a flag takes no value from it: `--note --dry-run` is "--note needs
    // a value" (exit 2, nothing written), not a note "--dry-run" written for real
    for (const args of [
      ["trim", file, "r1", "--note", "--dry-run", "--guard-seconds", "0", ...AGENT],
      ["trim", file, "r1", "--guard-seconds", "--dry-run", ...AGENT],
      ["restore", file, "r1", "--agent-dir", "--dry-run"],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.out}${r.err}`);
      assert.match(r.err, /^--[a-z-]+ needs a value/, r.err);
      assert.deepEqual(fs.readFileSync(file), before);
    }
    // a value that starts with -- is given with =
    const eq = await run(["trim", file, "r1", "--note=--x--", "--guard-seconds", "0", "--dry-run", "--json", ...AGENT]);
    assert.equal(eq.code, 0, eq.err);
    assert.match(eq.out, /--x--/);
    // an empty value (`--guard-seconds "$UNSET"`) is a usage error, never 0 (the guard off)
    for (const value of ["", " "]) {
      const empty = await run(["trim", file, "r1", "--guard-seconds", value, ...AGENT]);
      assert.equal(empty.code, 2, empty.err);
      assert.deepEqual(fs.readFileSync(file), before);
    }
    assert.equal((await run(["trim", file, "r1", "--guard-seconds", "0", "--dry-run", ...AGENT])).code, 0);
    for (const args of [
      ["trim", file],
      ["trim", file, "r1", "--remove", "--note", "x"],
      ["trim", file, "r1", "--note", " "],
      ["restore", file, "r1", "--note", "x"],
      ["trim", file, "r1", "--leaf", "a1"],
    ])
      assert.equal((await run(args)).code, 2, args.join(" "));
  });
});
