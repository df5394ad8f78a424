// Temp fixtures for runs against a real VS Code: a workspace folder and a pi agent dir.
// Used by run-integration.mjs, run-e2e.mjs, demo.mjs and .vscode-test.mjs.
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * pi's session directory name for a cwd: `--` + the absolute cwd with one leading `/` or `\`
 * removed and every remaining `/`, `\`, `:` replaced by `-`, + `--` (pi 1.6.0; lossy).
 * @param {string} cwd absolute path
 */
export function encodeSessionDirName(cwd) {
  const abs = path.resolve(cwd);
  return `--${abs.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `<agentDir>/sessions/--<enc>--` for a cwd. */
export function sessionDirFor(agentDir, cwd) {
  return path.join(agentDir, "sessions", encodeSessionDirName(cwd));
}

/**
 * Copy a pi session file into `<agentDir>/sessions/--<enc cwd>--/`, rewriting the session
 * header's `cwd` (first line) to `cwd`. The source file is never modified.
 * @param {string} agentDir
 * @param {string} sourceJsonl
 * @param {string} cwd absolute path the session should belong to
 * @param {{fileName?: string}} [opts]
 * @returns {string} the path of the copy
 */
export function installSession(agentDir, sourceJsonl, cwd, opts = {}) {
  const text = readFileSync(sourceJsonl, "utf8");
  const nl = text.indexOf("\n");
  const first = nl === -1 ? text : text.slice(0, nl);
  const header = JSON.parse(first);
  if (header.type !== "session") throw new Error(`${sourceJsonl}: first line is not a session header`);
  header.cwd = path.resolve(cwd);
  const out = JSON.stringify(header) + (nl === -1 ? "\n" : text.slice(nl));
  const dir = sessionDirFor(agentDir, cwd);
  mkdirSync(dir, { recursive: true });
  const target = path.join(dir, opts.fileName ?? path.basename(sourceJsonl));
  writeFileSync(target, out);
  return target;
}

/**
 * Copy the *.json files of a fixture agent dir (settings.json, models.json, …) into agentDir.
 * @param {string} fromDir
 * @param {string} agentDir
 */
export function copyAgentConfig(fromDir, agentDir) {
  mkdirSync(agentDir, { recursive: true });
  for (const f of readdirSync(fromDir)) {
    if (f.endsWith(".json")) copyFileSync(path.join(fromDir, f), path.join(agentDir, f));
  }
}

/**
 * Create a fresh temp dir with `workspace/` (a folder to open in VS Code) and `agent/`
 * (a pi agent dir with an empty `sessions/`).
 * @param {{prefix?: string, workspaceFrom?: string, agentConfigFrom?: string}} [opts]
 */
export function createTestFixture(opts = {}) {
  const root = mkdtempSync(path.join(os.tmpdir(), opts.prefix ?? "pi-context-fixture-"));
  const workspace = path.join(root, "workspace");
  const agentDir = path.join(root, "agent");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(path.join(agentDir, "sessions"), { recursive: true });
  if (opts.workspaceFrom && existsSync(opts.workspaceFrom)) cpSync(opts.workspaceFrom, workspace, { recursive: true });
  else writeFileSync(path.join(workspace, "README.md"), "# pi-context test workspace\n");
  if (opts.agentConfigFrom) copyAgentConfig(opts.agentConfigFrom, agentDir);
  // The live-session guard's process table for test runs (PI_CONTEXT_GUARD_PROCESSES, see
  // src/core/proc/guardTable.ts): no pi runs, whatever other people run on this machine; a test
  // that wants the guard to see a pi writes it here.
  const guardProcesses = path.join(root, "guard-processes.json");
  writeFileSync(guardProcesses, "[]\n");
  return {
    root,
    workspace,
    agentDir,
    guardProcesses,
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
