// Context economics in the real extension host: usage and cost like pi's footer and /session in the
// gauge tooltip and the panel state, pi's footer colours as an option, and "Pi Context: Compact At…" writing
// one key of the user's pi settings, after which the gauge shows the new threshold.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { after, before, describe, it } from "mocha";
import type { PiContextApi } from "../../src/extension";
import type { PanelControllerApi } from "../../src/panel/controller";
import type { CompactAtOutcome } from "../../src/compaction/compactAt";
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
  setSetting,
  useAgentDir,
  userMessage,
  waitForCondition,
  whenSession,
} from "./sessionHelpers";

describe("context economics (usage, cost, colours, Compact At…)", function () {
  this.timeout(40000);
  let api: PiContextApi;
  const dirs: string[] = [];
  const agent = (from?: string) => {
    const d = makeAgentDir(from);
    dirs.push(d);
    return d;
  };
  before(async () => {
    api = await piApi();
  });
  after(async () => {
    await setSetting("gauge.colors", undefined);
    await api.services.sessions.followLatest();
    await useAgentDir(api, undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("the tooltip and the panel show pi's footer totals, /session tokens and cost of long.jsonl", async () => {
    const fx = fixture("long");
    const dir = agent(fx.agent);
    const file = installSession(dir, fx.jsonl);
    await useAgentDir(api, dir);
    await whenSession(api, (s) => s?.file === file, 5000, "long");
    await waitForCondition(() => api.statusBar.snapshot().tooltip.includes("| Usage |"), 5000, "usage in the tooltip");
    const tip = api.statusBar.snapshot().tooltip;
    const rendered = tip.replace(/\\([!-/:-@[-`{-~])/g, "$1"); // escaped Markdown, as a reader sees it
    assert.ok(
      rendered.includes("| Usage | ↑274k ↓2.5k R274k CH50.0% $0.306 — pi's footer, every entry of the file |"),
      tip,
    );
    assert.ok(
      rendered.includes("| Tokens | input 547,261 (cached 273,610 = 50.0%) · output 2,491 · total 549,752 |"),
      tip,
    );
    assert.ok(
      rendered.includes(
        "| Prices | $1/M in · $2/M out · $0.1/M cache read — models.json: providers.scripted, model scripted-small |",
      ),
      tip,
    );
    assert.ok(tip.includes("[$(dashboard) Compact At…](command:piContext.compactAt)"), tip);
    const controller = (await vscode.commands.executeCommand("piContext._panelController")) as PanelControllerApi;
    await controller.update(true);
    const state = controller.state!;
    assert.strictEqual(state.usage?.footer, "↑274k ↓2.5k R274k CH50.0% $0.306");
    assert.ok(state.history!.points.some((p) => p.cache?.cold));
    assert.ok(state.summaries.filter((s) => s.type === "compaction").every((s) => s.lost));
  });

  it("gauge colours: threshold by default, pi's footer colours with piContext.gauge.colors", async () => {
    const fx = fixture("long");
    const dir = agent(fx.agent);
    const m = newId();
    const u = newId();
    const a = newId();
    // 12,500 of 16,000 = 78 %: above pi's threshold (12,000) — error by threshold, warning by pi's footer
    const text = jsonl([
      header(),
      modelChange(m, null, "scripted", "scripted-small"),
      userMessage(u, m, "colours"),
      assistantMessage(a, u, "ok", 12500, { provider: "scripted", model: "scripted-small" }),
    ]);
    const source = path.join(dir, "colours-source.jsonl");
    fs.writeFileSync(source, text);
    const file = installSession(dir, source, "colours.jsonl");
    await useAgentDir(api, dir);
    await whenSession(api, (s) => s?.file === file, 5000, "colours");
    await waitForCondition(() => api.statusBar.snapshot().level === "error", 5000, "threshold colour");
    await setSetting("gauge.colors", "piFooter");
    await waitForCondition(() => api.statusBar.snapshot().level === "warning", 5000, "pi's footer colour");
    assert.ok(api.statusBar.snapshot().tooltip.includes("Above 70 % of the context window (pi's footer colours"));
    await setSetting("gauge.colors", undefined);
    await waitForCondition(() => api.statusBar.snapshot().level === "error", 5000, "back to the threshold colour");
  });

  it("Pi Context: Compact At… 80% writes one key of pi's settings; the gauge shows the new threshold", async () => {
    const fx = fixture("long");
    const dir = agent(fx.agent);
    const settings = path.join(dir, "settings.json");
    const before = fs.readFileSync(settings, "utf8");
    const file = installSession(dir, fx.jsonl, "compact-at.jsonl");
    await useAgentDir(api, dir);
    await whenSession(api, (s) => s?.file === file, 5000, "compact-at");
    assert.strictEqual(api.services.sessions.current!.analysis.inspect.threshold, 12000);
    const outcome = (await vscode.commands.executeCommand("piContext.compactAt", {
      field: "reserveTokens",
      value: "80%",
      yes: true,
    })) as CompactAtOutcome;
    assert.deepStrictEqual(outcome, {
      kind: "written",
      file: settings,
      key: "scripted/scripted-small",
      field: "reserveTokens",
      value: 3200,
      threshold: 12800,
    });
    const after = JSON.parse(fs.readFileSync(settings, "utf8"));
    const was = JSON.parse(before);
    assert.deepStrictEqual(after.compaction.modelOverrides, { "scripted/scripted-small": { reserveTokens: 3200 } });
    delete after.compaction.modelOverrides;
    assert.deepStrictEqual(after, was, "nothing else changed");
    await waitForCondition(
      () => api.services.sessions.current?.analysis.inspect.threshold === 12800,
      8000,
      "the new threshold in the gauge",
    );
    const tip = api.statusBar.snapshot().tooltip;
    assert.ok(
      tip
        .replace(/\\([!-/:-@[-`{-~])/g, "$1") // escaped Markdown, as a reader sees it
        .includes('compaction.modelOverrides["scripted/scripted-small"].reserveTokens'),
      tip,
    );
    // a percentage that leaves no room is refused, nothing written
    const text = fs.readFileSync(settings, "utf8");
    const refused = (await vscode.commands.executeCommand("piContext.compactAt", {
      field: "reserveTokens",
      value: "100%",
      yes: true,
    })) as CompactAtOutcome;
    assert.strictEqual(refused.kind, "refused");
    assert.strictEqual(fs.readFileSync(settings, "utf8"), text);
  });
});
