/**
 * Settings and model windows against pi itself, on random configurations (fast-check): global +
 * project `settings.json` (valid and invalid `compaction.*`, `modelOverrides` for the session's
 * model and others), `models.json` (custom models, overrides, `//` comments, trailing commas,
 * schema errors, limits ≤ 0) and `models-store.json` (older / between pi 1.5.2's and 1.6.0's catalog
 * / newer / without `lastModified`; the session's model or another; OpenRouter's personalised list).
 * pi's `getCompactionSettings(model)` and `ModelRuntime.getModel(...).contextWindow` must equal ours
 * — including pi's validation error messages. Shared by the pi 1.6.0 test and the version matrix.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { resolveSettings } from "../../src/core/rules/settings";
import { readModelsConfig, readModelsStore, resolveContextWindow } from "../../src/core/rules/models";
import type { UserPi } from "../../src/core/pi/userPi";
import { SessionBuilder } from "./session-builder";

/** The oracle batch client as this property uses it. */
export interface SettingsOracle {
  oracle(request: {
    entriesJsonl: string;
    args: string[];
    agentFiles?: Record<string, unknown>;
  }): Promise<Record<string, unknown>>;
}

const MODELS = [
  { provider: "anthropic", modelId: "claude-sonnet-4-5" },
  { provider: "openai", modelId: "gpt-5" },
  { provider: "custom", modelId: "local-7b" },
  { provider: "custom", modelId: "org/model:v1" },
  { provider: "unknown", modelId: "nope" },
  { provider: "openrouter", modelId: "openai/gpt-4o" },
];
const tokenValue = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 200000 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, "4000", null, true, 2 ** 60, [], {}) },
);
const overrideEntry = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ reserveTokens: tokenValue, keepRecentTokens: tokenValue }, { requiredKeys: [] }),
  },
  { weight: 1, arbitrary: fc.constantFrom(5, "x", null, [1]) },
);
const compactionArb = fc.record(
  {
    enabled: fc.constantFrom(true, false, "no", 0),
    reserveTokens: tokenValue,
    keepRecentTokens: tokenValue,
    modelOverrides: fc.dictionary(
      fc.constantFrom(...MODELS.map((m) => `${m.provider}/${m.modelId}`), "Anthropic/claude-sonnet-4-5", "other/x"),
      overrideEntry,
      { maxKeys: 3 },
    ),
  },
  { requiredKeys: [] },
);
const settingsArb = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        compaction: compactionArb,
        branchSummary: fc.record(
          { reserveTokens: fc.nat({ max: 50000 }), skipPrompt: fc.boolean() },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom("{ not json", "", "[]", '{"compaction": 5}') },
);
const modelsJsonArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  {
    weight: 6,
    arbitrary: fc.record({
      window: fc.option(fc.integer({ min: 1000, max: 2_000_000 }), { nil: undefined }),
      override: fc.option(fc.integer({ min: 1000, max: 2_000_000 }), { nil: undefined }),
      builtinOverride: fc.option(fc.integer({ min: 1000, max: 2_000_000 }), { nil: undefined }),
      replaceBuiltin: fc.boolean(),
      comments: fc.boolean(),
      badWindow: fc.constantFrom(undefined, undefined, undefined, "big", 0, -5),
      noApi: fc.boolean(),
    }),
  },
);
/**
 * The cached catalog's `lastModified`: older than every catalog of the matrix, between pi 1.5.2's
 * (2026-11-10) and pi 1.6.0's (2026-11-20) catalog, newer than all; or missing (OpenRouter's
 * personalised list has none). `other`: the stored model is another one than the session's.
 */
const storeArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.record({
      when: fc.constantFrom("old", "between", "newer", "none"),
      other: fc.boolean(),
      window: fc.integer({ min: 1000, max: 3_000_000 }),
    }),
  },
);
const STORE_TIMES = {
  old: Date.parse("2026-01-01T00:00:00Z"),
  between: Date.parse("2026-11-15T00:00:00Z"),
  newer: Date.parse("2026-11-25T00:00:00Z"),
  none: undefined,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function modelsJsonText(m: any): string | undefined {
  if (!m) return undefined;
  const custom: Record<string, unknown>[] = [
    { id: "local-7b", ...(m.window !== undefined ? { contextWindow: m.window } : {}) },
    { id: "org/model:v1", contextWindow: m.badWindow ?? 32768 },
  ];
  const providers: Record<string, unknown> = {
    custom: {
      baseUrl: "http://127.0.0.1:1/v1",
      ...(m.noApi ? {} : { api: "openai-completions" }),
      apiKey: "x",
      models: custom,
      ...(m.override !== undefined ? { modelOverrides: { "local-7b": { contextWindow: m.override } } } : {}),
    },
  };
  if (m.builtinOverride !== undefined || m.replaceBuiltin) {
    providers.anthropic = {
      ...(m.builtinOverride !== undefined
        ? { modelOverrides: { "claude-sonnet-4-5": { contextWindow: m.builtinOverride } } }
        : {}),
      ...(m.replaceBuiltin ? { models: [{ id: "claude-sonnet-4-5" }] } : {}),
    };
  }
  const text = JSON.stringify({ providers }, null, 2);
  return m.comments
    ? `// models\n${text.replace('"providers": {', '"providers": { // all of them').replace(/\n}$/, ",\n}")}`
    : text;
}

let counter = 0;

/**
 * The property: for random settings/models/store files in `tmp`, pi's (the oracle's) compaction
 * settings and window equal ours computed with `userPi`'s catalog and rules (default: the snapshot of
 * pi 1.6.0 and its rules).
 */
export function settingsModelsProperty(oracle: SettingsOracle, tmp: string, userPi?: UserPi) {
  return fc.asyncProperty(
    fc.constantFrom(...MODELS),
    settingsArb,
    settingsArb,
    modelsJsonArb,
    storeArb,
    async (model, globalSettings, projectSettings, modelsJson, store) => {
      const dir = path.join(tmp, `c${counter++}`);
      const agentDir = path.join(dir, "agent");
      const project = path.join(dir, "project");
      fs.mkdirSync(path.join(project, ".pi"), { recursive: true });
      fs.mkdirSync(agentDir, { recursive: true });
      const write = (file: string, value: unknown): void => {
        if (value === undefined) return;
        fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
      };
      write(path.join(agentDir, "settings.json"), globalSettings);
      write(path.join(project, ".pi", "settings.json"), projectSettings);
      const modelsText = modelsJsonText(modelsJson);
      write(path.join(agentDir, "models.json"), modelsText);
      if (store) {
        write(path.join(agentDir, "models-store.json"), {
          [model.provider]: {
            models: [
              {
                id: store.other ? "some-other-model" : model.modelId,
                provider: model.provider,
                api: "openai-completions",
                name: "stored",
                contextWindow: store.window,
                maxTokens: 1000,
                input: ["text"],
                reasoning: false,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                baseUrl: "https://example.invalid",
              },
            ],
            ...(STORE_TIMES[store.when] !== undefined ? { lastModified: STORE_TIMES[store.when] } : {}),
            checkedAt: 1,
          },
        });
      }
      const jsonl = new SessionBuilder({ id: "s", cwd: project, timestamp: "2026-01-01T00:00:00.000Z" })
        .model("m1", model.provider, model.modelId)
        .user("u1", "hi")
        .jsonl();
      let pi: Record<string, unknown> | undefined;
      let piError: string | undefined;
      try {
        pi = await oracle.oracle({ entriesJsonl: jsonl, args: ["--agent-dir", agentDir] });
      } catch (error) {
        piError = (error as Error).message;
      }
      const ours = resolveSettings({
        agentDir,
        cwd: project,
        projectSettings: "always",
        modelKey: `${model.provider}/${model.modelId}`,
      });
      const errors = [ours.compaction.reserveTokens.error, ours.compaction.keepRecentTokens.error].filter(
        Boolean,
      ) as string[];
      if (piError) {
        assert.ok(errors.length > 0, `pi failed (${piError}) but we found no error`);
        assert.ok(piError.includes(errors[0]!), `pi: ${piError}\nours: ${errors[0]}`);
        return;
      }
      assert.deepEqual(errors, [], "we report an error pi does not have");
      const piSettings = (pi!.settings as { compaction: unknown; branchSummary: unknown }).compaction;
      assert.deepEqual(
        {
          enabled: ours.compaction.enabled.value,
          reserveTokens: ours.compaction.reserveTokens.value,
          keepRecentTokens: ours.compaction.keepRecentTokens.value,
        },
        piSettings,
      );
      assert.deepEqual(
        { reserveTokens: ours.branchSummary.reserveTokens.value, skipPrompt: ours.branchSummary.skipPrompt.value },
        (pi!.settings as { branchSummary: unknown }).branchSummary,
      );
      const window = resolveContextWindow(
        model.provider,
        model.modelId,
        readModelsConfig(agentDir, userPi?.rules),
        readModelsStore(agentDir),
        userPi?.catalog,
        userPi?.rules,
      );
      const piModel = pi!.model as { contextWindow: number | null; registryError?: string };
      assert.equal(
        window.value ?? null,
        piModel.contextWindow,
        `window (pi registry error: ${piModel.registryError ?? "none"})`,
      );
    },
  );
}
