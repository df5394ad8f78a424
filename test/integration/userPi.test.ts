// The user's own pi in the real extension host (issue 13): with pi 1.5.2 installed as the user's
// pi (a global-install layout — `<prefix>/bin/pi`, `<prefix>/bin/node`, `<prefix>/lib/node_modules/
// @earendil-works/pi-coding-agent` — built from the conformance package's committed lockfile, no
// network) and that bin/ first on the extension host's PATH, a session on mistral/mistral-large-latest
// shows pi 1.5.2's window (262 144) in the gauge and in `pi-context inspect --json`; with 1.6.0 on
// the PATH, 1.6.0's (1 048 576). Without any pi-context summarizer settings, "Pi Context: Compact Session…"
// lets the user's own pi compact the idle session against a scripted model configured in pi's
// models.json, and the entry at the end of the file is pi's own compaction.
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import { validCutPoints } from "../../src/core/rules/compaction";
import type { CompactCommandOutcome } from "../../src/services";
import { UserPiSource } from "../../src/userPi/service";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { SessionBuilder } from "../support/session-builder";
import { repoRoot, testHost, testWorkspace, waitFor } from "./env";
import { fixture, installSession, makeAgentDir, piApi, setSetting, useAgentDir } from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-user-pi-"));
const ORACLE = path.join(repoRoot, "test", "conformance", "oracle");

/**
 * `npm install -g --prefix <dir> @earendil-works/pi-coding-agent@<version>` as a layout, from the
 * conformance package's install: `lib/node_modules/@earendil-works/pi-coding-agent` → that pi,
 * `bin/pi` → its `dist/bundle/cli.js`, `bin/node` → the package's Node 22 (pi needs ≥ 22.19).
 */
function globalInstall(version: string, node22: string): string {
  const prefix = path.join(tmp, `prefix-${version}`);
  const lib = path.join(prefix, "lib", "node_modules", "@earendil-works");
  fs.mkdirSync(lib, { recursive: true });
  fs.mkdirSync(path.join(prefix, "bin"), { recursive: true });
  const pkg = path.join(lib, "pi-coding-agent");
  fs.symlinkSync(path.join(ORACLE, "node_modules", `pi-${version}`), pkg);
  fs.symlinkSync(path.join(pkg, "dist", "bundle", "cli.js"), path.join(prefix, "bin", "pi"));
  fs.symlinkSync(node22, path.join(prefix, "bin", "node"));
  return path.join(prefix, "bin");
}

/** A session on mistral/mistral-large-latest (its window differs between pi 1.5.2 and 1.6.0). */
function mistralSession(agentDir: string): string {
  const src = path.join(tmp, "mistral.jsonl");
  const b = new SessionBuilder({ id: "mistral-it", cwd: testWorkspace(), timestamp: new Date().toISOString() })
    .model("m1", "mistral", "mistral-large-latest")
    .user("u1", [{ type: "text", text: "hello" }]);
  fs.writeFileSync(src, b.jsonl());
  return installSession(agentDir, src, "2026-12-01T10-00-00-000Z_mistral-it.jsonl");
}

/** `pi-context inspect --json` with a PATH, as a user runs it in the terminal. */
function inspectJson(file: string, agentDir: string, pathValue: string): Record<string, unknown> {
  return cliJson(["inspect", file, "--json"], agentDir, pathValue);
}

/** `pi-context <args>` with `PATH` = `pathValue`; its JSON output (any exit code: a refused dry run exits 1). */
function cliJson(args: string[], agentDir: string, pathValue: string): Record<string, unknown> {
  const run = spawnSync(process.execPath, [path.join(repoRoot, "dist", "cli.js"), ...args], {
    env: { ...process.env, PATH: pathValue, PI_CODING_AGENT_DIR: agentDir, ELECTRON_RUN_AS_NODE: "1" },
    encoding: "utf8",
  });
  assert.ok(run.stdout.trim().startsWith("{"), `pi-context ${args.join(" ")}: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe("the user's own pi (issue 13)", function () {
  this.timeout(90000);
  let api: PiContextApi;
  let node22: string;
  let bin152: string;
  let bin160: string;
  let agentDir: string;
  let server: ScriptedServer;
  const originalPath = process.env.PATH;

  /** The gauge once its tooltip contains `text`. */
  async function gaugeWith(text: string): Promise<{ tooltip: string; text: string }> {
    // the tooltip is escaped Markdown (pi's paths and versions are untrusted text): compare as rendered
    const rendered = () => {
      const s = api.statusBar.snapshot();
      return { ...s, tooltip: s.tooltip.replace(/\\([!-/:-@[-`{-~])/g, "$1") };
    };
    await waitFor(() => rendered().tooltip.includes(text), 10000, `the gauge's tooltip to show ${text}`);
    return rendered();
  }

  /** Put `bin` first on the extension host's PATH and let pi-context look again. */
  async function usePath(bin: string | undefined): Promise<void> {
    process.env.PATH = bin ? `${bin}${path.delimiter}${originalPath}` : originalPath;
    await api.services.pi.refresh();
  }

  before(async () => {
    api = await piApi();
    const setup = (await import(pathToFileURL(path.join(ORACLE, "setup.mjs")).href)) as {
      ensureConformanceInstall(): { node22Path: string };
    };
    node22 = setup.ensureConformanceInstall().node22Path;
    bin152 = globalInstall("1.5.2", node22);
    bin160 = globalInstall("1.6.0", node22);
    server = await startScriptedServer({ text: "## Goal\nSummary written by the user's own pi." });
    agentDir = makeAgentDir();
    await useAgentDir(api, agentDir);
    await setSetting("liveSession.guardSeconds", 30);
  });
  after(async () => {
    process.env.PATH = originalPath;
    await api.services.pi.refresh();
    await setSetting("liveSession.guardSeconds", undefined);
    await useAgentDir(api, undefined);
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("pi 1.5.2 on the PATH: 262 144 in the gauge and in inspect --json, from pi 1.5.2's catalog; 1.6.0: 1 048 576", async () => {
    const file = mistralSession(agentDir);
    await usePath(bin152);
    assert.strictEqual(api.services.pi.current.install?.version, "1.5.2");
    assert.strictEqual(api.services.pi.current.install?.source, "path");
    await api.services.sessions.pin(file);
    await waitFor(
      () => api.services.sessions.current?.analysis.window.value === 262_144,
      10000,
      "the window of pi 1.5.2's catalog",
    );
    const gauge152 = await gaugeWith("262,144");
    assert.ok(gauge152.tooltip.includes("pi 1.5.2's model catalog"), gauge152.tooltip);
    assert.ok(gauge152.tooltip.includes("1.5.2 — the pi on the PATH"), gauge152.tooltip);
    const cli152 = inspectJson(file, agentDir, `${bin152}${path.delimiter}${originalPath}`);
    const window152 = cli152.contextWindow as { value: number; source: string; catalog: string; detail: string };
    assert.strictEqual(window152.value, 262_144);
    assert.strictEqual(window152.source, "catalog");
    assert.strictEqual(window152.catalog, "pi 1.5.2's model catalog");
    assert.match(window152.detail, /^pi 1\.5\.2's model catalog \(/);
    assert.deepStrictEqual((cli152.pi as { version: string; source: string }).version, "1.5.2");
    // every command's numbers follow the same pi: the trim preview's threshold is 1.5.2's window − reserveTokens
    const trimArgs = ["trim", file, "u1", "--note", "a note", "--dry-run", "--json"];
    const trim152 = cliJson(trimArgs, agentDir, `${bin152}${path.delimiter}${originalPath}`);
    const tokensAfter152 = trim152.tokensAfter as number;
    assert.strictEqual(trim152.untilCompactionAfter, 262_144 - 16_384 - tokensAfter152, JSON.stringify(trim152));

    await usePath(bin160);
    assert.strictEqual(api.services.pi.current.install?.version, "1.6.0");
    await waitFor(
      () => api.services.sessions.current?.analysis.window.value === 1_048_576,
      10000,
      "the window of pi 1.6.0's catalog",
    );
    const gauge160 = await gaugeWith("pi 1.6.0's model catalog");
    assert.ok(gauge160.tooltip.includes("1,048,576"), gauge160.tooltip);
    const cli160 = inspectJson(file, agentDir, `${bin160}${path.delimiter}${originalPath}`);
    assert.strictEqual((cli160.contextWindow as { value: number }).value, 1_048_576);
    assert.strictEqual((cli160.contextWindow as { catalog: string }).catalog, "pi 1.6.0's model catalog");
    const trim160 = cliJson(trimArgs, agentDir, `${bin160}${path.delimiter}${originalPath}`);
    assert.strictEqual(trim160.untilCompactionAfter, 1_048_576 - 16_384 - (trim160.tokensAfter as number));
    await api.services.sessions.followLatest();
  });

  it("Refresh (look again) asks the login shell again: a pi added to the shell's PATH after start-up is found without a reload", async () => {
    // a login shell whose PATH is read from a file: first without pi, then with pi 1.5.2
    const shellPathFile = path.join(tmp, "shell-path");
    const shell = path.join(tmp, "fake-login-shell");
    fs.writeFileSync(shellPathFile, "/usr/bin:/bin");
    fs.writeFileSync(
      shell,
      `#!/bin/sh\nprintf '__PI_CONTEXT_PATH_START__%s__PI_CONTEXT_PATH_END__' "$(cat ${JSON.stringify(shellPathFile)})"\n`,
      { mode: 0o755 },
    );
    const source = new UserPiSource({
      log: api.services.log,
      config: () => ({ ...api.services.config(), piPath: "" }),
      env: { PATH: "/usr/bin:/bin", SHELL: shell, HOME: tmp },
      loginShell: true,
    });
    try {
      source.start();
      await source.refresh();
      assert.strictEqual(source.current.install, undefined, "no pi on either PATH yet");
      fs.writeFileSync(shellPathFile, `${bin152}:/usr/bin:/bin`);
      await source.refresh(); // a plain refresh keeps the shell's first answer
      assert.strictEqual(source.current.install, undefined);
      await source.refresh(true); // Pi Context: Refresh Session
      const found = source.current;
      assert.strictEqual(found.install?.version, "1.5.2", JSON.stringify(found.tried));
    } finally {
      source.dispose();
    }
  });

  it("piContext.pi.path in the User settings of a code-server window: ignored by VS Code, so said in the log and the tooltip; in the Remote settings it is used", async function () {
    if (testHost() !== "code-server") this.skip(); // the User settings file is on this machine only there
    const userFile = path.join(api.services.context.globalStorageUri.fsPath, "..", "..", "settings.json");
    const original = fs.readFileSync(userFile, "utf8");
    const launcher = path.join(bin152, "pi");
    const logFile = path.join(api.services.context.logUri.fsPath, "Pi Context.log");
    const logBefore = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").length : 0;
    const file = mistralSession(agentDir);
    try {
      await usePath(bin160);
      await api.services.sessions.pin(file);
      // what a user writes into settings.json (User tab) by hand: JSONC, a comment and a trailing comma
      const settings = JSON.parse(original) as Record<string, unknown>;
      fs.writeFileSync(
        userFile,
        `{\n  // my pi\n  "piContext.pi.path": ${JSON.stringify(launcher)},\n${JSON.stringify(settings, null, 2).slice(1, -2)},\n}\n`,
      );
      await waitFor(
        () =>
          vscode.workspace.getConfiguration("piContext").get("pi.path") === "" &&
          !!api.services.pi.current.settingIgnored,
        10000,
        "the ignored User setting to be noticed",
      );
      assert.strictEqual(api.services.pi.current.install?.version, "1.6.0", "VS Code does not apply it: the PATH's pi");
      const said = `piContext.pi.path "${launcher}" in your User settings (${userFile}) is ignored in this remote window`;
      assert.ok(api.services.pi.current.settingIgnored!.startsWith(said), api.services.pi.current.settingIgnored);
      await api.services.sessions.refresh();
      const gauge = await gaugeWith("is ignored in this remote window");
      assert.ok(gauge.tooltip.includes("Remote settings"), gauge.tooltip);
      await waitFor(
        () => fs.readFileSync(logFile, "utf8").slice(logBefore).includes(said),
        10000,
        "the warning in the log",
      );
      // where it must go: Global in a remote window writes the Remote settings for a machine setting
      await setSetting("pi.path", launcher);
      await waitFor(() => api.services.pi.current.install?.source === "setting", 10000, "the setting in effect");
      assert.strictEqual(api.services.pi.current.install?.version, "1.5.2");
      assert.strictEqual(api.services.pi.current.settingIgnored, undefined, "the value in effect is no longer ignored");
    } finally {
      fs.writeFileSync(userFile, original);
      await setSetting("pi.path", undefined);
      await usePath(undefined);
      await api.services.sessions.followLatest();
    }
  });

  it("no pi-context summarizer settings: the user's own pi compacts the idle session and writes its own entry", async () => {
    await usePath(bin152);
    // pi's own configuration: a scripted model in pi's models.json, pi's settings (reserve, keep recent)
    const models = JSON.parse(fs.readFileSync(path.join(fixture("split").agent, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string }>;
    };
    for (const p of Object.values(models.providers)) p.baseUrl = server.baseURL;
    fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
    fs.copyFileSync(path.join(fixture("split").agent, "settings.json"), path.join(agentDir, "settings.json"));
    const file = installSession(agentDir, fixture("split").jsonl, "2026-12-01T11-00-00-000Z_split-it.jsonl");
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const before = fs.readFileSync(file, "utf8");
    assert.strictEqual(await api.services.summarizers.usesPi(), true, "auto → the user's pi");
    const requests = server.requests.length;
    const outcome = (await vscode.commands.executeCommand("piContext.compact", file, {
      instructions: "",
      skipPreview: true,
    })) as CompactCommandOutcome;
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind !== "compacted") return;
    assert.strictEqual(outcome.by, "pi");
    // pi asked its own model (models.json's scripted-small), not a pi-context summarizer
    const asked = server.requests.slice(requests);
    assert.ok(
      asked.length > 0 && asked.every((r) => r.body.model === "scripted-small"),
      JSON.stringify(asked.map((r) => r.body.model)),
    );
    const after = fs.readFileSync(file, "utf8");
    assert.ok(after.startsWith(before), "only appended");
    const appended = after
      .slice(before.length)
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = appended[appended.length - 1]!;
    assert.strictEqual(last.type, "compaction");
    assert.strictEqual(last.id, outcome.entryId);
    assert.ok(String(last.summary).includes("Summary written by the user's own pi."), String(last.summary));
    assert.strictEqual(last.fromHook, false);
    assert.ok(
      appended.every((e) => e.type === "compaction" || e.type === "thinking_level_change"),
      JSON.stringify(appended.map((e) => e.type)),
    );
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  it("Switch to Here… when your pi would summarize and none runs: No summary says what is written (no running pi)", async () => {
    await usePath(bin160);
    fs.copyFileSync(path.join(fixture("tree").agent, "settings.json"), path.join(agentDir, "settings.json"));
    const file = installSession(agentDir, fixture("tree").jsonl, "2026-12-01T12-30-00-000Z_tree-ask.jsonl");
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const before = fs.readFileSync(file);
    assert.strictEqual(await api.services.summarizers.usesPi(), true);
    const asked = api.sessionTree.prompts.length;
    const switching = vscode.commands.executeCommand("piContext.tree.switchToHere", "a03949d4", { file, quiet: true });
    const prompt = await waitFor(
      () => (api.sessionTree.prompts.length > asked ? api.sessionTree.currentPrompt() : undefined),
      15000,
      "pi's question",
    );
    try {
      assert.strictEqual(prompt!.kind, "pick");
      if (prompt!.kind !== "pick") return;
      const [none, summarize] = prompt!.quickPick.items;
      assert.strictEqual(none!.label, "No summary");
      assert.doesNotMatch(none!.detail ?? "", /running pi/);
      assert.match(none!.detail ?? "", /^Move the leaf to /);
      assert.match(summarize!.detail ?? "", /^your pi 1\.6\.0 \(with its own model\) summarizes /);
    } finally {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      await switching;
    }
    assert.deepStrictEqual(fs.readFileSync(file), before, "nothing written");
  });

  it("Switch to Here with a summary: the user's own pi writes the branch summary (headless, through the live bridge)", async () => {
    await usePath(bin152);
    const models = JSON.parse(fs.readFileSync(path.join(fixture("tree").agent, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string }>;
    };
    for (const p of Object.values(models.providers)) p.baseUrl = server.baseURL;
    fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
    fs.copyFileSync(path.join(fixture("tree").agent, "settings.json"), path.join(agentDir, "settings.json"));
    const file = installSession(agentDir, fixture("tree").jsonl, "2026-12-01T12-00-00-000Z_tree-it.jsonl");
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const before = fs.readFileSync(file, "utf8");
    const requests = server.requests.length;
    await api.services.sessions.pin(file);
    const logFile = path.join(api.services.context.logUri.fsPath, "Pi Context.log");
    const logBefore = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").length : 0;
    const switching = vscode.commands.executeCommand("piContext.tree.switchToHere", "a03949d4", {
      summarize: true,
      label: "by-your-pi",
      file,
      quiet: true,
    }) as Thenable<{ kind: string; newLeafId?: string | null }>;
    // while pi-context's own headless pi runs: its bridge serves the switch, but it is no running
    // pi of the user's — no "live" badge, no live numbers, no "untested pi version" warning (1.5.2)
    let done = false;
    let bridged = false;
    const badges: string[] = [];
    void Promise.resolve(switching).finally(() => (done = true));
    while (!done) {
      if (api.liveBridge.liveFor(file)) bridged = true;
      if (api.services.sessions.current?.file === file) badges.push(api.statusBar.snapshot().text);
      await new Promise((r) => setTimeout(r, 25));
    }
    const outcome = await switching;
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    assert.ok(bridged, "the switch ran through the headless pi's live bridge");
    assert.ok(badges.length > 0, "the session was followed during the switch");
    assert.ok(
      badges.every((t) => !t.endsWith(" · live")),
      `no live badge for pi-context's own pi: ${JSON.stringify([...new Set(badges)])}`,
    );
    const logged = fs.readFileSync(logFile, "utf8").slice(logBefore);
    assert.ok(logged.includes("by the user's pi 1.5.2 (headless"), logged);
    assert.ok(!logged.includes("told the user"), `no warning for the headless pi: ${logged}`);
    await api.services.sessions.followLatest();
    const asked = server.requests.slice(requests);
    assert.ok(
      asked.length > 0 && asked.every((r) => r.body.model === "scripted-big"),
      JSON.stringify(asked.map((r) => r.body.model)),
    );
    const appended = fs
      .readFileSync(file, "utf8")
      .slice(before.length)
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = appended.find((e) => e.type === "branch_summary");
    assert.ok(summary, JSON.stringify(appended.map((e) => e.type)));
    assert.strictEqual(summary.parentId, "a03949d4");
    assert.ok(String(summary.summary).includes("Summary written by the user's own pi."), String(summary.summary));
    const label = appended.find((e) => e.type === "label");
    assert.strictEqual(label?.label, "by-your-pi");
    assert.ok(
      appended.every((e) => ["thinking_level_change", "branch_summary", "label"].includes(String(e.type))),
      `only pi's own entries: ${JSON.stringify(appended.map((e) => e.type))}`,
    );
  });
  it("Compact Up to Here with the user's own pi: headless with the live bridge, pi writes its own entry keeping from the entry (issue 41)", async () => {
    await usePath(bin160);
    const models = JSON.parse(fs.readFileSync(path.join(fixture("split").agent, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string }>;
    };
    for (const p of Object.values(models.providers)) p.baseUrl = server.baseURL;
    fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models));
    fs.copyFileSync(path.join(fixture("split").agent, "settings.json"), path.join(agentDir, "settings.json"));
    const file = installSession(agentDir, fixture("split").jsonl, "2026-12-01T13-00-00-000Z_split-up-to-here.jsonl");
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const before = fs.readFileSync(file, "utf8");
    await api.services.sessions.pin(file);
    await waitFor(() => api.services.sessions.current?.file === file, 10_000, "the session shown");
    const keepFrom = validCutPoints(api.services.sessions.current!.session)[2]!;
    assert.strictEqual(await api.services.summarizers.usesPi(), true, "auto → the user's pi");
    const requests = server.requests.length;
    const outcome = (await vscode.commands.executeCommand("piContext.compactUpToHere", keepFrom, {
      instructions: "",
      skipPreview: true,
    })) as CompactCommandOutcome;
    await api.services.sessions.followLatest();
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    if (outcome.kind !== "compacted") return;
    assert.strictEqual(outcome.by, "pi");
    assert.strictEqual(outcome.firstKeptEntryId, keepFrom);
    const asked = server.requests.slice(requests);
    assert.ok(
      asked.length > 0 && asked.every((r) => r.body.model === "scripted-small"),
      JSON.stringify(asked.map((r) => r.body.model)),
    );
    const after = fs.readFileSync(file, "utf8");
    assert.ok(after.startsWith(before), "only appended");
    const appended = after
      .slice(before.length)
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const compaction = appended.find((e) => e.type === "compaction")!;
    assert.ok(compaction, JSON.stringify(appended.map((e) => e.type)));
    assert.strictEqual(compaction.firstKeptEntryId, keepFrom);
    assert.strictEqual(compaction.fromHook, false);
    assert.ok(String(compaction.summary).includes("Summary written by the user's own pi."));
  });
});
