/**
 * Context windows resolved with the user's pi's catalog and rules (`src/core/rules/models.ts`):
 * the cached catalog counts only when newer than *that* catalog, OpenRouter's personalised list
 * (pi ≥ 1.3.0), models.json limits ≤ 0 (whole file ignored from 1.3.0, the provider before), and
 * the source named in words. The same rules run against every pi of the matrix in
 * test/conformance/matrix.test.ts.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import type { ModelCatalog } from "../../../../src/core/pi/catalog";
import { rulesFor } from "../../../../src/core/pi/versions";
import { readModelsConfig, readModelsStore, resolveContextWindow } from "../../../../src/core/rules/models";
import { windowSourceText } from "../../../../src/viewModel/sourceText";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-models-versions-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function agentDir(files: Record<string, unknown>): string {
  const dir = path.join(tmp, `agent-${++n}`);
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), JSON.stringify(value));
  return dir;
}

/** A tiny catalog of one pi version. */
function catalog(piVersion: string, generatedAt: string): ModelCatalog {
  const models = new Map([
    ["mistral/mistral-large-latest", { contextWindow: 262144, maxTokens: 8192, name: "Mistral Large" }],
    ["openrouter/openai/gpt-4o", { contextWindow: 128000, maxTokens: 16384, name: "GPT-4o" }],
  ]);
  return {
    piVersion,
    origin: "pi-ai-data",
    location: `/pis/${piVersion}/data`,
    generatedAt: Date.parse(generatedAt),
    models,
    providers: new Set(["mistral", "openrouter"]),
    name: `pi ${piVersion}'s model catalog`,
  };
}
const pi152 = catalog("1.5.2", "2026-11-10T12:05:37.628Z");
const pi160 = catalog("1.6.0", "2026-11-20T10:48:49.496Z");
const stored = (provider: string, id: string, contextWindow: number, lastModified?: number) => ({
  [provider]: {
    models: [{ id, provider, api: "openai-completions", contextWindow, maxTokens: 1000, type: "chat" }],
    ...(lastModified !== undefined ? { lastModified } : {}),
    checkedAt: 1,
  },
});

describe("windows with the user's pi's catalog", () => {
  it("named in words: pi 1.5.2's model catalog", () => {
    const w = resolveContextWindow("mistral", "mistral-large-latest", readModelsConfig(agentDir({})), undefined, pi152);
    assert.equal(w.value, 262144);
    assert.equal(w.catalog, "pi 1.5.2's model catalog");
    assert.equal(w.detail, "pi 1.5.2's model catalog (/pis/1.5.2/data: mistral/mistral-large-latest)");
    assert.equal(windowSourceText(w), "pi 1.5.2's model catalog (mistral/mistral-large-latest)");
    assert.equal(windowSourceText(w, "file"), w.detail);
  });

  it("the cached catalog counts only when newer than that pi's own catalog", () => {
    const dir = agentDir({
      "models-store.json": stored("mistral", "mistral-large-latest", 111111, Date.parse("2026-11-15T00:00:00Z")),
    });
    const config = readModelsConfig(dir);
    const store = readModelsStore(dir);
    assert.equal(resolveContextWindow("mistral", "mistral-large-latest", config, store, pi152).value, 111111);
    assert.equal(resolveContextWindow("mistral", "mistral-large-latest", config, store, pi160).value, 262144);
  });

  it("OpenRouter's personalised list (pi ≥ 1.3.0) replaces the catalog whenever non-empty, without lastModified", () => {
    const dir = agentDir({ "models-store.json": stored("openrouter", "some/other", 5000) });
    const config = readModelsConfig(dir);
    const store = readModelsStore(dir);
    assert.equal(resolveContextWindow("openrouter", "openai/gpt-4o", config, store, pi152).value, undefined);
    assert.equal(resolveContextWindow("openrouter", "some/other", config, store, pi152).value, 5000);
    const old = { ...pi152, piVersion: "1.0.3" };
    assert.equal(
      resolveContextWindow("openrouter", "openai/gpt-4o", config, store, old, rulesFor("1.0.3")).value,
      128000,
      "before 1.3.0 a stored catalog without lastModified is ignored",
    );
  });

  it("models.json limits ≤ 0: the whole file is ignored from pi 1.3.0; before, that provider falls back", () => {
    const dir = agentDir({
      "models.json": {
        providers: {
          custom: {
            baseUrl: "http://x/v1",
            api: "openai-completions",
            apiKey: "k",
            models: [{ id: "zero", contextWindow: 0 }],
          },
          mistral: { modelOverrides: { "mistral-large-latest": { contextWindow: 424242 } } },
        },
      },
    });
    const now = readModelsConfig(dir, rulesFor("1.6.0"));
    assert.match(now.error ?? "", /contextWindow: Expected number > 0/);
    assert.equal(resolveContextWindow("mistral", "mistral-large-latest", now, undefined, pi160).value, 262144);
    const rules103 = rulesFor("1.0.3");
    const then = readModelsConfig(dir, rules103);
    assert.equal(then.error, undefined);
    const old = { ...pi152, piVersion: "1.0.3" };
    assert.equal(resolveContextWindow("mistral", "mistral-large-latest", then, undefined, old, rules103).value, 424242);
    assert.equal(resolveContextWindow("custom", "zero", then, undefined, old, rules103).value, undefined);
  });

  it("models.json contextWindow 1e400 (Infinity once parsed) fails pi's schema like any non-number", () => {
    const dir = path.join(tmp, `agent-${++n}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "models.json"),
      '{"providers":{"custom":{"baseUrl":"http://x/v1","api":"openai-completions","apiKey":"k","models":[{"id":"big","contextWindow":1e400}]}}}',
    );
    for (const version of ["1.6.0", "1.0.3"]) {
      const config = readModelsConfig(dir, rulesFor(version));
      assert.match(config.error ?? "", /providers\.custom\.models\.0\.contextWindow: Expected number/, version);
      const old = { ...pi152, piVersion: version };
      assert.equal(resolveContextWindow("custom", "big", config, undefined, old, rulesFor(version)).value, undefined);
    }
  });

  it("prices: the catalog's, a models.json model's (pi's zero default), an override's field by field", () => {
    const withCost: ModelCatalog = {
      ...pi160,
      models: new Map([
        [
          "mistral/m",
          { contextWindow: 1000, maxTokens: 10, cost: { input: 2, output: 6, cacheRead: 0.2, cacheWrite: 0 } },
        ],
      ]),
    };
    const dir = agentDir({
      "models.json": {
        providers: {
          mistral: { modelOverrides: { m: { cost: { output: 7 } } } },
          custom: { baseUrl: "http://x/v1", api: "openai-completions", apiKey: "k", models: [{ id: "c" }] },
        },
      },
    });
    const config = readModelsConfig(dir);
    assert.deepEqual(resolveContextWindow("mistral", "m", config, undefined, withCost).model?.cost, {
      input: 2,
      output: 7,
      cacheRead: 0.2,
      cacheWrite: 0,
    });
    assert.deepEqual(resolveContextWindow("custom", "c", config, undefined, withCost).model?.cost, {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
    });
  });
});
