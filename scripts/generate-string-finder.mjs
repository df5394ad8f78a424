#!/usr/bin/env node
// Writes src/core/read/strscanWasm.ts: the bytes of the string finder's WebAssembly module, as
// `stringFinderModule()` (src/core/read/strscanAsm.ts) assembles them, in base64. Run after `npm run
// compile` (it reads the compiled assembler from out/):
//
//   npm run compile && node scripts/generate-string-finder.mjs [--check]
//
// --check: do not write; exit 1 when the file on disk differs (the unit test checks the same).
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { stringFinderModule } = require(path.join(root, "out", "src", "core", "read", "strscanAsm.js"));
const bytes = Buffer.from(stringFinderModule());
const file = path.join(root, "src", "core", "read", "strscanWasm.ts");
const text = readFileSync(file, "utf8");
const next = text
  .replace(/\/\*\* Base64 of the module \(\d+ bytes\)\. \*\//, `/** Base64 of the module (${bytes.length} bytes). */`)
  .replace(/"[A-Za-z0-9+/=]+";/, `"${bytes.toString("base64")}";`);
if (process.argv.includes("--check")) {
  if (next !== text) {
    console.error(`${path.relative(root, file)} is out of date: run node scripts/generate-string-finder.mjs`);
    process.exit(1);
  }
} else if (next !== text) {
  writeFileSync(file, next);
  console.log(`wrote ${path.relative(root, file)} (${bytes.length} bytes of WebAssembly)`);
} else console.log(`${path.relative(root, file)} is up to date`);
