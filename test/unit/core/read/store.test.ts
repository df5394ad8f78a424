/**
 * Session stores (issue 43, kind 7): every read surface goes through `openSession` / `sessionInfoOf`,
 * so a second store — here a fake one that keeps sessions in memory, as a read-only SQLite store
 * would hand them out — is used by `inspect`, `tree` and the analysis without touching them, and the
 * write flows refuse its sessions.
 */

import { strict as assert } from "node:assert";
import { after, before, describe, it } from "node:test";
import { SessionFile } from "../../../../src/core/read/session";
import { JSONL_STORE, registerSessionStore, storeOf, type SessionStore } from "../../../../src/core/read/store";
import type { SessionInfo } from "../../../../src/core/read/sessionInfo";
import { analyzeSession } from "../../../../src/core/rules/analyze";
import { runCli } from "../../../support/cli";
import { SessionBuilder } from "../../../support/session-builder";

const JSONL = new SessionBuilder("/tmp/store-project")
  .user("u1", "from the other store")
  .assistant("a1", { text: "answer", usage: 321 })
  .jsonl();

const fake: SessionStore = {
  kind: "fake",
  writable: false,
  handles: (location) => location.endsWith(".fakedb"),
  open: () => Promise.resolve(SessionFile.fromBytes(JSONL)),
  info: () =>
    Promise.resolve({
      id: "test-session",
      cwd: "/tmp/store-project",
      firstMessage: "from the other store",
    } as SessionInfo),
};

describe("a second session store", () => {
  let unregister: () => void;
  before(() => {
    unregister = registerSessionStore(fake);
  });
  after(() => unregister());

  it("is asked for its own locations only; the JSONL store takes every other path", () => {
    assert.equal(storeOf("/tmp/pi-context-store-test/sessions.fakedb"), fake);
    assert.equal(storeOf("/tmp/x.jsonl"), JSONL_STORE);
  });

  it("the analysis, inspect and tree read through it unchanged", async () => {
    const analysis = await analyzeSession("/tmp/pi-context-store-test/sessions.fakedb", {
      agentDir: "/nonexistent-agent",
    });
    assert.equal(analysis.inspect.contextTokens, 321);
    const inspect = await runCli([
      "inspect",
      "/tmp/pi-context-store-test/sessions.fakedb",
      "--agent-dir",
      "/nonexistent-agent",
    ]);
    assert.equal(inspect.code, 0, inspect.err);
    assert.match(inspect.out, /^session {5}from the other store$/m);
    assert.match(inspect.out, /^context {5}321 tokens/m);
    const tree = await runCli(["tree", "/tmp/pi-context-store-test/sessions.fakedb"]);
    assert.equal(tree.code, 0, tree.err);
    assert.match(tree.out, /• a1 {2}assistant: answer/);
  });
});
