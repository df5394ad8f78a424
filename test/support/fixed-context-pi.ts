/**
 * A real pi 1.6.0 session whose system message has every kind of fixed part: pi's own sections,
 * two context files (the agent dir's and the project's `AGENTS.md`), an `--append-system-prompt`
 * addendum, skills (one hidden by `disable-model-invocation`), an extension's tool and section, two
 * MCP servers (one `direct`: its tools are declared; one `codemode`: listed in `mcp_servers`, and
 * pi turns `codemode` on), made by pi in RPC mode against the scripted OpenAI-compatible server.
 *
 * Used by `test/conformance/fixed-context.test.ts` (pi judges the split, and that each flag named
 * as a removal removes its part) and by `scripts/generate-fixed-context-fixture.mjs` (the fixture
 * `test/fixtures/fixed-context/` the unit and e2e tests read).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { PiRpc, writeScriptedAgentDir } from "./pi-rpc";
import type { ScriptedServer } from "./scripted-openai";

/** The scripted model's prices (US dollars per million tokens), Claude-Sonnet-like so costs show. */
export const FIXED_CONTEXT_PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** A stdio MCP server (newline-delimited JSON-RPC) offering the given tools; answers every call with "ok". */
function mcpServerSource(tools: { name: string; description: string; properties: Record<string, unknown> }[]): string {
  return `import * as readline from "node:readline";
const tools = ${JSON.stringify(
    tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: { type: "object", properties: t.properties },
    })),
  )};
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "fixture", version: "1.0.0" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools } });
  else if (m.method === "tools/call") send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ok" }] } });
  else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no method " + m.method } });
});
`;
}

/** The extension: a `todo_list` tool and a `team_notes` section (set in `before_agent_start`, longer from the second prompt). */
const EXTENSION_SOURCE = `export default function (pi) {
  pi.registerTool({
    name: "todo_list",
    label: "Todo list",
    description: "Keep a short todo list for the current task: add, complete or list items. Use it for multi-step work so nothing is forgotten.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["add", "complete", "list"], description: "What to do" },
        item: { type: "string", description: "The item text (add, complete)" },
      },
      required: ["action"],
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: "todo " + params.action }], details: {} };
    },
  });
  // from the second prompt on the section grows: pi appends a system message patching it
  let runs = 0;
  pi.on("before_agent_start", async (event) => {
    runs++;
    event.systemPromptOptions.sections.team_notes =
      "The team reviews every change on Fridays. Keep commits small and explain why in the message." +
      (runs >= 2 ? " The release freeze starts on Monday: only fixes until then." : "");
  });
}
`;

const AGENT_AGENTS_MD = `# Personal preferences

- Answer in British English.
- Prefer small, reviewable changes; never reformat unrelated code.
- When unsure about an API, read its source before using it.
`;

const PROJECT_AGENTS_MD = `# Project: inventory service

The service is a TypeScript HTTP API (Node 22) with a SQLite store.

## Commands
- \`npm test\` runs the unit tests (node --test); \`npm run lint\` runs ESLint and Prettier.
- \`npm run db:migrate\` applies migrations in \`db/migrations/\`, numbered \`NNN_name.sql\`.

## Conventions
- Handlers live in \`src/routes/\`, one file per resource; validation with zod schemas next to them.
- Every SQL statement goes through \`src/db/query.ts\` (prepared statements only, never string concatenation).
- Errors: throw \`HttpError(status, message)\`; the middleware maps them to JSON \`{ error }\`.
- Money is stored in integer cents; never use floating point for prices.
- Tests: one \`*.test.ts\` beside each module; use the in-memory database from \`test/db.ts\`.

## Do not
- Do not edit generated files in \`src/generated/\` (run \`npm run codegen\`).
- Do not add dependencies without asking.
`;

function skill(name: string, description: string, hidden = false): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${hidden ? "disable-model-invocation: true\n" : ""}---\n\n# ${name}\n\nSteps for ${name}.\n`;
}

/** The files of the fixture's world, under `root`: agent dir, project, MCP server script. */
export interface FixedContextWorld {
  root: string;
  agentDir: string;
  project: string;
  home: string;
}

/**
 * Write the agent dir (models.json with {@link FIXED_CONTEXT_PRICES}, settings.json, AGENTS.md,
 * skills, the extension, mcp.json) and the project (AGENTS.md) under `root`.
 * @param settings more settings.json keys (e.g. `defaultTools`).
 * @param mcp more keys per MCP server (e.g. `{ notes: { toolExposure: {…} } }`).
 * @param agentFiles more files of the agent dir by name (e.g. `SYSTEM.md`).
 */
export function writeFixedContextWorld(
  root: string,
  baseURL: string,
  options: {
    settings?: Record<string, unknown>;
    mcp?: Record<string, Record<string, unknown>>;
    agentFiles?: Record<string, string>;
  } = {},
): FixedContextWorld {
  const agentDir = path.join(root, "agent");
  const project = path.join(root, "project");
  const home = path.join(root, "home");
  for (const dir of [agentDir, project, home]) fs.mkdirSync(dir, { recursive: true });
  writeScriptedAgentDir(agentDir, { baseURL, contextWindow: 200_000, maxTokens: 8192, settings: options.settings });
  // the scripted model with prices, so pi records costs and pi-context prices the fixed part
  const modelsFile = path.join(agentDir, "models.json");
  const models = JSON.parse(fs.readFileSync(modelsFile, "utf8"));
  models.providers.scripted.models[0].cost = FIXED_CONTEXT_PRICES;
  fs.writeFileSync(modelsFile, JSON.stringify(models, null, 2));
  fs.writeFileSync(path.join(agentDir, "AGENTS.md"), AGENT_AGENTS_MD);
  fs.writeFileSync(path.join(project, "AGENTS.md"), PROJECT_AGENTS_MD);
  const skills: [string, string, boolean][] = [
    [
      "release-notes",
      "Write release notes from the git log since the last tag: group by feature, fix and chore.",
      false,
    ],
    ["db-migration", "Create and check a numbered SQL migration for the SQLite store, with its rollback.", false],
    ["secret-rotation", "Rotate the service's API keys (run only when asked).", true],
  ];
  for (const [name, description, hidden] of skills) {
    fs.mkdirSync(path.join(agentDir, "skills", name), { recursive: true });
    fs.writeFileSync(path.join(agentDir, "skills", name, "SKILL.md"), skill(name, description, hidden));
  }
  fs.mkdirSync(path.join(agentDir, "extensions"), { recursive: true });
  fs.writeFileSync(path.join(agentDir, "extensions", "team-tools.js"), EXTENSION_SOURCE);
  const notes = path.join(root, "mcp-notes.mjs");
  fs.writeFileSync(
    notes,
    mcpServerSource([
      {
        name: "lookup",
        description: "Look up a note by its title in the team's notes and return its text.",
        properties: { title: { type: "string", description: "The note's title" } },
      },
      {
        name: "search",
        description:
          "Search the team's notes by keywords; returns up to ten titles with a one-line excerpt each, newest first.",
        properties: {
          query: { type: "string", description: "Keywords" },
          limit: { type: "number", description: "At most this many results (default 10)" },
        },
      },
    ]),
  );
  const docs = path.join(root, "mcp-docs.mjs");
  fs.writeFileSync(
    docs,
    mcpServerSource([
      {
        name: "read_page",
        description: "Read a page of the product documentation.",
        properties: { page: { type: "string" } },
      },
    ]),
  );
  const mcpServers: Record<string, Record<string, unknown>> = {
    notes: { command: process.execPath, args: [notes], exposure: "direct", ...options.mcp?.notes },
    docs: {
      command: process.execPath,
      args: [docs],
      description: "Search and read the product documentation",
      ...options.mcp?.docs,
    },
  };
  fs.writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }, null, 2));
  for (const [name, text] of Object.entries(options.agentFiles ?? {}))
    fs.writeFileSync(path.join(agentDir, name), text);
  return { root, agentDir, project, home };
}

/** OpenAI usage: `prompt` tokens of which `cached` were read from the cache. */
function usage(prompt: number, cached: number, completion: number): Record<string, unknown> {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

/**
 * Run pi in `world.project` and return the session file pi wrote: three prompts (a `read`, an
 * MCP `lookup`, a plain answer: five requests, the later ones mostly cached) and `extraTurns` more
 * short ones, or with `short` one prompt answered by the server's fallback.
 * @param args more pi arguments (removal flags).
 */
export async function runFixedContextSession(
  world: FixedContextWorld,
  server: ScriptedServer,
  args: string[] = [],
  options: { short?: boolean; extraTurns?: number } = {},
): Promise<string> {
  server.reset();
  const extra = options.extraTurns ?? 0;
  if (!options.short)
    server.script(
      {
        toolCall: true,
        tool: { name: "read", arguments: JSON.stringify({ path: "AGENTS.md" }), id: "call_read" },
        usage: usage(6400, 0, 40),
      },
      { text: "The project keeps money in integer cents.", usage: usage(6900, 6300, 30) },
      {
        toolCall: true,
        tool: { name: "mcp__notes__lookup", arguments: JSON.stringify({ title: "release" }), id: "call_lookup" },
        usage: usage(7000, 6800, 40),
      },
      { text: "The release note says ok.", usage: usage(7100, 6900, 20) },
      { text: "Done.", usage: usage(7200, 7000, 10) },
      ...Array.from({ length: extra }, (_, i) => ({
        text: `Checked item ${i + 1}.`,
        usage: usage(7300 + 60 * i, 7200 + 60 * i, 12),
      })),
    );
  const pi = await PiRpc.start({
    cwd: world.project,
    agentDir: world.agentDir,
    home: world.home,
    args: ["--append-system-prompt", "Always run the tests before you say a change is done.", ...args],
  });
  try {
    await pi.prompt("Where do we keep money amounts?", 90_000);
    if (!options.short) {
      await pi.prompt("What does the release note say?", 90_000);
      await pi.prompt("Thanks.", 90_000);
      for (let i = 0; i < extra; i++) await pi.prompt(`Check item ${i + 1}.`, 90_000);
    }
    const state = await pi.command({ type: "get_state" });
    const file = state.data.sessionFile as string;
    if (!file || !fs.existsSync(file)) throw new Error(`pi reported no session file: ${JSON.stringify(state.data)}`);
    return file;
  } finally {
    await pi.close();
  }
}
