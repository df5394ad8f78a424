/** The user's pi's model catalog read as data (`src/core/pi/catalog.ts`, `bundleCatalog.ts`) on fake installs. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { LiteralParseError, parseLiteral } from "../../../../src/core/pi/bundleCatalog";
import { catalogFor, readBundleCatalog, readPiAiCatalog, snapshotCatalog } from "../../../../src/core/pi/catalog";
import { piAt, type PiInstall } from "../../../../src/core/pi/locate";
import { fakePiAi, fakePiPackage, write } from "./fakePi";

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-catalog-")));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

/** A bundle chunk the way esbuild writes pi's inlined catalog (minified literals). */
const CHUNK = `var demo_default={"openai-completions":{"chat:big":{id:"big",name:"Big \\u00e9\\x21",contextWindow:2e3,maxTokens:1024,reasoning:!0,cost:{input:.5,output:2,cacheRead:0,cacheWrite:0},type:"chat"},"image:pic":{id:"pic",contextWindow:1,maxTokens:1,type:"image"}}};
var DEMO_MODELS=flattenChatModelCatalog("demo",demo_default);
var other_default={"openai-completions":{"chat:x":{id:"x",contextWindow:5,maxTokens:1,reasoning:!1,type:"chat"}}};
var OTHER_MODELS=flattenChatModelCatalog("other",other_default);
var manifest_default={schemaVersion:6,generatedAt:"2026-11-10T12:05:37.628Z",files:{}};
`;

describe("pi-ai's JSON data", () => {
  it("schema 6: chat models only, keyed by id, a later api group wins; window, output limit, name, prices", () => {
    const c = readPiAiCatalog(fakePiAi(fresh("pi-ai"), "1.5.2"), "1.5.2");
    assert.equal(c.origin, "pi-ai-data");
    assert.equal(c.name, "pi 1.5.2's model catalog");
    assert.equal(c.generatedAt, Date.parse("2026-11-10T12:05:37.628Z"));
    assert.deepEqual([...c.models.keys()], ["demo/big"]);
    assert.deepEqual(c.models.get("demo/big"), {
      contextWindow: 300000,
      maxTokens: 4096,
      name: "Demo big",
      reasoning: true,
      cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 },
    });
    assert.deepEqual([...c.providers], ["demo"]);
  });

  it("schema 3 (pi 0.87): every entry, keyed by its key", () => {
    const c = readPiAiCatalog(fakePiAi(fresh("pi-ai"), "0.87.1", 3), "0.87.1");
    assert.deepEqual([...c.models.keys()].sort(), ["demo/big", "demo/small"]);
    assert.equal(c.models.get("demo/big")?.contextWindow, 262144);
  });
});

describe("the catalog inlined in pi's bundle", () => {
  it("parses esbuild's literals (no code runs), takes the chunk with the most providers", () => {
    const pkg = fakePiPackage(fresh("pi"), "1.5.2");
    write(path.join(pkg, "dist", "bundle", "chunks", "chunk-AAAA.js"), CHUNK);
    write(
      path.join(pkg, "dist", "bundle", "chunks", "github-copilot.js"),
      'var gh_default={"x":{"chat:y":{id:"y",contextWindow:9,maxTokens:9,type:"chat"}}};\nvar GH_MODELS=flattenChatModelCatalog("gh",gh_default);\n',
    );
    const c = readBundleCatalog(pkg, "1.5.2");
    assert.equal(c.origin, "bundle");
    assert.equal(c.location, path.join(pkg, "dist", "bundle", "chunks", "chunk-AAAA.js"));
    assert.equal(c.generatedAt, Date.parse("2026-11-10T12:05:37.628Z"));
    assert.deepEqual([...c.models.keys()], ["demo/big", "other/x"]);
    assert.deepEqual(c.models.get("demo/big"), {
      contextWindow: 2000,
      maxTokens: 1024,
      name: "Big é!",
      reasoning: true,
      cost: { input: 0.5, output: 2, cacheRead: 0, cacheWrite: 0 },
    });
  });

  it("parseLiteral: the subset esbuild emits, and a clear error for anything else", () => {
    assert.deepEqual(parseLiteral(`{a:[1,-2.5,.5,3e-2],"b c":'x\\ny',d:!1,e:null,f:void 0,"1":true}`, 0).value, {
      a: [1, -2.5, 0.5, 0.03],
      "b c": "x\ny",
      d: false,
      e: null,
      f: undefined,
      "1": true,
    });
    // starts at `pos`, ends after the literal; keys as JSON.parse makes them (`__proto__` is an own key)
    const src = 'var x_default={"__proto__":{polluted:1},t:`a\\u00e9`,n:-0x10,k:[],"\\u0041":""};var Y=1;';
    const at = src.indexOf("{");
    const parsed = parseLiteral(src, at);
    assert.equal(src.slice(parsed.end), ";var Y=1;");
    const value = parsed.value as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ["__proto__", "t", "n", "k", "A"]);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(value["__proto__"], { polluted: 1 });
    assert.deepEqual([value.t, value.n, value.k], ["aé", -16, []]);
    for (const bad of [
      "{a:someVariable}",
      "{a:`x${y}`}",
      '{a:"unterminated',
      "{a:f()}",
      "{[k]:1}",
      "{a(){}}",
      "{...o}",
      "[1,,2]",
      "{a:/x/}",
      "{a:1n}",
      "{a:-b}",
      "{a:!x}",
      "{a:typeof 0}",
      "{get a(){return 1}}",
    ])
      assert.throws(() => parseLiteral(bad, 0), LiteralParseError, bad);
  });
});

describe("catalogFor: which copy the user's pi uses", () => {
  const install = (dir: string): PiInstall => {
    const found = piAt(dir, "setting", { HOME: tmp, PATH: "" });
    assert.ok(!("problem" in found));
    return found;
  };

  it("pi-ai's data when pi-ai has pi's version; cached by file stamps", () => {
    const pkg = fakePiPackage(fresh("pi"), "1.5.2", { piAiVersion: "1.5.2" });
    const first = catalogFor(install(pkg));
    assert.equal(first.catalog.origin, "pi-ai-data");
    assert.equal(first.problem, undefined);
    assert.equal(catalogFor(install(pkg)), first, "cached");
    const manifest = path.join(pkg, "node_modules/@earendil-works/pi-ai/dist/providers/data/.manifest.json");
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(manifest, later, later);
    assert.notEqual(catalogFor(install(pkg)), first, "read again after the data changed");
  });

  it("the bundle's copy when pi-ai next to pi has another version (the pi executable never loads it)", () => {
    const pkg = fakePiPackage(fresh("pi"), "1.0.3", { piAiVersion: "1.6.0" });
    write(path.join(pkg, "dist", "bundle", "chunks", "chunk-AAAA.js"), CHUNK);
    const lookup = catalogFor(install(pkg));
    assert.equal(lookup.catalog.origin, "bundle");
    assert.equal(lookup.catalog.piVersion, "1.0.3");
  });

  it("the snapshot, named as such, when neither can be read — with the reason", () => {
    const pkg = fakePiPackage(fresh("pi"), "1.7.0");
    fs.mkdirSync(path.join(pkg, "dist", "bundle", "chunks"), { recursive: true });
    const lookup = catalogFor(install(pkg));
    assert.equal(lookup.catalog, snapshotCatalog());
    assert.equal(lookup.catalog.name, "pi-context's snapshot of pi 1.6.0's catalog");
    assert.match(lookup.problem ?? "", /^pi 1\.7\.0's model catalog could not be read \(pi's bundle: no model catalog/);
    assert.equal(catalogFor(undefined).catalog, snapshotCatalog());
  });

  it("the snapshot: pi 1.6.0's catalog with its generation time and prices", () => {
    const s = snapshotCatalog();
    assert.equal(s.piVersion, "1.6.0");
    assert.equal(s.origin, "snapshot");
    assert.equal(s.generatedAt, Date.parse("2026-11-20T10:48:49.496Z"));
    assert.equal(s.models.get("mistral/mistral-large-latest")?.contextWindow, 1_048_576);
    assert.ok(s.models.get("anthropic/claude-sonnet-4-5")?.cost, "prices kept");
    assert.ok(s.models.size > 1500);
  });
});
