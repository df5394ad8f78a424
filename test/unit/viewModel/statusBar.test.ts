/**
 * The gauge view model (text, colour by distance to pi's threshold, tooltip, screen-reader label)
 * on the shared pi 1.6.0 fixtures and on small generated sessions, plus the warning tracker.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { analyzeLoaded, analyzeSession, type Analysis } from "../../../src/core/rules/analyze";
import { SessionFile } from "../../../src/core/read/session";
import {
  buildGaugeView,
  emptyStateMessage,
  escapeMarkdown,
  formatPercent,
  problemLines,
  TOOLTIP_PROBLEM_LIMIT,
  WarningTracker,
} from "../../../src/viewModel/statusBar";
import { buildGauge, gaugeLevel, gaugeLimit } from "../../../src/viewModel/gauge";
import { windowSourceText } from "../../../src/viewModel/sourceText";
import { autoCompactsWhen, formatCount, formatDateTime, formatTokens, tokensText } from "../../../src/shared/format";
import { collectProblems } from "../../../src/viewModel/problems";
import { FIXTURES as FIXTURES_ROOT, REPO_ROOT } from "../../support/paths";
import { assistantMessage, SessionBuilder } from "../../support/session-builder";

const SONNET = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };

const FIXTURES = path.join(FIXTURES_ROOT, "pi-1.6.0");
/** A backslash escape of ASCII punctuation (`escapeMarkdown`): removed to compare the shown text. */
const MD_ESCAPE = /\\([!-/:-@[-`{-~])/g;

function view(analysis: Analysis, margin = 10000, pinned = false) {
  return buildGaugeView({
    session: {
      file: analysis.session.filePath,
      analysis,
      pinned,
      updatedAt: Date.UTC(2026, 0, 1, 12, 0, 5),
      modifiedAt: Date.UTC(2026, 0, 1, 12, 0, 0),
    },
    margin,
    locale: "en-US",
  });
}

/** A session with one answer of `tokens` usage on anthropic/claude-sonnet-4-5 (window 200000). */
function sessionWith(tokens: number, extra: object[] = []): SessionFile {
  const b = new SessionBuilder({ id: "s", cwd: "/w" })
    .model("m", "anthropic", "claude-sonnet-4-5")
    .user("u", [{ type: "text", text: "hi" }])
    .assistant("a", { text: "ok", ...SONNET, usage: { input: tokens - 10, output: 10 } })
    .append(...extra);
  return SessionFile.fromBytes(b.jsonl());
}

function tempAgent(settings?: object): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-unit-agent-"));
  if (settings) fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
  return dir;
}

describe("gauge text on the shared fixtures", () => {
  const cases: [string, string][] = [
    ["long", "π 26.4% · 4.2k/16k"],
    ["tree", "π 2.0% · 4.0k/200k"],
    ["split", "π 33.6% · 5.4k/16k"],
    ["overflow", "π 32.7% · 5.2k/16k"],
  ];
  for (const [name, text] of cases) {
    it(`${name}.jsonl → ${text}`, async () => {
      const analysis = await analyzeSession(path.join(FIXTURES, `${name}.jsonl`), {
        agentDir: path.join(FIXTURES, `${name}.agent`),
      });
      const oracle = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.oracle.json`), "utf8"));
      const v = view(analysis);
      assert.equal(v.text, text);
      // the percent as pi's footer shows it (one decimal)
      assert.ok(v.text.startsWith(`π ${oracle.contextUsage.footer.split("/")[0]} · `), oracle.contextUsage.footer);
      assert.equal(v.state, "session");
      assert.equal(v.level, "normal");
      assert.equal(v.command, "piContext.openPanel");
      // the numbers are pi's
      assert.equal(analysis.inspect.contextTokens, oracle.contextUsage.tokens);
      assert.ok(
        v.tooltip
          .replace(MD_ESCAPE, "$1")
          .includes(
            `**${formatCount(oracle.contextUsage.tokens)}** of ${formatCount(oracle.contextUsage.contextWindow)} tokens`,
          ),
      );
      assert.ok(
        v.tooltip
          .replace(MD_ESCAPE, "$1")
          .includes(`| reserveTokens | ${formatCount(oracle.settings.compaction.reserveTokens)} — `),
      );
      assert.ok(
        v.tooltip
          .replace(MD_ESCAPE, "$1")
          .includes(`| keepRecentTokens | ${formatCount(oracle.settings.compaction.keepRecentTokens)} — `),
      );
    });
  }

  it("long.jsonl cut at its last compaction → pi's ? with our estimate", async () => {
    const lines = fs.readFileSync(path.join(FIXTURES, "long.jsonl"), "utf8").split("\n");
    const last = lines
      .map((l, i) => (l.includes('"type":"compaction"') ? i : -1))
      .filter((i) => i >= 0)
      .pop()!;
    const session = SessionFile.fromBytes(lines.slice(0, last + 1).join("\n") + "\n");
    const analysis = analyzeLoaded(session, { agentDir: path.join(FIXTURES, "long.agent") });
    assert.equal(analysis.inspect.footer, "?/16k (auto)");
    const v = view(analysis);
    assert.equal(v.text, "π ? · ≈3.9k/16k");
    assert.match(v.ariaLabel, /^Pi Context unknown since the last compaction, estimated 3,9\d\d of 16,000 tokens/);
  });
});

describe("where pi has no estimate (issue 43, kind 3)", () => {
  it("an edit pi's estimateTokens throws on: the gauge, its tooltip and the panel's gauge say pi fails, no number as pi's", () => {
    const t = "2026-01-01T00:00:03.000Z";
    const session = sessionWith(1234, [
      {
        type: "message",
        id: "u2",
        parentId: "a",
        timestamp: t,
        message: { role: "user", content: "more", timestamp: 3 },
      },
      {
        type: "context_edit",
        id: "e1",
        parentId: "u2",
        timestamp: t,
        targetId: "u2",
        replacement: { content: [null] },
      },
    ]);
    const analysis = analyzeLoaded(session, { agentDir: tempAgent() });
    const v = view(analysis);
    assert.match(v.text, /^\$\(error\) π pi fails · ≈\d+\/200k$/);
    const tooltip = v.tooltip.replace(MD_ESCAPE, "$1");
    assert.match(
      tooltip,
      /pi 1\.6\.0 cannot estimate this context: its estimateTokens throws on user message u2 \(line 5\): a block of the content is null \(from its context edit's replacement\)\. pi-context's own count: ≈\d+ tokens/,
    );
    assert.doesNotMatch(tooltip, /\*\*\d[\d,]*\*\* of 200,000 tokens/);
    assert.match(v.ariaLabel, /pi 1\.6\.0 cannot estimate this context/);
    const gauge = buildGauge(analysis.inspect);
    assert.match(gauge.estimateFailure ?? "", /^pi 1\.6\.0 cannot estimate this context: .* user message u2/);
  });
});

describe("gauge colour by distance to the real threshold", () => {
  const agent = tempAgent({ compaction: { reserveTokens: 50000 } }); // threshold 150000

  const at = (tokens: number, margin = 20000) => view(analyzeLoaded(sessionWith(tokens), { agentDir: agent }), margin);

  it("normal far below, warning within the margin, error only above the threshold (strict >)", () => {
    assert.equal(at(100000).level, "normal");
    assert.equal(at(129999).level, "normal");
    assert.equal(at(130000).level, "warning");
    assert.equal(at(150000).level, "warning");
    assert.equal(at(150001).level, "error");
    assert.equal(at(150001).text, "π 75.0% · 150k/200k");
    // one short exchange reported at 150,001 tokens: pi has nothing to summarize, so it does not compact
    assert.ok(
      at(150001)
        .tooltip.replace(MD_ESCAPE, "$1")
        .includes("over by 1: pi would auto-compact, but it finds nothing to summarize"),
    );
    assert.equal(
      autoCompactsWhen(),
      "pi auto-compacts at its next check (after the current answer or before the next request)",
    );
  });

  it("pi's fixed 70 %/90 % footer colours do not apply: 80 % is normal when the threshold is far", () => {
    const big = tempAgent({ compaction: { reserveTokens: 1000 } }); // threshold 199000
    const v = view(analyzeLoaded(sessionWith(160000), { agentDir: big }), 10000);
    assert.equal(v.text, "π 80.0% · 160k/200k");
    assert.equal(v.level, "normal");
  });

  it("caps the margin at a quarter of the limit (small windows are not always yellow)", () => {
    const analysis = analyzeLoaded(sessionWith(1000), { agentDir: agent });
    const limit = gaugeLimit(analysis.inspect, 1e9);
    assert.deepEqual(limit, { limit: 150000, kind: "threshold", margin: 37500 });
    assert.equal(gaugeLevel(analysis.inspect, 1e9), "normal");
  });

  it("auto-compaction disabled: measured against the window, marked in the text", () => {
    const off = tempAgent({ compaction: { enabled: false, reserveTokens: 50000 } });
    const v = view(analyzeLoaded(sessionWith(160000), { agentDir: off }), 20000);
    assert.equal(v.text, "π 80.0% · 160k/200k · auto off");
    assert.equal(v.level, "normal");
    assert.equal(view(analyzeLoaded(sessionWith(185000), { agentDir: off }), 20000).level, "warning");
    assert.equal(view(analyzeLoaded(sessionWith(200001), { agentDir: off }), 20000).level, "error");
    assert.ok(v.tooltip.replace(MD_ESCAPE, "$1").includes("**disabled**"));
    assert.ok(v.ariaLabel.includes("auto-compaction disabled"));
  });
});

describe("gauge states", () => {
  it("starting, no folder, no session", () => {
    assert.equal(buildGaugeView({ margin: 1 }).state, "starting");
    const noFolder = buildGaugeView({
      margin: 1,
      discovery: { phase: "ready", workspace: false, searchedDirs: [], sessionCount: 0 },
    });
    assert.equal(noFolder.text, "π no folder");
    assert.equal(noFolder.command, "piContext.selectSession");
    const none = buildGaugeView({
      margin: 1,
      discovery: { phase: "ready", workspace: true, searchedDirs: ["/a/--w--"], sessionCount: 0, agentDir: "/a" },
    });
    assert.equal(none.text, "π no session");
    assert.ok(none.tooltip.replace(MD_ESCAPE, "$1").includes("- /a/--w--"));
  });

  it("unknown model and window", () => {
    const agent = tempAgent();
    const session = SessionFile.fromBytes(
      new SessionBuilder({ id: "s", cwd: "/w" }).user("u", [{ type: "text", text: "x".repeat(400) }]).jsonl(),
    );
    const v = view(analyzeLoaded(session, { agentDir: agent }));
    assert.equal(v.text, "π 100/?");
    assert.ok(v.tooltip.replace(MD_ESCAPE, "$1").includes("| Model | unknown: no model in the session"));
    assert.ok(v.tooltip.replace(MD_ESCAPE, "$1").includes("| Window | unknown |"));
    assert.equal(v.level, "normal");
  });

  it("invalid settings: pi's message with file and key, numbers still shown", () => {
    const agent = tempAgent({ compaction: { reserveTokens: 1.5 } });
    const v = view(analyzeLoaded(sessionWith(50000), { agentDir: agent }));
    assert.equal(v.text, "$(warning) π 25.0% · 50.0k/200k");
    const file = path.join(agent, "settings.json");
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes(
          `- $(warning) **Invalid pi setting** — ${file} — Invalid compaction.reserveTokens setting: 1.5. Expected a non-negative safe integer. pi 1.6.0 throws this error when it reads the setting`,
        ),
      v.tooltip,
    );
    assert.ok(
      v.tooltip.replace(MD_ESCAPE, "$1").includes("**Problems** (1; listed in the panel and the log):"),
      v.tooltip,
    );
    // no contradiction: pi throws on an invalid compaction value (no default is used), so there is no threshold
    assert.ok(!v.tooltip.replace(MD_ESCAPE, "$1").includes("use pi's default"), v.tooltip);
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("pi stops with this error whenever it reads an invalid compaction setting"),
      v.tooltip,
    );
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("| Auto-compaction | threshold unknown — reserveTokens is invalid (see below) |"),
    );
  });

  it("an unreadable settings file: pi reads it as empty, so its values are pi's defaults", () => {
    const agent = tempAgent();
    fs.writeFileSync(path.join(agent, "settings.json"), "{ not json");
    const v = view(analyzeLoaded(sessionWith(50000), { agentDir: agent }));
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("pi ignores a settings file it cannot read: the numbers above use pi's defaults"),
      v.tooltip,
    );
    assert.ok(!v.tooltip.replace(MD_ESCAPE, "$1").includes("threshold unknown"), v.tooltip);
    assert.ok(!v.tooltip.replace(MD_ESCAPE, "$1").includes("pi stops with this error"), v.tooltip);
  });

  it("pinned, session name and malformed lines (escaped, never as markup)", () => {
    const agent = tempAgent();
    const base = sessionWith(2000, [
      {
        type: "session_info",
        id: "n",
        parentId: "a",
        timestamp: "2026-01-01T00:00:03.000Z",
        name: "[x](command:evil) *bold* $(zap)",
      },
    ]);
    const bytes = Buffer.concat([
      Buffer.from('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}\n{ broken\n'),
      Buffer.from(base.records.map((r) => base.readLineBytes(r).toString("utf8")).join("\n") + "\n"),
    ]);
    const session = SessionFile.fromBytes(bytes);
    const v = view(analyzeLoaded(session, { agentDir: agent }), 10000, true);
    assert.equal(v.text, "$(pinned) π 1.0% · 2.0k/200k");
    assert.ok(
      // `$(zap)` gets an escaped backslash: VS Code draws icons in the text Markdown leaves (trial 6)
      v.tooltip.startsWith("**Pi Context** — \\[x\\]\\(command\\:evil\\) \\*bold\\* \\\\\\$\\(zap\\) (pinned)"),
      v.tooltip.split("\n")[0],
    );
    assert.ok(!v.tooltip.includes("[x](command:evil)"));
    assert.ok(
      v.tooltip.replace(MD_ESCAPE, "$1").includes("**Problems** (1; listed in the panel and the log):"),
      v.tooltip,
    );
    assert.ok(
      v.tooltip.replace(MD_ESCAPE, "$1").includes("- $(warning) **Malformed line** — unparseable line 2 "),
      v.tooltip,
    );
    assert.ok(v.ariaLabel.endsWith("1 problem in the session file"), v.ariaLabel);
  });
});

describe("formatting", () => {
  it("percent, counts, markdown escaping", () => {
    assert.equal(formatPercent(0), "0.0%");
    assert.equal(formatPercent(0.04), "0.0%"); // pi's footer: toFixed(1)
    assert.equal(formatPercent(26.45), "26.4%");
    assert.equal(formatPercent(61.6), "61.6%");
    assert.equal(tokensText(1), "1 token");
    assert.equal(tokensText(0), "0 tokens");
    assert.equal(tokensText(1200, formatTokens), "1.2k tokens");
    assert.equal(tokensText(-1), "-1 token");
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(-1000), "-1,000");
    assert.equal(formatCount(999), "999");
    assert.equal(escapeMarkdown("a|b_c`d<e>&$(x)\nz\ry"), "a\\|b\\_c\\`d\\<e\\>\\&\\\\\\$\\(x\\) z y");
    assert.equal(escapeMarkdown("https://x.y www.z"), "https\\:\\/\\/x\\.y www\\.z");
  });
});

describe("WarningTracker", () => {
  it("notifies once per level on a live rise, re-arms on a drop or a compaction, never on first sight", () => {
    const t = new WarningTracker();
    assert.equal(t.update("f", "warning", null), undefined, "first sight");
    assert.equal(t.update("f", "warning", null), undefined);
    assert.equal(t.update("f", "error", null), "error");
    assert.equal(t.update("f", "error", null), undefined);
    assert.equal(t.update("f", "warning", null), undefined, "drop re-arms");
    assert.equal(t.update("f", "error", null), "error");
    assert.equal(t.update("f", "normal", "c1"), undefined, "compaction");
    assert.equal(t.update("f", "warning", "c1"), "warning");
    assert.equal(t.update("g", "error", null), undefined, "other session: first sight");
    assert.equal(t.update("g", "normal", null), undefined);
    assert.equal(t.update("g", "warning", null), "warning");
  });
});

const CASES = path.join(FIXTURES_ROOT, "cases");
const line = (o: object) => JSON.stringify(o);
const msg = (
  id: string,
  parentId: string | null,
  role: "user" | "assistant",
  text: string,
  ts = "2026-01-01T00:00:01.000Z",
) => ({
  type: "message",
  id,
  parentId,
  timestamp: ts,
  message:
    role === "user"
      ? { role, content: [{ type: "text", text }], timestamp: 1 }
      : { ...assistantMessage({ text, ...SONNET, usage: { input: 990, output: 10 } }), timestamp: 2 },
});

describe("gauge numbers near the threshold (one decimal below 100k)", () => {
  const agentFor = (reserve: number) => tempAgent({ compaction: { reserveTokens: reserve } });
  it("12,500 of a 16k window is 12.5k, not 13k; round windows stay short; 1M windows", () => {
    // a custom 16k model via models.json
    const agent = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-unit-agent-"));
    fs.writeFileSync(path.join(agent, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 4000 } }));
    fs.writeFileSync(
      path.join(agent, "models.json"),
      JSON.stringify({
        providers: {
          scripted: {
            baseUrl: "http://127.0.0.1:1/v1",
            api: "openai-completions",
            apiKey: "x",
            models: [
              { id: "small", contextWindow: 16000 },
              { id: "huge", contextWindow: 1000000 },
            ],
          },
        },
      }),
    );
    const session = (model: string, tokens: number) =>
      SessionFile.fromBytes(
        new SessionBuilder({ id: "s", cwd: "/w" })
          .model("m", "scripted", model)
          .append(msg("u", "m", "user", "hi"))
          .assistant("a", {
            text: "ok",
            ...SONNET,
            provider: "scripted",
            model,
            usage: { input: tokens - 10, output: 10 },
          })
          .jsonl(),
      );
    const v = view(analyzeLoaded(session("small", 12500), { agentDir: agent }));
    assert.equal(v.text, "π 78.1% · 12.5k/16k");
    assert.equal(v.level, "error", "12,500 > 16,000 − 4,000");
    assert.equal(view(analyzeLoaded(session("small", 11960), { agentDir: agent })).text, "π 74.8% · 12.0k/16k");
    assert.equal(view(analyzeLoaded(session("huge", 996000), { agentDir: agent })).text, "π 99.6% · 996k/1M");
    assert.ok(
      view(analyzeLoaded(session("small", 12500), { agentDir: agent }))
        .tooltip.replace(MD_ESCAPE, "$1")
        .includes("| Window | 16,000 — models.json: providers.scripted, model small |"),
    );
    // a partial price makes pi ignore the whole models.json: the window row blames the file
    const broken = JSON.parse(fs.readFileSync(path.join(agent, "models.json"), "utf8")) as {
      providers: { scripted: { models: { cost?: object }[] } };
    };
    broken.providers.scripted.models[0]!.cost = { input: 1 };
    fs.writeFileSync(path.join(agent, "models.json"), JSON.stringify(broken));
    const tip = view(analyzeLoaded(session("small", 12500), { agentDir: agent })).tooltip.replace(MD_ESCAPE, "$1");
    assert.ok(tip.includes("and models.json is invalid: pi ignores the whole file (see Problems)"), tip);
    void agentFor;
  });
});

describe("tooltip problems", () => {
  it("a torn final line (case 09) is listed, with what pi does about it", async () => {
    const analysis = await analyzeSession(path.join(CASES, "09-truncated-final-line", "session.jsonl"), {
      agentDir: tempAgent(),
    });
    const v = view(analysis);
    // the torn line and the demo model's unknown window
    assert.ok(
      v.tooltip.replace(MD_ESCAPE, "$1").includes("**Problems** (2; listed in the panel and the log):"),
      v.tooltip,
    );
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("- $(warning) **Incomplete last line** — truncated final record at line 5 (164 bytes)"),
      v.tooltip,
    );
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("pi skips the fragment; when it next opens the session it first appends a newline"),
      v.tooltip,
    );
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("**Session health:** $(warning) 2 warnings · [Check Session Health…](command:piContext.checkHealth)"),
      v.tooltip,
    );
  });

  it("concurrent writers (case 11) are listed", async () => {
    const analysis = await analyzeSession(path.join(CASES, "11-concurrent-writers-interleaved", "session.jsonl"), {
      agentDir: tempAgent(),
    });
    assert.ok(
      view(analysis).tooltip.replace(MD_ESCAPE, "$1").includes("**Concurrent writers** — entries of sibling branches"),
      view(analysis).tooltip,
    );
  });

  it("every kind, errors first, capped with … and N more; unknown types as info; settings problems too", () => {
    const agent = tempAgent({ compaction: { reserveTokens: "lots" } });
    const bytes =
      [
        line({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
        line(msg("u1", null, "user", "hello")),
        "{ this is not json",
        line(msg("a1", "u1", "assistant", "hi")),
        line(msg("x1", "nowhere", "user", "orphan")),
        line(msg("c1", "c2", "user", "loop 1")),
        line(msg("c2", "c1", "user", "loop 2")),
        line(msg("a1", "u1", "assistant", "again")),
        line({ type: "future_entry", id: "f1", parentId: "a1", timestamp: "2026-01-01T00:00:05.000Z" }),
        line(msg("u2", "a1", "user", "last")),
      ].join("\n") +
      "\n" +
      '{"type":"message","id":"torn"';
    const session = SessionFile.fromBytes(bytes);
    const analysis = analyzeLoaded(session, { agentDir: agent });
    const problems = collectProblems(analysis, session.filePath);
    const codes = problems.map((p) => p.code);
    for (const c of [
      "malformed-line",
      "missing-parent",
      "parent-cycle",
      "duplicate-id",
      "unknown-type",
      "truncated-final-line",
      "invalid-setting",
    ])
      assert.ok(codes.includes(c), `${c} in ${codes.join(", ")}`);
    // errors first, info last
    const sev = problems.map((p) => p.severity);
    assert.deepEqual(
      sev,
      [...sev].sort((a, b) => ["error", "warning", "info"].indexOf(a) - ["error", "warning", "info"].indexOf(b)),
    );
    assert.equal(problems.find((p) => p.code === "unknown-type")!.severity, "info");
    assert.deepEqual(
      problems.map((p) => p.id),
      problems.map((_, i) => `p${i}`),
    );
    assert.equal(problems.find((p) => p.code === "malformed-line")!.line, 3);
    const v = view(analysis);
    assert.ok(problems.length > TOOLTIP_PROBLEM_LIMIT, `${problems.length} problems`);
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes(`**Problems** (${problems.length}; listed in the panel and the log):`),
      v.tooltip,
    );
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes(
          `- … and ${problems.length - TOOLTIP_PROBLEM_LIMIT} more ([open the panel](command:piContext.openPanel))`,
        ),
      v.tooltip,
    );
    assert.equal(
      v.tooltip.split("\n").filter((l) => /^- \$\((error|warning|info)\)/.test(l)).length,
      TOOLTIP_PROBLEM_LIMIT,
    );
    assert.ok(v.tooltip.replace(MD_ESCAPE, "$1").includes("- $(info) **Missing parent**"), v.tooltip);
    assert.equal(problems.find((p) => p.code === "parent-cycle")!.severity, "warning", "off the current branch");
    // the cap
    assert.equal(problemLines(problems, 100).length, problems.length);
  });
});

describe("tooltip wording", () => {
  it("Updated is when the file was last written, in the one date-time format; entries pluralised; Window without nested paths", async () => {
    const analysis = await analyzeSession(path.join(FIXTURES, "long.jsonl"), {
      agentDir: path.join(FIXTURES, "long.agent"),
    });
    const v = view(analysis);
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes(`| Updated | ${formatDateTime(Date.UTC(2026, 0, 1, 12, 0, 0), "en-US")} (last written) |`),
      v.tooltip,
    );
    assert.ok(
      !v.tooltip.replace(MD_ESCAPE, "$1").includes(formatDateTime(Date.UTC(2026, 0, 1, 12, 0, 5), "en-US")),
      "not the read time",
    );
    assert.ok(/\| Session \| .* — 162 entries \|/.test(v.tooltip), v.tooltip);
    assert.ok(
      v.tooltip
        .replace(MD_ESCAPE, "$1")
        .includes("| Window | 16,000 — models.json: providers.scripted, model scripted-small |"),
      v.tooltip,
    );
    assert.ok(!/models\.json \(/.test(v.tooltip), v.tooltip);
    assert.ok(
      v.tooltip.replace(MD_ESCAPE, "$1").includes("command:piContext.compact") &&
        v.tooltip.replace(MD_ESCAPE, "$1").includes("$(archive) Compact…"),
      "the Compact icon is not the ✕-like fold",
    );
    const one = view(
      analyzeLoaded(
        SessionFile.fromBytes(
          line({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }) +
            "\n" +
            line(msg("u", null, "user", "x")) +
            "\n",
        ),
        { agentDir: tempAgent() },
      ),
    );
    assert.ok(one.tooltip.replace(MD_ESCAPE, "$1").includes(" — 1 entry |"), one.tooltip);
  });

  it("window sources in words", () => {
    assert.equal(
      windowSourceText({ source: "models-json", where: "providers.scripted, model scripted-small" }),
      "models.json: providers.scripted, model scripted-small",
    );
    assert.equal(
      windowSourceText({ source: "models-json-override", where: "providers.p.modelOverrides.m.contextWindow" }),
      "models.json: providers.p.modelOverrides.m.contextWindow",
    );
    assert.equal(
      windowSourceText({ source: "catalog", where: "anthropic/claude-sonnet-4-5" }),
      "pi's built-in model catalog (anthropic/claude-sonnet-4-5)",
    );
    assert.equal(windowSourceText({ source: "live", detail: "pi 1.6.0, pid 42" }), "the running pi (pi 1.6.0, pid 42)");
  });

  it("the empty state: one explanation for gauge and Context view, the tree's own for the tree (trial 5); product name Pi Context", () => {
    assert.equal(emptyStateMessage(undefined), "Looking for pi sessions…");
    const noFolder = { phase: "ready" as const, workspace: false, searchedDirs: [], sessionCount: 0 };
    const folderText = emptyStateMessage(noFolder);
    const sessionText = emptyStateMessage({ ...noFolder, workspace: true });
    assert.match(folderText, /^No folder is open\. The context gauge follows the pi session of the folder pi ran in/);
    assert.match(
      sessionText,
      /^No pi session for this workspace yet\. Once pi writes one here, the gauge shows how full/,
    );
    // the Pi Session tree's welcome (package.nls.json): the same situations, said for the tree, with the command links
    const nls = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.nls.json"), "utf8"));
    const tree = {
      folder: String(nls["viewsWelcome.sessionTree.noFolder"]),
      session: String(nls["viewsWelcome.sessionTree.noSession"]),
    };
    assert.match(tree.folder, /^No folder is open\. The session tree shows the pi sessions of the folder pi ran in/);
    assert.match(
      tree.session,
      /^No pi session for this workspace yet\. Once pi writes one here, this tree shows its entries/,
    );
    assert.ok(!tree.folder.startsWith(folderText) && !tree.session.startsWith(sessionText), "not the same sentence");
    assert.match(tree.folder, /\[Select Session…\]\(command:piContext\.selectSession\)/);
    assert.match(tree.session, /\[Select Session…\]\(command:piContext\.selectSession\)/);
    const g = buildGaugeView({ margin: 1, discovery: noFolder });
    assert.ok(g.tooltip.startsWith("**Pi Context** — no folder is open"), g.tooltip);
    assert.equal(g.ariaLabel, "Pi Context: no folder open");
  });
});
