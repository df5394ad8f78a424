#!/usr/bin/env node
// pi 1.6.0 as a test oracle: prints pi's own view of a session file as JSON.
// Runs under Node >= 22.19 (see setup.mjs):
//
//   NODE22=$(node test/conformance/oracle/setup.mjs)
//   $NODE22 test/conformance/oracle/oracle.mjs <session.jsonl> [--agent-dir DIR] [--cwd DIR]
//       [--no-project-settings] [--full] [--leaf ID|null] [--context-window N]
//       [--reserve-tokens N] [--keep-recent-tokens N] [--verify-compactions]
//       [--verify-branch-summaries] [--branch-target ID]
//   $NODE22 test/conformance/oracle/oracle.mjs --batch   < requests.jsonl > results.jsonl
//
// Batch protocol (one JSON object per line each way, answers in request order):
//   request  {"id"?: any, "type"?: "oracle"|"loadCheck"|"piOpen"|"llm"|"contextEdit"|"listing"|"catalog"|"systemMessage",
//             "file": "<path>" | "entriesJsonl": "<file content>",
//             "args"?: ["--agent-dir", "DIR", ...], "agentDir"?: "DIR",
//             "agentFiles"?: {"settings.json": {...}, "models.json": {...}},
//             "leaf"?: "ID", "append"?: true, "edits"?: [{"targetId", "replacement"}]}
//            type "oracle" (default) = the single-file output; "loadCheck" = leafId, pathIds, context
//            messages, buildSessionContext roles, whether pi rewrote the copy on open; "piOpen" =
//            pi-open-check.mjs output; "llm" = full projected messages, projected estimate and
//            pi-ai's transformMessages(convertToLlm(...)) shapes with orphaned results / fillers;
//            "contextEdit" = pi's appendContextEdit per edit (entry line or pi's error); "listing" = {agentDir, cwds, continueRecent?,
//            explicitSessionDir?, mtimes?} -> pi's session-dir encoding, list and continueRecent;
//            "catalog" = {agentDir?|agentFiles?} -> every chat model pi's registry resolves;
//            "systemMessage" = pi-ai's getCurrentSystemMessage at the leaf, pi's estimateTokens of
//            it, each section's length and each tool's JSON length.
//   response {"id": <request id or 0-based line number>, "ok": true, "result": {...}}
//            {"id": ..., "ok": false, "error": "message"}
// The input file is never modified (pi works on a private copy). stdout carries only JSON;
// diagnostics go to stderr. Exit code: 0 ok, 1 request failed (single mode), 2 usage error.

import { createInterface } from "node:readline";

function usage(message) {
  if (message) process.stderr.write(`oracle.mjs: ${message}\n`);
  process.stderr.write(
    "usage: oracle.mjs <session.jsonl> [--agent-dir DIR] [--cwd DIR] [--no-project-settings] [--full]\n" +
      "       [--leaf ID] [--context-window N] [--reserve-tokens N] [--keep-recent-tokens N]\n" +
      "       [--verify-compactions] [--verify-branch-summaries] [--branch-target ID]\n" +
      "   or: oracle.mjs --batch   (JSON lines on stdin, see the header of this file)\n",
  );
  process.exit(2);
}

let core;
try {
  core = await import("./oracle-core.mjs");
} catch (error) {
  process.stderr.write(`oracle.mjs: cannot load pi: ${error?.stack ?? error}\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);

function writeLine(obj) {
  return new Promise((resolveWrite) => {
    if (process.stdout.write(`${JSON.stringify(obj)}\n`)) resolveWrite();
    else process.stdout.once("drain", resolveWrite);
  });
}

async function runBatch() {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of rl) {
    const index = lineNo++;
    if (!line.trim()) continue;
    let id = index;
    try {
      const request = JSON.parse(line);
      if (request && typeof request === "object" && request.id !== undefined) id = request.id;
      const result = await core.handleRequest(request);
      await writeLine({ id, ok: true, result });
    } catch (error) {
      await writeLine({ id, ok: false, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

if (argv.includes("--batch")) {
  if (argv.length !== 1) usage("--batch takes no other arguments");
  await runBatch();
  core.cleanupTemp();
} else {
  if (argv.includes("--help") || argv.includes("-h")) usage();
  let opts;
  try {
    opts = core.parseOracleArgs(argv);
  } catch (error) {
    usage(error.message);
  }
  if (opts.positional.length !== 1) usage("exactly one session file expected");
  const [file] = opts.positional;
  try {
    const result = await core.analyzeSession({ file }, opts);
    process.stdout.write(`${core.formatJson(result)}\n`);
  } catch (error) {
    process.stderr.write(`oracle.mjs: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  }
}
