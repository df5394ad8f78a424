/**
 * The session tree model (src/core/treeModel/): structure on pi's tree fixture, filters like pi's
 * `/tree`, folding, paging, reveal (parent chains), and incremental sync == rebuild on random
 * sessions (fast-check). Also measures a generated 50k-entry session (timings are reported, not
 * asserted). Rows are rendered with the view model's `nodeDisplay` (kinds in snapshots; every text
 * a widget holds in the sync checks). Row texts themselves: test/unit/viewModel/treeText.test.ts.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { buildRecord, type EntryRecord } from "../../../../src/core/read/entries";
import { SessionFile } from "../../../../src/core/read/session";
import type { TreeElement } from "../../../../src/core/treeModel/elements";
import type { TreeFilter } from "../../../../src/core/treeModel/filters";
import { SessionTreeModel } from "../../../../src/core/treeModel/model";
import type { TreeSource } from "../../../../src/core/treeModel/structure";
import { nodeDisplay } from "../../../../src/viewModel/treeText";
import { FIXTURES } from "../../../support/paths";

const TREE = path.join(FIXTURES, "pi-1.6.0/tree.jsonl");
const CASE15 = path.join(FIXTURES, "cases/15-branch-summary-tree/session.jsonl");

/** A growable source: records appended one JSON line at a time. */
class GrowingSource implements TreeSource {
  records: EntryRecord[] = [];
  byId = new Map<string, EntryRecord>();
  private offset = 0;
  push(entry: object): EntryRecord | undefined {
    if ((entry as { type?: string }).type === "session") return undefined; // the header is not an entry
    const line = JSON.stringify(entry);
    const r = buildRecord(JSON.parse(line), {
      index: this.records.length,
      line: this.records.length + 2,
      offset: this.offset,
      byteLength: line.length,
    });
    this.offset += line.length + 1;
    if ("code" in r) throw new Error(r.message);
    this.records.push(r);
    this.byId.set(r.id, r);
    return r;
  }
}

/** A user message entry whose text is its id. */
function msg(id: string, parentId: string | null): object {
  return {
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: id },
  };
}

function label(model: SessionTreeModel, e: TreeElement): string {
  if (e.kind === "entry") return e.id;
  if (e.kind === "branch") return `branch(${e.headId})`;
  return `page(${e.start}-${e.end})`;
}

/** The fully expanded tree as indented lines; also checks parent() against children(). */
function snapshot(model: SessionTreeModel, withDisplay = true): string[] {
  const lines: string[] = [];
  const visit = (parent: TreeElement | undefined, depth: number) => {
    for (const child of model.children(parent)) {
      assert.equal(model.parent(child), parent, `parent(${child.key}) should be ${parent?.key ?? "top"}`);
      let text = `${"  ".repeat(depth)}${label(model, child)}`;
      if (child.kind !== "page" && withDisplay) {
        const d = nodeDisplay(model, child.kind === "entry" ? child.id : child.headId);
        text += ` ${d.kind}${d.label ? ` [${d.label}]` : ""}${d.isLeaf ? " LEAF" : ""}${d.onActivePath ? " *" : ""}${d.branches ? ` ⑂${d.branches}` : ""}${d.folded ? ` +${d.folded}` : ""}`;
      }
      assert.equal(model.hasChildren(child), model.children(child).length > 0, `hasChildren(${child.key})`);
      lines.push(text);
      visit(child, depth + 1);
    }
  };
  visit(undefined, 0);
  return lines;
}

describe("tree model on pi's tree fixture (tree.jsonl)", () => {
  it("default filter: the active path as the top level, a 3-way branch point's other branches below it, folded tool results, the leaf", async () => {
    const session = await SessionFile.open(TREE);
    const model = new SessionTreeModel(session);
    assert.deepEqual(snapshot(model), [
      "1eb270e4 system *",
      "c8a901f3 user *",
      "c707baf6 assistant * +1",
      "  524c617f toolResult *",
      "a03949d4 assistant *",
      "1c4d30f5 user *",
      "88ee17e2 assistant * +1",
      "  3c46a996 toolResult *",
      "3bcd7a02 assistant * ⑂3",
      "  branch(a41d08b8) user",
      "    eaa275aa assistant +1",
      "      3b7790ad toolResult",
      "    1b08321e assistant +1",
      "      fdc68d05 toolResult",
      "    2ff1cd7a assistant",
      "    d687d2f6 user",
      "    eae710e0 assistant +1",
      "      99b48557 toolResult",
      "    ae6c9df9 assistant",
      "    9df62dcd branchSummary",
      "  branch(7daca6b9) branchSummary [branch-A]",
      "    60933bb1 user",
      "    437e75f7 assistant +1",
      "      1812defc toolResult",
      "    5e60ca97 assistant +1",
      "      eefae3d2 toolResult",
      "    895e5ef5 assistant",
      // the branch holding the leaf continues the spine (the top level)
      "b6b95844 user *",
      "07b460a3 assistant * +1",
      "  9a572700 toolResult *",
      "bb6f6d3c assistant LEAF *",
    ]);
    assert.equal(model.leafId, "bb6f6d3c");
    assert.equal(model.displayLeafId, "bb6f6d3c");
    assert.equal(model.labels.get("7daca6b9")?.label, "branch-A");
    assert.equal(model.branchSize("a41d08b8"), 11);
    assert.equal(model.branchIsActive("b6b95844"), true);
    assert.equal(model.branchIsActive("7daca6b9"), false);
    assert.equal(model.headsBranch("b6b95844"), false, "the spine's branch is shown as entries");
    assert.equal(model.headsBranch("a41d08b8"), true);
    assert.equal(model.elementOf("b6b95844")?.key, "e:b6b95844");
  });

  it("user-only filter: user messages attach to their nearest visible ancestor (pi's recalculateVisualStructure)", async () => {
    const session = await SessionFile.open(TREE);
    const model = new SessionTreeModel(session, { filter: "user-only" });
    assert.deepEqual(snapshot(model), [
      "c8a901f3 user *",
      "1c4d30f5 user * ⑂3",
      "  branch(a41d08b8) user",
      "    d687d2f6 user",
      "  branch(60933bb1) user",
      "b6b95844 user LEAF *",
    ]);
    assert.equal(model.displayLeafId, "b6b95844");
    assert.equal(
      model.elementOf("bb6f6d3c")?.key,
      "e:b6b95844",
      "a hidden entry is shown by its nearest visible ancestor",
    );
    assert.equal(model.elementOf("eaa275aa")?.key, "b:a41d08b8", "a branch's first entry is shown by its branch row");
  });

  it("no-tools, labeled-only and all filters", async () => {
    const session = await SessionFile.open(TREE);
    const model = new SessionTreeModel(session, { filter: "no-tools" });
    const ids = (f: TreeFilter) => {
      model.setFilter(f);
      return [...model.walk()]
        .filter((w) => w.element.kind !== "page")
        .map((w) => (w.element.kind === "entry" ? w.element.id : (w.element as { headId: string }).headId));
    };
    const noTools = ids("no-tools");
    assert.ok(!noTools.includes("524c617f"), "tool results hidden");
    assert.ok(!noTools.includes("c707baf6"), "tool-call-only assistant hidden");
    assert.ok(noTools.includes("a03949d4"), "assistant with text shown");
    assert.deepEqual(ids("labeled-only"), ["7daca6b9"]);
    const all = ids("all");
    assert.equal(all.length, session.records.length);
    assert.ok(all.includes("a6f9c23c") && all.includes("2ff39b9e"));
    // in "all", the model_change is the root and everything hangs below it
    assert.equal(model.children()[0]?.key, "e:2ff39b9e");
  });

  it("case 15: branch summary placed by parentId, label on a1, leaf is the label entry (shown at bB3)", async () => {
    const session = await SessionFile.open(CASE15);
    const model = new SessionTreeModel(session);
    assert.deepEqual(snapshot(model, true), [
      "u1 user *",
      "a1 assistant [design-fork] * ⑂2",
      "  branch(bA1) user",
      "    bA2 assistant +2",
      "      bA3 toolResult",
      "      bA4 toolResult",
      "    bA5 assistant",
      "bs1 branchSummary *",
      "bB1 user *",
      "bB2 assistant * +1",
      "  bB3 toolResult LEAF *",
    ]);
    assert.equal(model.leafId, "l1");
    assert.equal(model.displayLeafId, "bB3");
    assert.equal(model.node("bB3").isFileLeaf, false);
  });
});

describe("tree model: reveal, paging and edge cases", () => {
  it("reveal: the leaf's parent chain is the top level; an entry of another branch's passes through its branch group", async () => {
    const session = await SessionFile.open(TREE);
    const model = new SessionTreeModel(session);
    const chain: string[] = [];
    let e: TreeElement | undefined = model.elementOf(model.leafId!);
    while (e) {
      chain.push(e.key);
      e = model.parent(e);
    }
    assert.deepEqual(chain, ["e:bb6f6d3c"]);
    const chainOf = (id: string) => {
      const keys: string[] = [];
      for (let x: TreeElement | undefined = model.elementOf(id); x; x = model.parent(x)) keys.push(x.key);
      return keys;
    };
    // a folded tool result reveals through its assistant
    assert.deepEqual(chainOf("9a572700"), ["e:9a572700", "e:07b460a3"]);
    assert.deepEqual(model.foldedResults("07b460a3"), ["9a572700"]);
    assert.deepEqual(model.foldedResults("9a572700"), []); // a tool result folds nothing
    assert.deepEqual(model.foldedResults("no-such-id"), []);
    // off the active path: through the branch group, under its branch point
    assert.deepEqual(chainOf("1812defc"), ["e:1812defc", "e:437e75f7", "b:7daca6b9", "e:3bcd7a02"]);
  });

  it("long runs are paged (older items in page groups, newest inline) and nested pages stay consistent", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
    let parent: string | null = null;
    for (let i = 0; i < 1234; i++) {
      const id = `u${i}`;
      src.push({
        type: "message",
        id,
        parentId: parent,
        timestamp: "2026-01-01T00:00:00.000Z",
        message: { role: "user", content: `m${i}`, timestamp: 0 },
      });
      parent = id;
    }
    const model = new SessionTreeModel(src, { pageSize: 10, inlineMax: 20 });
    const top = model.children();
    // 1234 items: 1220 paged (at most 10 groups per level: 1000 + 220), 14 inline
    assert.deepEqual(
      top.filter((t) => t.kind === "page").map((p) => p.key),
      ["p:u0:0-1000", "p:u0:1000-1220"],
    );
    assert.equal(top.filter((t) => t.kind === "entry").length, 14);
    assert.deepEqual(
      model.children(top[1]).map((p) => p.key),
      ["p:u0:1000-1100", "p:u0:1100-1200", "p:u0:1200-1220"],
    );
    const lines = snapshot(model, false);
    assert.equal(lines.filter((l) => !l.trim().startsWith("page")).length, 1234);
    // reveal of an early item goes through two page levels
    const chain: string[] = [];
    let e: TreeElement | undefined = model.elementOf("u57");
    while (e) {
      chain.push(e.key);
      e = model.parent(e);
    }
    assert.deepEqual(chain, ["e:u57", "p:u0:50-60", "p:u0:0-100", "p:u0:0-1000"]);
    assert.deepEqual(model.pageBounds(model.parent(model.elementOf("u57")!) as never), {
      first: "u50",
      last: "u59",
      count: 10,
    });
  });

  it("a long branch: its row is its first entry, pages start after it, parents stay consistent", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
    src.push(msg("root", null));
    let parent = "root";
    for (let i = 0; i < 40; i++) {
      src.push(msg(`b${i}`, parent));
      parent = `b${i}`;
    }
    src.push(msg("short", "root")); // the leaf: the long branch is off the active path
    const model = new SessionTreeModel(src, { pageSize: 10, inlineMax: 20 });
    const lines = snapshot(model, false); // checks parent() against children() everywhere
    assert.deepEqual(
      model.children().map((e) => e.key),
      ["e:root", "e:short"],
    );
    assert.deepEqual(
      model.children(model.children()[0]).map((e) => e.key),
      ["b:b0"],
    );
    const long = model.children(model.elementOf("b0"));
    // 39 entries after the first: 20 in pages, the newest 19 inline
    assert.deepEqual(long.map((e) => e.key).slice(0, 3), ["p:b0:1-11", "p:b0:11-21", "e:b21"]);
    assert.equal(long.filter((e) => e.kind === "entry").length, 19);
    assert.ok(!lines.some((l) => l.trim() === "b0"), "the first entry is not listed again inside its branch");
    assert.equal(model.hasChildren(model.elementOf("short")!), false);
    assert.deepEqual(model.pageBounds(model.parent(model.elementOf("b5")!) as never), {
      first: "b1",
      last: "b10",
      count: 10,
    });
  });

  it("the spine crosses branch points: one paged list to the leaf, each branch point's other branches below it", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
    // m0 … m29, a side branch at m14 (s0, s1), the leaf's branch n0 … n19 from m29, another side at m29
    let parent: string | null = null;
    for (let i = 0; i < 30; i++) {
      src.push(msg(`m${i}`, parent));
      parent = `m${i}`;
    }
    src.push(msg("s0", "m14"));
    src.push(msg("s1", "s0"));
    src.push(msg("x0", "m29"));
    parent = "m29";
    for (let i = 0; i < 20; i++) {
      src.push(msg(`n${i}`, parent));
      parent = `n${i}`;
    }
    const model = new SessionTreeModel(src, { pageSize: 10, inlineMax: 20 });
    snapshot(model, false); // parent() is children()'s inverse everywhere
    // 50 items on the spine (m0…m29, then n0…n19): 40 in pages, the newest 10 inline
    const top = model.children().map((e) => e.key);
    assert.deepEqual(top.slice(0, 4), ["p:m0:0-10", "p:m0:10-20", "p:m0:20-30", "p:m0:30-40"]);
    assert.deepEqual(
      top.slice(4),
      ["n10", "n11", "n12", "n13", "n14", "n15", "n16", "n17", "n18", "n19"].map((id) => `e:${id}`),
    );
    assert.equal(model.parent(model.elementOf("n19")!), undefined, "the leaf is in the top level");
    assert.equal(model.parent(model.elementOf("n0")!)?.key, "p:m0:30-40", "the spine's pages span its branch points");
    assert.deepEqual(
      model.children(model.elementOf("m14")).map((e) => e.key),
      ["b:s0"],
    );
    assert.deepEqual(
      model.children(model.elementOf("m29")).map((e) => e.key),
      ["b:x0"],
    );
    assert.equal(model.elementOf("n0")?.key, "e:n0");
    assert.equal(model.node("m29").branches, 2);
    assert.equal(model.branchSize("s0"), 2);
    assert.deepEqual(model.pageBounds(model.parent(model.elementOf("n0")!) as never), {
      first: "n0",
      last: "n9",
      count: 10,
    });
    assert.equal(model.pageIsActive(model.parent(model.elementOf("m3")!) as never), true);

    // several roots: the active root's group holds the spine (and opens by itself)
    src.push(msg("other", null));
    src.push(msg("o1", "other"));
    src.push(msg("n20", "n19")); // the leaf again under m0's root
    model.sync();
    const expected = new SessionTreeModel(src, { pageSize: 10, inlineMax: 20 });
    assert.deepEqual(snapshot(model, false), snapshot(expected, false));
    assert.deepEqual(
      model.children().map((e) => e.key),
      ["b:m0", "b:other"],
    );
    assert.equal(model.branchSize("m0"), 51, "the spine's entries: m0…m29 and n0…n20");
    const group = model.children(model.elementOf("m0"));
    assert.equal(group.at(-1)?.key, "e:n20");
    assert.equal(model.parent(model.elementOf("n20")!)?.key, "b:m0");
    assert.equal(model.parent(model.elementOf("m1")!)?.key, "p:m0:1-11", "pages start after the group's row");
  });

  it("missing parents are roots, self-parents are roots, cycles are not shown", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
    src.push(msg("a", null));
    src.push(msg("b", "zz")); // orphan → root
    src.push(msg("c", "c")); // self parent → root
    src.push(msg("x", "y")); // x ↔ y cycle
    src.push(msg("y", "x"));
    const model = new SessionTreeModel(src);
    assert.deepEqual(
      model.children().map((e) => e.key),
      ["b:a", "b:b", "b:c"],
    );
    assert.equal(model.elementOf("x"), undefined);
    assert.equal(model.elementOf("b")?.key, "b:b");
    assert.equal(model.unreachableCount, 2, "x and y: said by the surfaces");
    src.push(msg("z", "y")); // below the cycle: unreachable too (added incrementally)
    model.sync();
    assert.equal(model.unreachableCount, 3);
  });

  it("labels applied in file order; a cleared label disappears", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
    src.push({ type: "message", id: "a", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } });
    src.push({ type: "label", id: "l1", parentId: "a", timestamp: "t", targetId: "a", label: "first" });
    const model = new SessionTreeModel(src);
    assert.equal(model.node("a").label, "first");
    src.push({ type: "label", id: "l2", parentId: "l1", timestamp: "t", targetId: "a" });
    const change = model.sync();
    assert.equal(change.added, 1);
    assert.equal(model.node("a").label, undefined);
    assert.ok(change.elements.some((e) => e?.key === "e:a"));
  });
});

// ------------------------------------------------------------------------------------------------
// Incremental sync == rebuild

interface Op {
  /** Which existing entry to hang the new one on: an index into the entries so far (mod), or -1 = the leaf. */
  parent: number;
  kind:
    | "user"
    | "assistantText"
    | "assistantTools"
    | "toolResult"
    | "label"
    | "model"
    | "custom"
    | "marker"
    | "usage"
    | "root"
    | "orphan"
    | "branchSummary";
  /** Probe (expand everything) on the incremental model after this op. */
  probe: boolean;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  parent: fc.oneof({ weight: 5, arbitrary: fc.constant(-1) }, { weight: 2, arbitrary: fc.nat(60) }),
  kind: fc.constantFrom(
    "user",
    "assistantText",
    "assistantTools",
    "toolResult",
    "toolResult",
    "label",
    "model",
    "custom",
    "marker",
    "usage",
    "root",
    "orphan",
    "branchSummary",
  ),
  probe: fc.boolean(),
});

function entryFor(op: Op, n: number, parentId: string | null, ids: string[]): object {
  const id = `n${n}`;
  const ts = `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`;
  switch (op.kind) {
    case "user":
      return { type: "message", id, parentId, timestamp: ts, message: { role: "user", content: `u${n}` } };
    case "assistantText":
      return {
        type: "message",
        id,
        parentId,
        timestamp: ts,
        message: { role: "assistant", content: [{ type: "text", text: `a${n}` }], model: "m", stopReason: "stop" },
      };
    case "assistantTools":
      return {
        type: "message",
        id,
        parentId,
        timestamp: ts,
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: `c${n}`, name: "read", arguments: { path: "x" } }],
          model: "m",
          stopReason: "toolUse",
        },
      };
    case "toolResult":
      return {
        type: "message",
        id,
        parentId,
        timestamp: ts,
        message: {
          role: "toolResult",
          toolCallId: `c${n - 1}`,
          toolName: "read",
          content: [{ type: "text", text: "ok" }],
        },
      };
    case "label":
      return {
        type: "label",
        id,
        parentId,
        timestamp: ts,
        targetId: ids[(n * 7) % Math.max(1, ids.length)] ?? "none",
        ...(n % 3 === 0 ? {} : { label: `L${n}` }),
      };
    case "model":
      return { type: "model_change", id, parentId, timestamp: ts, provider: "p", modelId: "m" };
    case "custom":
      return { type: "custom", id, parentId, timestamp: ts, customType: "ext", data: {} };
    case "marker":
      return {
        type: "custom",
        id,
        parentId,
        timestamp: ts,
        customType: "pi-context/leaf",
        data: { targetId: parentId, fromId: "root" },
      };
    case "usage":
      return { type: "usage", id, parentId, timestamp: ts, provider: "p", model: "m", usage: {} };
    case "root":
      return { type: "message", id, parentId: null, timestamp: ts, message: { role: "user", content: `root${n}` } };
    case "orphan":
      return {
        type: "message",
        id,
        parentId: `missing${n % 3}`,
        timestamp: ts,
        message: { role: "user", content: `o${n}` },
      };
    case "branchSummary":
      return { type: "branch_summary", id, parentId, timestamp: ts, fromId: "root", summary: `## Goal\nb${n}` };
  }
}

/** What a tree widget holds for every element of the fully expanded tree: children keys and item texts. */
function widgetState(model: SessionTreeModel): Map<string, string> {
  const state = new Map<string, string>();
  state.set(
    "top",
    model
      .children()
      .map((c) => c.key)
      .join(","),
  );
  for (const { element } of model.walk()) {
    const item =
      element.kind === "entry"
        ? JSON.stringify(nodeDisplay(model, element.id))
        : element.kind === "branch"
          ? `${JSON.stringify(nodeDisplay(model, element.headId))} ${model.branchSize(element.headId)} ${model.branchIsActive(element.headId)}`
          : JSON.stringify(model.pageBounds(element));
    state.set(
      element.key,
      `${item} | ${model
        .children(element)
        .map((c) => c.key)
        .join(",")}`,
    );
  }
  return state;
}

/** Every element whose item or children changed is reported (itself or an ancestor), or the whole tree is. */
function assertChangesCovered(
  model: SessionTreeModel,
  before: Map<string, string>,
  change: ReturnType<SessionTreeModel["sync"]>,
): void {
  if (change.all || change.elements.includes(null)) return;
  const after = widgetState(model);
  const reported = new Set(change.elements.map((e) => e?.key));
  assert.equal(after.get("top"), before.get("top"), "top level changed without a report");
  const byKey = new Map<string, TreeElement>();
  for (const { element } of model.walk()) byKey.set(element.key, element);
  for (const [key, value] of after) {
    if (key === "top" || !before.has(key) || before.get(key) === value) continue;
    let e: TreeElement | undefined = byKey.get(key);
    let covered = false;
    while (e && !covered) {
      covered = reported.has(e.key);
      e = model.parent(e);
    }
    assert.ok(
      covered,
      `${key} changed without a report:\n  before ${before.get(key)}\n  after  ${value}\n  reported ${[...reported].join(" ")}`,
    );
  }
}

describe("tree model: incremental sync equals a rebuild", () => {
  it("random sessions appended one entry at a time, probed at random points, every filter and page size", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 70 }),
        fc.constantFrom<TreeFilter>("default", "no-tools", "user-only", "labeled-only", "all"),
        fc.integer({ min: 2, max: 4 }),
        (ops, filter, pageSize) => {
          const src = new GrowingSource();
          src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
          const live = new SessionTreeModel(src, { filter, pageSize, inlineMax: pageSize + 1 });
          const ids: string[] = [];
          let leaf: string | null = null;
          let before: Map<string, string> | undefined;
          ops.forEach((op, n) => {
            const parentId = op.parent === -1 ? leaf : (ids[op.parent % Math.max(1, ids.length)] ?? null);
            const entry = entryFor(op, n, parentId, ids) as { id: string };
            src.push(entry);
            ids.push(entry.id);
            leaf = entry.id;
            const change = live.sync();
            assert.equal(change.added, 1);
            if (before) assertChangesCovered(live, before, change);
            before = undefined;
            if (op.probe) {
              snapshot(live);
              before = widgetState(live);
            }
          });
          const fresh = new SessionTreeModel(src, { filter, pageSize, inlineMax: pageSize + 1 });
          assert.deepEqual(snapshot(live), snapshot(fresh));
          assert.equal(live.leafId, fresh.leafId);
          assert.equal(live.displayLeafId, fresh.displayLeafId);
          assert.deepEqual([...live.activePath].sort(), [...fresh.activePath].sort());
          assert.deepEqual([...live.labels], [...fresh.labels]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("prepare() (the view's first showing computed ahead) changes nothing: prepared at random points, then synced, the model equals a rebuild", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 60 }),
        fc.constantFrom<TreeFilter>("default", "no-tools", "user-only", "labeled-only", "all"),
        fc.integer({ min: 2, max: 4 }),
        (ops, filter, pageSize) => {
          const src = new GrowingSource();
          src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
          const options = { filter, pageSize, inlineMax: pageSize + 1 };
          const live = new SessionTreeModel(src, options);
          const ids: string[] = [];
          let leaf: string | null = null;
          ops.forEach((op, n) => {
            const parentId = op.parent === -1 ? leaf : (ids[op.parent % Math.max(1, ids.length)] ?? null);
            const entry = entryFor(op, n, parentId, ids) as { id: string };
            src.push(entry);
            ids.push(entry.id);
            leaf = entry.id;
            live.sync();
            if (op.probe) {
              live.prepare();
              const fresh = new SessionTreeModel(src, options);
              // what a first showing asks for: the top level, then the leaf's element and its parents
              assert.deepEqual(
                live.children().map((e) => e.key),
                fresh.children().map((e) => e.key),
              );
              const chain = (m: SessionTreeModel) => {
                const keys: string[] = [];
                let e: TreeElement | undefined = m.displayLeafId === null ? undefined : m.elementOf(m.displayLeafId);
                for (; e; e = m.parent(e)) keys.push(e.key);
                return keys;
              };
              assert.deepEqual(chain(live), chain(fresh));
            }
          });
          live.prepare();
          assert.deepEqual(snapshot(live), snapshot(new SessionTreeModel(src, options)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("an entry appended below a hidden leaf continues the spine: the top level is reported", () => {
    const hidden = (id: string, parentId: string) => ({
      type: "custom",
      id,
      parentId,
      timestamp: "t",
      customType: "x",
    });
    // q2's only visible child is c (off the active path): the spine runs on through c until r
    // makes q2 a branch point; with c1 and c2, the spine ends at q2 until r continues it
    for (const sides of [["c"], ["c1", "c2"]]) {
      const src = new GrowingSource();
      src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
      for (const e of [msg("root", null), msg("p", "root"), msg("q1", "p"), msg("q2", "p")]) src.push(e);
      for (const side of sides) src.push(msg(side, "q2"));
      src.push(hidden("L", "q2"));
      const model = new SessionTreeModel(src);
      model.children(); // what the widget asked for
      const before = widgetState(model);
      assert.deepEqual(
        model.children().map((e) => e.key),
        sides.length === 1 ? ["e:root", "e:p", "e:q2", "e:c"] : ["e:root", "e:p", "e:q2"],
      );
      src.push(msg("r", "L"));
      const change = model.sync();
      assert.equal(change.all, false, "an append on the leaf is incremental");
      assertChangesCovered(model, before, change);
      assert.ok(change.elements.includes(null), "the top level is reported");
      assert.deepEqual(
        model.children().map((e) => e.key),
        ["e:root", "e:p", "e:q2", "e:r"],
      );
      assert.deepEqual(snapshot(model), snapshot(new SessionTreeModel(src)));
    }
  });

  it("a re-read file (records replaced) is rebuilt", () => {
    const src = new GrowingSource();
    src.push({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/w" });
    src.push({ type: "message", id: "a", parentId: null, timestamp: "t", message: { role: "user", content: "a" } });
    const model = new SessionTreeModel(src);
    src.records.length = 0;
    src.byId.clear();
    src.push({ type: "message", id: "b", parentId: null, timestamp: "t", message: { role: "user", content: "b" } });
    const change = model.sync();
    assert.equal(change.rebuilt, true);
    assert.deepEqual(
      model.children().map((e) => e.key),
      ["e:b"],
    );
  });
});

// ------------------------------------------------------------------------------------------------
// 50k entries: measured, not asserted

function generatedSession(entries: number): string {
  const lines: string[] = [
    JSON.stringify({ type: "session", version: 3, id: "big", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
  ];
  let parent: string | null = null;
  let n = 0;
  const branchPoints: string[] = [];
  const add = (entry: Record<string, unknown>) => {
    lines.push(JSON.stringify(entry));
    parent = entry.id as string;
    n++;
  };
  while (n < entries) {
    if (n > 0 && n % 5000 === 0 && branchPoints.length > 0) parent = branchPoints[branchPoints.length - 1]!; // a branch every 5000 entries
    add({
      type: "message",
      id: `u${n}`,
      parentId: parent,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "user", content: `task ${n}\nmore` },
    });
    if (n % 1000 === 1) branchPoints.push(parent!);
    add({
      type: "message",
      id: `a${n}`,
      parentId: parent,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: {
        role: "assistant",
        content: [{ type: "toolCall", id: `c${n}`, name: "read", arguments: { path: `f${n}.ts` } }],
        model: "m",
        stopReason: "toolUse",
        usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
      },
    });
    add({
      type: "message",
      id: `t${n}`,
      parentId: parent,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: {
        role: "toolResult",
        toolCallId: `c${n - 1}`,
        toolName: "read",
        content: [{ type: "text", text: "x".repeat(200) }],
      },
    });
    add({
      type: "message",
      id: `r${n}`,
      parentId: parent,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "assistant", content: [{ type: "text", text: "done" }], model: "m", stopReason: "stop" },
    });
  }
  return `${lines.join("\n")}\n`;
}

describe("tree model: 50k entries", () => {
  it("builds, lists the top level, reveals the leaf and absorbs appends incrementally (timings reported)", (t) => {
    const text = generatedSession(50000);
    const lines = text.trimEnd().split("\n");
    const head = lines.slice(0, lines.length - 1000).join("\n") + "\n";
    const session = SessionFile.fromBytes(head);
    const src = { records: session.records, byId: session.byId };
    const t0 = performance.now();
    const model = new SessionTreeModel(src);
    const t1 = performance.now();
    const top = model.children();
    const t2 = performance.now();
    let e: TreeElement | undefined = model.elementOf(model.leafId!);
    let depth = 0;
    while (e) {
      e = model.parent(e);
      depth++;
    }
    const t3 = performance.now();
    // append 1000 entries one at a time, syncing after each (the live-tail case)
    let syncMs = 0;
    let offset = Buffer.byteLength(head);
    for (const line of lines.slice(lines.length - 1000)) {
      const r = buildRecord(JSON.parse(line), {
        index: session.records.length,
        line: session.records.length + 2,
        offset,
        byteLength: Buffer.byteLength(line),
      });
      offset += Buffer.byteLength(line) + 1;
      if ("code" in r) throw new Error(r.message);
      session.records.push(r);
      session.byId.set(r.id, r);
      const s0 = performance.now();
      const change = model.sync();
      syncMs += performance.now() - s0;
      assert.equal(change.rebuilt, false);
      model.children(); // the view re-reads the changed level
    }
    const fresh = new SessionTreeModel(src);
    assert.deepEqual(snapshot(model, false).slice(-50), snapshot(fresh, false).slice(-50));
    t.diagnostic(
      `50k entries (${session.records.length}): build ${(t1 - t0).toFixed(1)} ms, top level ${(t2 - t1).toFixed(1)} ms (${top.length} items), reveal leaf ${(t3 - t2).toFixed(1)} ms (depth ${depth}), 1000 appends: ${(syncMs / 1000).toFixed(3)} ms per sync`,
    );
    assert.ok(top.length < 400, `top level stays small (${top.length})`);
  });
});
