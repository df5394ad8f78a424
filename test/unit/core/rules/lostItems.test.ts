/**
 * What a compaction lost, on every compaction of the shared pi fixtures, against items computed
 * here independently: the raw JSON lines, the path walked by `parentId`, pi's context rule (the
 * previous compaction's kept part), null context edits dropped, tool-call `path`s and `command`s,
 * `!` commands, numbers from a plain split of user/assistant text — and what survives taken from
 * the summary text and the kept messages' raw JSON.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import { describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { compactionLostItems, textItems } from "../../../../src/core/rules/lostItems";
import { FIXTURES } from "../../../support/paths";

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function rawEntries(file: string): Raw[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Raw)
    .filter((e) => e.type !== "session");
}

/** Independent: the summarized range, the kept part and the previous summary of compaction `c`. */
function rangeOf(entries: Raw[], c: Raw): { summarized: Raw[]; kept: Raw[]; previous?: string } {
  const byId = new Map(entries.map((e) => [e.id as string, e]));
  const path: Raw[] = [];
  for (let e = byId.get(c.parentId); e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);
  const prevIndex = path.map((e) => e.type).lastIndexOf("compaction");
  let context = path;
  let previous: string | undefined;
  if (prevIndex >= 0) {
    const prev = path[prevIndex]!;
    previous = prev.summary;
    const keptFrom = path.findIndex((e) => e.id === prev.firstKeptEntryId);
    context = [...path.slice(keptFrom, prevIndex), ...path.slice(prevIndex + 1)];
  }
  const omitted = new Set(
    context.filter((e) => e.type === "context_edit" && e.replacement === null).map((e) => e.targetId),
  );
  context = context.filter((e) => !omitted.has(e.id));
  const cut = context.findIndex((e) => e.id === c.firstKeptEntryId);
  return { summarized: context.slice(0, cut), kept: context.slice(cut), ...(previous ? { previous } : {}) };
}

/** Independent number tokens: split on anything but word characters, dots and `%`. */
function numbersOf(text: string): string[] {
  return text
    .split(/[^\w.%]+/)
    .map((t) => t.replace(/\.+$/, ""))
    .filter((t) => /^\d+(\.\d+)*(%|[a-zA-Z]{1,2})?$/.test(t) && t.replace(/[^\d]/g, "").length >= 2);
}

function texts(e: Raw): string[] {
  const m = e.message;
  if (e.type !== "message" || !m) return [];
  if (m.role !== "user" && m.role !== "assistant") return [];
  if (typeof m.content === "string") return [m.content];
  return (m.content as Raw[]).filter((b) => b.type === "text").map((b) => b.text as string);
}

function expectedLost(entries: Raw[], c: Raw) {
  const { summarized, kept, previous } = rangeOf(entries, c);
  const paths = new Set<string>();
  const commands = new Set<string>();
  const numbers = new Set<string>();
  for (const e of summarized) {
    if (e.type !== "message") continue;
    const m = e.message;
    if (m.role === "assistant")
      for (const b of m.content as Raw[])
        if (b.type === "toolCall") {
          if (typeof b.arguments?.path === "string") paths.add(b.arguments.path);
          if (typeof b.arguments?.command === "string") commands.add(b.arguments.command.replace(/\s+/g, " ").trim());
        }
    if (m.role === "bashExecution") commands.add(String(m.command).replace(/\s+/g, " ").trim());
    for (const t of texts(e)) for (const n of numbersOf(t)) numbers.add(n);
  }
  if (previous) for (const n of numbersOf(previous)) numbers.add(n);
  const survived = [c.summary as string, ...kept.map((e) => JSON.stringify(e.message ?? ""))].join("\n");
  const survivedNumbers = new Set(
    [c.summary as string, ...kept.flatMap((e) => [...texts(e), JSON.stringify(e.message?.content ?? "")])]
      .flatMap(numbersOf)
      .map((n) => n.match(/^\d+(\.\d+)*/)![0]),
  );
  const decoded = survived.replace(/\\n/g, "\n").replace(/\\"/g, '"');
  return {
    paths: [...paths].filter((p) => !decoded.includes(p)).sort(),
    commands: [...commands].filter((x) => !decoded.replace(/\s+/g, " ").includes(x)).sort(),
    numbers: [...numbers].filter((n) => !survivedNumbers.has(n.match(/^\d+(\.\d+)*/)![0])).sort(),
    toolPaths: paths,
  };
}

describe("what a compaction lost", () => {
  for (const name of ["long", "split", "overflow"]) {
    it(`${name}.jsonl: every compaction, against an independent count`, async () => {
      const file = `${FIXTURES}/pi-1.6.0/${name}.jsonl`;
      const entries = rawEntries(file);
      const session = await SessionFile.open(file);
      const compactions = entries.filter((e) => e.type === "compaction");
      assert.ok(compactions.length > 0);
      for (const c of compactions) {
        const report = compactionLostItems(session, session.byId.get(c.id)!);
        assert.ok(report, `${c.id}: range rebuilt`);
        const expected = expectedLost(entries, c);
        const lost = (kind: string) =>
          report.items
            .filter((i) => i.kind === kind)
            .map((i) => i.text)
            .sort();
        assert.deepEqual(lost("command"), expected.commands, `${name} ${c.id}: commands`);
        assert.deepEqual(
          lost("path").filter((p) => expected.toolPaths.has(p)),
          expected.paths,
          `${name} ${c.id}: tool-call paths`,
        );
        assert.deepEqual(lost("number"), expected.numbers, `${name} ${c.id}: numbers`);
        // every lost item names an entry of the summarized range (or the previous compaction)
        for (const item of report.items) assert.ok(session.byId.has(item.entryId), item.entryId);
      }
    });
  }

  it("the long fixture: commands are lost, paths survive in pi's file lists", async () => {
    const session = await SessionFile.open(`${FIXTURES}/pi-1.6.0/long.jsonl`);
    const first = session.records.find((r) => r.type === "compaction")!;
    const report = compactionLostItems(session, first)!;
    assert.deepEqual(report.totals.command, { found: 5, lost: 5 });
    assert.equal(report.totals.path.lost, 0);
    const ls = report.items.find((i) => i.text === "ls -la src && wc -l src/*.ts")!;
    assert.equal(session.byId.get(ls.entryId)!.role, "assistant");
  });

  it("text items: paths, code spans, identifiers, numbers", () => {
    const items = textItems(
      "Fixed `parseArgs()` in src/cli/args.ts and ./x/y.md, see https://a.b/c; renamed fooBar to foo_bar, MyClass, HTTP_PORT=8080; took 37ms (pi 1.6.0), 5 files, 12%",
    );
    assert.deepEqual(items.paths, ["src/cli/args.ts", "./x/y.md"]);
    assert.deepEqual(items.identifiers, ["parseArgs", "fooBar", "foo_bar", "MyClass", "HTTP_PORT"]);
    assert.deepEqual(items.numbers, ["8080", "37ms", "1.6.0", "12%"]);
  });
});
