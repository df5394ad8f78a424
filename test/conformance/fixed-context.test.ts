/**
 * The fixed part of the context (`src/core/rules/fixedContext.ts`) against pi 1.6.0 itself:
 *
 * - on every session file of the fixtures (the pi-written ones at their leaf and at every
 *   compaction, the cases, the fixed-context fixture) and of `../shared/real-sessions/external`
 *   when that folder exists: `total` = pi's `estimateTokens(getCurrentSystemMessage(…))`, the parts
 *   add up to it, every section's parts hold exactly pi's section length and every tool part its
 *   `JSON.stringify` length (+ the `[` `,` `]` of the array);
 * - per request: Σ over the branch's requests of pi's estimate at each request's parent = ours;
 * - a real pi run (context files, skills, an extension's tool and section, MCP servers): each
 *   kind is found, named as pi loaded it; then one run per removal named in `removalsOf` shows
 *   that the flag or setting really leaves its parts out.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { SessionFile } from "../../src/core/read/session";
import { buildProjection } from "../../src/core/rules/context";
import { NO_PRICES } from "../../src/core/rules/cost";
import { fixedContextOf, type FixedContext, type FixedPart } from "../../src/core/rules/fixedContext";
import { runFixedContextSession, writeFixedContextWorld, type FixedContextWorld } from "../support/fixed-context-pi";
import { FIXTURES, REPO_ROOT } from "../support/paths";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";

interface SystemView {
  leafId: string | null;
  estimate: number;
  system: null | {
    contentLength: number | null;
    sections: { name: string; length: number }[];
    tools: { name: string; jsonLength: number }[];
    toolsJsonLength: number;
    texts: { project_context: string | null; skills: string | null };
  };
}
interface Oracle {
  systemMessage(request: { file: string; leaf?: string }): Promise<SystemView>;
  close(): Promise<void>;
}

let oracle: Oracle;
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<Oracle> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
});

function sessionFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sessionFiles(p));
    else if (e.name.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}

async function ours(file: string, leaf?: string): Promise<FixedContext> {
  const session = await SessionFile.open(file);
  return fixedContextOf(buildProjection(session, leaf), NO_PRICES, session);
}

const TOOL_KINDS = new Set(["tool", "extension-tool", "mcp-tool"]);

/** Ours against pi's view of the same leaf (see the module comment). */
function compare(fixed: FixedContext, pi: SystemView, where: string): void {
  assert.equal(fixed.total, pi.estimate, `${where}: total = pi's estimate`);
  assert.equal(
    fixed.parts.reduce((s, p) => s + p.tokens, 0),
    fixed.total,
    `${where}: the parts add up to the total`,
  );
  for (const p of fixed.parts) assert.ok(Math.abs(p.tokens - p.chars / 4) < 1, `${where}: ${p.name} ≈ chars / 4`);
  if (!pi.system) {
    assert.equal(fixed.layout, "none", where);
    assert.deepEqual(fixed.parts, [], where);
    return;
  }
  const sys = pi.system;
  assert.equal(fixed.layout, sys.sections.length > 0 ? "sections" : "content", where);
  const sectionChars = new Map<string, number>();
  for (const p of fixed.parts)
    if (!TOOL_KINDS.has(p.kind) && p.kind !== "prompt") {
      const name = p.section ?? p.name;
      sectionChars.set(name, (sectionChars.get(name) ?? 0) + p.chars);
    }
  assert.deepEqual(
    [...sectionChars],
    sys.sections.filter((s) => s.length > 0).map((s) => [s.name, s.length]),
    `${where}: each section's characters, in pi's order`,
  );
  const tools = fixed.parts.filter((p) => TOOL_KINDS.has(p.kind));
  assert.deepEqual(
    tools.map((t, i) => [t.name, t.chars - 1 - (i === 0 ? 1 : 0)]),
    sys.tools.map((t) => [t.name, t.jsonLength]),
    `${where}: each tool's declaration`,
  );
  assert.equal(
    tools.reduce((s, t) => s + t.chars, 0),
    sys.toolsJsonLength,
    `${where}: JSON.stringify(toolsAdded)`,
  );
  const prompt = fixed.parts.find((p) => p.kind === "prompt");
  assert.equal(prompt?.chars ?? 0, sys.contentLength ?? 0, `${where}: the content`);
}

describe("the fixed part of the context equals pi's system message", () => {
  it("every fixture, case and external session: total, sections, tools", async () => {
    const files = sessionFiles(FIXTURES);
    const external = path.join(REPO_ROOT, "..", "shared", "real-sessions", "external");
    if (fs.existsSync(external)) files.push(...sessionFiles(external));
    let withSystem = 0;
    let compared = 0;
    for (const file of files) {
      let pi: SystemView;
      try {
        pi = await oracle.systemMessage({ file });
      } catch {
        continue; // pi does not open it (not a session): nothing to compare
      }
      compare(await ours(file), pi, path.basename(file));
      compared++;
      if (pi.system) withSystem++;
    }
    assert.ok(compared >= 20, `${compared} files compared`);
    assert.ok(withSystem >= 5, `${withSystem} files with a system message`);
  });

  it("at every compaction (the checkpoint) and across a patch of a section", async () => {
    const files = [
      ...sessionFiles(path.join(FIXTURES, "pi-1.6.0")),
      path.join(FIXTURES, "fixed-context", "session.jsonl"),
    ];
    let leaves = 0;
    for (const file of files) {
      const session = await SessionFile.open(file);
      for (const r of session.records) {
        if (r.type !== "compaction" && !(r.type === "message" && r.role === "system")) continue;
        compare(
          await ours(file, r.id),
          await oracle.systemMessage({ file, leaf: r.id }),
          `${path.basename(file)}@${r.id}`,
        );
        leaves++;
      }
    }
    assert.ok(leaves >= 10, `${leaves} leaves`);
  });

  it("over the requests of a branch: Σ pi's estimate at each request's parent", async () => {
    for (const name of ["pi-1.6.0/long.jsonl", "pi-1.6.0/tree.jsonl", "fixed-context/session.jsonl"]) {
      const file = path.join(FIXTURES, name);
      const session = await SessionFile.open(file);
      const projection = buildProjection(session);
      const fixed = fixedContextOf(projection, NO_PRICES, session);
      let tokens = 0;
      let requests = 0;
      for (const r of projection.path) {
        if (r.type !== "message" || r.role !== "assistant") continue;
        const prompt = (r.usage?.input ?? 0) + (r.usage?.cacheRead ?? 0) + (r.usage?.cacheWrite ?? 0);
        if (!(prompt > 0) && (r.stopReason === "error" || r.stopReason === "aborted")) continue;
        const pi = await oracle.systemMessage({ file, leaf: r.parentId ?? "null" });
        if (pi.estimate > 0) {
          tokens += pi.estimate;
          requests++;
        }
      }
      assert.ok(requests > 0, name);
      assert.deepEqual(
        { requests: fixed.session!.requests, tokens: fixed.session!.tokens },
        { requests, tokens },
        `${name}: requests and Σ fixed tokens`,
      );
    }
  });
});

describe("a real pi's system message, itemised, and the removals pi offers", () => {
  let server: ScriptedServer;
  let root: string;
  before(async () => {
    server = await startScriptedServer({ text: "Done." });
    root = fs.mkdtempSync(path.join(os.tmpdir(), "fixed-context-conf-"));
  });
  after(async () => {
    await server?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  let run = 0;
  /** The parts of the first (full) run: what the removals are checked against. */
  let full: FixedContext | undefined;
  /** Each part of the full run named in `gone` is absent now, and names `removal` among its ways out. */
  function removedBy(now: FixedContext, gone: string[], removal: string): void {
    assert.ok(full, "the full run ran first");
    for (const name of gone) {
      const parts = full.parts.filter((p) => p.name === name || p.name.endsWith(`/${name}`));
      assert.ok(parts.length > 0, `${name} is a part of the full run`);
      for (const part of parts) {
        assert.ok(!now.parts.some((p) => p.name === part.name), `${part.name} removed by ${removal}`);
        assert.ok(
          part.removedBy.some((r) => r.text === removal),
          `${part.name} names ${removal}: ${part.removedBy.map((r) => r.text).join(" | ")}`,
        );
      }
    }
  }
  /** A fresh world (own agent dir), pi run in it, and our parts of the session at its leaf (checked against pi). */
  async function piRun(
    args: string[],
    options: Parameters<typeof writeFixedContextWorld>[2] & { long?: boolean } = {},
  ): Promise<{ world: FixedContextWorld; fixed: FixedContext; names: (kind?: string) => string[] }> {
    const world = writeFixedContextWorld(path.join(root, `run-${++run}`), server.baseURL, options);
    const file = await runFixedContextSession(world, server, args, { short: !options.long });
    const fixed = await ours(file);
    compare(fixed, await oracle.systemMessage({ file }), `pi ${args.join(" ")}`);
    const names = (kind?: string) => fixed.parts.filter((p) => !kind || p.kind === kind).map((p) => p.name);
    return { world, fixed, names };
  }

  it("every kind, named as pi loaded it; tool calls and requests counted", async () => {
    const { world, fixed, names } = await piRun([], { long: true });
    full = fixed;
    assert.deepEqual(names("context-file"), [
      path.join(world.agentDir, "AGENTS.md"),
      path.join(world.project, "AGENTS.md"),
    ]);
    assert.deepEqual(names("skill"), ["db-migration", "release-notes"], "the hidden skill is not listed");
    assert.deepEqual(names("section"), [
      "preamble",
      "tools",
      "rules",
      "docs",
      "addendum",
      "project_context",
      "skills",
      "cwd",
    ]);
    assert.deepEqual(names("extension-section"), ["team_notes"]);
    assert.deepEqual(names("mcp-section"), ["mcp_servers"]);
    assert.deepEqual(names("tool"), ["read", "bash", "edit", "write"]);
    assert.deepEqual(names("extension-tool"), ["todo_list", "codemode"]);
    assert.deepEqual(names("mcp-tool"), ["mcp__notes__lookup", "mcp__notes__search"]);
    const part = (name: string): FixedPart => fixed.parts.find((p) => p.name === name)!;
    assert.equal(part("read").session?.calls, 1);
    assert.equal(part("mcp__notes__lookup").session?.calls, 1);
    assert.equal(part("todo_list").session?.calls, 0);
    assert.equal(fixed.session?.requests, 5);
    // the second prompt patched team_notes: its tokens differ between requests
    assert.ok(
      part("team_notes").session!.tokens > part("team_notes").tokens * 2,
      "patched section counted per request",
    );
  });

  it("--no-context-files, --no-skills, --exclude-tools, --system-prompt, defaultTools, toolExposure", async () => {
    const { fixed, names } = await piRun(
      [
        "--no-context-files",
        "--no-skills",
        "--exclude-tools",
        "bash,todo_list,mcp__notes__lookup",
        "--system-prompt",
        "You are a careful assistant.",
      ],
      { settings: { defaultTools: ["-write"] }, mcp: { notes: { toolExposure: { search: "deferred" } } } },
    );
    const all = names();
    for (const gone of [
      "project_context",
      "skills",
      "bash",
      "todo_list",
      "mcp__notes__lookup",
      "mcp__notes__search",
      "write",
      "tools",
      "rules",
      "docs",
    ])
      assert.ok(!all.includes(gone), `${gone} removed: ${all.join(", ")}`);
    assert.deepEqual(names("context-file"), []);
    assert.deepEqual(names("skill"), []);
    removedBy(fixed, ["project_context", "AGENTS.md"], "--no-context-files");
    removedBy(fixed, ["skills", "db-migration", "release-notes"], "--no-skills");
    for (const tool of ["bash", "todo_list", "mcp__notes__lookup"]) removedBy(fixed, [tool], `--exclude-tools ${tool}`);
    removedBy(fixed, ["tools", "rules", "docs"], "--system-prompt");
    removedBy(fixed, ["write"], '"defaultTools": ["-write"]');
    removedBy(fixed, ["mcp__notes__search"], '"toolExposure": {"search": "deferred"}');
    for (const kept of ["preamble", "read", "edit", "team_notes", "mcp_servers"])
      assert.ok(all.includes(kept), `${kept} kept: ${all.join(", ")}`);
  });

  it('--no-builtin-tools, "extensions": ["-builtin:codemode"], SYSTEM.md', async () => {
    const { fixed, names } = await piRun(["--no-builtin-tools"], {
      settings: { extensions: ["-builtin:codemode"] },
      agentFiles: { "SYSTEM.md": "You are a careful assistant." },
    });
    removedBy(fixed, ["read", "bash", "edit", "write"], "--no-builtin-tools");
    removedBy(fixed, ["codemode"], '"extensions": ["-builtin:codemode"]');
    removedBy(fixed, ["tools", "rules", "docs"], "SYSTEM.md");
    assert.ok(names("section").includes("preamble"), "SYSTEM.md replaces the preamble");
    assert.deepEqual(names("tool"), []);
    assert.ok(!names().includes("codemode"), names().join(", "));
    assert.deepEqual(names("mcp-tool"), ["mcp__notes__lookup", "mcp__notes__search"]);
    assert.deepEqual(names("extension-tool"), ["todo_list"]);
  });

  it("--no-mcp", async () => {
    const { fixed, names } = await piRun(["--no-mcp"]);
    removedBy(fixed, ["mcp__notes__lookup", "mcp__notes__search", "mcp_servers"], "--no-mcp");
    assert.deepEqual(names("mcp-tool"), []);
    assert.deepEqual(names("mcp-section"), []);
    assert.deepEqual(names("extension-tool"), ["todo_list"]);
  });

  it("--no-extensions", async () => {
    const { fixed, names } = await piRun(["--no-extensions"]);
    removedBy(fixed, ["todo_list", "team_notes"], "--no-extensions");
    assert.deepEqual(names("extension-tool"), []);
    assert.deepEqual(names("extension-section"), []);
    assert.deepEqual(names("mcp-tool"), []);
    assert.deepEqual(names("tool"), ["read", "bash", "edit", "write"]);
  });
});
