/**
 * models.json validity against pi 1.6.0 itself: for every shared case (test/support/models-schema-cases.ts)
 * pi's registry either has the file's models (valid) or reports a registry error and none of them;
 * readModelsConfig must decide the same.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { rulesFor } from "../../src/core/pi/versions";
import { readModelsConfig } from "../../src/core/rules/models";
import { MODELS_SCHEMA_CASES } from "../support/models-schema-cases";
import { REPO_ROOT } from "../support/paths";

interface CatalogOracle {
  catalog(request: {
    agentFiles: Record<string, string>;
  }): Promise<{ registryError?: string; models: Record<string, unknown> }>;
  close(): Promise<void>;
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-models-schema-conf-"));
let oracle: CatalogOracle;
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<CatalogOracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** `text` as the models.json of a new agent dir `name` under the temp dir, read as pi 1.6.0's rules read it. */
function readOurs(name: string, text: string): ReturnType<typeof readModelsConfig> {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "models.json"), text);
  return readModelsConfig(dir, rulesFor("1.6.0"));
}

describe("models.json validity agrees with pi 1.6.0's ModelConfig", () => {
  let n = 0;
  for (const c of MODELS_SCHEMA_CASES) {
    it(c.name, async () => {
      const text = typeof c.json === "string" ? c.json : JSON.stringify(c.json);
      const pi = await oracle.catalog({ agentFiles: { "models.json": text } });
      const piValid = pi.registryError === undefined;
      assert.equal(piValid, c.valid, `pi: ${pi.registryError ?? "valid"}`);
      const ours = readOurs(`agent-${++n}`, text);
      assert.equal(
        ours.error === undefined,
        piValid,
        `ours: ${ours.error ?? "valid"}\npi: ${pi.registryError ?? "valid"}`,
      );
      if (c.path) assert.ok(pi.registryError!.includes(`  - ${c.path}:`), pi.registryError);
    });
  }
});

/** Random values put at random places of a valid file: pi and we must agree on every one. */
describe("models.json validity agrees with pi 1.6.0 on random field values", () => {
  const RUNS = Number(process.env.PI_CONTEXT_MODELS_SCHEMA_RUNS ?? 150);
  const value = fc.oneof(
    fc.constantFrom(0, -1, 1, 1.5, 1e9, "", "x", "text", "image", "radius", true, false, null, [], {}, ["text"], [1]),
    fc.dictionary(
      fc.constantFrom("input", "output", "cacheRead", "cacheWrite", "short", "high", "maxRequestBytes", "images"),
      fc.constantFrom(0, 2, "2", null, true),
      { maxKeys: 4 },
    ),
  );
  const where = fc.constantFrom(
    ["provider"],
    ["model"],
    ["override"],
    ["model", "cost"],
    ["override", "cost"],
    ["model", "compat"],
    ["provider", "compat"],
    ["model", "thinkingLevelMap"],
    ["model", "inputLimits"],
    ["model", "promptCache"],
  );
  const field = fc.constantFrom(
    "name",
    "api",
    "baseUrl",
    "apiKey",
    "oauth",
    "headers",
    "compat",
    "authHeader",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
    "thinkingLevelMap",
    "inputLimits",
    "promptCache",
    "samplingParams",
    "samplingParamsByThinkingLevel",
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "tiers",
    "supportsStore",
    "maxTokensField",
    "thinkingFormat",
    "high",
    "short",
    "maxRequestBytes",
    "images",
    "other",
  );
  let n = 0;
  it(`${RUNS} random files`, async () => {
    await fc.assert(
      fc.asyncProperty(where, field, value, async (place, key, v) => {
        const model: Record<string, unknown> = {
          id: "m",
          contextWindow: 50000,
          cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
        };
        const over: Record<string, unknown> = { contextWindow: 90000, cost: { input: 1 } };
        const prov: Record<string, unknown> = {
          baseUrl: "http://127.0.0.1:1/v1",
          api: "openai-completions",
          apiKey: "x",
          models: [model],
        };
        const target = { provider: prov, model, override: over }[place[0] as "provider" | "model" | "override"];
        let obj: Record<string, unknown> = target;
        if (place[1]) obj = (target[place[1]] as Record<string, unknown>) ?? (target[place[1]] = {});
        obj[key] = v;
        const text = JSON.stringify({
          providers: { p: prov, anthropic: { modelOverrides: { "claude-sonnet-4-5": over } } },
        });
        const pi = await oracle.catalog({ agentFiles: { "models.json": text } });
        const ours = readOurs(`random-${++n}`, text);
        assert.equal(
          ours.error === undefined,
          pi.registryError === undefined,
          `${text}\nours: ${ours.error ?? "valid"}\npi: ${pi.registryError ?? "valid"}`,
        );
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
