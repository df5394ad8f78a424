/**
 * A summary request that does not fit the summarizer: the preview is still made (what would be
 * summarized, and why it cannot be sent), nothing is sent, and the advice is right — its numbers
 * work when applied (the advised keepRecentTokens makes the request fit), and every setting is
 * moved the right way (raise keepRecentTokens / reserveTokens, never lower them). The CLI's
 * `--dry-run` says the same.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { main } from "../../../../src/cli/main";
import { fitPlan, planCompaction, runCompactionFlow, type PlanFit } from "../../../../src/core/flows/compact";
import { fitSwitch, planSwitch } from "../../../../src/core/flows/switch";
import { SummarizerError } from "../../../../src/core/flows/summarizer";
import { OpenAiSummarizer } from "../../../../src/summarizers/openai";
import { FIXTURES } from "../../../support/paths";
import { startScriptedServer, type ScriptedServer } from "../../../support/scripted-openai";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-fit-"));
let server: ScriptedServer;
before(async () => {
  server = await startScriptedServer();
});
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The long fixture up to pi's third compaction (an update of the previous summary, not split). */
function longSession(): string {
  const lines = fs.readFileSync(path.join(PI, "long.jsonl"), "utf8").split("\n");
  const third = lines.map((l, i) => (l.includes('"type":"compaction"') ? i : -1)).filter((i) => i >= 0)[2]!;
  const file = path.join(tmp, `long-${Date.now()}-${Math.random().toString(36).slice(2)}.jsonl`);
  fs.writeFileSync(file, lines.slice(0, third).join("\n") + "\n");
  return file;
}

/** long.agent with other compaction settings. */
function agentWith(compaction: Record<string, number>): string {
  const dir = fs.mkdtempSync(path.join(tmp, "agent-"));
  for (const f of fs.readdirSync(path.join(PI, "long.agent")))
    fs.copyFileSync(path.join(PI, "long.agent", f), path.join(dir, f));
  const settings = JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8"));
  settings.compaction = { ...settings.compaction, ...compaction };
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
  return dir;
}

const summarizer = (contextWindow: number, surface: "vscode" | "cli" = "cli") =>
  new OpenAiSummarizer({
    baseURL: server.baseURL,
    model: "tiny-model",
    contextWindow,
    maxOutputTokens: 1024,
    maxRetries: 0,
    surface,
  });

const options = { guardSeconds: 0, procRoot: null, maxOutputTokens: 1024, surface: "cli" as const };

describe("a summary request that does not fit the summarizer", () => {
  it("the preview is made anyway, nothing is sent, and the advice moves every setting the right way", async () => {
    const file = longSession();
    const agentDir = path.join(PI, "long.agent");
    const probe = await fitPlan(await planCompaction(file, { ...options, agentDir }), summarizer(200_000));
    const window = probe.inputTokens + 1024 - 400; // 400 tokens short (with the margin: more)
    let previewed: PlanFit | undefined;
    const before = fs.readFileSync(file);
    await assert.rejects(
      runCompactionFlow(
        file,
        summarizer(window),
        { ...options, agentDir },
        {
          confirm: async (_plan, fit) => {
            previewed = fit;
            return true;
          },
        },
      ),
      (e: unknown) => e instanceof SummarizerError && e.kind === "too-large",
    );
    assert.ok(previewed?.problem, "the preview was shown with the problem");
    assert.equal(server.requests.length, 0, "nothing sent");
    assert.ok(fs.readFileSync(file).equals(before), "nothing written");
    const text = previewed.problem.message;
    assert.match(text, new RegExp(`context window of ${window.toLocaleString("en-US")} tokens`));
    assert.match(text, /a summarizer model with a context window of at least [\d,]+ tokens/);
    assert.match(text, /raise keepRecentTokens in pi's settings from 3,000 to about [\d,]+/);
    assert.doesNotMatch(text, /lower (keepRecentTokens|reserveTokens)/i);
    assert.match(text, /Lowering reserveTokens makes pi compact later and lowering keepRecentTokens summarizes more/);
    assert.match(text, /--model and --summarizer-window/, "the CLI's flags on the CLI");
    assert.match(text, /Nothing was sent or written\.$/);
  });

  it("the advised keepRecentTokens works: planned with it, the request fits", async () => {
    const file = longSession();
    const agentDir = path.join(PI, "long.agent");
    const probe = await fitPlan(await planCompaction(file, { ...options, agentDir }), summarizer(200_000));
    const window = probe.inputTokens + 1024 - 400;
    const fit = await fitPlan(await planCompaction(file, { ...options, agentDir }), summarizer(window));
    const advised = Number(
      /raise keepRecentTokens in pi's settings from 3,000 to about ([\d,]+)/
        .exec(fit.problem!.message)![1]!
        .replace(/,/g, ""),
    );
    assert.ok(advised > 3000);
    const again = await fitPlan(
      await planCompaction(file, { ...options, agentDir: agentWith({ keepRecentTokens: advised }) }),
      summarizer(window),
    );
    assert.equal(again.problem, undefined, `fits with keepRecentTokens ${advised}`);
    // and the old advice's direction would not: lowering it summarizes more
    const lower = await fitPlan(
      await planCompaction(file, { ...options, agentDir: agentWith({ keepRecentTokens: 1000 }) }),
      summarizer(window),
    );
    assert.ok(lower.problem && lower.inputTokens > fit.inputTokens);
  });

  it("in VS Code the advice names the settings and the live bridge", async () => {
    const file = longSession();
    const agentDir = path.join(PI, "long.agent");
    const fit = await fitPlan(
      await planCompaction(file, { ...options, surface: "vscode", agentDir }),
      summarizer(1500, "vscode"),
    );
    assert.match(
      fit.problem!.message,
      /piContext\.summarizer\.openai\.model and piContext\.summarizer\.openai\.contextWindow/,
    );
    assert.match(fit.problem!.message, /Pi Context: Install Live Bridge/);
  });

  it("pi-context compact --dry-run shows the preview with the same problem (text and JSON)", async () => {
    const file = longSession();
    const out: string[] = [];
    const err: string[] = [];
    const args = [
      "compact",
      file,
      "--dry-run",
      "--agent-dir",
      path.join(PI, "long.agent"),
      "--guard-seconds",
      "0",
      "--base-url",
      server.baseURL,
      "--model",
      "tiny-model",
      "--summarizer-window",
      "1500",
    ];
    const code = await main(
      args,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    assert.equal(code, 0);
    const text = out.join("\n");
    assert.match(text, /tokens after +≈[\d,]+–[\d,]+/);
    assert.match(text, /summarized +\d+ entries/);
    assert.match(text, /does not fit +The compaction summary request does not fit the summarizer/);
    assert.match(
      text,
      /raise keepRecentTokens|raise reserveTokens|a summarizer model with a context window of at least/,
    );
    const json: string[] = [];
    await main(
      [...args, "--json"],
      (l) => json.push(l),
      () => undefined,
    );
    const parsed = JSON.parse(json.join("\n"));
    assert.match(parsed.fitProblem, /does not fit the summarizer/);
    // without --dry-run: the preview with the problem, then exit 1, nothing sent
    const out2: string[] = [];
    const err2: string[] = [];
    const real = await main(
      args.filter((a) => a !== "--dry-run").concat("--yes"),
      (l) => out2.push(l),
      (l) => err2.push(l),
    );
    assert.equal(real, 1);
    assert.match(out2.join("\n"), /does not fit +The compaction summary request/);
    assert.match(err2.join("\n"), /Not compacted: the summary request does not fit the summarizer \(see above\)/);
    assert.equal(server.requests.length, 0);
  });

  it("a branch summary that does not fit: fitSwitch has the problem with branch advice (raise branchSummary.reserveTokens)", async () => {
    const file = path.join(tmp, "tree.jsonl");
    fs.copyFileSync(path.join(PI, "tree.jsonl"), file);
    const plan = await planSwitch(file, "895e5ef5", {
      agentDir: path.join(PI, "tree.agent"),
      guardSeconds: 0,
      procRoot: null,
      surface: "cli",
    });
    const fitted = await fitSwitch(plan, { summarize: true }, summarizer(600));
    assert.ok(fitted?.problem);
    assert.match(fitted.problem.message, /The branch summary request does not fit the summarizer/);
    assert.match(fitted.problem.message, /Or switch without a summary\./);
    assert.doesNotMatch(fitted.problem.message, /lower (keepRecentTokens|reserveTokens|branchSummary)/i);
    // the budget (183,616) is far above what is sent: raising branchSummary.reserveTokens would not help
    assert.doesNotMatch(fitted.problem.message, /raise branchSummary\.reserveTokens/);
  });
});

describe("branch summary budget: no limit when branchSummary.reserveTokens ≥ the window (pi: budget > 0 only)", () => {
  /** tree.agent with branchSummary.reserveTokens above any window. */
  function treeAgentNoBudget(): string {
    const dir = fs.mkdtempSync(path.join(tmp, "tree-agent-"));
    for (const f of fs.readdirSync(path.join(PI, "tree.agent")))
      fs.copyFileSync(path.join(PI, "tree.agent", f), path.join(dir, f));
    const settings = JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8"));
    settings.branchSummary = { reserveTokens: 10_000_000 };
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
    return dir;
  }

  it("switch --dry-run says 'no budget limit' (text and JSON), never a negative budget", async () => {
    const file = path.join(tmp, "tree-nobudget.jsonl");
    fs.copyFileSync(path.join(PI, "tree.jsonl"), file);
    const agent = treeAgentNoBudget();
    const out: string[] = [];
    const args = ["switch", file, "895e5ef5", "--summarize", "--dry-run", "--agent-dir", agent];
    const code = await main(
      [...args, "--base-url", server.baseURL, "--model", "m"],
      (l) => out.push(l),
      () => {},
    );
    const text = out.join("\n");
    assert.equal(code, 0, text);
    assert.match(
      text,
      /no budget limit \(window [\d,]+ − branchSummary\.reserveTokens 10,000,000 ≤ 0: pi sends the whole branch\)/,
    );
    assert.doesNotMatch(text, /budget -|−\d/);
    const jsonOut: string[] = [];
    await main(
      [...args, "--json", "--base-url", server.baseURL, "--model", "m"],
      (l) => jsonOut.push(l),
      () => {},
    );
    const j = JSON.parse(jsonOut.join("\n"));
    assert.ok(j.budget <= 0, "pi's own number stays");
    assert.equal(j.budgetLimit, null);
  });

  it("the fit advice says there is no limit and lowers branchSummary.reserveTokens to make one", async () => {
    // long.jsonl back to its session_info near the root: the whole session is the branch left
    const file = longSession();
    const agentDir = fs.mkdtempSync(path.join(tmp, "long-agent-"));
    for (const f of fs.readdirSync(path.join(PI, "long.agent")))
      fs.copyFileSync(path.join(PI, "long.agent", f), path.join(agentDir, f));
    const settings = JSON.parse(fs.readFileSync(path.join(agentDir, "settings.json"), "utf8"));
    settings.branchSummary = { reserveTokens: 10_000_000 };
    fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settings));
    const plan = await planSwitch(file, "b89655d1", { agentDir, guardSeconds: 0, procRoot: null, surface: "vscode" });
    assert.ok(plan.budget <= 0);
    const probe = await fitSwitch(plan, { summarize: true }, summarizer(1_000_000, "vscode"));
    assert.ok(probe && !probe.problem && probe.inputTokens > 5000, String(probe?.inputTokens));
    const fitted = await fitSwitch(plan, { summarize: true }, summarizer(probe.inputTokens + 1024 - 2000, "vscode"));
    assert.ok(fitted?.problem);
    const m = fitted.problem.message;
    assert.match(
      m,
      /branchSummary\.reserveTokens \(10,000,000\) is not below the window, so pi sends the whole branch \(no budget limit\); lower it in pi's settings to about [\d,]+ for a budget of ≈[\d,]+ tokens/,
    );
    assert.doesNotMatch(m, /budget of -|raise branchSummary\.reserveTokens/);
  });
});
