// @vscode/test-cli configuration, for developers with a desktop VS Code download available:
//   npm run build && npm run compile && npx vscode-test
// Runs the same compiled mocha suites as `npm run test:integration` (which uses code-server on
// machines without a VS Code download; see docs/testing.md). Suites check `testHost()` where
// the two hosts differ (remoteName, uiKind).
import { defineConfig } from "@vscode/test-cli";
import { createTestFixture } from "./scripts/test-fixtures.mjs";

// A fresh workspace folder + pi agent dir per run, like the code-server runner.
const fixture = createTestFixture({ prefix: "pi-context-vscode-test-" });
process.on("exit", () => fixture.cleanup());

export default defineConfig({
  label: "integration",
  files: "out/test/integration/**/*.test.js",
  version: "stable",
  extensionDevelopmentPath: ".",
  workspaceFolder: fixture.workspace,
  launchArgs: ["--disable-extensions", "--skip-welcome", "--skip-release-notes"],
  env: {
    PI_CODING_AGENT_DIR: fixture.agentDir,
    PI_CONTEXT_TEST_WORKSPACE: fixture.workspace,
    PI_CONTEXT_TEST_AGENT_DIR: fixture.agentDir,
    PI_CONTEXT_GUARD_PROCESSES: fixture.guardProcesses,
    PI_CONTEXT_TEST_HOST: "desktop",
  },
  mocha: { ui: "bdd", timeout: 20000, color: true },
});
