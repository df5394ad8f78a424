// Helpers for integration suites: the per-run fixture paths and the host we run in.
// The runner (scripts/run-integration.mjs, or .vscode-test.mjs) creates a temp workspace folder and
// a temp pi agent dir for each run and passes them in these environment variables.
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../support/paths";

export const EXTENSION_ID = "pi-context.pi-context";

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run integration tests with \`npm run test:integration\``);
  return v;
}

/** The folder opened in VS Code for this run (also `vscode.workspace.workspaceFolders[0]`). */
export function testWorkspace(): string {
  return required("PI_CONTEXT_TEST_WORKSPACE");
}

/** The pi agent dir for this run (`PI_CODING_AGENT_DIR` of the extension host). */
export function testAgentDir(): string {
  return required("PI_CONTEXT_TEST_AGENT_DIR");
}

/** "code-server" under scripts/run-integration.mjs, "desktop" under @vscode/test-cli. */
export function testHost(): "code-server" | "desktop" {
  return process.env.PI_CONTEXT_TEST_HOST === "code-server" ? "code-server" : "desktop";
}

/** pi's session dir name for a cwd (`--home-u-project--`), see docs/testing.md. */
export function encodeSessionDirName(cwd: string): string {
  return `--${path
    .resolve(cwd)
    .replace(/^[/\\]/, "")
    .replace(/[/\\:]/g, "-")}--`;
}

/**
 * Write a session file for `cwd` into the test agent dir (`<agentDir>/sessions/--<enc>--/<fileName>`).
 * `lines` are entry objects (the first should be the `session` header) or raw JSONL lines.
 * Returns the file path.
 */
export function writeSession(fileName: string, lines: (object | string)[], cwd = testWorkspace()): string {
  const dir = path.join(testAgentDir(), "sessions", encodeSessionDirName(cwd));
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, fileName);
  fs.writeFileSync(file, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return file;
}

/** Remove every session file of the test agent dir (call in afterEach when a suite wrote some). */
export function clearSessions(): void {
  const dir = path.join(testAgentDir(), "sessions");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
}

/** Repository root (where package.json and media/ live). */
export const repoRoot = REPO_ROOT;

/** Poll `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
