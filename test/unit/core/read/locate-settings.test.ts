import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { cwdMatches, encodeSessionDirName, listSessions, sessionDirCandidates } from "../../../../src/core/read/locate";
import { getAgentDir, resolveSettings } from "../../../../src/core/rules/settings";
import { FIXTURES } from "../../../support/paths";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-locate-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("locating sessions", () => {
  it("encodes the session folder like pi (lossy) and attributes sessions by header cwd (case 12)", async () => {
    assert.equal(encodeSessionDirName("/home/u/project"), "--home-u-project--");
    assert.equal(encodeSessionDirName("/a/b-c/d"), encodeSessionDirName("/a/b/c-d"));
    assert.equal(encodeSessionDirName("C:\\Users\\dev\\proj"), "--C--Users-dev-proj--");
    const agentDir = path.join(FIXTURES, "cases/12-session-dir-collision-windows");
    const forAbcd = await listSessions(sessionDirCandidates({ agentDir, cwd: "/a/b-c/d", env: {} }), "/a/b-c/d", {
      platform: "linux",
    });
    assert.deepEqual(
      forAbcd.map((s) => s.id),
      ["0000aaaa-1111-4222-8333-444455556666"],
    );
    const forAbCd = await listSessions(sessionDirCandidates({ agentDir, cwd: "/a/b/c-d", env: {} }), "/a/b/c-d", {
      platform: "linux",
    });
    assert.deepEqual(
      forAbCd.map((s) => s.id),
      ["0000bbbb-1111-4222-8333-444455556666"],
    );
  });

  it("compares Windows paths case-insensitively and with either separator on win32 only", () => {
    assert.equal(cwdMatches("C:\\Users\\dev\\proj", "c:/users/DEV/proj", { platform: "win32" }), true);
    assert.equal(
      cwdMatches("C:\\Users\\dev\\proj\\sub", "C:\\Users\\dev\\proj", { platform: "win32", orInside: true }),
      true,
    );
    assert.equal(cwdMatches("/home/Dev/p", "/home/dev/p", { platform: "linux" }), false);
    assert.equal(cwdMatches("/home/dev/p/", "/home/dev/p", { platform: "linux" }), true);
    assert.equal(cwdMatches("/home/dev/proj2", "/home/dev/proj", { platform: "linux", orInside: true }), false);
  });

  it("orders session dirs like pi: env, setting (relative to cwd), default; extra dirs first", () => {
    const c = sessionDirCandidates({
      agentDir: "/agent",
      cwd: "/w/p",
      env: { PI_CODING_AGENT_SESSION_DIR: "/shared/sessions" },
      sessionDirSetting: ".sessions",
      extraDirs: ["/extra"],
    });
    assert.deepEqual(
      c.map((x) => [x.origin, x.dir, x.shared]),
      [
        ["extension-setting", "/extra", true],
        ["env", "/shared/sessions", true],
        ["setting", "/w/p/.sessions", true],
        ["default", "/agent/sessions/--w-p--", false],
      ],
    );
    assert.equal(getAgentDir({ PI_CODING_AGENT_DIR: "~/x" }, "/home/me"), "/home/me/x");
    assert.equal(getAgentDir({}, "/home/me"), "/home/me/.pi/agent");
  });

  it("lists the sessions of a folder with pi's listing facts: name, first message, message count", async () => {
    const dir = path.join(tmp, "sessions", encodeSessionDirName("/home/user/sessgen-long-9dnKqN/project"));
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES, "pi-1.6.0/long.jsonl"), path.join(dir, "long.jsonl"));
    fs.writeFileSync(path.join(dir, "notes.jsonl"), "not a session\n");
    const [s, ...rest] = await listSessions(
      sessionDirCandidates({ agentDir: tmp, cwd: "/home/user/sessgen-long-9dnKqN/project", env: {} }),
      "/home/user/sessgen-long-9dnKqN/project",
      { platform: "linux" },
    );
    assert.equal(rest.length, 0);
    assert.equal(s!.name, "long scripted session");
    assert.equal(s!.firstMessage, "[task:t1] please do task 1");
    assert.equal(s!.cwd, "/home/user/sessgen-long-9dnKqN/project");
    assert.equal(s!.entryCount, 162);
    assert.equal(s!.complete, true);
  });
});

describe("pi settings with their sources", () => {
  function agent(files: Record<string, unknown>): { agentDir: string; cwd: string } {
    const root = fs.mkdtempSync(path.join(tmp, "agent-"));
    const agentDir = path.join(root, "agent");
    const cwd = path.join(root, "project");
    fs.mkdirSync(agentDir, { recursive: true });
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    for (const [name, value] of Object.entries(files)) {
      const file = name === "project" ? path.join(cwd, ".pi", "settings.json") : path.join(agentDir, name);
      fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
    }
    return { agentDir, cwd };
  }

  it("resolves reserve/keep independently: modelOverrides → project → global → default, with files", () => {
    const { agentDir, cwd } = agent({
      "settings.json": {
        compaction: {
          reserveTokens: 30000,
          modelOverrides: { "anthropic/claude-sonnet-4-5": { keepRecentTokens: 8000 } },
        },
      },
      project: { compaction: { reserveTokens: 40000 } },
      "trust.json": "{}",
    });
    fs.writeFileSync(path.join(agentDir, "trust.json"), JSON.stringify({ [fs.realpathSync(cwd)]: true }));
    const r = resolveSettings({ agentDir, cwd, modelKey: "anthropic/claude-sonnet-4-5" });
    assert.equal(r.projectTrust.reason, "trust-file");
    assert.deepEqual(
      [r.compaction.reserveTokens.value, r.compaction.reserveTokens.source, r.compaction.reserveTokens.file],
      [40000, "project", path.join(cwd, ".pi", "settings.json")],
    );
    assert.deepEqual([r.compaction.keepRecentTokens.value, r.compaction.keepRecentTokens.source], [8000, "override"]);
    assert.equal(
      r.compaction.keepRecentTokens.key,
      'compaction.modelOverrides["anthropic/claude-sonnet-4-5"].keepRecentTokens',
    );
    assert.deepEqual([r.compaction.enabled.value, r.compaction.enabled.source], [true, "default"]);
    const other = resolveSettings({ agentDir, cwd, modelKey: "openai/gpt-5" });
    assert.deepEqual(
      [other.compaction.keepRecentTokens.value, other.compaction.keepRecentTokens.source],
      [20000, "default"],
    );
  });

  it("ignores project settings unless pi would trust the project (trust.json, defaultProjectTrust)", () => {
    const { agentDir, cwd } = agent({
      "settings.json": { compaction: { reserveTokens: 1000 } },
      project: { compaction: { reserveTokens: 2000 } },
    });
    const undecided = resolveSettings({ agentDir, cwd });
    assert.deepEqual([undecided.projectTrust.reason, undecided.compaction.reserveTokens.value], ["undecided", 1000]);
    fs.writeFileSync(
      path.join(agentDir, "trust.json"),
      JSON.stringify({ [path.dirname(fs.realpathSync(cwd))]: false }),
    );
    assert.equal(resolveSettings({ agentDir, cwd }).projectTrust.trusted, false);
    fs.writeFileSync(
      path.join(agentDir, "settings.json"),
      JSON.stringify({ defaultProjectTrust: "always", compaction: { reserveTokens: 1000 } }),
    );
    fs.rmSync(path.join(agentDir, "trust.json"));
    assert.equal(resolveSettings({ agentDir, cwd }).compaction.reserveTokens.value, 2000);
  });

  it("reports invalid values like pi (file, key, why) and keeps the rest usable", () => {
    const { agentDir, cwd } = agent({
      "settings.json": { compaction: { reserveTokens: "lots", keepRecentTokens: 5000, modelOverrides: { "a/b": 7 } } },
    });
    const r = resolveSettings({ agentDir, cwd, modelKey: "a/b", projectSettings: "never" });
    assert.equal(r.compaction.reserveTokens.value, undefined);
    assert.equal(
      r.compaction.reserveTokens.error,
      "Invalid compaction.reserveTokens setting: lots. Expected a non-negative safe integer.",
    );
    assert.equal(
      r.compaction.keepRecentTokens.error,
      'Invalid compaction.modelOverrides["a/b"] setting: 7. Expected an object.',
    );
    assert.deepEqual(
      r.problems.map((p) => [p.scope, p.file, p.key]),
      [
        ["global", path.join(agentDir, "settings.json"), "compaction.reserveTokens"],
        ["global", path.join(agentDir, "settings.json"), 'compaction.modelOverrides["a/b"]'],
      ],
    );
    const broken = agent({ "settings.json": "{ nope" });
    const b = resolveSettings({ agentDir: broken.agentDir, cwd: broken.cwd });
    assert.equal(b.compaction.reserveTokens.value, 16384);
    assert.match(b.problems[0]!.message, /^Failed to parse .*settings\.json/);
  });

  it("reads the published real-world settings shapes", () => {
    const dir = path.join(FIXTURES, "real-config");
    for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const root = fs.mkdtempSync(path.join(tmp, "real-"));
      const content = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as Record<string, unknown>;
      const settings = (content.settings ?? content) as object;
      fs.writeFileSync(path.join(root, "settings.json"), JSON.stringify(settings));
      const r = resolveSettings({ agentDir: root, projectSettings: "never" });
      assert.ok(typeof r.compaction.reserveTokens.value === "number" || r.compaction.reserveTokens.error, name);
    }
  });
});
