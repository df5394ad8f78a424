/**
 * The texts of the session tree's rows (src/viewModel/treeText*.ts): pi's `/tree` lines on pi's tree
 * fixture and a real session (errors, models where they change, markdown removed), record
 * descriptions, and the text helpers (plain text, provider errors, tool calls, summary headlines,
 * entries in words).
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import { buildRecord, type EntryRecord } from "../../../src/core/read/entries";
import { SessionFile } from "../../../src/core/read/session";
import { SessionTreeModel } from "../../../src/core/treeModel/model";
import { plural } from "../../../src/shared/format";
import { describeRecord, entryWords, entryWordsOf, nodeDisplay } from "../../../src/viewModel/treeText";
import { plainText, readableError, shortModelName, summaryHeadline } from "../../../src/viewModel/treeTextLines";
import { formatToolCall } from "../../../src/viewModel/treeTextTools";
import { summarizedBy } from "../../../src/viewModel/treeTooltip";
import { FIXTURES } from "../../support/paths";
import { SessionBuilder } from "../../support/session-builder";

const TREE = path.join(FIXTURES, "pi-1.6.0/tree.jsonl");
const GETSPECSTORY = path.join(FIXTURES, "real-sessions/getspecstory-real_world.jsonl");

describe("tree texts on pi's tree fixture (tree.jsonl)", () => {
  it("texts: user first line, assistant tool calls + model, tool result with its call (read from the body), summaries", async () => {
    const session = await SessionFile.open(TREE);
    const model = new SessionTreeModel(session);
    assert.equal(nodeDisplay(model, "c8a901f3", session).text, "[task:t1] do t1");
    const a = nodeDisplay(model, "c707baf6", session);
    assert.equal(a.text, "→ read");
    assert.equal(a.detail, "scripted-big");
    assert.equal(nodeDisplay(model, "a03949d4", session).detail, "", "the model is named only where it changes");
    assert.equal(nodeDisplay(model, "a03949d4", session).model, "scripted/scripted-big");
    const tr = nodeDisplay(model, "524c617f", session);
    assert.equal(tr.kind, "toolResult");
    assert.match(tr.text, /^read: src\/alpha\.ts/);
    assert.match(tr.detail, /alpha/);
    const bs = nodeDisplay(model, "7daca6b9", session);
    assert.equal(bs.hasSummary, true);
    assert.match(bs.text, /^Branch summary: /);
    assert.doesNotMatch(bs.text, /explored a different conversation branch/);
    assert.equal(nodeDisplay(model, "2ff39b9e", session).text, "Model: scripted/scripted-big");
    assert.equal(nodeDisplay(model, "8055bd91", session).kind, "thinkingLevel");
    assert.equal(nodeDisplay(model, "a6f9c23c", session).text, "Label: branch-A");
  });
});

describe("tree texts: rows", () => {
  it("a failed assistant message shows its error (real session with an HTTP 400), as pi's /tree does", async () => {
    const session = await SessionFile.open(GETSPECSTORY);
    const model = new SessionTreeModel(session);
    const d = nodeDisplay(model, "59c6b470", session);
    assert.equal(d.error, true);
    assert.equal(d.errorMessage, session.byId.get("59c6b470")!.errorMessage);
    // the status and the JSON body's message, readable in a narrow side bar
    assert.match(d.text, /^Error 400: max_tokens must be greater than thinking\.budget_tokens\. Please consult/);
    assert.equal(d.errorInText, true);
    assert.match(
      d.errorMessage!,
      /^400 \{"error":\{"type":"invalid_request_error","message":"`max_tokens`/,
      "the raw error for the tooltip",
    );
    assert.doesNotMatch(d.text, /\(error\)/);
    // the model is named where it changes (glm → kimi), not on every assistant row
    assert.deepEqual(
      [nodeDisplay(model, "a38e1b57", session).text, nodeDisplay(model, "a38e1b57", session).detail],
      ["→ read ×2", "glm-5p2-fast"],
    );
    assert.equal(nodeDisplay(model, "a38e1b57", session).model, "fireworks/accounts/fireworks/routers/glm-5p2-fast");
    assert.equal(nodeDisplay(model, "4841084c", session).detail, "", "same model as the previous answer");
    assert.equal(d.detail, "kimi-k2p6-fast", "the model changed here");
    // markdown markers are gone from the row text
    assert.equal(
      nodeDisplay(model, "4841084c", session).text.slice(0, 42),
      "This project — pi-format-demo — is a small",
    );
  });

  it("an error next to text goes to the detail; aborted and bare errors; tool-call-only rows", () => {
    const rec = (message: object) => {
      const r = buildRecord(
        {
          type: "message",
          id: "x",
          parentId: null,
          timestamp: "t",
          message: { role: "assistant", provider: "p", model: "m", ...message },
        },
        { index: 0, line: 2, offset: 0, byteLength: 1 },
      );
      assert.ok(!("code" in r));
      return describeRecord(r as EntryRecord);
    };
    const withText = rec({
      content: [{ type: "text", text: "**Partial** answer" }],
      stopReason: "error",
      errorMessage: "overloaded_error\nretry later",
    });
    assert.deepEqual(
      [withText.text, withText.detail, withText.errorMessage, withText.model],
      ["Partial answer", "error: overloaded_error", "overloaded_error", "p/m"],
    );
    assert.deepEqual(
      [
        rec({ content: [], stopReason: "aborted", errorMessage: "Request was aborted" }).text,
        rec({ content: [], stopReason: "error" }).text,
      ],
      ["(aborted)", "(error)"],
    );
    const tools = rec({ content: [{ type: "toolCall", id: "c", name: "read", arguments: {} }], stopReason: "toolUse" });
    assert.deepEqual([tools.text, tools.detail, tools.error], ["→ read", "", false]);
  });

  it("helpers: plain text from markdown, plurals, short model names, entries in words", () => {
    assert.equal(plainText("This project — **`pi-format-demo`** — is"), "This project — pi-format-demo — is");
    assert.equal(plainText("## Goal"), "Goal");
    assert.equal(plainText("- [x] done *it* now"), "done it now");
    assert.equal(plainText("snake_case_name and 2 * 3 * 4 and a*b*c"), "snake_case_name and 2 * 3 * 4 and a*b*c");
    assert.equal(plainText("see [docs](http://x) and `a*b*` is _em_ ~~x~~"), "see docs and a*b* is em x");
    // a `[` before a link is the user's text, not the link's (trial 6: "\u001b[31mRED … [x](…)" lost both)
    assert.equal(
      plainText("\u001b[31mRED\u001b[0m then [x](command:workbench.action.quit) and a[0] ![img](u) **b**"),
      "\u001b[31mRED\u001b[0m then x and a[0] img b",
    );
    assert.deepEqual(
      [plural(1, "entry"), plural(2, "entry"), plural(1234, "message"), plural(0, "key")],
      ["1 entry", "2 entries", "1,234 messages", "0 keys"],
    );
    assert.equal(shortModelName("accounts/fireworks/routers/kimi-k2p6-fast"), "kimi-k2p6-fast");
    assert.equal(shortModelName("gpt-4o"), "gpt-4o");
    assert.equal(
      readableError('429 {"type":"error","error":{"type":"rate_limit_error","message":"Too many \\"requests\\""}}'),
      ' 429: Too many "requests"',
    );
    assert.equal(
      readableError('400 {"error":{"message":"cut in the middle of an esc\\'),
      " 400: cut in the middle of an esc",
    );
    assert.equal(readableError("fetch failed"), ": fetch failed");
    const user = buildRecord(
      {
        type: "message",
        id: "u",
        parentId: null,
        timestamp: "t",
        message: {
          role: "user",
          content: "Read README.md and NOTES.md and tell me what this project is about\nplease",
        },
      },
      { index: 0, line: 2, offset: 0, byteLength: 1 },
    );
    assert.ok(!("code" in user));
    assert.equal(entryWords(user as EntryRecord), "“Read README.md and NOTES.md and tell me what th…”");
    assert.equal(entryWords(undefined), "the start of the session");
    // by id: the first index that has it (the session as shown, then a plan's read); an entry none
    // has read yet keeps its id; null is the start
    const shown = { byId: new Map<string, EntryRecord>() };
    const planned = { byId: new Map([["u", user as EntryRecord]]) };
    assert.equal(entryWordsOf("u", undefined, shown, planned), "“Read README.md and NOTES.md and tell me what th…”");
    assert.equal(entryWordsOf("c097b553", shown, planned), "c097b553");
    assert.equal(entryWordsOf(null), "the start of the session");
  });
});

describe("tree tooltips: which compaction stands for an entry", () => {
  it("summarizedBy: entries before the latest compaction's firstKeptEntryId, not the kept ones or the summary", () => {
    const b = new SessionBuilder({ id: "s", cwd: "/w" })
      .user("u1", "one")
      .user("u2", "two")
      .compaction("c1", "u2", "s1")
      .user("u3", "three")
      .user("u4", "four")
      .compaction("c2", "u4", "s2")
      .user("u5", "five");
    const session = SessionFile.fromBytes(b.jsonl());
    const model = new SessionTreeModel(session, { filter: "all" });
    assert.deepEqual(
      ["u1", "u2", "c1", "u3", "u4", "c2", "u5"].map((id) => summarizedBy(model, id) ?? "-"),
      ["c2", "c2", "c2", "c2", "-", "-", "-"],
    );
  });
});

describe("tree texts: helpers", () => {
  it("helpers: pi's tool call texts and summary headlines", () => {
    assert.equal(formatToolCall("read", { path: "src/a.ts", offset: 10, limit: 5 }), "read: src/a.ts:10-14");
    assert.equal(formatToolCall("bash", { command: "npm test\n" }), "bash: npm test");
    assert.equal(formatToolCall("grep", { pattern: "x" }), "grep: /x/ in .");
    assert.equal(formatToolCall("mcp", { a: 1 }), 'mcp: {"a":1}');
    assert.equal(
      summaryHeadline(
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n- Build the LRU cache\n",
      ),
      "Build the LRU cache",
    );
    assert.equal(summaryHeadline("## Goal\n1. [x] done it"), "done it");
    const r = buildRecord(
      {
        type: "compaction",
        id: "c",
        parentId: "p",
        timestamp: "t",
        summary: "## Goal\nx",
        firstKeptEntryId: "p",
        tokensBefore: 45123,
      },
      { index: 0, line: 2, offset: 0, byteLength: 1 },
    );
    assert.ok(!("code" in r));
    assert.equal(describeRecord(r as EntryRecord).text, "Compaction: 45k tokens → summary");
  });
});
