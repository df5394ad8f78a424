#!/usr/bin/env node
// Writes src/core/data/model-catalog.json: pi-ai 1.6.0's built-in CHAT model catalog, the data
// pi 1.6.0 starts from when it resolves a model's context window (see
// docs/notes/pi-model-resolution.md). Run under the Node 22 of the conformance package:
//
//   "$(node test/conformance/oracle/setup.mjs)" scripts/generate-model-catalog.mjs [--check] [--out FILE]
//
// --check: do not write; exit 1 if the file on disk differs from what would be written.
//
// Source (public pi-ai API only): `@earendil-works/pi-ai/providers/all` ->
// getBuiltinProviders() / getBuiltinModels(provider) (the generated catalog `MODELS`), cross-checked
// against builtinProviders()[i].getModels(), which is what pi's ModelRuntime registers.
// Output: {"generatedFrom": "@earendil-works/pi-ai@1.6.0", "generatedAt": "<the catalog's
// generation time, getBuiltinModelDataGeneratedAt()>", "models": {"<provider>/<modelId>":
// {"contextWindow", "maxTokens", "name", "reasoning", "cost"}}} (cost = pi-ai's `Model.cost`, US
// dollars per million tokens: input, output, cacheRead, cacheWrite[, tiers]); keys sorted (plain code-unit order), one
// model per line, so the file is deterministic and diffs stay readable. The key is exactly pi's
// `${model.provider}/${model.id}` (model ids may contain "/").

import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const EXPECTED_VERSION = "1.6.0";
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PI_AI_DIR = join(
  ROOT,
  "test",
  "conformance",
  "oracle",
  "node_modules",
  `pi-${EXPECTED_VERSION}`,
  "node_modules",
  "@earendil-works",
  "pi-ai",
);

const argv = process.argv.slice(2);
const outIndex = argv.indexOf("--out");
const OUT = outIndex >= 0 ? resolve(argv[outIndex + 1]) : join(ROOT, "src", "core", "data", "model-catalog.json");
const CHECK = argv.includes("--check");

function fail(message) {
  process.stderr.write(`generate-model-catalog: ${message}\n`);
  process.exit(1);
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  fail(`needs Node >= 22.19 (pi-ai ${EXPECTED_VERSION}); run it with "$(node test/conformance/oracle/setup.mjs)"`);
}
if (!existsSync(join(PI_AI_DIR, "package.json")))
  fail(`pi-ai not installed; run: node test/conformance/oracle/setup.mjs`);
const pkg = JSON.parse(readFileSync(join(PI_AI_DIR, "package.json"), "utf-8"));
if (pkg.name !== "@earendil-works/pi-ai" || pkg.version !== EXPECTED_VERSION) {
  fail(`expected @earendil-works/pi-ai@${EXPECTED_VERSION}, found ${pkg.name}@${pkg.version}`);
}
// The package exports "./providers/*" -> "./dist/providers/*.js" (import condition only).
const allExport = pkg.exports?.["./providers/*"]?.import;
if (allExport !== "./dist/providers/*.js") fail(`unexpected exports["./providers/*"]: ${JSON.stringify(allExport)}`);
const all = await import(pathToFileURL(join(PI_AI_DIR, "dist", "providers", "all.js")).href);

const models = {};
const runtimeProviders = new Map(all.builtinProviders().map((p) => [p.id, p]));
for (const provider of all.getBuiltinProviders()) {
  const catalog = all.getBuiltinModels(provider);
  const registered = runtimeProviders.get(provider)?.getModels() ?? [];
  const a = catalog
    .map((m) => m.id)
    .sort()
    .join("\n");
  const b = registered
    .map((m) => m.id)
    .sort()
    .join("\n");
  if (a !== b) fail(`provider ${provider}: getBuiltinModels() and builtinProviders().getModels() differ`);
  for (const m of catalog) {
    if (m.type !== undefined && m.type !== "chat") continue;
    if (m.provider !== provider) fail(`${provider}/${m.id}: model.provider is ${m.provider}`);
    const key = `${m.provider}/${m.id}`;
    if (key in models) fail(`duplicate model key ${key}`);
    for (const field of ["contextWindow", "maxTokens"]) {
      if (typeof m[field] !== "number" || !Number.isFinite(m[field])) fail(`${key}: ${field} = ${m[field]}`);
    }
    models[key] = {
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
      name: typeof m.name === "string" ? m.name : m.id,
      reasoning: m.reasoning === true,
      cost: m.cost,
    };
  }
}
for (const id of runtimeProviders.keys()) {
  if (!all.getBuiltinProviders().includes(id)) fail(`runtime provider ${id} has no generated catalog`);
}

const keys = Object.keys(models).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
const lines = keys.map((key, i) => {
  const m = models[key];
  const value = JSON.stringify({
    contextWindow: m.contextWindow,
    maxTokens: m.maxTokens,
    name: m.name,
    reasoning: m.reasoning,
    cost: m.cost,
  });
  return `    ${JSON.stringify(key)}: ${value}${i < keys.length - 1 ? "," : ""}`;
});
const generatedAt = new Date(all.getBuiltinModelDataGeneratedAt()).toISOString();
const text = `{\n  "generatedFrom": "@earendil-works/pi-ai@${EXPECTED_VERSION}",\n  "generatedAt": "${generatedAt}",\n  "models": {\n${lines.join("\n")}\n  }\n}\n`;
JSON.parse(text); // sanity

if (CHECK) {
  const current = existsSync(OUT) ? readFileSync(OUT, "utf-8") : "";
  if (current !== text) fail(`${OUT} is out of date (${keys.length} models expected); regenerate it`);
  process.stderr.write(`${OUT} is up to date (${keys.length} models)\n`);
} else {
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, text);
  process.stderr.write(
    `wrote ${OUT}: ${keys.length} chat models from ${all.getBuiltinProviders().length} providers, ${text.length} bytes\n`,
  );
}
