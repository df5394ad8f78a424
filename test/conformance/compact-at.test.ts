/**
 * "Compact at…" against pi 1.6.0: after `writeCompactionOverride` edits a user's `settings.json`
 * (odd formatting: tabs, CRLF, a BOM, unusual spacing, one-line objects, other models' overrides,
 * the same model's other field, unicode), only the one key changed (the rest of the text is
 * byte-identical around one insertion or one replaced number) and pi's own `SettingsManager`
 * resolves the new value for that model (`getCompactionSettings(model)`), as ours does.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { writeCompactionOverride, type CompactAtField } from "../../src/core/flows/compactAt";
import { resolveSettings } from "../../src/core/rules/settings";
import { REPO_ROOT } from "../support/paths";
import { SessionBuilder } from "../support/session-builder";

interface Oracle {
  oracle(request: { entriesJsonl: string; args: string[] }): Promise<{
    settings: { compaction: { reserveTokens: number; keepRecentTokens: number; enabled: boolean } };
  }>;
  close(): Promise<void>;
}

let oracle: Oracle;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-compact-at-"));
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function session(provider: string, modelId: string): string {
  return new SessionBuilder({ id: "s", cwd: "/tmp/none" }).model("m1", provider, modelId).user("u1", "hi").jsonl();
}

const FILES: Record<string, string> = {
  "tabs, other model's override": `{\n\t"theme":"dark",\n\t"compaction" : {\n\t\t"enabled": true,\n\t\t"modelOverrides": {\n\t\t\t"openai/gpt-5": { "reserveTokens": 9000 }\n\t\t}\n\t},\n\t"note": "ünïcödé ✓"\n}`,
  "CRLF and four spaces, no compaction": `{\r\n    "defaultProvider": "anthropic",\r\n    "retry": {"enabled": false}\r\n}\r\n`,
  "one line, BOM": `\ufeff{"compaction":{"reserveTokens":20000},"x":[1,2,3]}`,
  "the same model's other field, odd spacing": `{\n  "compaction":{\n      "modelOverrides":{ "anthropic/claude-sonnet-4-5" :{"keepRecentTokens" : 1234} }\n  }\n}\n`,
  "the value already set": `{\n  "compaction": {\n    "modelOverrides": {\n      "anthropic/claude-sonnet-4-5": {\n        "reserveTokens": 16384\n      }\n    }\n  }\n}\n`,
  "a model id with a slash": `{\n  "compaction": {"keepRecentTokens": 5000}\n}\n`,
  "no file": "",
};

/** The text minus one inserted or replaced span equals the old text (so nothing else changed). */
function onlyOneSpanChanged(before: string, after: string): string {
  let start = 0;
  while (start < before.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return after.slice(start, after.length - end);
}

describe("Compact at…: one key in pi's settings, and pi resolves it", () => {
  for (const [name, text] of Object.entries(FILES)) {
    for (const field of ["reserveTokens", "keepRecentTokens"] as CompactAtField[]) {
      it(`${name}: ${field}`, async () => {
        const dir = fs.mkdtempSync(path.join(tmp, "agent-"));
        const file = path.join(dir, "settings.json");
        if (text) fs.writeFileSync(file, text);
        const [provider, modelId] =
          name === "a model id with a slash"
            ? ["openrouter", "anthropic/claude-sonnet-4.5"]
            : ["anthropic", "claude-sonnet-4-5"];
        const key = `${provider}/${modelId}`;
        const value = field === "reserveTokens" ? 40000 : 7777;
        const written = writeCompactionOverride(file, text || undefined, key, field, value);
        assert.equal(fs.readFileSync(file, "utf8"), written);
        if (text) {
          const span = onlyOneSpanChanged(text, written);
          assert.ok(span.includes(String(value)), `the changed span holds the value: ${JSON.stringify(span)}`);
          assert.ok(!/theme|retry|note|defaultProvider|"x"/.test(span), `nothing else moved: ${JSON.stringify(span)}`);
          if (text.includes("\r\n")) assert.ok(!/[^\r]\n/.test(written), "line ends kept");
          if (text.startsWith("\ufeff")) assert.ok(written.startsWith("\ufeff"), "BOM kept");
        }
        // every other value is the same
        const strip = (t: string) => JSON.parse(t.replace(/^\ufeff/, "")) as Record<string, unknown>;
        const was = text ? strip(text) : {};
        const now = strip(written);
        const compaction = (now.compaction ?? {}) as { modelOverrides?: Record<string, Record<string, unknown>> };
        assert.equal(compaction.modelOverrides?.[key]?.[field], value);
        delete compaction.modelOverrides![key]![field];
        if (Object.keys(compaction.modelOverrides![key]!).length === 0) delete compaction.modelOverrides![key];
        if (Object.keys(compaction.modelOverrides!).length === 0) delete compaction.modelOverrides;
        if (Object.keys(compaction).length === 0 && !("compaction" in was)) delete now.compaction;
        const wasCompaction = was.compaction as
          { modelOverrides?: Record<string, Record<string, unknown>> } | undefined;
        if (wasCompaction?.modelOverrides?.[key]?.[field] !== undefined) {
          delete wasCompaction.modelOverrides[key]![field];
          if (Object.keys(wasCompaction.modelOverrides[key]!).length === 0) delete wasCompaction.modelOverrides[key];
          if (Object.keys(wasCompaction.modelOverrides).length === 0) delete wasCompaction.modelOverrides;
        }
        assert.deepEqual(now, was);

        const pi = await oracle.oracle({
          entriesJsonl: session(provider!, modelId!),
          args: ["--agent-dir", dir, "--no-project-settings", "--context-window", "200000"],
        });
        assert.equal(pi.settings.compaction[field], value, "pi 1.6.0 resolves the new value for the model");
        const ours = resolveSettings({ agentDir: dir, modelKey: key, projectSettings: "never" });
        assert.equal(ours.compaction[field].value, value);
        assert.equal(ours.compaction[field].source, "override");
      });
    }
  }
});
