import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { stringFinderModule, useWasmStringFinder } from "../../../../src/core/read/strscan";
import { STRING_FINDER_WASM_BASE64 } from "../../../../src/core/read/strscanWasm";

describe("the string finder's WebAssembly module", () => {
  it("the shipped bytes (strscanWasm.ts) are exactly what the assembler in strscan.ts produces", () => {
    const assembled = Buffer.from(stringFinderModule());
    assert.equal(
      Buffer.from(STRING_FINDER_WASM_BASE64, "base64").toString("hex"),
      assembled.toString("hex"),
      "out of date: npm run compile && node scripts/generate-string-finder.mjs",
    );
  });

  it("loads from the shipped bytes (WebAssembly SIMD is there in this Node)", () => {
    assert.equal(useWasmStringFinder(true), true);
  });
});
