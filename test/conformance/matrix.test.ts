/**
 * The version matrix: our core, with the rules and the model catalog of each pi version, against
 * that pi version itself (`test/conformance/oracle/versions.mjs`: 1.6.0, 1.5.2, 1.4.0, 1.0.3,
 * 0.87.1 — one oracle process per version, `PI_ORACLE_VERSION`):
 *   - the install is found by its files and its catalog, read as data (pi-ai's JSON and the CLI
 *     bundle's inlined copy), equals that pi's model registry — windows, output limits, prices;
 *   - every shared fixture and case (live oracle, the flags of the saved views);
 *   - random session trees (PI_CONTEXT_MATRIX_TREES, default 200 per version; pi 1.6.0's 1000 run
 *     in random-trees.test.ts) and random settings/models configurations
 *     (PI_CONTEXT_MATRIX_SETTINGS, default 60 per version);
 *   - the documented differences (docs/notes/pi-versions.md) are asserted, not skipped: before pi
 *     1.5.0 branch summaries ignore `context_edit` (our 1.6.0 rules then differ from that pi on some
 *     trees, its own rules never do); models.json limits ≤ 0 invalidate the whole file from 1.3.0
 *     only; `mistral/mistral-large-latest` is 262 144 tokens before 1.6.0 and 1 048 576 in 1.6.0.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { readBundleCatalog, readPiAiCatalog } from "../../src/core/pi/catalog";
import { piAt, type PiInstall } from "../../src/core/pi/locate";
import { userPiOf, type UserPi } from "../../src/core/pi/userPi";
import { REFERENCE_PI_VERSION, rulesFor, type PiRules } from "../../src/core/pi/versions";
import { readModelsConfig, resolveContextWindow } from "../../src/core/rules/models";
import {
  assertCoverage,
  assertSameView,
  differingKeys,
  newStats,
  ourViewOf,
  viewsOf,
  type Oracle,
} from "../support/random-compare";
import { recipeArb } from "../support/random-session";
import { settingsModelsProperty } from "../support/settings-models";
import { assertCaseMatches, oracleArgsOf, SHARED_CASES } from "../support/shared-cases";
import { oracleView } from "../support/oracle-view";
import { SessionFile } from "../../src/core/read/session";
import { FIXTURES, REPO_ROOT } from "../support/paths";
import { SessionBuilder } from "../support/session-builder";

const TREES = Number(process.env.PI_CONTEXT_MATRIX_TREES ?? 200);
const SETTINGS_RUNS = Number(process.env.PI_CONTEXT_MATRIX_SETTINGS ?? 60);
const ORACLE_DIR = path.join(REPO_ROOT, "test/conformance/oracle");

interface Versions {
  PI_VERSIONS: string[];
  REFERENCE_PI_VERSION: string;
  piCliPath(version: string): string;
}
interface OracleClientModule {
  OracleClient: { start(options: { env: Record<string, string> }): Promise<Oracle> };
}

const importMjs = <T>(file: string): Promise<T> =>
  import(pathToFileURL(path.join(ORACLE_DIR, file)).href) as Promise<T>;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-matrix-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The rule switches random session trees exercise (the others concern models files and CLI flags). */
const TREE_SWITCHES = ["branchSummaryContextEdits", "nestedCallFileOps"] as const;

/**
 * A session where both tree switches matter: the abandoned branch (after `a1`) holds an edited
 * assistant message (a `context_edit` replaces its long text), and a tool result carries
 * `nestedCalls` (a codemode edit of src/nested.ts).
 */
const DIFFERENCES_SESSION = new SessionBuilder({ id: "diff", cwd: "/tmp/diff" })
  .user("u1", "start")
  .assistant("a1", { calls: [{ id: "c1", arguments: { path: "src/a.ts" } }], usage: { input: 100, output: 10 } })
  .message("t1", {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "read",
    content: [{ type: "text", text: "contents of src/a.ts" }],
    isError: false,
    nestedCalls: { calls: [{ id: "n1", name: "edit", arguments: { path: "src/nested.ts" } }], complete: true },
  })
  .user("u2", "more")
  .assistant("a2", { text: "a long answer ".repeat(200), usage: { input: 200, output: 700 } })
  .edit("e1", "a2", { content: "short" })
  .user("u3", "last")
  .jsonl();

/** The catalog key of the model whose window differs between pi 1.5.2 and 1.6.0 (issue 13). */
const MISTRAL = "mistral/mistral-large-latest";

describe("pi version matrix", async () => {
  const versionsModule = await importMjs<Versions>("versions.mjs");
  const { OracleClient } = await importMjs<OracleClientModule>("oracle-client.mjs");

  it("the matrix's reference version is the one pi-context's snapshot and rules follow", () => {
    assert.equal(versionsModule.REFERENCE_PI_VERSION, REFERENCE_PI_VERSION);
    assert.ok(versionsModule.PI_VERSIONS.length >= 5, versionsModule.PI_VERSIONS.join(", "));
  });

  for (const version of versionsModule.PI_VERSIONS) {
    describe(`pi ${version}`, () => {
      let oracle: Oracle;
      let install: PiInstall;
      let userPi: UserPi;
      before(async () => {
        oracle = await OracleClient.start({ env: { PI_ORACLE_VERSION: version } });
        const found = piAt(versionsModule.piCliPath(version), "path");
        assert.ok(!("problem" in found), JSON.stringify(found));
        install = found;
        userPi = userPiOf({ pi: install, tried: [] });
      });
      after(async () => {
        await oracle?.close();
      });

      it("is found by its files; its catalog as data equals its registry (windows, output limits, prices)", async () => {
        assert.equal(install.version, version);
        assert.equal(install.piAi?.version, version);
        assert.equal(userPi.catalog.origin, "pi-ai-data");
        assert.equal(userPi.catalog.piVersion, version);
        assert.equal(userPi.catalog.name, `pi ${version}'s model catalog`);
        const registry = (await oracle.catalog({})) as { models: Record<string, Record<string, unknown>> };
        const bundle = readBundleCatalog(install.packageDir, version);
        const data = readPiAiCatalog(install.piAi!.dir, version);
        assert.equal(bundle.generatedAt, data.generatedAt, "generatedAt of the bundle and of pi-ai's manifest");
        for (const catalog of [data, bundle]) {
          const ours = Object.fromEntries(
            [...catalog.models].map(([key, m]) => [
              key,
              { contextWindow: m.contextWindow, maxTokens: m.maxTokens, name: m.name ?? key, cost: m.cost },
            ]),
          );
          const theirs = Object.fromEntries(
            Object.entries(registry.models).map(([key, m]) => [
              key,
              { contextWindow: m.contextWindow, maxTokens: m.maxTokens, name: m.name, cost: m.cost },
            ]),
          );
          assert.deepEqual(ours, theirs, `${catalog.origin} catalog`);
        }
        // the documented window difference of issue 13
        assert.equal(data.models.get(MISTRAL)?.contextWindow, version === "1.6.0" ? 1_048_576 : 262_144);
      });

      it("every shared fixture and case", async () => {
        for (const c of SHARED_CASES) {
          const saved = JSON.parse(fs.readFileSync(path.join(FIXTURES, c.oracle), "utf8")) as Record<string, unknown>;
          const live = await oracle.oracle({
            entriesJsonl: fs.readFileSync(path.join(FIXTURES, c.session), "utf8"),
            args: oracleArgsOf(c, saved),
          });
          try {
            await assertCaseMatches(c, live, userPi);
          } catch (error) {
            (error as Error).message = `${c.name}: ${(error as Error).message}`;
            throw error;
          }
        }
      });

      if (version !== REFERENCE_PI_VERSION) {
        it(`${TREES} random session trees with pi ${version}'s rules`, async () => {
          const stats = newStats();
          // how often a switch where this pi differs from pi 1.6.0 mattered (logged; asserted below on fixed sessions)
          const reference = rulesFor(REFERENCE_PI_VERSION);
          const switches = TREE_SWITCHES.filter((k) => userPi.rules[k] !== reference[k]);
          const mattered = new Map(switches.map((k) => [k, 0]));
          await fc.assert(
            fc.asyncProperty(recipeArb, async (recipe) => {
              const views = await viewsOf(oracle, recipe, userPi.rules);
              assertSameView(views, stats, `pi ${version}`);
              for (const k of switches) {
                const flipped = ourViewOf(recipe, { ...userPi.rules, [k]: reference[k] });
                if (differingKeys(flipped, views.pi).length > 0) mattered.set(k, mattered.get(k)! + 1);
              }
            }),
            { numRuns: TREES, endOnFailure: true, includeErrorInReport: true },
          );
          assertCoverage(stats, TREES);
          console.log(
            `pi ${version}: ${JSON.stringify(stats)}; trees where pi 1.6.0's rule would differ: ${JSON.stringify(Object.fromEntries(mattered))}`,
          );
        });

        it(`${SETTINGS_RUNS} random settings and models configurations with pi ${version}'s catalog`, async () => {
          const dir = fs.mkdtempSync(path.join(tmp, `settings-${version}-`));
          await fc.assert(settingsModelsProperty(oracle, dir, userPi), {
            numRuns: SETTINGS_RUNS,
            endOnFailure: true,
            includeErrorInReport: true,
          });
        });
      }

      it("the documented rule differences on a fixed session: context_edit in branch summaries (1.5.0), nestedCalls file ops (0.99)", async () => {
        const jsonl = DIFFERENCES_SESSION;
        const reference = rulesFor(REFERENCE_PI_VERSION);
        const args = ["--agent-dir", "/nonexistent", "--no-project-settings", "--full", "--context-window", "16000"];
        const session = SessionFile.fromBytes(jsonl);
        const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 1 };
        const view = (rules: PiRules) =>
          oracleView(session, { settings, contextWindow: 16000, branchTarget: "a1", rules });
        const pi = await oracle.oracle({
          entriesJsonl: jsonl,
          args: [...args, "--reserve-tokens", "1000", "--keep-recent-tokens", "1", "--branch-target", "a1"],
        });
        const ours = view(userPi.rules);
        assert.deepEqual(ours.branchSummary, pi.branchSummary, "branch summary with this pi's rules");
        assert.deepEqual(ours.prepareCompaction, pi.prepareCompaction, "compaction with this pi's rules");
        for (const [k, key] of [
          ["branchSummaryContextEdits", "branchSummary"],
          ["nestedCallFileOps", "prepareCompaction"],
        ] as const) {
          const flipped = view({ ...userPi.rules, [k]: !userPi.rules[k] });
          if (userPi.rules[k] === reference[k]) continue;
          assert.notDeepEqual(flipped[key], pi[key], `pi ${version} differs from pi 1.6.0 in ${k}`);
        }
        // the reference version (and every version with the same switches) shows the 1.6.0 values
        const fileLists = (pi.prepareCompaction as { fileLists: { modifiedFiles: string[] } }).fileLists;
        assert.equal(fileLists.modifiedFiles.includes("src/nested.ts"), userPi.rules.nestedCallFileOps);
      });

      it("models.json limits ≤ 0: the whole file is ignored from pi 1.3.0, only that model keeps 0 before", async () => {
        const agentDir = fs.mkdtempSync(path.join(tmp, `limits-${version}-`));
        const models = {
          providers: {
            custom: {
              baseUrl: "http://127.0.0.1:1/v1",
              api: "openai-completions",
              apiKey: "x",
              models: [
                { id: "zero", contextWindow: 0 },
                { id: "fine", contextWindow: 32768 },
              ],
            },
            anthropic: { modelOverrides: { "claude-sonnet-4-5": { contextWindow: 424242 } } },
          },
        };
        fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
        const config = readModelsConfig(agentDir, userPi.rules);
        for (const [provider, modelId] of [
          ["custom", "zero"],
          ["custom", "fine"],
          ["anthropic", "claude-sonnet-4-5"],
        ] as const) {
          const jsonl = `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: tmp })}\n${JSON.stringify({ type: "model_change", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", provider, modelId })}\n`;
          const pi = (await oracle.oracle({ entriesJsonl: jsonl, args: ["--agent-dir", agentDir] })) as {
            model: { contextWindow: number | null };
          };
          const ours = resolveContextWindow(provider, modelId, config, undefined, userPi.catalog, userPi.rules);
          assert.equal(ours.value ?? null, pi.model.contextWindow, `${provider}/${modelId}`);
        }
        const wholeFileIgnored = config.error !== undefined;
        assert.equal(wholeFileIgnored, userPi.rules.modelsJsonPositiveLimits, config.error ?? "no error");
      });
    });
  }
});
