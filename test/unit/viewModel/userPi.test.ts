/**
 * Which pi the numbers follow, on every surface: the status-bar tooltip, the panel's gauge and
 * `pi-context inspect` (text and --json) name pi's version, where it was found and its catalog;
 * an older pi gets its note, an unreadable catalog says the snapshot is used.
 */

import { markdownText } from "../../../src/shared/untrusted";
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { snapshotCatalog } from "../../../src/core/pi/catalog";
import { NO_USER_PI, piReport, userPiOf, type UserPi } from "../../../src/core/pi/userPi";
import { locatePi } from "../../../src/core/pi/locate";
import { rulesFor } from "../../../src/core/pi/versions";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { formatInspect } from "../../../src/cli/inspect";
import { buildGauge } from "../../../src/viewModel/gauge";
import { piText, piWarnings } from "../../../src/viewModel/sourceText";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { SessionBuilder } from "../../support/session-builder";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-userpi-view-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SESSION = new SessionBuilder({ id: "s", cwd: tmp })
  .model("m1", "mistral", "mistral-large-latest")
  .user("u1", "hi")
  .jsonl();

function userPi(version: string, catalogProblem?: string): UserPi {
  return {
    install: {
      version,
      source: "path",
      executable: "/usr/local/bin/pi",
      packageDir: "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent",
      cliPath: "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js",
    },
    catalog: snapshotCatalog(),
    ...(catalogProblem ? { catalogProblem } : {}),
    rules: rulesFor(version),
    tried: [],
  };
}

const analysis = (pi?: UserPi) =>
  analyzeLoaded(SessionFile.fromBytes(SESSION), { agentDir: path.join(tmp, "none"), ...(pi ? { pi } : {}) });

describe("the pi the numbers follow, in words", () => {
  it("inspect --json: pi {version, source, sourceText, path, catalog}", () => {
    const a = analysis(userPi("1.5.2"));
    assert.deepEqual(a.inspect.pi, {
      version: "1.5.2",
      source: "path",
      sourceText: "the pi on the PATH (/usr/local/bin/pi)",
      path: "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent",
      catalog: {
        name: "pi-context's snapshot of pi 1.6.0's catalog",
        piVersion: "1.6.0",
        origin: "snapshot",
        location: "data/model-catalog.json",
      },
    });
    assert.deepEqual(JSON.parse(JSON.stringify(a.inspect)).contextWindow, {
      value: 1048576,
      source: "catalog",
      detail: "pi-context's snapshot of pi 1.6.0's catalog (data/model-catalog.json: mistral/mistral-large-latest)",
      where: "mistral/mistral-large-latest",
      catalog: "pi-context's snapshot of pi 1.6.0's catalog",
    });
    const text = formatInspect(a);
    assert.match(text, /^pi {10}1\.5\.2, the pi on the PATH \(\/usr\/local\/bin\/pi\)$/m);
    assert.match(text, /^window {6}1,048,576 tokens, from pi-context's snapshot of pi 1\.6\.0's catalog/m);
  });

  it("no pi found: the snapshot and pi 1.6.0's rules, said so", () => {
    const report = piReport(NO_USER_PI);
    assert.equal(report.version, null);
    assert.equal(report.source, "none");
    assert.match(report.sourceText, /^no pi found \(looked at nothing\); numbers follow pi 1\.6\.0$/);
    assert.match(piText(report), /^none found — numbers follow pi 1\.6\.0/);
    assert.equal(analysis().inspect.pi?.source, "none");
  });

  it("the status-bar tooltip and the panel's gauge name pi; the running pi wins when live", () => {
    const a = analysis(userPi("1.5.2"));
    const g = buildGaugeView({
      margin: 10000,
      session: { file: "/s.jsonl", analysis: a, pinned: false, updatedAt: 1 },
    });
    // tooltip text from a session or a pi install is escaped Markdown (shared/untrusted.ts)
    assert.ok(
      g.tooltip.includes(`| pi | ${markdownText("1.5.2 — the pi on the PATH (/usr/local/bin/pi)")} |`),
      g.tooltip,
    );
    assert.ok(
      g.tooltip.includes(markdownText("pi-context's snapshot of pi 1.6.0's catalog (mistral/mistral-large-latest)")),
    );
    const gauge = buildGauge(a.inspect);
    assert.equal(gauge.pi, "1.5.2 — the pi on the PATH (/usr/local/bin/pi)");
    assert.equal(gauge.piPath, "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent");
    assert.deepEqual(gauge.piWarnings, []);
    assert.equal(
      piText(a.inspect.pi, { pid: 42, piVersion: "1.6.0" }),
      "1.6.0 — the running pi (pid 42, live bridge); installed: 1.5.2, the pi on the PATH (/usr/local/bin/pi)",
    );
  });

  it("below pi 0.87 a note, and an unreadable catalog, instead of silently different numbers", () => {
    const a = analysis(
      userPi("0.86.1", "pi 0.86.1's model catalog could not be read (pi's bundle: no model catalog in …)"),
    );
    const warnings = piWarnings(a.inspect.pi);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /^Numbers may differ from your pi 0\.86\.1/);
    assert.match(
      warnings[1]!,
      /could not be read .* Windows come from pi-context's snapshot of pi 1\.6\.0's catalog\.$/,
    );
    const g = buildGaugeView({
      margin: 10000,
      session: { file: "/s.jsonl", analysis: a, pinned: false, updatedAt: 1 },
    });
    assert.ok(g.tooltip.includes(`$(warning) ${markdownText("Numbers may differ from your pi 0.86.1")}`), g.tooltip);
    assert.deepEqual(buildGauge(a.inspect).piWarnings, warnings);
    assert.match(formatInspect(a), /Numbers may differ from your pi 0\.86\.1/);
  });
});

describe("a pi setting that points nowhere is said, not ignored", () => {
  it("the reason is in the report and the warnings (tooltip, panel, inspect); the numbers follow the pi found next", () => {
    const pi = userPiOf(locatePi({ setting: "/nonexistent/bin/pi", env: { PATH: "" } }));
    const report = piReport(pi);
    assert.equal(report.source, "none");
    assert.match(report.settingProblem ?? "", /^setting piContext\.pi\.path: /);
    const warnings = piWarnings(report);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0]!,
      /^setting piContext\.pi\.path: .*\. The numbers follow pi 1\.6\.0 \(no pi found\) instead\.$/,
    );
    // a usable setting: no warning
    assert.equal(piReport(userPiOf(locatePi({ setting: "", env: { PATH: "" } }))).settingProblem, undefined);
  });
});
