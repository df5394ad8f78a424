/**
 * The compaction preview's economics and the review of a finished summary: the plan priced (the
 * summary request at the summarizer's catalog prices, the savings at the session model's), the
 * summarizer's server mapped to pi's providers, the lost items of a summary not yet written (equal
 * to those of the same compaction once written), and the flow's review step — write, discard
 * (nothing written), or summarize again with instructions to keep the lost items.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { planCompaction, runCompactionFlow, type CompactionPlan } from "../../../../src/core/flows/compact";
import {
  priceCompactionPlan,
  pricePiCompactionPlan,
  summarizerPrices,
  summarizerProvider,
} from "../../../../src/core/flows/planPrice";
import type { Summarizer, SummaryRequest } from "../../../../src/core/flows/summarizer";
import { SessionFile } from "../../../../src/core/read/session";
import { catalogModel, readModelsConfig } from "../../../../src/core/rules/models";
import { pricesOf, priceTokens } from "../../../../src/core/rules/cost";
import { compactionLostItems, preparationLostItems } from "../../../../src/core/rules/lostItems";
import { priceReduction } from "../../../../src/core/rules/reduction";
import { main } from "../../../../src/cli/main";
import { FIXTURES } from "../../../support/paths";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-econ-flow-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** The first `lines` lines of a fixture, an hour old. */
function prefix(name: string, lines: number): string {
  const all = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
  const file = path.join(tmp, `${name}-${lines}-${++n}.jsonl`);
  fs.writeFileSync(file, all.slice(0, lines).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}

/** Line (1-based) of the k-th compaction of a fixture. */
function compactionLine(name: string, k: number): number {
  const lines = fs.readFileSync(path.join(PI, `${name}.jsonl`), "utf8").split("\n");
  return lines.map((l, i) => (l.includes('"type":"compaction"') ? i + 1 : 0)).filter((x) => x > 0)[k]!;
}

/** A summarizer that answers from a list and records the requests. */
function fake(answers: string[], extra: Partial<Summarizer> = {}): Summarizer & { requests: SummaryRequest[] } {
  const requests: SummaryRequest[] = [];
  return {
    provider: "openai",
    label: "gpt-4o-mini at https://api.openai.com/v1",
    modelName: "gpt-4o-mini",
    baseURL: "https://api.openai.com/v1",
    contextWindow: 128000,
    maxOutputTokens: 4096,
    requests,
    async summarize(request) {
      requests.push(request);
      return { text: answers[Math.min(requests.length - 1, answers.length - 1)]!, stopReason: "stop" };
    },
    ...extra,
  };
}

const options = { agentDir: path.join(PI, "long.agent"), guardSeconds: 0, procRoot: null, maxOutputTokens: 4096 };

describe("the compaction preview's price", () => {
  it("the summarizer's server → pi's provider (by host, or models.json's baseUrl)", () => {
    assert.equal(summarizerProvider("https://api.openai.com/v1"), "openai");
    assert.equal(summarizerProvider("https://openrouter.ai/api/v1"), "openrouter");
    assert.equal(summarizerProvider("http://127.0.0.1:5/v1"), undefined);
    const config = readModelsConfig(path.join(PI, "long.agent"));
    assert.equal(summarizerProvider("http://127.0.0.1:42589/v1/", config), "scripted");
    const mini = summarizerPrices(fake([]), (p, id) => pricesOf(catalogModel(p, id)));
    assert.equal(mini.source, "openai/gpt-4o-mini");
    assert.deepEqual(mini.prices, pricesOf(catalogModel("openai", "gpt-4o-mini")));
    assert.match(
      summarizerPrices({ ...fake([]), provider: "vscode-lm" }, () => undefined).source,
      /no per-token price/,
    );
  });

  it("long, before pi's 3rd compaction: the request at gpt-4o-mini's prices, savings at scripted-small's", async () => {
    const plan = await planCompaction(prefix("long", compactionLine("long", 2) - 1), options);
    const fit = { inputTokens: 5605 };
    const price = priceCompactionPlan(plan, fit, fake([]), Date.now());
    const mini = pricesOf(catalogModel("openai", "gpt-4o-mini"))!;
    assert.equal(price.summarizerPrices, "openai/gpt-4o-mini");
    assert.equal(price.requestCost, priceTokens(mini, { input: 5605, output: plan.estimatedSummaryTokens }));
    assert.equal(price.tokensBefore, plan.preview.tokensBefore);
    assert.equal(price.savedTokensPerRequest, plan.preview.tokensBefore - plan.estimatedTokensAfter);
    // the fixture is old: the cache has expired
    assert.equal(price.cache, "cold");
    const { tokensBefore, tokensAfter, summarizerPrices: _s, sessionModel, sessionPricesKnown, ...rest } = price;
    void _s;
    assert.equal(sessionModel, "scripted/scripted-small");
    assert.equal(sessionPricesKnown, true);
    assert.deepEqual(
      rest,
      priceReduction({
        tokensBefore,
        tokensAfter,
        request: { inputTokens: 5605, outputTokens: plan.estimatedSummaryTokens, prices: mini },
        sessionPrices: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 },
        cache: "cold",
      }),
    );
  });

  it("by the user's own pi: pi's requests at the session model's prices (pi summarizes with it)", async () => {
    const plan = await planCompaction(prefix("long", compactionLine("long", 2) - 1), options);
    const price = pricePiCompactionPlan(plan, Date.now());
    const session = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 }; // scripted-small in long.agent's models.json
    assert.match(price.summarizerPrices, /^scripted\/scripted-small \(the session's model/);
    const requests = [plan.historyRequest, plan.turnPrefixRequest].filter((r) => r !== undefined);
    assert.ok(requests.length > 0);
    const input = requests.reduce((s, r) => s + Math.ceil((r.systemPrompt.length + r.prompt.length) / 4), 0);
    assert.ok(input > 1000, `pi's prompt is priced, not nothing: ${input}`);
    assert.equal(price.requestCost, priceTokens(session, { input, output: plan.estimatedSummaryTokens }));
    assert.equal(price.savedTokensPerRequest, plan.preview.tokensBefore - plan.estimatedTokensAfter);
    // a session model without prices: the price is unknown (never $0) and says why
    const unpriced = { ...plan, analysis: { ...plan.analysis, inspect: { ...plan.analysis.inspect } } };
    unpriced.analysis.inspect.cost = { ...plan.analysis.inspect.cost, prices: null };
    const none = pricePiCompactionPlan(unpriced, Date.now());
    assert.equal(none.requestCost, null);
    assert.match(none.summarizerPrices, /has no price in pi's catalog/);
  });

  it("pi-context compact --dry-run --json: the request's tokens and cost estimate", async () => {
    const file = prefix("long", compactionLine("long", 2) - 1);
    let out = "";
    const code = await main(
      [
        "compact",
        file,
        "--dry-run",
        "--json",
        "--agent-dir",
        path.join(PI, "long.agent"),
        "--base-url",
        "https://api.openai.com/v1",
      ],
      (t) => (out += t),
      () => undefined,
    );
    assert.equal(code, 0);
    const json = JSON.parse(out) as { inputTokens: number; estimate: Record<string, unknown> };
    assert.equal(json.estimate.requestInputTokens, json.inputTokens);
    assert.equal(json.estimate.summarizerPrices, "openai/gpt-4o-mini");
    assert.equal(typeof json.estimate.requestCost, "number");
    assert.equal(json.estimate.breakEvenBasis, "cost");
  });
});

describe("what a summary not yet written lost, and the review", () => {
  for (const [name, k] of [
    ["long", 0],
    ["long", 1],
    ["split", 0],
  ] as const) {
    it(`${name} compaction #${k + 1}: the preview's lost items equal the written compaction's`, async () => {
      const line = compactionLine(name, k);
      const plan = await planCompaction(prefix(name, line - 1), {
        ...options,
        agentDir: path.join(PI, `${name}.agent`),
      });
      const session = await SessionFile.open(path.join(PI, `${name}.jsonl`));
      const written = session.records.find((r) => r.line === line)!;
      const before = preparationLostItems(plan.preparation, written.summary!, plan.session, plan.session.cwd);
      assert.deepEqual(before, compactionLostItems(session, written));
    });
  }

  it("retry: asked again with instructions to keep the lost items, the second summary is written", async () => {
    const file = prefix("long", compactionLine("long", 0) - 1);
    const summarizer = fake(["## Goal\nfirst try", "prefix 1", "## Goal\nsecond try keeps `ls -la src`", "prefix 2"]);
    const reviews: string[] = [];
    const outcome = await runCompactionFlow(file, summarizer, options, {
      reviewDraft: async (plan: CompactionPlan, draft) => {
        const lost = preparationLostItems(plan.preparation, draft.summary, plan.session);
        reviews.push(draft.summary.split("\n")[1]!);
        return reviews.length === 1
          ? { action: "retry", instructions: `Keep these verbatim in the summary: ${lost.items[0]!.text}` }
          : { action: "write" };
      },
    });
    assert.equal(outcome.kind, "compacted");
    assert.deepEqual(reviews, ["first try", "second try keeps `ls -la src`"]);
    // a split turn: history + turn prefix per summary
    assert.equal(summarizer.requests.length, 4);
    assert.ok(summarizer.requests.slice(0, 2).every((r) => !r.prompt.includes("Additional focus")));
    for (const r of summarizer.requests.slice(2))
      assert.ok(
        r.prompt.endsWith("Additional focus: Keep these verbatim in the summary: ls -la src && wc -l src/*.ts"),
      );
    if (outcome.kind !== "compacted") return;
    assert.ok(outcome.result.entry.summary.startsWith("## Goal\nsecond try"));
    const last = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { summary: string };
    assert.equal(last.summary, outcome.result.entry.summary);
  });

  it("discard: nothing is written", async () => {
    const file = prefix("long", compactionLine("long", 0) - 1);
    const bytes = fs.readFileSync(file);
    const outcome = await runCompactionFlow(file, fake(["## Goal\nx"]), options, {
      reviewDraft: async () => ({ action: "discard" }),
    });
    assert.equal(outcome.kind, "declined");
    assert.equal(outcome.kind === "declined" && outcome.stage, "review");
    assert.ok(fs.readFileSync(file).equals(bytes));
  });
});
