// The live bridge in the real extension host with a REAL pi 1.6.0 started by the test (`pi --mode
// rpc`, Node 22 from the conformance package) on the workspace folder, against the scripted
// OpenAI-compatible server: "Pi Context: Install Live Bridge" puts the bridge where pi loads it, the gauge
// and the context panel show the running pi's numbers with the live badge, "Pi Context: Compact Session…",
// "Switch to Here…" and labels run inside that pi (pi writes the entries; no summarizer or API key
// of ours is involved), the live-session guard applies again when the bridge is off, and a killed
// pi is dropped.
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import { readAnnouncements, socketPathFor } from "../../src/bridge/announce";
import { bridgeInstallPath, installedText, MARKER_PREFIX } from "../../src/liveBridge/installFile";
import { BRIDGE_PROTOCOL, BRIDGE_VERSION, type Announcement } from "../../src/bridge/protocol";
import { readProcessSnapshot } from "../../src/core/proc/table";
import { planCompaction } from "../../src/core/flows/compact";
import { formatTokenRange } from "../../src/shared/format";
import type { PiContextApi } from "../../src/extension";
import type { PanelControllerApi } from "../../src/panel/controller";
import type { BridgeCommandOutcome } from "../../src/liveBridge/install";
import type { LiveBridgeService } from "../../src/liveBridge/service";
import type { CompactCommandOutcome, SwitchCommandOutcome, TrimCommandOutcome } from "../../src/services";
import { messageText, PiRpc, readSessionLines, writeScriptedAgentDir } from "../support/pi-rpc";
import { startScriptedServer, type ScriptedServer } from "../support/scripted-openai";
import { SessionBuilder } from "../support/session-builder";
import { encodeSessionDirName } from "../../src/core/read/locate";
import { testWorkspace, waitFor } from "./env";
import { piApi, setSetting, useAgentDir } from "./sessionHelpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-it-bridge-"));

const entries = readSessionLines;
const textOf = messageText;

describe("live bridge with a real pi", function () {
  this.timeout(90_000);
  let api: PiContextApi;
  let live: LiveBridgeService;
  let server: ScriptedServer;
  let pi: PiRpc | undefined;
  const agentDir = path.join(tmp, "agent");
  const home = path.join(tmp, "home");

  const bridge = (command: "installBridge" | "removeBridge", options: object = { confirm: false }) =>
    vscode.commands.executeCommand<BridgeCommandOutcome>(
      `piContext.${command}`,
      options,
    ) as Promise<BridgeCommandOutcome>;

  async function turn(prompt: string, answer: string): Promise<void> {
    server.script({ text: `${answer}\n\n${"Details of the work. ".repeat(60)}` });
    await pi!.prompt(`${prompt}\n${"Context line for the task. ".repeat(40)}`);
  }

  /** "Pi Context: Compact Session…" on the current session until its live preview (a pick) is open. */
  async function openLiveCompactPreview(instructions: string) {
    const outcome = vscode.commands.executeCommand<CompactCommandOutcome>("piContext.compact", undefined, {
      instructions,
    }) as Promise<CompactCommandOutcome>;
    const open = (await waitFor(
      () => (live.prompter.current?.kind === "pick" ? live.prompter.current : undefined),
      30_000,
      "the live preview",
    ))!;
    return { outcome, open };
  }

  before(async () => {
    api = await piApi();
    live = api.liveBridge;
    assert.ok(live, "services.liveBridge is registered");
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(path.join(agentDir, "sessions"), { recursive: true });
    server = await startScriptedServer({ text: "## Goal\nScripted summary by pi's own model.\n\n## Progress\n- done" });
    writeScriptedAgentDir(agentDir, {
      baseURL: server.baseURL,
      contextWindow: 16000,
      compaction: { reserveTokens: 4000, keepRecentTokens: 1000 },
    });
    await useAgentDir(api, agentDir);
    await setSetting("liveSession.guardSeconds", 30);
    await api.services.sessions.followLatest();
  });

  after(async () => {
    await pi?.kill();
    await setSetting("liveBridge.enabled", undefined);
    await setSetting("liveSession.guardSeconds", undefined);
    await useAgentDir(api, undefined);
    await server?.close();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("installs the bridge into pi's extensions folder with a version marker, detects outdated and foreign files, removes only its own", async () => {
    const file = bridgeInstallPath(agentDir);
    assert.strictEqual((await bridge("removeBridge")).kind, "missing");
    const installed = await bridge("installBridge");
    assert.strictEqual(installed.kind, "installed");
    assert.strictEqual(installed.file, file);
    const text = fs.readFileSync(file, "utf8");
    assert.ok(
      text.startsWith(
        `${MARKER_PREFIX}{"version":"${BRIDGE_VERSION}","protocol":${BRIDGE_PROTOCOL},"pi":"1.6.x","sha256":"`,
      ),
      text.slice(0, 200),
    );
    assert.ok(text.includes("pi-context live bridge"), "the shipped bundle follows the marker");
    assert.strictEqual(live.installedStatus().state, "current");
    assert.strictEqual((await bridge("installBridge")).kind, "current");
    // edited by hand after installing
    fs.writeFileSync(file, text + "// my edit\n");
    assert.strictEqual(live.installedStatus().state, "modified");
    // an older build of ours
    fs.writeFileSync(
      file,
      installedText("// old bridge\nexport default function () {}\n").replace(/"version":"[^"]+"/, '"version":"0.9.0"'),
    );
    const outdated = live.installedStatus();
    assert.strictEqual(outdated.state, "outdated");
    assert.strictEqual(outdated.installed?.version, "0.9.0");
    const updated = await bridge("installBridge");
    assert.strictEqual(updated.kind, "updated");
    assert.strictEqual(live.installedStatus().state, "current");
    // somebody else's file of that name is never touched
    fs.writeFileSync(file, "export default function mine() {}\n");
    assert.strictEqual((await bridge("installBridge")).kind, "foreign");
    assert.strictEqual((await bridge("removeBridge")).kind, "foreign");
    assert.strictEqual(fs.readFileSync(file, "utf8"), "export default function mine() {}\n");
    fs.rmSync(file);
    assert.strictEqual((await bridge("installBridge")).kind, "installed");
    assert.strictEqual((await bridge("removeBridge")).kind, "removed");
    assert.strictEqual(fs.existsSync(file), false);
    assert.strictEqual((await bridge("installBridge")).kind, "installed");
  });

  it("shows the running pi's numbers in the gauge with a live badge", async () => {
    pi = await PiRpc.start({ cwd: testWorkspace(), agentDir, home });
    for (let i = 1; i <= 5; i++) await turn(`t${i}: step ${i} of the refactoring`, `Answer ${i}.`);
    const sessionFile = (await pi.command({ type: "get_state" })).data.sessionFile as string;
    await waitFor(
      () => api.services.sessions.current?.file === sessionFile,
      10_000,
      "the extension to follow pi's session",
    );
    const snapshot = (await waitFor(
      () => {
        const s = api.statusBar.snapshot();
        return s.text.endsWith(" · live") ? s : undefined;
      },
      10_000,
      "the live badge",
    ))!;
    const usage = (await pi.command({ type: "get_session_stats" })).data.contextUsage as {
      tokens: number;
      contextWindow: number;
      percent: number;
    };
    await waitFor(
      () => live.liveFor(sessionFile)?.connection.state.usage?.tokens === usage.tokens,
      5000,
      "pi's numbers",
    );
    const text = api.statusBar.snapshot().text;
    assert.strictEqual(text, `π ${usage.percent.toFixed(1)}% · ${(usage.tokens / 1000).toFixed(1)}k/16k · live`);
    assert.match(snapshot.tooltip, new RegExp(`\\*\\*live\\*\\* from pi 1\\\\\\.6\\\\\\.0 \\(pid ${pi.pid}\\)`));
    assert.match(snapshot.tooltip, /\| Window \| 16,000 — the running pi/);
    assert.match(snapshot.accessibilityLabel ?? "", /^live from the running pi/);
    assert.ok(live.stats.connects >= 1);
    // the panel shows the same live numbers as the status bar, marked live
    const panel = (await vscode.commands.executeCommand("piContext._panelController")) as PanelControllerApi;
    await panel.update();
    const gauge = panel.state?.gauge;
    assert.strictEqual(gauge?.used, usage.tokens);
    assert.strictEqual(gauge?.window, 16000);
    assert.strictEqual(gauge?.windowSourceText, `the running pi (pi 1.6.0, pid ${pi.pid})`);
    assert.strictEqual(gauge?.live?.pid, pi.pid);
    assert.strictEqual(gauge?.live?.piVersion, "1.6.0");
  });

  it("the live Compact preview shows the plan's before → after and a Cost row at the running pi's prices (trial 5)", async () => {
    const file = api.services.sessions.current!.file;
    const before = entries(file).length;
    const requests = server.requests.length;
    const { outcome, open } = await openLiveCompactPreview("keep the parser details");
    const items = open.quickPick.items;
    // the same plan the headless preview makes, independently here
    const plan = await planCompaction(file, {
      agentDir,
      guardSeconds: 0,
      procRoot: null,
      maxOutputTokens: api.services.config().summarizer.openai.maxOutputTokens,
      customInstructions: "keep the parser details",
    });
    const range = formatTokenRange(plan.estimatedTokensAfterRange);
    assert.ok(
      plan.estimatedTokensAfterRange.high > 0 && plan.estimatedTokensAfterRange.high < plan.preview.tokensBefore,
    );
    assert.strictEqual(items[0]!.label, "$(fold) Compact now in pi");
    assert.ok(
      items[0]!.description!.startsWith(
        `${plan.preview.tokensBefore.toLocaleString("en-US")} → ${range} tokens · pi 1.6.0`,
      ),
      items[0]!.description,
    );
    // the scripted model's prices (0 per million in its models.json, sent by the bridge): a real price of $0
    assert.match(items[1]!.label, /^\$\(credit-card\) ≈\$0(\.0+)? now · break-even /, items[1]!.label);
    assert.match(items[1]!.detail ?? "", /^saves ≈[\d,]+ tokens \(\$0(\.0+)?\) on every later request; /);
    assert.strictEqual(items[2]!.label, "$(close) Cancel");
    assert.match(
      open.quickPick.placeholder ?? "",
      new RegExp(`· ${plan.preview.tokensBefore.toLocaleString("en-US")} → `),
    );
    open.quickPick.hide();
    assert.strictEqual((await outcome).kind, "declined");
    assert.strictEqual(entries(file).length, before, "nothing written");
    assert.strictEqual(server.requests.length, requests, "nothing sent");
  });

  it('"Pi Context: Compact Session…" makes the running pi compact (its model writes the summary)', async () => {
    const file = api.services.sessions.current!.file;
    const before = entries(file).length;
    const requests = server.requests.length;
    const outcome = (await vscode.commands.executeCommand<CompactCommandOutcome>("piContext.compact", undefined, {
      instructions: "keep the parser details",
      skipPreview: true,
    })) as CompactCommandOutcome & { live?: { pid: number } };
    assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
    assert.strictEqual(outcome.live?.pid, pi!.pid);
    const written = entries(file).slice(before);
    assert.deepStrictEqual(
      written.map((e) => e.type),
      ["compaction"],
    );
    assert.strictEqual(written[0].id, outcome.kind === "compacted" ? outcome.entryId : "");
    assert.strictEqual(written[0]!.summary!.startsWith("## Goal\nScripted summary by pi's own model."), true);
    assert.strictEqual(server.requests.length, requests + 1, "one summary request, sent by pi");
    assert.match(JSON.stringify(server.requests.at(-1)!.body.messages), /keep the parser details/);
    assert.strictEqual(server.requests.at(-1)!.authorization, "Bearer scripted-dummy-key", "pi's own auth");
    // pi's footer state after a compaction: unknown until the next answer, still live
    await waitFor(
      () => api.statusBar.snapshot().text.startsWith("π ? · ≈") && api.statusBar.snapshot().text.endsWith(" · live"),
      10_000,
      "the ? state",
    );
    assert.strictEqual((await pi!.command({ type: "get_session_stats" })).data.contextUsage.tokens, null);
    assert.strictEqual(live.stats.compactions, 1);
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  it('"Switch to Here…" and labels make the running pi navigate and label', async () => {
    const file = api.services.sessions.current!.file;
    await turn("t6: after the compaction", "Answer 6.");
    const target = entries(file).find(
      (e) => e.type === "message" && e.message?.role === "assistant" && textOf(e.message).startsWith("Answer 6."),
    )!;
    await turn("t7: one more", "Answer 7.");
    const before = entries(file).length;
    const requests = server.requests.length;
    const outcome = (await vscode.commands.executeCommand<SwitchCommandOutcome>(
      "piContext.tree.switchToHere",
      target.id,
      { summarize: true, label: "from-vscode", quiet: true },
    )) as SwitchCommandOutcome;
    assert.strictEqual(outcome.kind, "switched", JSON.stringify(outcome));
    const written = entries(file).slice(before);
    assert.deepStrictEqual(
      written.map((e) => [e.type, e.parentId]),
      [
        ["branch_summary", target.id],
        ["label", written[0].id],
      ],
    );
    assert.strictEqual(written[1].label, "from-vscode");
    assert.strictEqual(server.requests.length, requests + 1, "pi summarized the branch");
    assert.deepStrictEqual(
      outcome.kind === "switched" ? outcome.entries.map((e) => e.id) : [],
      written.map((e) => e.id),
    );
    assert.strictEqual((await pi!.command({ type: "get_state" })).data.sessionFile, file);
    // pi's leaf is the label entry: its next answer hangs off it
    await turn("t8: on the new branch", "Answer 8.");
    const t8 = entries(file).find(
      (e) => e.type === "message" && e.message?.role === "user" && textOf(e.message).startsWith("t8:"),
    )!;
    assert.strictEqual(t8.parentId, written[1].id);
    // a label through pi
    const labelled = await vscode.commands.executeCommand<{ entryId: string; label: string | null }>(
      "piContext.tree.setLabel",
      target.id,
      "checkpoint",
    );
    const last = entries(file).at(-1)!;
    assert.deepStrictEqual([last.type, last.targetId, last.label], ["label", target.id, "checkpoint"]);
    assert.deepStrictEqual(labelled, { entryId: last.id, label: "checkpoint" });
    assert.strictEqual(live.stats.switches, 1);
    assert.strictEqual(live.stats.labels, 1);
  });

  it("after a bare switch in pi (nothing written): the live Compact preview does not show the file's branch; Remove from Context plans at pi's leaf and pi applies it", async () => {
    const file = api.services.sessions.current!.file;
    await turn("t9: before the bare switch", "Answer 9.");
    const u9 = entries(file).find((e) => e.message?.role === "user" && textOf(e.message).startsWith("t9:"))!;
    const a9 = entries(file).find((e) => e.message?.role === "assistant" && textOf(e.message).startsWith("Answer 9."))!;
    await turn("t10: left behind by the switch", "Answer 10.");
    const before = entries(file).length;
    // "Switch to Here…" without summary or label: pi moves its leaf in memory and writes nothing
    const moved = (await vscode.commands.executeCommand<SwitchCommandOutcome>("piContext.tree.switchToHere", a9.id, {
      summarize: false,
      quiet: true,
    })) as SwitchCommandOutcome;
    assert.strictEqual(moved.kind, "switched", JSON.stringify(moved));
    assert.strictEqual(entries(file).length, before, "pi wrote nothing");
    // the live Compact preview: the file's plan is of the branch pi left, so its numbers are not pi's
    const { outcome: compacting, open } = await openLiveCompactPreview("");
    assert.match(
      open.quickPick.items[0]!.description ?? "",
      new RegExp(
        `^tokens after: not known \\(pi is on another branch than the session file's last entry \\(pi's leaf ${a9.id}`,
      ),
      open.quickPick.items[0]!.description,
    );
    open.quickPick.hide();
    assert.strictEqual((await compacting).kind, "declined");
    const outcome = (await vscode.commands.executeCommand<TrimCommandOutcome>(
      "piContext.trim.apply",
      [{ entryId: u9.id, choice: "remove" }],
      { skipPreview: true, quiet: true },
    )) as TrimCommandOutcome;
    assert.strictEqual(outcome.kind, "edited", JSON.stringify(outcome));
    const edit = entries(file).at(-1)!;
    assert.deepStrictEqual([edit.type, edit.targetId, edit.parentId], ["context_edit", u9.id, a9.id]);
  });

  it("without the bridge the live-session guard applies again", async () => {
    // The guard sees the processes listed in PI_CONTEXT_GUARD_PROCESSES (the runner: none); show it
    // this test's own pi, as the machine's process table reads it (others' pi processes stay out).
    const guardFile = process.env.PI_CONTEXT_GUARD_PROCESSES;
    assert.ok(guardFile && fs.existsSync(guardFile), "the runner sets PI_CONTEXT_GUARD_PROCESSES to a file");
    const ours = await waitFor(
      async () => (await readProcessSnapshot()).pi.find((p) => p.pid === pi!.pid),
      10_000,
      "pi in the process table",
    );
    fs.writeFileSync(guardFile, JSON.stringify([ours]));
    await setSetting("liveBridge.enabled", false);
    try {
      await waitFor(() => !api.statusBar.snapshot().text.endsWith(" · live"), 5000, "the badge to go");
      const file = api.services.sessions.current!.file;
      const before = fs.readFileSync(file, "utf8");
      const target = entries(file).find((e) => e.type === "message" && e.message?.role === "user")!;
      const outcome = (await vscode.commands.executeCommand<SwitchCommandOutcome>(
        "piContext.tree.switchToHere",
        target.id,
        { summarize: false, quiet: true },
      )) as SwitchCommandOutcome;
      assert.strictEqual(outcome.kind, "error");
      assert.strictEqual(outcome.kind === "error" ? outcome.errorKind : "", "live", JSON.stringify(outcome));
      assert.match(
        outcome.kind === "error" ? outcome.message : "",
        /Refusing to switch branches in this session while pi may have it open: .*pi is running on it \(process \d+/,
      );
      assert.strictEqual(fs.readFileSync(file, "utf8"), before);
    } finally {
      fs.writeFileSync(guardFile, "[]\n");
      await setSetting("liveBridge.enabled", undefined);
    }
    await waitFor(() => api.statusBar.snapshot().text.endsWith(" · live"), 10_000, "the badge to come back");
  });

  it("one pi with the bridge on A, B idle in the same folder (issue 40): B is trimmed, switched and compacted by us, A's actions go through pi, the gauge counts one live session", async () => {
    // the machine's table as the guard sees it: this test's pi (with its bridge) runs in the folder
    const guardFile = process.env.PI_CONTEXT_GUARD_PROCESSES!;
    const ours = await waitFor(
      async () => (await readProcessSnapshot()).pi.find((p) => p.pid === pi!.pid),
      10_000,
      "pi in the process table",
    );
    fs.writeFileSync(guardFile, JSON.stringify([ours]));
    const fileA = (await pi!.command({ type: "get_state" })).data.sessionFile as string;
    // B: another pi in the same folder, started after pi A, writes B and quits
    const pi2 = await PiRpc.start({ cwd: testWorkspace(), agentDir, home });
    for (let i = 1; i <= 4; i++) {
      server.script({ text: `B's answer ${i}.\n\n${"Details of the work on B. ".repeat(120)}` });
      await pi2.prompt(`step ${i} of B\n${"Context of B. ".repeat(60)}`);
    }
    const fileB = (await pi2.command({ type: "get_state" })).data.sessionFile as string;
    await pi2.close();
    const minutesAgo = new Date(Date.now() - 300_000);
    fs.utimesSync(fileB, minutesAgo, minutesAgo);
    await setSetting("summarizer.provider", "openai");
    await setSetting("summarizer.openai.baseURL", server.baseURL);
    await setSetting("summarizer.openai.model", "it-model");
    try {
      await api.services.sessions.pin(fileA);
      await waitFor(() => api.services.sessions.current?.file === fileA, 10_000, "pi A's session shown");
      // who has what: pi A (bridge) has A, nobody has B — though pi A runs in B's folder and B was written after it started
      assert.strictEqual((await api.services.access.access(fileA)).strength, "certain");
      assert.strictEqual((await api.services.access.access(fileB)).strength, "none");
      const b = entries(fileB);
      const answer = b.filter((e) => e.type === "message" && e.message?.role === "assistant")[0]!;
      const trimmed = (await vscode.commands.executeCommand<TrimCommandOutcome>(
        "piContext.trim.apply",
        [{ entryId: answer.id, choice: "remove" }],
        { file: fileB, skipPreview: true, quiet: true },
      )) as TrimCommandOutcome;
      assert.strictEqual(trimmed.kind, "edited", JSON.stringify(trimmed));
      assert.strictEqual(trimmed.kind === "edited" ? trimmed.live : "x", undefined, "written by us, not pi");
      const user = b.find((e) => e.type === "message" && e.message?.role === "user")!;
      const switched = (await vscode.commands.executeCommand<SwitchCommandOutcome>(
        "piContext.tree.switchToHere",
        user.id,
        {
          file: fileB,
          summarize: false,
          quiet: true,
        },
      )) as SwitchCommandOutcome;
      assert.strictEqual(switched.kind, "switched", JSON.stringify(switched));
      const back = (await vscode.commands.executeCommand<SwitchCommandOutcome>(
        "piContext.tree.switchToHere",
        b.at(-1)!.id,
        {
          file: fileB,
          summarize: false,
          quiet: true,
        },
      )) as SwitchCommandOutcome;
      assert.strictEqual(back.kind, "switched", JSON.stringify(back));
      server.script({ text: "## Goal\nSummary of B by our summarizer." });
      const compacted = (await vscode.commands.executeCommand<CompactCommandOutcome>("piContext.compact", fileB, {
        instructions: "",
        skipPreview: true,
      })) as CompactCommandOutcome;
      assert.strictEqual(compacted.kind, "compacted", JSON.stringify(compacted));
      assert.strictEqual((compacted as { live?: unknown }).live, undefined, "our flow, not pi's");
      // A: the running pi does it
      // two new turns of pi A: the first one's answer is on pi's branch, whatever earlier tests did
      await turn("a1: one more step", "Answer a1.");
      const aAnswer = entries(fileA)
        .filter((e) => e.type === "message" && e.message?.role === "assistant")
        .at(-1)!;
      await turn("a2: and another", "Answer a2.");
      const inPi = (await vscode.commands.executeCommand<TrimCommandOutcome>(
        "piContext.trim.apply",
        [{ entryId: aAnswer.id, choice: "remove" }],
        { file: fileA, skipPreview: true, quiet: true },
      )) as TrimCommandOutcome;
      assert.strictEqual(inPi.kind === "edited" ? inPi.live?.pid : inPi.kind, pi!.pid, JSON.stringify(inPi));
      // one live session: the gauge says no "2 live"
      // (the gauge follows the live bridge's rediscovery after pi's write: asked again until it settles)
      await waitFor(
        async () => {
          await api.services.sessions.refresh();
          return !api.statusBar.snapshot().text.includes("2 live");
        },
        15_000,
        "one live session in the gauge",
      ).catch(() => assert.fail(api.statusBar.snapshot().text));
      assert.deepStrictEqual(api.services.sessions.current?.liveSessions, []);
    } finally {
      fs.writeFileSync(guardFile, "[]\n");
      // pi A's session is the newest again (the tests after this one follow it)
      await turn("a3: back to A", "Answer a3.").catch(() => undefined);
      await api.services.sessions.followLatest();
      await waitFor(() => api.services.sessions.current?.file === fileA, 10_000, "pi A's session followed again");
      await setSetting("summarizer.provider", undefined);
      await setSetting("summarizer.openai.baseURL", undefined);
      await setSetting("summarizer.openai.model", undefined);
    }
  });

  it("reports an announcement with a wrong token clearly and keeps the good connection", async () => {
    const real = readAnnouncements(agentDir).find(
      (r): r is { file: string; announcement: Announcement } => "announcement" in r && r.announcement.pid === pi!.pid,
    )!;
    const fake = path.join(path.dirname(real.file), `${pi!.pid}-badtoken.json`);
    fs.writeFileSync(
      fake,
      JSON.stringify({ ...real.announcement, token: "0".repeat(64), startedAt: real.announcement.startedAt - 1 }),
      { mode: 0o600 },
    );
    try {
      await live.sync();
      const problem = live.problems().find((p) => p.error.code === "unauthorized");
      assert.ok(problem, JSON.stringify(live.problems().map((p) => p.error.message)));
      assert.match(problem.error.message, /refused the connection: wrong token/);
      assert.ok(api.statusBar.snapshot().text.endsWith(" · live"), "the real bridge stays connected");
    } finally {
      fs.rmSync(fake, { force: true });
    }
  });

  it("drops a killed pi: badge gone, stale announcement removed", async () => {
    const pid = pi!.pid;
    assert.ok(readAnnouncements(agentDir).some((r) => "announcement" in r && r.announcement.pid === pid));
    await pi!.kill();
    await waitFor(() => !api.statusBar.snapshot().text.endsWith(" · live"), 10_000, "the badge to go");
    await waitFor(
      () => !readAnnouncements(agentDir).some((r) => "announcement" in r && r.announcement.pid === pid),
      10_000,
      "the stale announcement to be removed",
    );
    assert.strictEqual(live.liveFor(api.services.sessions.current!.file), undefined);
  });

  it("refuses to route to a bridge of another protocol, with what to do", async () => {
    const file = api.services.sessions.current!.file;
    // a running process that announces a bridge of another protocol (never this process: pi-context's own pid is no pi)
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    const fake = path.join(agentDir, "pi-context", "live", `${other.pid}-other.json`);
    fs.writeFileSync(
      fake,
      JSON.stringify({
        kind: "pi-context-bridge",
        protocol: 99,
        bridgeVersion: "9.9.9",
        piVersion: "1.6.0",
        pid: other.pid,
        sessionFile: file,
        // where a bridge of ours listens (nothing does): announcements naming other sockets are ignored
        socket: socketPathFor(agentDir, `${other.pid}-dead`),
        token: "1".repeat(64),
        startedAt: Date.now(),
      }),
      { mode: 0o600 },
    );
    try {
      const before = fs.readFileSync(file, "utf8");
      const outcome = (await vscode.commands.executeCommand<CompactCommandOutcome>("piContext.compact", undefined, {
        instructions: "",
        skipPreview: true,
      })) as CompactCommandOutcome;
      assert.strictEqual(
        outcome.kind === "error" ? outcome.errorKind : outcome.kind,
        "bridge-protocol",
        JSON.stringify(outcome),
      );
      assert.match(
        outcome.kind === "error" ? outcome.message : "",
        new RegExp(
          `has pi-context bridge 9\\.9\\.9 \\(protocol 99\\); this extension needs protocol ${BRIDGE_PROTOCOL} .*Pi Context: Install Live Bridge.*Nothing was written\\.`,
        ),
      );
      assert.strictEqual(fs.readFileSync(file, "utf8"), before);
    } finally {
      fs.rmSync(fake, { force: true });
      other.kill();
    }
  });
  it("Check Session Health → Repair on a session a running pi has open: pi appends the context edits itself, and its next request has no orphaned tool result (trial 9)", async () => {
    // a session broken before pi opened it: a tool result whose call is in no answer
    const dir = path.join(agentDir, "sessions", encodeSessionDirName(path.resolve(testWorkspace())));
    fs.mkdirSync(dir, { recursive: true });
    const broken = path.join(dir, "2026-12-03T13-00-00-000Z_broken-health.jsonl");
    fs.writeFileSync(
      broken,
      new SessionBuilder(testWorkspace())
        .user("h-u1", "read a.txt please")
        .assistant("h-a1", { calls: [{ id: "call_ok", name: "read", arguments: { path: "a.txt" } }], usage: 900 })
        .result("h-r1", "call_ok", "contents of a.txt")
        .result("h-r2", "call_gone", "stray output of a call nobody made")
        .assistant("h-a2", { text: "Done reading.", usage: 950 })
        .jsonl(),
    );
    const pi2 = await PiRpc.start({ cwd: testWorkspace(), agentDir, home, args: ["--session", broken] });
    try {
      await waitFor(
        async () => (await live.availability(broken)) === "live",
        20_000,
        "the bridge of pi on the broken session",
      );
      const before = fs.readFileSync(broken);
      const outcome = (await vscode.commands.executeCommand("piContext.checkHealth", broken, {
        repair: true,
        skipPreview: true,
      })) as { kind: string; live?: string; errorsBefore?: number; errorsAfter?: number };
      assert.strictEqual(outcome.kind, "repaired", JSON.stringify(outcome));
      assert.strictEqual(outcome.live, "applied", JSON.stringify(outcome));
      assert.ok((outcome.errorsBefore ?? 0) >= 1);
      assert.strictEqual(outcome.errorsAfter, 0);
      // pi appended the edit (after the bytes it had), hanging off its own leaf
      const after = fs.readFileSync(broken);
      assert.ok(after.subarray(0, before.length).equals(before), "nothing rewritten");
      const lines = entries(broken);
      const edit = lines.at(-1)!;
      // its parent is pi's leaf: the last entry pi had (pi notes its own model when it opens the file)
      assert.deepStrictEqual(
        [edit.type, edit.targetId, edit.replacement, edit.parentId],
        ["context_edit", "h-r2", null, lines.at(-2)!.id],
      );
      assert.ok(lines.findIndex((e) => e.id === "h-a2") < lines.length - 1);
      // pi's next request: the orphaned result is not sent
      server.requests.length = 0;
      server.script({ text: "Answer after the repair." });
      await pi2.prompt("go on after the repair");
      const sent = JSON.stringify(server.requests.at(-1)?.body.messages ?? []);
      assert.ok(sent.includes("contents of a.txt"), "the paired result is still sent");
      assert.ok(!sent.includes("stray output"), sent);
      assert.ok(!sent.includes("call_gone"), sent);
    } finally {
      await pi2.kill();
      fs.rmSync(broken, { force: true });
    }
  });
  it('"Compact Up to Here…" on a session a running pi has open: pi cuts where we asked and writes its own entry (issue 41)', async () => {
    const dir = path.join(agentDir, "sessions", encodeSessionDirName(path.resolve(testWorkspace())));
    fs.mkdirSync(dir, { recursive: true });
    const session = path.join(dir, "2026-12-04T09-00-00-000Z_up-to-here.jsonl");
    const b = new SessionBuilder(testWorkspace());
    for (let i = 1; i <= 5; i++)
      b.user(`k-u${i}`, `step ${i}: ${"Context line for the task. ".repeat(40)}`).assistant(`k-a${i}`, {
        text: `Answer ${i}. ${"Details of the work. ".repeat(60)}`,
        usage: 600 * i,
      });
    fs.writeFileSync(session, b.jsonl());
    const pi2 = await PiRpc.start({ cwd: testWorkspace(), agentDir, home, args: ["--session", session] });
    try {
      await waitFor(
        async () => (await live.availability(session)) === "live",
        20_000,
        "the bridge of pi on the session",
      );
      await api.services.sessions.pin(session);
      await waitFor(() => api.services.sessions.current?.file === session, 10_000, "the session shown");
      const before = entries(session).length;
      const requests = server.requests.length;
      const outcome = (await vscode.commands.executeCommand("piContext.compactUpToHere", "k-u3", {
        instructions: "",
        skipPreview: true,
      })) as CompactCommandOutcome & { live?: { pid: number } };
      assert.strictEqual(outcome.kind, "compacted", JSON.stringify(outcome));
      assert.strictEqual(outcome.live?.pid, pi2.pid);
      if (outcome.kind === "compacted") assert.strictEqual(outcome.firstKeptEntryId, "k-u3");
      const written = entries(session).slice(before);
      const compaction = written.find((e) => e.type === "compaction")!;
      assert.ok(compaction, JSON.stringify(written.map((e) => e.type)));
      assert.strictEqual(compaction.firstKeptEntryId, "k-u3");
      assert.strictEqual(compaction.fromHook, false, "pi's own entry");
      assert.strictEqual(server.requests.length, requests + 1, "one summary request, sent by pi");
      assert.strictEqual(server.requests.at(-1)!.authorization, "Bearer scripted-dummy-key", "pi's own auth");
      const sent = JSON.stringify(server.requests.at(-1)!.body.messages);
      assert.ok(sent.includes("step 2:") && !sent.includes("step 3:"), "summarized up to k-u3, not beyond");
    } finally {
      await pi2.kill();
      await api.services.sessions.followLatest();
      fs.rmSync(session, { force: true });
    }
  });
  it('"Summarize These Messages…" on a session a running pi has open: our summarizer writes the note, pi appends the edits and sends the note next (issue 41)', async () => {
    const dir = path.join(agentDir, "sessions", encodeSessionDirName(path.resolve(testWorkspace())));
    fs.mkdirSync(dir, { recursive: true });
    const session = path.join(dir, "2026-12-04T10-00-00-000Z_span.jsonl");
    fs.writeFileSync(
      session,
      new SessionBuilder(testWorkspace())
        .user("s-u1", "look at the parser please")
        .assistant("s-a1", { calls: [{ id: "call_p", name: "read", arguments: { path: "parser.ts" } }], usage: 900 })
        .result("s-r1", "call_p", "PARSER-SOURCE ".repeat(200))
        .assistant("s-a2", { text: "The parser has a bug in line 3.", usage: 1500 })
        .user("s-u2", "now the lexer")
        .assistant("s-a3", { text: "The lexer is fine.", usage: 1600 })
        .jsonl(),
    );
    const pi2 = await PiRpc.start({ cwd: testWorkspace(), agentDir, home, args: ["--session", session] });
    await setSetting("summarizer.provider", "openai");
    await setSetting("summarizer.openai.baseURL", server.baseURL);
    await setSetting("summarizer.openai.model", "it-model");
    try {
      await waitFor(
        async () => (await live.availability(session)) === "live",
        20_000,
        "the bridge of pi on the session",
      );
      await api.services.sessions.pin(session);
      await waitFor(() => api.services.sessions.current?.file === session, 10_000, "the session shown");
      server.script({ text: "## Goal\nFind the parser bug (line 3)." });
      const outcome = (await vscode.commands.executeCommand("piContext.summarizeSpan", "s-u1", "s-a2", {
        instructions: "",
        skipPreview: true,
      })) as { kind: string; live?: { pid: number }; entries?: { id: string; targetId: string }[] };
      assert.strictEqual(outcome.kind, "summarized", JSON.stringify(outcome));
      assert.strictEqual(outcome.live?.pid, pi2.pid);
      const edits = entries(session).filter((e) => e.type === "context_edit");
      // the pairing-safe order (core/rules/batchOrder.ts): the result hidden before its call, the note last
      assert.deepStrictEqual(
        edits.map((e) => [e.targetId, e.replacement === null]),
        [
          ["s-r1", true],
          ["s-a1", true],
          ["s-a2", true],
          ["s-u1", false],
        ],
      );
      // pi's next request: the note instead of the span
      server.requests.length = 0;
      server.script({ text: "On it." });
      await pi2.prompt("go on with the lexer");
      const sent = JSON.stringify(server.requests.at(-1)?.body.messages ?? []);
      assert.ok(sent.includes("[pi-context: summary of 4 messages"), sent.slice(0, 400));
      assert.ok(sent.includes("Find the parser bug (line 3)."));
      assert.ok(!sent.includes("PARSER-SOURCE"), "the tool result is not sent");
      assert.ok(sent.includes("now the lexer"), "the messages after the span are");
    } finally {
      await pi2.kill();
      for (const k of ["summarizer.provider", "summarizer.openai.baseURL", "summarizer.openai.model"])
        await setSetting(k, undefined);
      await api.services.sessions.followLatest();
      fs.rmSync(session, { force: true });
    }
  });
});
