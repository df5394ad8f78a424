/**
 * The compaction preview's shared rows (`src/viewModel/compactionPrice.ts`): the before → after
 * text and the Cost row both previews show (ours / the headless pi, and the running pi's through
 * the live bridge), and what they say when a number is not known.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { priceReduction } from "../../../src/core/rules/reduction";
import { beforeAfterText, priceDetail, priceHeadline, pricePickRow } from "../../../src/viewModel/compactionPrice";

const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

describe("compaction preview rows", () => {
  it("before → after: the plan's range, or not known with the reason", () => {
    assert.equal(
      beforeAfterText({ tokensBefore: 45012, after: { low: 4373, high: 4625 } }),
      "45,012 → ≈4,373–4,625 tokens",
    );
    assert.equal(beforeAfterText({ tokensBefore: 900, after: { low: 300, high: 300 } }), "900 → ≈300 tokens");
    assert.equal(
      beforeAfterText({ notKnown: "the file could not be planned: Nothing to compact" }),
      "tokens after: not known (the file could not be planned: Nothing to compact)",
    );
  });

  it("the Cost row: the priced plan's headline and detail, or 'Cost not known' with the reason (no number)", () => {
    const economics = priceReduction({
      tokensBefore: 40000,
      tokensAfter: 5000,
      request: { inputTokens: 30000, outputTokens: 1000, prices: PRICES },
      sessionPrices: PRICES,
      cache: "cold",
    });
    const price = {
      ...economics,
      tokensBefore: 40000,
      tokensAfter: 5000,
      summarizerPrices: "anthropic/claude (the session's model, which pi summarizes with)",
      sessionModel: "anthropic/claude",
      sessionPricesKnown: true,
    };
    const row = pricePickRow(price);
    // request: 30,000 × $3/M + 1,000 × $15/M = $0.105; saved: 35,000 × the cache-read $0.30/M = $0.0105
    assert.equal(row.label, `$(credit-card) ${priceHeadline(price)}`);
    assert.match(row.label, /^\$\(credit-card\) ≈\$0\.105 now · break-even /);
    assert.equal(row.detail, priceDetail(price));
    assert.match(row.detail, /^saves ≈35,000 tokens \(\$0\.010\) on every later request; the prompt cache has expired/);
    const unknown = pricePickRow({ notKnown: "the running pi compacts with other settings" });
    assert.deepEqual(unknown, {
      label: "$(credit-card) Cost not known",
      detail: "the running pi compacts with other settings",
    });
    assert.doesNotMatch(unknown.label + unknown.detail, /\$\d/);
  });
});
