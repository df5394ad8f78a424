// Writes test/fixtures/fixed-context/: a session the real pi 1.6.0 wrote (RPC mode, Node 22, the
// scripted OpenAI-compatible server) whose system message holds every kind of fixed part — pi's
// sections, two AGENTS.md files, an addendum, skills, an extension's tool and section, MCP tools
// and the `mcp_servers` section (see test/support/fixed-context-pi.ts), 25 requests — and the agent dir's
// models.json + settings.json (the scripted model's prices). Nothing is edited by hand.
//
//   npm run compile && node scripts/generate-fixed-context-fixture.mjs
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const load = (rel) => import(pathToFileURL(path.join(repo, "out", "test", "support", rel)).href);
const { startScriptedServer } = await load("scripted-openai.js");
const { runFixedContextSession, writeFixedContextWorld } = await load("fixed-context-pi.js");

const out = path.join(repo, "test", "fixtures", "fixed-context");
const root = mkdtempSync(path.join(os.tmpdir(), "fixed-context-"));
const server = await startScriptedServer({ text: "Done." });
try {
  const world = writeFixedContextWorld(root, server.baseURL);
  const file = await runFixedContextSession(world, server, [], { extraTurns: 20 });
  mkdirSync(path.join(out, "session.agent"), { recursive: true });
  copyFileSync(file, path.join(out, "session.jsonl"));
  for (const f of ["models.json", "settings.json"])
    copyFileSync(path.join(world.agentDir, f), path.join(out, "session.agent", f));
  console.log(`wrote ${path.relative(repo, out)} (${server.requests.length} requests)`);
} finally {
  await server.close();
  rmSync(root, { recursive: true, force: true });
}
