#!/usr/bin/env node
// Experiments behind docs/notes/pi-model-resolution.md, run through pi 1.6.0 itself (the oracle's
// batch process: pi's ModelRuntime, SettingsManager, getBranchSelection; PI_OFFLINE=1).
// Each experiment is a small in-memory session + in-memory agent files; the script asserts the
// claimed value and prints one line per experiment. Runs with the default Node:
//
//   node test/conformance/oracle/experiments/model-resolution.mjs
//
// Exit 0 = every claim in the note holds for pi 1.6.0.

import { OracleClient } from "../oracle-client.mjs";

const GENERATED_AT = Date.parse("2026-11-20T10:48:49.496Z"); // pi-ai 1.6.0 providers/data/.manifest.json
const SONNET = {
  id: "claude-sonnet-4-5",
  name: "Claude Sonnet 4.5 (latest)",
  api: "anthropic-messages",
  provider: "anthropic",
  baseUrl: "https://api.anthropic.com",
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000,
  maxTokens: 64000,
  type: "chat",
};

let t = Date.UTC(2026, 0, 1);
const ts = () => new Date((t += 1000)).toISOString();
function session(entries) {
  const header = {
    type: "session",
    version: 3,
    id: "0000aaaa-1111-4222-8333-444455556666",
    timestamp: ts(),
    cwd: "/nonexistent-project",
  };
  let parentId = null;
  const lines = [header];
  for (const e of entries) {
    const entry = { ...e, parentId, timestamp: ts() };
    lines.push(entry);
    parentId = e.id;
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}
const user = (id, text = "hi") => ({ type: "message", id, message: { role: "user", content: text, timestamp: t } });
const assistant = (id, provider, model) => ({
  type: "message",
  id,
  message: {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    api: "anthropic-messages",
    provider,
    model,
    usage: {
      input: 10,
      output: 2,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 12,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: t,
  },
});
const modelChange = (id, provider, modelId) => ({ type: "model_change", id, provider, modelId });

const sonnetSession = session([user("u1"), assistant("a1", "anthropic", "claude-sonnet-4-5")]);
const store = (lastModified, models) => ({
  anthropic: { models, lastModified, checkedAt: GENERATED_AT + 1, etag: "x" },
});
const override = (fields) => ({ providers: { anthropic: { modelOverrides: { "claude-sonnet-4-5": fields } } } });

const experiments = [
  { name: "built-in catalog", entries: sonnetSession, expect: { contextWindow: 200000, maxTokens: 64000 } },
  {
    name: "models-store.json newer than the built-in data replaces the model (offline)",
    entries: sonnetSession,
    agentFiles: { "models-store.json": store(GENERATED_AT + 1, [{ ...SONNET, contextWindow: 123456 }]) },
    expect: { contextWindow: 123456, maxTokens: 64000 },
  },
  {
    name: "models-store.json not newer than the built-in data is ignored",
    entries: sonnetSession,
    agentFiles: { "models-store.json": store(GENERATED_AT, [{ ...SONNET, contextWindow: 123456 }]) },
    expect: { contextWindow: 200000 },
  },
  {
    name: "models-store.json adds an unknown model id",
    entries: session([user("u1"), assistant("a1", "anthropic", "claude-store-only")]),
    agentFiles: {
      "models-store.json": store(GENERATED_AT + 1, [{ ...SONNET, id: "claude-store-only", contextWindow: 333000 }]),
    },
    expect: { contextWindow: 333000 },
  },
  {
    name: "models.json modelOverrides patches a built-in model",
    entries: sonnetSession,
    agentFiles: { "models.json": override({ contextWindow: 150000 }) },
    expect: { contextWindow: 150000, maxTokens: 64000 },
  },
  {
    name: "modelOverrides beat models-store.json",
    entries: sonnetSession,
    agentFiles: {
      "models.json": override({ contextWindow: 150000 }),
      "models-store.json": store(GENERATED_AT + 1, [{ ...SONNET, contextWindow: 123456, maxTokens: 1000 }]),
    },
    expect: { contextWindow: 150000, maxTokens: 1000 },
  },
  {
    name: 'models.json: // line comments and trailing commas are allowed ("//" inside strings kept)',
    entries: session([user("u1"), assistant("a1", "local", "my-model")]),
    agentFiles: {
      "models.json": `// comment\n{ "providers": { "local": { "baseUrl": "http://127.0.0.1:1/v1", // the server\n "api": "openai-completions", "apiKey": "x",\n "models": [{ "id": "my-model", "contextWindow": 150001, },], }, }, }\n`,
    },
    expect: { contextWindow: 150001 },
  },
  {
    name: "models.json: /* block */ comments are NOT allowed -> parse error, file ignored",
    entries: sonnetSession,
    agentFiles: {
      "models.json": `{ /* block */ "providers": { "anthropic": { "modelOverrides": { "claude-sonnet-4-5": { "contextWindow": 150001 } } } } }\n`,
    },
    expect: { contextWindow: 200000, registryError: /Failed to parse models\.json/ },
  },
  {
    name: "schema-invalid models.json is ignored as a whole (error reported)",
    entries: sonnetSession,
    agentFiles: {
      "models.json": {
        providers: {
          anthropic: { modelOverrides: { "claude-sonnet-4-5": { contextWindow: 150000 } } },
          broken: {
            baseUrl: "http://x/v1",
            api: "openai-completions",
            apiKey: "x",
            models: [{ id: "m", contextWindow: "big" }],
          },
        },
      },
    },
    expect: { contextWindow: 200000, registryError: /Invalid models\.json schema/ },
  },
  {
    name: "custom provider model without limits gets 128000 / 16384",
    entries: session([user("u1"), assistant("a1", "local", "my-model")]),
    agentFiles: {
      "models.json": {
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:1/v1",
            api: "openai-completions",
            apiKey: "x",
            models: [{ id: "my-model" }],
          },
        },
      },
    },
    expect: { contextWindow: 128000, maxTokens: 16384 },
  },
  {
    name: "models.json models[] entry with a built-in id replaces it (limits NOT inherited)",
    entries: sonnetSession,
    agentFiles: { "models.json": { providers: { anthropic: { models: [{ id: "claude-sonnet-4-5" }] } } } },
    expect: { contextWindow: 128000, maxTokens: 16384 },
  },
  {
    name: "modelOverrides apply on top of a models[] replacement",
    entries: sonnetSession,
    agentFiles: {
      "models.json": {
        providers: {
          anthropic: {
            models: [{ id: "claude-sonnet-4-5", contextWindow: 90000 }],
            modelOverrides: { "claude-sonnet-4-5": { contextWindow: 95000 } },
          },
        },
      },
    },
    expect: { contextWindow: 95000 },
  },
  {
    name: "provider composition error (custom models without api) drops only that provider",
    entries: session([user("u1"), assistant("a1", "local", "my-model")]),
    agentFiles: {
      "models.json": {
        providers: { local: { baseUrl: "http://127.0.0.1:1/v1", apiKey: "x", models: [{ id: "my-model" }] } },
      },
    },
    expect: { resolved: null, registryError: /Provider "local"/ },
  },
  {
    name: "unknown model: not resolved, no window",
    entries: session([user("u1"), assistant("a1", "nobody", "nothing")]),
    expect: { resolved: null, contextWindow: null },
  },
  {
    name: "selection: latest assistant after a model_change wins",
    entries: session([
      modelChange("m1", "openai", "gpt-5"),
      user("u1"),
      assistant("a1", "anthropic", "claude-sonnet-4-5"),
    ]),
    expect: { selection: "anthropic/claude-sonnet-4-5", contextWindow: 200000 },
  },
  {
    name: "selection: a model_change after the last assistant wins",
    entries: session([
      user("u1"),
      assistant("a1", "anthropic", "claude-sonnet-4-5"),
      modelChange("m1", "openai", "gpt-5"),
    ]),
    expect: { selection: "openai/gpt-5", contextWindow: 400000 },
  },
  {
    name: "selection: no model on the branch -> settings defaultProvider/defaultModel",
    entries: session([user("u1")]),
    agentFiles: { "settings.json": { defaultProvider: "openai", defaultModel: "gpt-5" } },
    expect: { selection: "openai/gpt-5", source: "settings-default", contextWindow: 400000 },
  },
  {
    name: "compaction.modelOverrides keyed by provider/modelId of the resolved model",
    entries: sonnetSession,
    agentFiles: {
      "settings.json": {
        compaction: {
          reserveTokens: 1000,
          modelOverrides: { "anthropic/claude-sonnet-4-5": { reserveTokens: 30000 } },
        },
      },
    },
    expect: { reserveTokens: 30000, keepRecentTokens: 20000 },
  },
];

const client = await OracleClient.start();
let failed = 0;
try {
  for (const x of experiments) {
    const r = await client.oracle({ entriesJsonl: x.entries, agentFiles: x.agentFiles ?? {} });
    const got = {
      selection: r.model.selection ? `${r.model.selection.provider}/${r.model.selection.modelId}` : null,
      source: r.model.selection?.source ?? null,
      resolved: r.model.resolved,
      contextWindow: r.model.contextWindow,
      maxTokens: r.model.resolved?.maxTokens ?? null,
      registryError: r.model.registryError ?? null,
      reserveTokens: r.settings.compaction.reserveTokens,
      keepRecentTokens: r.settings.compaction.keepRecentTokens,
    };
    const problems = [];
    for (const [k, want] of Object.entries(x.expect)) {
      const have = got[k];
      const ok =
        want instanceof RegExp
          ? typeof have === "string" && want.test(have)
          : JSON.stringify(have) === JSON.stringify(want);
      if (!ok) problems.push(`${k}: want ${want}, got ${JSON.stringify(have)}`);
    }
    if (problems.length) failed++;
    const shown = `${got.selection ?? "-"} window=${got.contextWindow} maxTokens=${got.maxTokens}${got.registryError ? ` error="${got.registryError.split("\n")[0]}"` : ""}`;
    process.stdout.write(`${problems.length ? "FAIL" : "ok  "} ${x.name}: ${shown}\n`);
    for (const p of problems) process.stdout.write(`       ${p}\n`);
  }
} finally {
  await client.close();
}
process.stdout.write(`${experiments.length - failed}/${experiments.length} claims hold for pi 1.6.0\n`);
process.exitCode = failed ? 1 : 0;
