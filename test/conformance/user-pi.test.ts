/**
 * Summarizing with the user's own pi (`src/core/pi/rpc.ts`), against every pi of the matrix: pi
 * runs headless on a copy of a session (`--mode rpc --session <file>`, Node 22, a temp HOME and
 * agent dir whose models.json points at a scripted OpenAI-compatible server) and compacts it with
 * its own prompts; pi-context writes nothing. The entry pi appends is the one our preview (made with
 * that pi's rules) predicted, and our core reads it; `abort` cancels without a write; a missing header
 * `cwd` is refused before pi starts; `--no-mcp` is passed only to pi versions that know it.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { piAt, type PiInstall } from "../../src/core/pi/locate";
import { nodeForPi, type PiRuntime } from "../../src/core/pi/node";
import { compactWithPi, PiRpc, PiRpcError, type RpcRecord } from "../../src/core/pi/rpc";
import { SessionFile } from "../../src/core/read/session";
import { planCompaction } from "../../src/core/flows/compact";
import { userPiOf } from "../../src/core/pi/userPi";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { FIXTURES, REPO_ROOT } from "../support/paths";

const ORACLE_DIR = path.join(REPO_ROOT, "test/conformance/oracle");
const importMjs = <T>(file: string): Promise<T> =>
  import(pathToFileURL(path.join(ORACLE_DIR, file)).href) as Promise<T>;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-user-pi-"));
let server: ScriptedServer;
before(async () => {
  server = await startScriptedServer({ text: "## Goal\nScripted summary by the user's pi." });
});
after(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A copy of a fixture whose header `cwd` exists, and an agent dir pointing at the scripted server. */
function workspace(name: string, fixture: string): { session: string; agentDir: string; home: string; cwd: string } {
  const dir = fs.mkdtempSync(path.join(tmp, `${name}-`));
  const cwd = path.join(dir, "project");
  const home = path.join(dir, "home");
  const agentDir = path.join(home, ".pi", "agent");
  fs.mkdirSync(cwd, { recursive: true });
  fs.mkdirSync(agentDir, { recursive: true });
  const lines = fs.readFileSync(path.join(FIXTURES, "pi-1.6.0", `${fixture}.jsonl`), "utf8").split("\n");
  const header = JSON.parse(lines[0]!) as Record<string, unknown>;
  header.cwd = cwd;
  lines[0] = JSON.stringify(header);
  const session = path.join(dir, "session.jsonl");
  fs.writeFileSync(session, lines.join("\n"));
  const models = JSON.parse(
    fs.readFileSync(path.join(FIXTURES, "pi-1.6.0", `${fixture}.agent`, "models.json"), "utf8"),
  ) as { providers: Record<string, { baseUrl: string }> };
  for (const p of Object.values(models.providers)) p.baseUrl = server.baseURL;
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
  fs.copyFileSync(
    path.join(FIXTURES, "pi-1.6.0", `${fixture}.agent`, "settings.json"),
    path.join(agentDir, "settings.json"),
  );
  return { session, agentDir, home, cwd };
}

describe("compaction by the user's own pi, headless", async () => {
  const versions = await importMjs<{ PI_VERSIONS: string[]; piCliPath(v: string): string }>("versions.mjs");
  const { ensureConformanceInstall } = await importMjs<{ ensureConformanceInstall(): { node22Path: string } }>(
    "setup.mjs",
  );

  for (const version of versions.PI_VERSIONS) {
    describe(`pi ${version}`, () => {
      let runtime: PiRuntime;
      before(async () => {
        const install = piAt(versions.piCliPath(version), "path") as PiInstall;
        assert.equal(install.version, version);
        // the Node 22 of the conformance package, first on the PATH (the host's Node 20 is too old for pi)
        const node22 = ensureConformanceInstall().node22Path;
        runtime = await nodeForPi(
          { ...install, searchPath: `${path.dirname(node22)}${path.delimiter}${process.env.PATH}` },
          { env: { ...process.env, PATH: "/nonexistent" } },
        );
        assert.equal(runtime.node, node22);
      });

      it("compacts an idle session: pi appends its own compaction entry, which pi's rules confirm", async () => {
        const w = workspace(`compact-${version}`, "split");
        const before = fs.readFileSync(w.session, "utf8");
        const plan = await planCompaction(w.session, {
          agentDir: w.agentDir,
          maxOutputTokens: 2048,
          guardSeconds: 0,
          procRoot: null,
          pi: userPiOf({ pi: runtime.install, tried: [] }),
        });
        const events: RpcRecord[] = [];
        const requestsBefore = server.requests.length;
        const result = await compactWithPi({
          runtime,
          sessionFile: w.session,
          cwd: w.cwd,
          agentDir: w.agentDir,
          env: { ...process.env, HOME: w.home },
          onEvent: (e) => events.push(e),
        });
        assert.equal(result.model, "scripted/scripted-small");
        assert.ok(result.summary.includes("Scripted summary by the user's pi."), result.summary);
        assert.ok(server.requests.length > requestsBefore, "pi asked the scripted model");
        assert.ok(events.some((e) => e.type === "compaction_start"));
        assert.ok(events.some((e) => e.type === "compaction_end"));
        const after = fs.readFileSync(w.session, "utf8");
        assert.ok(after.startsWith(before), "pi only appended");
        const appended = after
          .slice(before.length)
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const compaction = appended.find((e) => e.type === "compaction")!;
        assert.ok(compaction, JSON.stringify(appended.map((e) => e.type)));
        assert.ok(
          appended.every((e) => e.type === "compaction" || e.type === "thinking_level_change"),
          "only pi's own entries (a thinking_level_change when the branch has none)",
        );
        assert.equal(compaction.firstKeptEntryId, result.firstKeptEntryId);
        assert.equal(compaction.tokensBefore, result.tokensBefore);
        // our preview predicted what pi did (the preview is computed with that pi's rules; the
        // matrix proves those rules equal pi's own on fixtures, cases and random trees)
        assert.equal(compaction.firstKeptEntryId, plan.preview.firstKeptEntryId);
        assert.equal(compaction.tokensBefore, plan.preview.tokensBefore);
        const details = compaction.details as { readFiles: string[]; modifiedFiles: string[] };
        assert.deepEqual(details.readFiles, plan.preview.readFiles);
        assert.deepEqual(details.modifiedFiles, plan.preview.modifiedFiles);
        const session = await SessionFile.open(w.session);
        assert.equal(session.records.at(-1)?.id, compaction.id);
      });

      // abort is the same RPC command in every version (the research checked all five): the newest and the oldest here
      if (version === versions.PI_VERSIONS[0] || version === versions.PI_VERSIONS.at(-1))
        it("cancel = RPC abort: pi answers “Compaction cancelled” and writes nothing", async () => {
          const w = workspace(`abort-${version}`, "split");
          const before = fs.readFileSync(w.session, "utf8");
          const controller = new AbortController();
          server.script({ text: "## Goal\nslow ".repeat(20), chunkDelayMs: 150 });
          await assert.rejects(
            compactWithPi({
              runtime,
              sessionFile: w.session,
              cwd: w.cwd,
              agentDir: w.agentDir,
              env: { ...process.env, HOME: w.home },
              signal: controller.signal,
              onEvent: (e) => {
                if (e.type === "compaction_start") setTimeout(() => controller.abort(), 200);
              },
            }),
            (error: unknown) => error instanceof PiRpcError && error.kind === "cancelled",
          );
          server.reset();
          const after = fs.readFileSync(w.session, "utf8");
          const appended = after.slice(before.length).split("\n").filter(Boolean);
          assert.ok(
            appended.every((l) => (JSON.parse(l) as { type: string }).type === "thinking_level_change"),
            `no compaction written: ${appended.join("\n")}`,
          );
        });
    });
  }

  it("a session whose header cwd is gone is refused before pi starts (pi would exit 1)", async () => {
    const w = workspace("cwd-gone", "split");
    fs.rmSync(w.cwd, { recursive: true });
    const install = piAt(versions.piCliPath(versions.PI_VERSIONS[0]!), "path") as PiInstall;
    const runtime: PiRuntime = { install, node: ensureConformanceInstall().node22Path, nodeVersion: "v22" };
    await assert.rejects(
      compactWithPi({ runtime, sessionFile: w.session, cwd: w.cwd, agentDir: w.agentDir }),
      (error: unknown) =>
        error instanceof PiRpcError && error.kind === "cwd-missing" && /does not exist/.test(error.message),
    );
  });

  it("--no-mcp only for pi 1.4.0 and newer (older versions exit on unknown flags)", () => {
    const runtimeOf = (version: string): PiRuntime => ({
      install: piAt(versions.piCliPath(version), "path") as PiInstall,
      node: "node",
      nodeVersion: "v22",
    });
    for (const version of versions.PI_VERSIONS) {
      const args = PiRpc.args({ runtime: runtimeOf(version), sessionFile: "/s.jsonl", cwd: "/" });
      assert.equal(
        args.includes("--no-mcp"),
        ["1.4.0", "1.5.2", "1.6.0"].includes(version),
        `${version}: ${args.join(" ")}`,
      );
    }
  });
});
