// Writes src/core/data/models-json-schema.json: pi's compiled models.json schema
// (`ModelsConfigSchema` of dist/core/model-config.js) without descriptions and defaults, the
// subset of JSON Schema that src/core/rules/jsonSchema.ts checks. Run with the oracle's Node 22:
//   test/conformance/oracle/node_modules/.bin/node test/conformance/oracle/dump-models-schema.mjs
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";

const modelConfig = new URL("core/model-config.js", import.meta.resolve("@earendil-works/pi-coding-agent"));
const { ModelsConfigSchema } = await import(modelConfig.href);
const { VERSION } = await import("@earendil-works/pi-coding-agent");
const strip = (value) =>
  Array.isArray(value)
    ? value.map(strip)
    : value && typeof value === "object"
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([key]) => key !== "description" && key !== "default")
            .map(([key, v]) => [key, strip(v)]),
        )
      : value;
const out = fileURLToPath(new URL("../../../src/core/data/models-json-schema.json", import.meta.url));
fs.writeFileSync(
  out,
  `${JSON.stringify({ piVersion: VERSION, schema: strip(JSON.parse(JSON.stringify(ModelsConfigSchema))) })}\n`,
);
console.log(`wrote ${out} (pi ${VERSION})`);
