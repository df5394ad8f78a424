/**
 * Money has one formatter (src/shared/format.ts) for the host, the CLI and the webview: pi's
 * `$x.xxx` and `-$x.xxx`, small amounts never shown as zero, prices per million tokens rounded.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { priceReduction } from "../../../src/core/rules/reduction";
import { formatDollars, formatPricePerMillion, piDollars } from "../../../src/shared/format";
import { priceLines } from "../../../src/viewModel/compactionPrice";
import { pricesText } from "../../../src/viewModel/usage";
import { REPO_ROOT } from "../../support/paths";

describe("money", () => {
  it("pi's rule: three decimals, the sign before the dollar", () => {
    assert.equal(piDollars(1.5), "$1.500");
    assert.equal(piDollars(0.3059939999999999), "$0.306");
    assert.equal(piDollars(-0.0042), "-$0.004");
    assert.equal(piDollars(1234.5678), "$1234.568");
    assert.equal(piDollars(0.0003), "$0.000");
    assert.equal(piDollars(-0), "$0.000");
  });

  it("formatDollars: pi's rule, and an amount under $0.001 with two significant digits (never $0.000)", () => {
    assert.equal(formatDollars(1.5), "$1.500");
    assert.equal(formatDollars(-0.0042), "-$0.004");
    assert.equal(formatDollars(0.0104), "$0.010");
    assert.equal(formatDollars(0.00031), "$0.00031");
    assert.equal(formatDollars(-0.00042), "-$0.00042");
    assert.equal(formatDollars(0.0000456), "$0.000046");
    assert.equal(formatDollars(0.000999), "$0.001", "rounds up into pi's range");
    assert.equal(formatDollars(0), "$0.000");
    assert.equal(formatDollars(-0), "$0.000");
    assert.equal(formatDollars(Number.NaN), "$?");
    assert.equal(formatDollars(Number.POSITIVE_INFINITY), "$?");
  });

  it("prices per million tokens: as the catalog gives them, without floating-point noise", () => {
    assert.equal(formatPricePerMillion(3), "$3/M");
    assert.equal(formatPricePerMillion(3.75), "$3.75/M");
    assert.equal(formatPricePerMillion((0.061 / 1e6) * 1e6), "$0.061/M"); // 0.061000000000000006
    assert.equal(formatPricePerMillion(Number.NaN), "$?/M");
    assert.equal(
      pricesText({ input: 0.121, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }).split(" · ")[0],
      "$0.121/M in",
    );
    const economics = priceReduction({
      tokensBefore: 40000,
      tokensAfter: 5000,
      request: { inputTokens: 30000, outputTokens: 1000, prices: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } },
      sessionPrices: { input: 0.121, output: 2, cacheRead: 0.061, cacheWrite: 0.2 },
      cache: "warm",
    });
    const saves = priceLines({ ...economics, sessionModel: "acme/small" }).find((l) => l.startsWith("Saves "));
    assert.match(saves!, / — \$0\.002 each at the cache-read price of acme\/small \(\$0\.061\/M\)\.$/);
  });

  it("no other source file writes a dollar sign before a number (host, CLI and webview use format.ts)", () => {
    const files = (dir: string): string[] =>
      fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
        const rel = `${dir}/${e.name}`;
        return e.isDirectory() ? files(rel) : e.name.endsWith(".ts") ? [rel] : [];
      });
    // `$${amount}`, `"$" + amount`, an l10n text "${0}"
    const money = /\$\$\{|["'`]\$["'`]\s*\+|\$\{\d+\}/;
    const offenders = [...files("src"), ...files("webview")]
      .filter((f) => f !== "src/shared/format.ts")
      .flatMap((f) =>
        fs
          .readFileSync(path.join(REPO_ROOT, f), "utf8")
          .split("\n")
          .flatMap((line, i) => (money.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    assert.deepEqual(offenders, []);
  });
});
