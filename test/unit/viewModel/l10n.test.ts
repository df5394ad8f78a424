/**
 * The view models' strings are localisable (issue 18 item 14): they go through `@vscode/l10n`, whose
 * bundle the extension host sets from `vscode.l10n.bundle` at activation (`src/extension.ts`); the CLI
 * sets none and prints the English text. `npm run l10n` extracts them into `l10n/bundle.l10n.json`
 * (checked by `test/unit/manifest.test.ts`). Module-level word tables (`localisedRecord`) are read
 * at use, so a bundle set after the modules loaded (as in `activate()`) still applies.
 */

/** The numbers of a text, in order (what a translation must never change). */
const numbers = (text: string) => text.match(/\d[\d,.]*/g) ?? [];

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { afterEach, describe, it } from "node:test";
import * as l10n from "@vscode/l10n";
import { analyzeLoaded, analyzeSession } from "../../../src/core/rules/analyze";
import { SessionFile } from "../../../src/core/read/session";
import { pluralText, tokensText } from "../../../src/shared/format";
import { healthBadge, healthSummary, HEALTH_TITLES } from "../../../src/viewModel/health";
import { lostSummary } from "../../../src/viewModel/lostItems";
import { buildPanelState } from "../../../src/viewModel/panelState";
import { problemsOf } from "../../../src/viewModel/problems";
import { buildGaugeView, emptyStateMessage } from "../../../src/viewModel/statusBar";
import { KIND_NAMES } from "../../../src/viewModel/treeText";
import { buildUsageModel, usageRows } from "../../../src/viewModel/usage";
import { doctorOf } from "../../support/doctor";
import { FIXTURES } from "../../support/paths";
import { SessionBuilder } from "../../support/session-builder";

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

  it("health: the tooltip's badge, the counts and the findings' titles follow the bundle; the counts stay", () => {
    const broken = new SessionBuilder()
      .user("u1", "q")
      .assistant("a1", { calls: [{ id: "c1" }] })
      .user("u2", "interject")
      .result("t1", "c1", "out")
      .assistant("a2", { text: "x", usage: 10 });
    const { report } = doctorOf(broken.jsonl());
    const english = { badge: healthBadge(report), summary: healthSummary(report) };
    const englishTitle = problemsOf(report, "/s.jsonl")[0]!.title;
    assert.equal(englishTitle, "Tool result separated from its call");
    l10n.config({
      contents: {
        "**Session health:** {0}{1} · [Check Session Health…](command:piContext.checkHealth)":
          "**Sitzungszustand:** {0}{1} · [Sitzung prüfen…](command:piContext.checkHealth)",
        "$(error) {0} error": "$(error) {0} Fehler",
        " — {0} repairable": " — {0} reparierbar",
        "{0} error": "{0} Fehler",
        "Tool result separated from its call": "Werkzeugergebnis von seinem Aufruf getrennt",
      },
    });
    const badge = healthBadge(report);
    assert.equal(
      badge,
      "**Sitzungszustand:** $(error) 1 Fehler — 1 reparierbar · [Sitzung prüfen…](command:piContext.checkHealth)",
    );
    assert.deepEqual(numbers(badge), numbers(english.badge));
    assert.equal(healthSummary(report), "1 Fehler");
    // the table of titles is read at use: the bundle set after the module loaded applies
    assert.equal(HEALTH_TITLES["separated-result"], "Werkzeugergebnis von seinem Aufruf getrennt");
    assert.equal(problemsOf(report, "/s.jsonl")[0]!.title, "Werkzeugergebnis von seinem Aufruf getrennt");
    assert.equal(HEALTH_TITLES["parent-cycle"], "Parent cycle", "not in the bundle: English");
    assert.ok(Object.keys(HEALTH_TITLES).includes("separated-result"), "the table still enumerates its codes");
  });

  it("the panel's view model (breakdown labels, usage rows) and the tree's kind names follow the bundle; every number stays", async () => {
    const file = path.join(FIXTURES, "pi-1.6.0", "long.jsonl");
    const session = await SessionFile.open(file);
    const analysis = analyzeLoaded(session, {
      agentDir: path.join(FIXTURES, "pi-1.6.0", "long.agent"),
      projectSettings: "never",
    });
    const input = { file, session, analysis, pinned: false, updatedAt: 1 };
    const english = buildPanelState(input);
    const englishRows = usageRows(buildUsageModel(analysis.inspect));
    l10n.config({
      contents: {
        "User messages": "Benutzernachrichten",
        "Tool results": "Werkzeugergebnisse",
        Tokens: "Token",
        "{0} tokens": "{0} Token",
        "user message": "Benutzernachricht",
      },
    });
    const german = buildPanelState(input);
    const labels = (s: typeof english) => s.breakdown!.categories.map((c) => [c.id, c.label, c.tokens]);
    const en = new Map(labels(english).map(([id, label, tokens]) => [id, { label, tokens }]));
    const de = new Map(labels(german).map(([id, label, tokens]) => [id, { label, tokens }]));
    assert.equal(en.get("user")!.label, "User messages");
    assert.equal(de.get("user")!.label, "Benutzernachrichten");
    assert.equal(de.get("toolResults")!.label, "Werkzeugergebnisse");
    assert.equal(de.get("thinking")!.label, en.get("thinking")!.label, "not in the bundle: English");
    for (const [id, v] of en) assert.equal(de.get(id)!.tokens, v.tokens, `${String(id)}: the same tokens`);
    assert.equal(german.gauge!.used, english.gauge!.used);
    const germanRows = usageRows(buildUsageModel(analysis.inspect));
    assert.deepEqual(
      germanRows.map(([k]) => k),
      englishRows.map(([k]) => (k === "Tokens" ? "Token" : k)),
    );
    for (let i = 0; i < englishRows.length; i++)
      assert.deepEqual(numbers(germanRows[i]![1]), numbers(englishRows[i]![1]), englishRows[i]![0]);
    assert.equal(KIND_NAMES.user, "Benutzernachricht");
    assert.equal(tokensText(12345), "12,345 Token");
  });

  it("plural forms are separate strings: one and other translate independently, the number is formatted once", () => {
    l10n.config({
      contents: {
        "{0} entry": "{0} Eintrag",
        "{0} entries": "{0} Einträge",
        "{0} of {1}": "{0} von {1}",
        "{0} commands": "{0} Befehlen",
        "lost {0}": "verloren: {0}",
      },
    });
    assert.equal(pluralText(1, l10n.t("{0} entry"), l10n.t("{0} entries")), "1 Eintrag");
    assert.equal(pluralText(1234, l10n.t("{0} entry"), l10n.t("{0} entries")), "1,234 Einträge");
    const none = { found: 0, lost: 0 };
    const totals = { path: none, identifier: none, number: none, command: { found: 5, lost: 2 } };
    assert.equal(lostSummary(totals), "verloren: 2 von 5 Befehlen");
  });

  it("without a bundle (the CLI) the English text, placeholders filled", () => {
    assert.equal(emptyStateMessage(undefined), "Looking for pi sessions…");
    assert.equal(l10n.t("{0} to go", "12k"), "12k to go");
    assert.equal(HEALTH_TITLES["separated-result"], "Tool result separated from its call");
    assert.equal(tokensText(1), "1 token");
  });
});
