/**
 * models.json is checked against pi's whole schema (`dist/core/model-config.js`,
 * `ModelsConfigSchema`): one invalid field anywhere — a price given as a string, a partial `cost`
 * of a model, an unknown input modality, a bad `thinkingLevelMap`, `compat` or `promptCache` —
 * makes pi ignore the *whole* file, so no custom model or override applies. Each case below was
 * checked with pi 1.6.0's `ModelConfig.load` (test/conformance/models-schema.test.ts runs them
 * against pi itself).
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { rulesFor } from "../../../../src/core/pi/versions";
import { readModelsConfig } from "../../../../src/core/rules/models";
import { MODELS_SCHEMA_CASES } from "../../../support/models-schema-cases";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-models-schema-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

describe("models.json: pi's whole schema decides whether the file counts", () => {
  for (const c of MODELS_SCHEMA_CASES) {
    it(`${c.name}: ${c.valid ? "accepted" : "ignored as a whole"} like pi 1.6.0`, () => {
      const dir = path.join(tmp, `agent-${++n}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, "models.json"), typeof c.json === "string" ? c.json : JSON.stringify(c.json));
      const config = readModelsConfig(dir, rulesFor("1.6.0"));
      if (c.valid) assert.equal(config.error, undefined);
      else {
        assert.match(config.error ?? "", /^Invalid models\.json schema:/);
        if (c.path) assert.ok(config.error!.includes(`  - ${c.path}:`), config.error);
        assert.equal(config.providers.size, 0);
      }
    });
  }
});
