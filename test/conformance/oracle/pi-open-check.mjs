#!/usr/bin/env node
// What pi 1.6.0's SessionManager.open does to the bytes of a session file (on a temp COPY):
// sizes before/after, unchanged, original bytes kept as a prefix, what was appended, the entries
// pi loaded; with --append also one SessionManager.appendMessage and a reload.
// Runs under Node >= 22.19 (see setup.mjs):
//
//   $(node test/conformance/oracle/setup.mjs) test/conformance/oracle/pi-open-check.mjs <session.jsonl> [--append]
//
// stdout = JSON only (layout of the shared pi-open*.json files); the input is never modified.

const argv = process.argv.slice(2);
const append = argv.includes("--append");
const files = argv.filter((a) => a !== "--append");
if (files.length !== 1 || files[0].startsWith("--")) {
  process.stderr.write("usage: pi-open-check.mjs <session.jsonl> [--append]\n");
  process.exit(2);
}

let core;
try {
  core = await import("./oracle-core.mjs");
} catch (error) {
  process.stderr.write(`pi-open-check.mjs: cannot load pi: ${error?.stack ?? error}\n`);
  process.exit(2);
}

try {
  const result = await core.piOpenCheck({ file: files[0] }, { append });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`pi-open-check.mjs: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
}
