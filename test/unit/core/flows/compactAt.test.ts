/**
 * "Compact at…" without VS Code: the input (percent or tokens), the value and threshold, the
 * in-place JSON edit (comments and odd formatting kept: only one key changes), and the safety of
 * the write (pi's lock, a file changed meanwhile, a file pi cannot read, symlinks and modes kept).
 * pi resolving the written value: `test/conformance/compact-at.test.ts`.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import {
  compactAtValue,
  overridePath,
  parseCompactAtInput,
  setJsonValue,
  settingsFileFor,
  SettingsChangedError,
  SettingsEditError,
  writeCompactionOverride,
} from "../../../../src/core/flows/compactAt";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-compact-at-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => fs.mkdtempSync(path.join(tmp, `a${++n}-`));

describe("Compact at…: what the user typed", () => {
  it("percentages and token counts", () => {
    assert.deepEqual(parseCompactAtInput("80%"), { kind: "percent", percent: 80 });
    assert.deepEqual(parseCompactAtInput(" 72.5 % "), { kind: "percent", percent: 72.5 });
    assert.deepEqual(parseCompactAtInput("150000"), { kind: "tokens", tokens: 150000 });
    assert.deepEqual(parseCompactAtInput("150,000"), { kind: "tokens", tokens: 150000 });
    assert.deepEqual(parseCompactAtInput("150k"), { kind: "tokens", tokens: 150000 });
    assert.deepEqual(parseCompactAtInput("1.5M"), { kind: "tokens", tokens: 1500000 });
    assert.equal(parseCompactAtInput("soon"), undefined);
    assert.equal(parseCompactAtInput("-5"), undefined);
  });

  it("reserveTokens from where pi should compact; keepRecentTokens below the threshold", () => {
    assert.deepEqual(compactAtValue("reserveTokens", { kind: "percent", percent: 80 }, 200000, 16384), {
      field: "reserveTokens",
      value: 40000,
      threshold: 160000,
      percent: 80,
    });
    assert.deepEqual(compactAtValue("reserveTokens", { kind: "tokens", tokens: 150000 }, 200000, 16384), {
      field: "reserveTokens",
      value: 50000,
      threshold: 150000,
      percent: 75,
    });
    assert.ok("error" in compactAtValue("reserveTokens", { kind: "percent", percent: 100 }, 200000, 16384));
    assert.ok("error" in compactAtValue("reserveTokens", { kind: "tokens", tokens: 0 }, 200000, 16384));
    assert.deepEqual(compactAtValue("keepRecentTokens", { kind: "percent", percent: 10 }, 200000, 16384), {
      field: "keepRecentTokens",
      value: 20000,
      threshold: 183616,
      percent: 91.808,
    });
    assert.ok("error" in compactAtValue("keepRecentTokens", { kind: "tokens", tokens: 190000 }, 200000, 16384));
    assert.ok("error" in compactAtValue("reserveTokens", { kind: "percent", percent: 50 }, 0, 16384));
  });
});

describe("Compact at…: the edit", () => {
  const P = overridePath("anthropic/claude-sonnet-4-5", "reserveTokens");

  it("a file with comments and odd formatting: only the one key changes (jsonc-parser)", () => {
    const text = [
      "// my pi settings",
      "{",
      '\t"theme" :   "dark", /* inline */',
      '\t"compaction": {',
      '\t\t"enabled": true, // keep',
      '\t\t"modelOverrides": {',
      '\t\t\t"openai/gpt-5":{"reserveTokens":9000},',
      "\t\t},",
      "\t},",
      "}",
      "",
    ].join("\n");
    const next = setJsonValue(text, P, 40000);
    assert.equal(
      next,
      text.replace(
        '\t\t\t"openai/gpt-5":{"reserveTokens":9000},',
        '\t\t\t"openai/gpt-5":{"reserveTokens":9000},\n\t\t\t"anthropic/claude-sonnet-4-5": {\n\t\t\t\t"reserveTokens": 40000\n\t\t\t},',
      ),
    );
    // an existing value is replaced in place
    const again = setJsonValue(next, P, 50000);
    assert.equal(again, next.replace('"reserveTokens": 40000', '"reserveTokens": 50000'));
  });

  it("writing refuses a file pi cannot read (comments): pi 1.6.0 parses settings.json as strict JSON", () => {
    const dir = fresh();
    const file = path.join(dir, "settings.json");
    const text = '{\n  // comment\n  "theme": "dark"\n}\n';
    fs.writeFileSync(file, text);
    assert.throws(
      () => writeCompactionOverride(file, text, "a/b", "reserveTokens", 1000),
      (e: unknown) => e instanceof SettingsEditError && /strict JSON/.test((e as Error).message),
    );
    assert.equal(fs.readFileSync(file, "utf8"), text);
    assert.ok(!fs.existsSync(`${file}.lock`), "the lock is released");
  });

  it("a file changed since the question is not written", () => {
    const dir = fresh();
    const file = path.join(dir, "settings.json");
    fs.writeFileSync(file, '{"a":1}');
    assert.throws(() => writeCompactionOverride(file, '{"a":0}', "a/b", "reserveTokens", 1000), SettingsChangedError);
    assert.equal(fs.readFileSync(file, "utf8"), '{"a":1}');
    assert.throws(() => writeCompactionOverride(file, undefined, "a/b", "reserveTokens", 1000), SettingsChangedError);
  });

  it("pi's lock: a fresh one refuses, a stale one (> 10 s) is taken over", () => {
    const dir = fresh();
    const file = path.join(dir, "settings.json");
    fs.writeFileSync(file, "{}");
    fs.mkdirSync(`${file}.lock`);
    assert.throws(() => writeCompactionOverride(file, "{}", "a/b", "reserveTokens", 1000), /pi is writing/);
    assert.equal(fs.readFileSync(file, "utf8"), "{}");
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.lock`, old, old);
    writeCompactionOverride(file, "{}", "a/b", "reserveTokens", 1000);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, "utf8")), {
      compaction: { modelOverrides: { "a/b": { reserveTokens: 1000 } } },
    });
    assert.ok(!fs.existsSync(`${file}.lock`));
  });

  it("a new file; a symlinked file stays a symlink; the mode is kept; no temp file left", () => {
    const dir = fresh();
    const file = path.join(dir, "sub", "settings.json");
    writeCompactionOverride(file, undefined, "a/b", "keepRecentTokens", 5000);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, "utf8")), {
      compaction: { modelOverrides: { "a/b": { keepRecentTokens: 5000 } } },
    });
    const real = path.join(dir, "dotfiles-settings.json");
    fs.writeFileSync(real, '{\n  "x": 1\n}\n', { mode: 0o600 });
    const link = path.join(dir, "settings.json");
    fs.symlinkSync(real, link);
    writeCompactionOverride(link, '{\n  "x": 1\n}\n', "a/b", "reserveTokens", 7);
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.equal(fs.statSync(real).mode & 0o777, 0o600);
    assert.match(fs.readFileSync(real, "utf8"), /"reserveTokens": 7/);
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.includes("pi-context")),
      [],
    );
  });

  it("which file: a project override for the model is edited where it is; else the global settings", () => {
    assert.deepEqual(settingsFileFor({ source: "default" }, "/agent"), {
      file: "/agent/settings.json",
      scope: "global",
    });
    assert.deepEqual(settingsFileFor({ source: "override", file: "/agent/settings.json" }, "/agent"), {
      file: "/agent/settings.json",
      scope: "global",
    });
    assert.deepEqual(settingsFileFor({ source: "override", file: "/w/.pi/settings.json" }, "/agent"), {
      file: "/w/.pi/settings.json",
      scope: "project",
    });
  });
});
