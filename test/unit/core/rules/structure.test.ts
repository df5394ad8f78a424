import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../../../src/core/read/session";
import { StructureTracker, structureDiagnostics } from "../../../../src/core/rules/tree";
import { buildProjection, type Projection } from "../../../../src/core/rules/context";
import { analyzeLoaded } from "../../../../src/core/rules/analyze";
import { buildSession, recipeArb } from "../../../support/random-session";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-structure-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function summary(p: Projection): unknown {
  return {
    leafId: p.leafId,
    path: p.path.map((e) => e.id),
    entries: p.entries.map((e) => [e.record.id, e.roles.join(","), e.firstMessageIndex, e.edit?.id ?? null]),
    messageCount: p.messageCount,
    model: p.model,
    thinkingLevel: p.thinkingLevel,
    compaction: p.compaction?.id ?? null,
    pathInfo: p.pathInfo,
  };
}

describe("incremental updates equal a fresh read", () => {
  it("projections extended on append equal fresh projections; the gauge numbers too (random trees)", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(recipeArb, async (recipe) => {
        const { jsonl } = buildSession(recipe);
        const lines = jsonl.trimEnd().split("\n");
        const file = path.join(tmp, `p${n++}.jsonl`);
        fs.writeFileSync(file, `${lines[0]}\n`);
        const session = await SessionFile.open(file);
        for (let i = 1; i < lines.length; i++) {
          fs.appendFileSync(file, `${lines[i]}\n`);
          await session.refresh();
          const fresh = SessionFile.fromBytes(fs.readFileSync(file));
          assert.deepEqual(summary(buildProjection(session)), summary(buildProjection(fresh)));
          const a = analyzeLoaded(session, { agentDir: tmp, projectSettings: "never", contextWindow: recipe.window });
          const b = analyzeLoaded(fresh, { agentDir: tmp, projectSettings: "never", contextWindow: recipe.window });
          assert.deepEqual(
            JSON.parse(JSON.stringify({ ...a.inspect, file: "" })),
            JSON.parse(JSON.stringify({ ...b.inspect, file: "" })),
          );
        }
      }),
      { numRuns: 120 },
    );
  });
});

describe("incremental updates equal a fresh read, whatever the cut points (issue 16.3)", () => {
  it("files written in arbitrary byte pieces (inside the BOM, the header, a line), with and without a BOM", async () => {
    let n = 0;
    let bomRuns = 0;
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
    await fc.assert(
      fc.asyncProperty(
        recipeArb,
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }),
        async (recipe, withBom, pieces) => {
          const { jsonl } = buildSession(recipe);
          const bytes = withBom ? Buffer.concat([BOM, Buffer.from(jsonl)]) : Buffer.from(jsonl);
          if (withBom) bomRuns++;
          const file = path.join(tmp, `c${n++}.jsonl`);
          // The first read always ends inside the header (or inside the BOM).
          let at = Math.min(pieces[0]! % 40, bytes.length);
          fs.writeFileSync(file, bytes.subarray(0, at));
          const session = await SessionFile.open(file);
          for (let k = 1; at < bytes.length; k++) {
            const next = Math.min(bytes.length, at + pieces[k % pieces.length]!);
            fs.appendFileSync(file, bytes.subarray(at, next));
            at = next;
            await session.refresh();
            const fresh = SessionFile.fromBytes(fs.readFileSync(file));
            assert.deepEqual(
              { invalid: session.invalid, header: session.header, ids: session.records.map((r) => r.id) },
              { invalid: fresh.invalid, header: fresh.header, ids: fresh.records.map((r) => r.id) },
              `after ${at} of ${bytes.length} bytes (BOM: ${withBom})`,
            );
            assert.deepEqual(
              session.diagnostics.map((d) => d.code),
              fresh.diagnostics.map((d) => d.code),
            );
            assert.deepEqual(summary(buildProjection(session)), summary(buildProjection(fresh)));
          }
          assert.equal(session.invalid, false);
        },
      ),
      { numRuns: 80 },
    );
    assert.ok(bomRuns > 10, `runs with a BOM: ${bomRuns}`);
  });
});

describe("StructureTracker", () => {
  it("equals the full structureDiagnostics after every append (random trees, duplicates, missing parents)", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(recipeArb, async (recipe) => {
        const { jsonl } = buildSession(recipe);
        const lines = jsonl.trimEnd().split("\n");
        const file = path.join(tmp, `s${n++}.jsonl`);
        fs.writeFileSync(file, `${lines[0]}\n`);
        const session = await SessionFile.open(file);
        const tracker = new StructureTracker();
        const key = (d: { code: string; message: string }) => `${d.code} ${d.message}`;
        for (let i = 1; i < lines.length; i += 1 + (i % 3)) {
          fs.appendFileSync(file, `${lines.slice(i, i + 1 + (i % 3)).join("\n")}\n`);
          await session.refresh();
          assert.deepEqual(tracker.diagnostics(session).map(key).sort(), structureDiagnostics(session).map(key).sort());
        }
      }),
      { numRuns: 150 },
    );
  });
});
