// The status-bar gauge in the real extension host: text, colour, tooltip and live behaviour,
// against temp agent dirs holding the shared pi 1.6.0 fixtures (header cwd rewritten in the copy).
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import { analyzeSession } from "../../src/core/rules/analyze";
import type { PiContextApi } from "../../src/extension";
import type { GaugeSnapshot } from "../../src/statusBar/gauge";
import { escapeMarkdown } from "../../src/viewModel/statusBar";
import { autoCompactsText, formatDateTime } from "../../src/shared/format";
import {
  assistantMessage,
  fixture,
  header,
  installSession,
  jsonl,
  makeAgentDir,
  modelChange,
  newId,
  piApi,
  sessionDir,
  setSetting,
  smallSession,
  useAgentDir,
  userMessage,
  whenSession,
} from "./sessionHelpers";

/** Resolve when the gauge shows something satisfying `check`. */
function whenGauge(
  api: PiContextApi,
  check: (s: GaugeSnapshot) => boolean,
  timeoutMs = 4000,
  what = "gauge",
): Promise<GaugeSnapshot> {
  const now = api.statusBar.snapshot();
  if (check(now)) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; gauge shows "${api.statusBar.snapshot().text}"`,
        ),
      );
    }, timeoutMs);
    const sub = api.statusBar.onDidRender((s) => {
      if (check(s)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(s);
      }
    });
  });
}

/** A tooltip as a reader sees it: the backslash escapes of `escapeMarkdown` undone. */
function asRendered(tooltip: string): string {
  return tooltip.replace(/\\([!-/:-@[-`{-~])/g, "$1");
}

describe("status bar (statusBar)", () => {
  let api: PiContextApi;
  const tempDirs: string[] = [];
  const agent = (configFrom?: string): string => {
    const d = makeAgentDir(configFrom);
    tempDirs.push(d);
    return d;
  };

  before(async () => {
    api = await piApi();
  });

  after(async () => {
    await setSetting("statusBar.alignment", undefined);
    await setSetting("statusBar.priority", undefined);
    await setSetting("warning.enabled", undefined);
    await setSetting("warning.margin", undefined);
    await api.services.sessions.followLatest();
    await useAgentDir(api, undefined);
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const cases: { name: string; text: string; model: string; window: string; reserve: string }[] = [
    {
      name: "long",
      text: "π 26.4% · 4.2k/16k",
      model: "scripted/scripted-small",
      window: "16,000 — models.json: providers.scripted, model scripted-small",
      reserve: "4,000 — global settings",
    },
    {
      name: "tree",
      text: "π 2.0% · 4.0k/200k",
      model: "scripted/scripted-big",
      window: "200,000 — models.json: providers.scripted, model scripted-big",
      reserve: "16,384 — pi's default",
    },
    {
      name: "split",
      text: "π 33.6% · 5.4k/16k",
      model: "scripted/scripted-small",
      window: "16,000 — models.json: providers.scripted, model scripted-small",
      reserve: "4,000 — global settings",
    },
    {
      name: "overflow",
      text: "π 32.7% · 5.2k/16k",
      model: "scripted/scripted-small",
      window: "16,000 — models.json: providers.scripted, model scripted-small",
      reserve: "2,000 — global settings",
    },
  ];
  for (const c of cases) {
    it(`shows ${c.name}.jsonl like pi-context inspect and pi`, async () => {
      const fx = fixture(c.name);
      const dir = agent(fx.agent);
      const file = installSession(dir, fx.jsonl);
      await useAgentDir(api, dir);
      await whenSession(api, (s) => s?.file === file, 5000, c.name);
      const g = await whenGauge(api, (s) => s.state === "session" && s.text === c.text, 4000, c.text);
      // the same numbers as `pi-context inspect --json` (core analyzeSession) on the same file
      const expected = (await analyzeSession(file, { agentDir: dir })).inspect;
      const shown = api.services.sessions.current!.analysis.inspect;
      assert.strictEqual(shown.contextTokens, expected.contextTokens);
      assert.strictEqual(shown.threshold, expected.threshold);
      assert.strictEqual(shown.tokensUntilCompaction, expected.tokensUntilCompaction);
      assert.strictEqual(shown.footer, expected.footer);
      // and as pi 1.6.0 itself (saved oracle view of the same fixture)
      const oracle = JSON.parse(fs.readFileSync(fx.oracle, "utf8"));
      assert.strictEqual(shown.contextTokens, oracle.contextUsage.tokens);
      assert.strictEqual(`${shown.footer}`, `${oracle.contextUsage.footer} (auto)`);
      assert.strictEqual(g.level, "normal");
      assert.strictEqual(g.backgroundColor, undefined);
      assert.strictEqual(g.command, "piContext.openPanel");
      const tip = g.tooltip;
      const visible = asRendered(tip);
      assert.ok(tip.includes(escapeMarkdown(c.model)), `model in tooltip:\n${tip}`);
      assert.ok(visible.includes(c.window), `window + source in tooltip:\n${tip}`);
      assert.ok(tip.includes(`| reserveTokens | ${c.reserve}`), `reserve + source in tooltip:\n${tip}`);
      assert.ok(
        tip.includes(`${expected.tokensUntilCompaction!.toLocaleString("en-US")} tokens to go`),
        `tokens until compaction:\n${tip}`,
      );
      assert.ok(tip.includes(`usage of the last answer ${expected.estimate.usageTokens.toLocaleString("en-US")}`), tip);
      assert.ok(tip.includes(escapeMarkdown(file)), "file in tooltip");
      // the Session row names the session as every surface does (pi's label), not by its file
      const label = api.services.sessions.current!.label;
      assert.ok(visible.includes(`| Session | “${label}” — `), `the Session row names "${label}":\n${tip}`);
      assert.ok(!visible.includes(`| Session | ${path.basename(file)}`), tip);
      assert.ok(tip.includes("command:piContext.compact") && tip.includes("command:piContext.openPanel"), "links");
      if (expected.sessionName) assert.ok(tip.includes(escapeMarkdown(expected.sessionName)), "session name");
      assert.match(
        g.ariaLabel,
        // one decimal, like pi's footer
        new RegExp(
          `^Pi Context ${expected.percent!.toFixed(1)} percent, ${expected.contextTokens.toLocaleString("en-US")} of `,
        ),
      );
      // Updated = when the file was last written (its mtime), in the one date-time format
      assert.ok(
        tip.includes(
          `| Updated | ${escapeMarkdown(formatDateTime(fs.statSync(file).mtimeMs, vscode.env.language))} (last written) |`,
        ),
        tip,
      );
      // the window's source without nested paths
      assert.ok(visible.includes(`| Window | ${c.window}`), tip);
      assert.doesNotMatch(tip, /models\.json \(/);
      assert.strictEqual(g.accessibilityLabel, g.ariaLabel);
    });
  }

  it("shows pi's ? after a compaction, with our estimate marked", async () => {
    const fx = fixture("long");
    const dir = agent(fx.agent);
    const lines = fs.readFileSync(fx.jsonl, "utf8").split("\n");
    const last = lines
      .map((l, i) => (l.includes('"type":"compaction"') ? i : -1))
      .filter((i) => i >= 0)
      .pop()!;
    const src = path.join(dir, "cut.jsonl");
    fs.writeFileSync(src, lines.slice(0, last + 1).join("\n") + "\n");
    const file = installSession(dir, src);
    await useAgentDir(api, dir);
    await whenSession(api, (s) => s?.file === file, 5000, "cut session");
    const expected = (await analyzeSession(file, { agentDir: dir })).inspect;
    assert.strictEqual(expected.usageKnown, false);
    assert.strictEqual(expected.footer, "?/16k (auto)");
    const g = await whenGauge(api, (s) => s.text === "π ? · ≈3.9k/16k", 4000, "? state");
    assert.ok(g.tooltip.includes("pi shows **?**"), g.tooltip);
    assert.ok(g.tooltip.includes(`≈${expected.contextTokens.toLocaleString("en-US")} of 16,000`), g.tooltip);
    assert.ok(g.tooltip.includes("estimate only"), g.tooltip);
  });

  it("updates live, colours by distance to the real threshold, and warns once per level", async () => {
    const dir = agent();
    // window 200000, reserve 50000 → threshold 150000; margin 20000 → warning from 130000
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 50000 } }));
    await setSetting("warning.enabled", true);
    await setSetting("warning.margin", 20000);
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "live.jsonl");
    const s = smallSession(100000, "live gauge");
    fs.writeFileSync(file, s.text);
    await useAgentDir(api, dir);
    await whenGauge(api, (g) => g.text === "π 50.0% · 100k/200k" && g.level === "normal", 5000, "50.0%");
    assert.strictEqual(api.statusBar.snapshot().text, "π 50.0% · 100k/200k");
    const notified = api.statusBar.snapshot().notifications.length;
    let parent = s.leafId;
    const step = async (tokens: number): Promise<GaugeSnapshot> => {
      const u = newId();
      const a = newId();
      const t0 = Date.now();
      fs.appendFileSync(file, jsonl([userMessage(u, parent, `to ${tokens}`), assistantMessage(a, u, "ok", tokens)]));
      parent = a;
      const g = await whenGauge(
        api,
        (x) => x.tooltip.includes(`**${tokens.toLocaleString("en-US")}** of 200,000`),
        3000,
        `${tokens} tokens`,
      );
      latencies.push(Date.now() - t0);
      return g;
    };
    const latencies: number[] = [];
    // 65 % → 72 %: pi's footer turns yellow at 70 %; we colour by the real threshold (150,000) and the margin
    let g = await step(129999);
    assert.strictEqual(g.level, "normal", "129,999 is 20,001 below the threshold 150,000");
    g = await step(130000);
    assert.strictEqual(g.level, "warning", "130,000 is within 20,000 of the threshold");
    g = await step(120000);
    assert.strictEqual(g.level, "normal");
    g = await step(140000);
    assert.strictEqual(g.level, "warning");
    assert.strictEqual(g.backgroundColor, "statusBarItem.warningBackground");
    g = await step(145000);
    assert.strictEqual(g.level, "warning");
    g = await step(150000);
    assert.strictEqual(g.level, "warning", "pi compacts only above the threshold (strict >)");
    g = await step(150001);
    assert.strictEqual(g.level, "error");
    assert.strictEqual(g.backgroundColor, "statusBarItem.errorBackground");
    // short exchanges with large reported usage: pi has nothing to summarize, so it does not compact
    const when = autoCompactsText("Nothing to compact (session too small).");
    assert.ok(g.tooltip.includes(`over by 1: ${when}`), g.tooltip);
    g = await step(160000);
    const levels = g.notifications.slice(notified).map((n) => n.level);
    // warning at 130,000; re-armed by the drop to 120,000; warning at 140,000; error at 150,001
    assert.deepStrictEqual(levels, ["warning", "warning", "error"]);
    // the warning toast says when pi compacts in the same words as the tooltip and the panel
    assert.strictEqual(
      g.notifications[g.notifications.length - 1]!.message,
      `pi's context is above the auto-compaction threshold: ${when}.`,
    );
    console.log(`append → gauge latency (ms): ${latencies.join(", ")}`);
    assert.ok(Math.min(...latencies) < 150, `fastest gauge update ${Math.min(...latencies)} ms`);
  });

  it("moves at once when piContext.statusBar.alignment / priority change (the item's own placement, no reload)", async () => {
    // alignment/priority read back from the StatusBarItem VS Code created, not from the settings
    let g = api.statusBar.snapshot();
    assert.deepStrictEqual([g.alignment, g.priority, g.itemId], ["left", 100, "piContext.gauge"]);
    await setSetting("statusBar.alignment", "right");
    g = await whenGauge(api, (s) => s.alignment === "right", 3000, "right");
    assert.deepStrictEqual([g.alignment, g.priority, g.itemId], ["right", 100, "piContext.gauge.right.100"]);
    await setSetting("statusBar.priority", 5);
    g = await whenGauge(api, (s) => s.priority === 5, 3000, "priority 5");
    assert.deepStrictEqual([g.alignment, g.priority, g.itemId], ["right", 5, "piContext.gauge.right.5"]);
    await setSetting("statusBar.alignment", undefined);
    g = await whenGauge(api, (s) => s.alignment === "left", 3000, "left");
    assert.deepStrictEqual([g.alignment, g.priority], ["left", 5]);
    await setSetting("statusBar.priority", undefined);
    g = await whenGauge(api, (s) => s.priority === 100, 3000, "priority 100");
    // back at the default placement, under the default id, and right again without a reload
    assert.deepStrictEqual([g.alignment, g.priority, g.itemId], ["left", 100, "piContext.gauge"]);
    await setSetting("statusBar.alignment", "right");
    g = await whenGauge(api, (s) => s.alignment === "right", 3000, "right again");
    assert.deepStrictEqual([g.alignment, g.priority], ["right", 100]);
    await setSetting("statusBar.alignment", undefined);
    g = await whenGauge(api, (s) => s.alignment === "left", 3000, "left again");
    assert.strictEqual(g.text, api.statusBar.snapshot().text);
  });

  it("reports invalid pi settings like pi and still shows the numbers", async () => {
    const dir = agent();
    const settingsFile = path.join(dir, "settings.json");
    fs.writeFileSync(settingsFile, JSON.stringify({ compaction: { reserveTokens: "lots", keepRecentTokens: -5 } }));
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    fs.writeFileSync(path.join(own, "s.jsonl"), smallSession(50000, "invalid settings").text);
    await useAgentDir(api, dir);
    const g = await whenGauge(api, (s) => s.text.startsWith("$(warning) π 25.0% · 50.0k/200k"), 5000, "warning gauge");
    assert.ok(g.tooltip.includes("**Problems** (2; listed in the panel and the log):"), g.tooltip);
    assert.ok(g.tooltip.includes("**Invalid pi setting**"), g.tooltip);
    assert.ok(
      asRendered(g.tooltip).includes(
        `${settingsFile} — Invalid compaction.reserveTokens setting: lots. Expected a non-negative safe integer. pi 1.6.0 throws this error when it reads the setting`,
      ),
      g.tooltip,
    );
    assert.ok(
      asRendered(g.tooltip).includes(
        "— Invalid compaction.keepRecentTokens setting: -5. Expected a non-negative safe integer.",
      ),
      g.tooltip,
    );
    assert.ok(g.tooltip.includes("| reserveTokens | **invalid**"), g.tooltip);
    assert.ok(g.ariaLabel.includes("invalid pi settings"));

    // a settings file that does not parse
    fs.writeFileSync(settingsFile, "{ not json");
    const g2 = await whenGauge(api, (s) => s.tooltip.includes("Failed to parse"), 4000, "parse error");
    assert.ok(g2.text.startsWith("$(warning) π 25.0% · 50.0k/200k"), g2.text);
    assert.ok(g2.tooltip.includes(escapeMarkdown(settingsFile)), g2.tooltip);
  });

  it("shows unknown model/window, disabled auto-compaction, malformed lines and no session", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const m = newId();
    const u = newId();
    const a = newId();
    const file = path.join(own, "unknown.jsonl");
    fs.writeFileSync(
      file,
      jsonl([header(), modelChange(m, null, "nowhere", "no-such-model"), userMessage(u, m, "hi")]) +
        "{ this line is broken\n" +
        jsonl([assistantMessage(a, u, "hello", 1234, { provider: "nowhere", model: "no-such-model" })]),
    );
    await useAgentDir(api, dir);
    let g = await whenGauge(api, (s) => s.text === "π 1.2k/?", 5000, "unknown window");
    assert.strictEqual(g.level, "normal");
    // the catalog named is the user's pi's (when one is found on this machine) or the snapshot's
    assert.match(
      asRendered(g.tooltip),
      /\| Window \| unknown — nowhere\/no-such-model is not in (pi-context's snapshot of pi 1\.6\.0's catalog|pi \d+\.\d+\.\d+'s model catalog) or models\.json \|/,
    );
    // the session doctor's findings: the line pi skips, and the window nobody knows
    assert.ok(g.tooltip.includes("**Session health:** $(warning) 2 warnings"), g.tooltip);
    assert.ok(g.tooltip.includes("**Problems** (2; listed in the panel and the log):"), g.tooltip);
    assert.ok(g.tooltip.includes("- $(warning) **Malformed line** — unparseable line 4 "), g.tooltip);
    assert.ok(
      asRendered(g.tooltip).includes(
        "- $(warning) **Unknown context window** — pi-context does not know the context window of nowhere/no-such-model",
      ),
      g.tooltip,
    );

    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ compaction: { enabled: false } }));
    g = await whenGauge(api, (s) => s.text === "π 1.2k/? · auto off", 4000, "auto off");
    assert.ok(g.tooltip.includes("**disabled**"), g.tooltip);
    assert.ok(g.ariaLabel.includes("auto-compaction disabled"), g.ariaLabel);

    fs.rmSync(file);
    g = await whenGauge(api, (s) => s.state === "no-session", 4000, "no session");
    assert.strictEqual(g.text, "π no session");
    assert.strictEqual(g.command, "piContext.selectSession");
    assert.ok(g.tooltip.includes(escapeMarkdown(own)), g.tooltip);
  });

  it("follows the session's own project settings (its cwd's .pi/settings.json, not the workspace's) without a reload", async () => {
    const dir = agent();
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    // pi was started in another folder: its .pi/settings.json is the one pi merges
    const project = fs.mkdtempSync(path.join(path.dirname(dir), "elsewhere-"));
    fs.mkdirSync(path.join(project, ".pi"));
    const projectSettings = path.join(project, ".pi", "settings.json");
    fs.writeFileSync(projectSettings, JSON.stringify({ compaction: { reserveTokens: 50000 } }));
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "elsewhere.jsonl");
    fs.writeFileSync(file, smallSession(20000, "elsewhere", project).text);
    await useAgentDir(api, dir);
    await api.services.sessions.pin(file);
    await whenGauge(api, (s) => s.tooltip.includes("| reserveTokens | 50,000"), 5000, "project reserve 50,000");
    await new Promise((r) => setTimeout(r, 1100)); // a different mtime on coarse file systems
    fs.writeFileSync(projectSettings, JSON.stringify({ compaction: { reserveTokens: 80000 } }));
    const g = await whenGauge(
      api,
      (s) => s.tooltip.includes("| reserveTokens | 80,000"),
      5000,
      "project reserve 80,000",
    );
    assert.ok(g.tooltip.includes("120,000"), g.tooltip); // threshold 200,000 − 80,000
    await vscode.commands.executeCommand("piContext.followLatest");
  });

  it("pinned sessions are marked", async () => {
    const dir = agent();
    const own = sessionDir(dir);
    fs.mkdirSync(own, { recursive: true });
    const file = path.join(own, "p.jsonl");
    fs.writeFileSync(file, smallSession(20000, "pinned").text);
    await useAgentDir(api, dir);
    await whenSession(api, (s) => s?.file === file);
    await api.services.sessions.pin(file);
    const g = await whenGauge(api, (s) => s.text === "$(pinned) π 10.0% · 20.0k/200k", 3000, "pinned");
    assert.ok(g.tooltip.includes("(pinned)"));
    await vscode.commands.executeCommand("piContext.followLatest");
    await whenGauge(api, (s) => s.text === "π 10.0% · 20.0k/200k", 3000, "unpinned");
  });
});
