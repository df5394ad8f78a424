/**
 * The compaction review's "what the new summary lost" document (`lostMarkdown`): items grouped by
 * kind with their entry and count; session text is shown, never acted on (control characters and
 * bidi overrides as their visible escape inside the item's code span, a backtick cannot close it,
 * Markdown in an entry id stays text).
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { LostReport } from "../../../src/core/rules/lostItems";
import { lostMarkdown } from "../../../src/viewModel/lostItems";

function report(items: LostReport["items"], truncated = false): LostReport {
  const totals = {
    path: { found: 0, lost: 0 },
    command: { found: 0, lost: 0 },
    identifier: { found: 0, lost: 0 },
    number: { found: 0, lost: 0 },
  };
  for (const i of items) {
    totals[i.kind].found++;
    totals[i.kind].lost++;
  }
  return { items, totals, summarizedEntries: 3, truncated };
}

describe("lostMarkdown", () => {
  it("groups the items by kind, each with its entry and how often it appeared", () => {
    const md = lostMarkdown(
      report([
        { kind: "command", text: "npm test", entryId: "e2", count: 1 },
        { kind: "path", text: "src/a.ts", entryId: "e1", count: 3 },
        { kind: "path", text: "src/b.ts", entryId: "e4", count: 1 },
      ]),
      "What the new summary lost",
    );
    const lines = md.split("\n");
    assert.equal(lines[0], "# What the new summary lost");
    const paths = lines.indexOf("## File paths (2)");
    const commands = lines.indexOf("## Commands (1)");
    assert.ok(paths > 0 && commands > paths, md);
    assert.equal(lines[paths + 2], "- `src/a.ts` — entry e1, 3×");
    assert.equal(lines[paths + 3], "- `src/b.ts` — entry e4");
    assert.equal(lines[commands + 2], "- `npm test` — entry e2");
    assert.ok(!md.includes("## Identifiers"), "no heading for a kind with no items");
    assert.ok(!md.includes("too long to scan"));
    assert.match(lostMarkdown(report([], true), "t"), /_The summarized range was too long to scan completely\._/);
  });

  it("shows session text as text: control characters and bidi overrides escaped, no backtick, ids escaped", () => {
    const md = lostMarkdown(
      report([{ kind: "command", text: "rm -rf `x`\u001b[2J\u202egnp.exe\u0007", entryId: "e*1*[x](y)", count: 2 }]),
      "t",
    );
    const line = md.split("\n").find((l) => l.startsWith("- "))!;
    assert.ok(!/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(line), JSON.stringify(line));
    const code = /^- `([^`]*)` — entry (.*), 2×$/.exec(line);
    assert.ok(code, line);
    assert.match(code[1]!, /^rm -rf 'x'.*2J.*gnp\.exe/);
    assert.notEqual(code[2], "e*1*[x](y)", "the id is Markdown-escaped");
    assert.ok(code[2]!.includes("\\*") && code[2]!.includes("\\["), code[2]);
  });
});
