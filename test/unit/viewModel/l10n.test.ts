/**
 * The view models' strings are localisable (issue 18 item 14): they go through `@vscode/l10n`, whose
 * bundle the extension host sets from `vscode.l10n.bundle` at activation (`src/extension.ts`); the CLI
 * sets none and prints the English text. `npm run l10n` extracts them into `l10n/bundle.l10n.json`
 * (checked by `test/unit/manifest.test.ts`).
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { afterEach, describe, it } from "node:test";
import * as l10n from "@vscode/l10n";
import { analyzeSession } from "../../../src/core/rules/analyze";
import { buildGaugeView, emptyStateMessage } from "../../../src/viewModel/statusBar";
import { FIXTURES } from "../../support/paths";

describe("view-model strings follow the bundle VS Code gives", () => {
  afterEach(() => l10n.config({ contents: {} }));

  it("a translated bundle changes the tooltip's rows, the gauge text and the empty states; placeholders keep the numbers", async () => {
    const file = path.join(FIXTURES, "pi-1.6.0", "long.jsonl");
    const analysis = await analyzeSession(file, { agentDir: path.join(FIXTURES, "pi-1.6.0", "long.agent") });
    const input = { session: { file, analysis, pinned: true, updatedAt: 1 }, margin: 10000, locale: "en-US" };
    const english = buildGaugeView(input);
    assert.match(english.tooltip, /\| Context \| \*\*[\d,]+\*\* of [\d,]+ tokens \(\d+\.\d%\) \|/);
    assert.match(english.tooltip, / \(pinned\)/);

    l10n.config({
      contents: {
        Context: "Kontext",
        "**{0}** of {1} tokens ({2})": "**{0}** von {1} Tokens ({2})",
        "(pinned)": "(angeheftet)",
        "no session": "keine Sitzung",
        "Looking for pi sessions…": "Suche pi-Sitzungen…",
      },
    });
    const german = buildGaugeView(input);
    const context = /\| Kontext \| \*\*([\d,]+)\*\* von ([\d,]+) Tokens \((\d+\.\d%)\) \|/.exec(german.tooltip);
    assert.ok(context, german.tooltip);
    const englishContext = /\| Context \| \*\*([\d,]+)\*\* of ([\d,]+) tokens \((\d+\.\d%)\) \|/.exec(english.tooltip)!;
    assert.deepEqual(context.slice(1), englishContext.slice(1), "the same numbers in both languages");
    assert.match(german.tooltip, / \(angeheftet\)/);
    // strings the bundle does not have stay English
    assert.ok(german.tooltip.includes("| Model |"), german.tooltip);
    const empty = buildGaugeView({
      margin: 1,
      discovery: { phase: "ready", workspace: true, searchedDirs: [], sessionCount: 0 },
    });
    assert.equal(empty.text, "π keine Sitzung");
    assert.equal(emptyStateMessage(undefined), "Suche pi-Sitzungen…");
  });

  it("without a bundle (the CLI) the English text, placeholders filled", () => {
    assert.equal(emptyStateMessage(undefined), "Looking for pi sessions…");
    assert.equal(l10n.t("{0} to go", "12k"), "12k to go");
  });
});
