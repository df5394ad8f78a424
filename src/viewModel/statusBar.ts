/**
 * The status-bar gauge as plain data, without `vscode`: text (`π 62% · 124k/200k`), colour level
 * by distance to pi's real auto-compaction threshold (`contextWindow − reserveTokens`), the
 * Markdown tooltip and the screen-reader label. `statusBar.ts` only renders this. The numbers are
 * `InspectResult`'s (`core/rules/inspect.ts`): what `pi-context inspect --json` prints for the file.
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import { formatCount, PRODUCT_NAME, tokensText } from "../shared/format";
import { themeIconMarkdownText } from "../shared/untrusted";
import * as l10n from "@vscode/l10n";
import type { Analysis } from "../core/rules/analyze";
import type { InspectResult, SourcedNumber } from "../core/rules/inspect";
import { piText, piWarnings, windowSourceText } from "./sourceText";
import { gaugeLimit, levelFor, nothingToCompact, type GaugeColors, type GaugeLevel, type GaugeLimit } from "./gauge";
import { buildUsageModel, usageRows } from "./usage";
import { fixedContextLine } from "./fixedContext";
import type { ValueSource } from "../core/rules/settings";
import type { ProblemModel } from "../shared/protocol";
import {
  autoCompactsText,
  COMPACT_ICON,
  formatDateTime,
  formatGaugeTokens,
  formatWindowTokens,
  pluralText,
} from "../shared/format";
import { checkHealth } from "../core/health/doctor";
import type { HealthReport } from "../core/health/types";
import { healthBadge } from "./health";
import { problemsOf } from "./problems";

/** Problems listed in the tooltip before "… and N more". */
export const TOOLTIP_PROBLEM_LIMIT = 6;
/** A problem's message in the tooltip is cut here (the panel and the log show it whole). */
export const TOOLTIP_MESSAGE_MAX = 240;

/** Which state the gauge is in. */
export type GaugeState = "starting" | "no-workspace" | "no-session" | "session";

/** Commands linked from the tooltip (the only ones the trusted Markdown may run). */
export const TOOLTIP_COMMANDS = [
  "piContext.compact",
  "piContext.compactAt",
  "piContext.checkHealth",
  "piContext.openPanel",
  "piContext.selectSession",
  "piContext.followLatest",
  "piContext.showLog",
  "piContext.switchLiveSession",
] as const;

/** What the gauge is computed from. */
export interface GaugeInput {
  session?: {
    file: string;
    analysis: Analysis;
    pinned: boolean;
    /** The display label (pi's rule); default the session name, else "unnamed session". */
    label?: string;
    /** The other live sessions of its folder (the gauge says "2 live" and offers a one-click switch). */
    liveSessions?: { file: string; label: string }[];
    /** When pi-context last read the file (ms since epoch). */
    updatedAt: number;
    /** When the file was last written (its mtime, ms since epoch); default `analysis.session.mtimeMs`. */
    modifiedAt?: number;
    /** A live bridge serves this session: `analysis.inspect` holds the running pi's numbers (see `liveBridge/liveUsage.ts`). */
    live?: { pid: number; piVersion: string; bridgeVersion: string; activity?: string };
  };
  discovery?: {
    phase: "starting" | "ready";
    workspace: boolean;
    searchedDirs: string[];
    sessionCount: number;
    agentDir?: string;
  };
  /** `piContext.warning.margin`: tokens before the limit where the warning colour starts. */
  margin: number;
  /** `piContext.gauge.colors`: by pi's threshold (default) or pi's footer rule (> 70 % / > 90 %). */
  colors?: GaugeColors;
  /** The UI language for dates (`vscode.env.language`); undefined = the runtime's. */
  locale?: string;
}

/** The rendered gauge. */
export interface GaugeView {
  state: GaugeState;
  text: string;
  level: GaugeLevel;
  /** Markdown for a trusted `MarkdownString` (links only to {@link TOOLTIP_COMMANDS}). */
  tooltip: string;
  /** Screen-reader label (numbers written out). */
  ariaLabel: string;
  /** Command run by clicking the item. */
  command: "piContext.openPanel" | "piContext.selectSession";
}

/** Percent as pi's footer shows it (`contextPercentValue.toFixed(1)`): one decimal, `26.4%`. */
export function formatPercent(percent: number): string {
  return `${percent.toFixed(1)}%`;
}

/**
 * Escape untrusted text (session names, paths, messages) for the tooltip's inline Markdown and table
 * cells (theme icons on): ASCII punctuation escaped (no markup, link, pipe or `$(icon)`), line breaks a space.
 */
export const escapeMarkdown = themeIconMarkdownText;

function valueSourceText(source: ValueSource, file: string | undefined, key: string): string {
  const where = file ? ` (${escapeMarkdown(file)})` : "";
  switch (source) {
    case "default":
      return l10n.t("pi's default");
    case "global":
      return l10n.t("global settings{0}", where);
    case "project":
      return l10n.t("project settings{0}", where);
    case "override":
      return `${escapeMarkdown(key)}${where}`;
  }
}

function sourcedRow(name: string, s: SourcedNumber): string {
  if (s.value === null) return `| ${name} | ${l10n.t("**invalid** — {0}", valueSourceText(s.source, s.file, s.key))} |`;
  return `| ${name} | ${formatCount(s.value)} — ${valueSourceText(s.source, s.file, s.key)} |`;
}

/** The tooltip's command links (their titles localised; built per call, after the host set the bundle). */
function linksSession(): string {
  return `[$(${COMPACT_ICON}) ${l10n.t("Compact…")}](command:piContext.compact) · [$(dashboard) ${l10n.t("Compact At…")}](command:piContext.compactAt) · [$(graph) ${l10n.t("Open Context Panel")}](command:piContext.openPanel) · ${linksNone()}`;
}
function linksNone(): string {
  return `[$(list-selection) ${l10n.t("Select Session…")}](command:piContext.selectSession) · [$(output) ${l10n.t("Log")}](command:piContext.showLog)`;
}

/**
 * An empty state of the gauge tooltip and the Context view: still looking, no folder open, or no session
 * for the folders. The Pi Session tree says the same in its `viewsWelcome` (package.nls.json).
 */
export function emptyStateMessage(discovery: GaugeInput["discovery"] | undefined): string {
  if (!discovery || discovery.phase === "starting") return l10n.t("Looking for pi sessions…");
  if (!discovery.workspace)
    return l10n.t(
      "No folder is open. The context gauge follows the pi session of the folder pi ran in: open that folder, or pick any session with “Pi Context: Select Session…”.",
    );
  return l10n.t(
    "No pi session for this workspace yet. Once pi writes one here, the gauge shows how full its context window is and what fills it. Start pi in a workspace folder, or pick any session with “Pi Context: Select Session…”.",
  );
}

const SEVERITY_ICON = { error: "$(error)", warning: "$(warning)", info: "$(info)" } as const;

/**
 * Tooltip lines for problems (at most `limit`, then `… and N more`), each
 * `- $(icon) **Title** — message` (escaped; the message names the line).
 */
export function problemLines(problems: readonly ProblemModel[], limit = TOOLTIP_PROBLEM_LIMIT): string[] {
  const lines = problems.slice(0, limit).map((p) => {
    const where = p.source === "settings" && p.file ? `${escapeMarkdown(p.file)} — ` : "";
    const message =
      p.message.length > TOOLTIP_MESSAGE_MAX ? `${p.message.slice(0, TOOLTIP_MESSAGE_MAX - 1).trimEnd()}…` : p.message;
    return `- ${SEVERITY_ICON[p.severity]} **${escapeMarkdown(p.title)}** — ${where}${escapeMarkdown(message)}`;
  });
  if (problems.length > limit)
    lines.push(
      `- ${l10n.t("… and {0} more ([open the panel]({1}))", problems.length - limit, "command:piContext.openPanel")}`,
    );
  return lines;
}

/** One row of the tooltip's table: `| name | value |` (value already escaped Markdown). */
function row(name: string, value: string): string {
  return `| ${name} | ${value} |`;
}
const CONTEXT = () => l10n.t("Context");
const AUTO = () => l10n.t("Auto-compaction");

/** The Window row for an unknown window: not in the catalog nor models.json, or models.json invalid (pi ignores it). */
function unknownWindowText(
  model: { provider: string; modelId: string },
  catalog: string | undefined,
  modelsInvalid: boolean,
): string {
  const name = escapeMarkdown(`${model.provider}/${model.modelId}`);
  const where = escapeMarkdown(catalog ?? "pi's catalog");
  return modelsInvalid
    ? l10n.t(
        "unknown — {0} is not in {1}, and models.json is invalid: pi ignores the whole file (see Problems)",
        name,
        where,
      )
    : l10n.t("unknown — {0} is not in {1} or models.json", name, where);
}

/** The gauge without a session: still looking, no folder open, or no session of the workspace yet. */
function emptyGaugeView(d: GaugeInput["discovery"]): GaugeView {
  if (!d || d.phase === "starting") {
    return {
      state: "starting",
      text: "π …",
      level: "normal",
      tooltip: `**${PRODUCT_NAME}** — ${l10n.t("looking for pi sessions…")}`,
      ariaLabel: `${PRODUCT_NAME}: ${l10n.t("looking for sessions")}`,
      command: "piContext.selectSession",
    };
  }
  if (!d.workspace) {
    return {
      state: "no-workspace",
      text: `π ${l10n.t("no folder")}`,
      level: "normal",
      tooltip: [
        `**${PRODUCT_NAME}** — ${l10n.t("no folder is open")}`,
        "",
        l10n.t(
          "pi sessions belong to the folder pi ran in (the session header's `cwd`). Open that folder, or pick any session (each listed with its project folder):",
        ),
        "",
        linksNone(),
      ].join("\n"),
      ariaLabel: `${PRODUCT_NAME}: ${l10n.t("no folder open")}`,
      command: "piContext.selectSession",
    };
  }
  const dirs = d.searchedDirs.map((x) => `- ${escapeMarkdown(x)}`);
  return {
    state: "no-session",
    text: `π ${l10n.t("no session")}`,
    level: "normal",
    tooltip: [
      `**${PRODUCT_NAME}** — ${l10n.t("no pi session for this workspace yet")}`,
      "",
      l10n.t("Sessions appear here as soon as pi writes one (matched by the `cwd` in the session header). Looked in:"),
      "",
      ...dirs,
      "",
      d.agentDir
        ? l10n.t(
            "Agent dir: {0} (setting `piContext.agentDir`, else `PI_CODING_AGENT_DIR`, else `~/.pi/agent`)",
            escapeMarkdown(d.agentDir),
          )
        : "",
      "",
      linksNone(),
    ].join("\n"),
    ariaLabel: `${PRODUCT_NAME}: ${l10n.t("no session for this workspace")}`,
    command: "piContext.selectSession",
  };
}

/** What the parts of one session's gauge share. */
interface SessionGauge {
  input: GaugeInput;
  s: NonNullable<GaugeInput["session"]>;
  analysis: Analysis;
  inspect: InspectResult;
  /** The context window in tokens; null when unknown or not positive. */
  window: number | null;
  tokens: number;
  colors: GaugeColors;
  level: GaugeLevel;
  limit: GaugeLimit | null;
  health: HealthReport;
  /** The session's display label (pi's rule). */
  name: string;
  /** The model of the session's branch, else of pi's settings defaults. */
  model: { provider: string; modelId: string } | null;
}

/** Build the gauge for the current state (pure). */
export function buildGaugeView(input: GaugeInput): GaugeView {
  const s = input.session;
  if (!s) return emptyGaugeView(input.discovery);
  const analysis = s.analysis;
  const inspect = analysis.inspect;
  const colors = input.colors ?? "threshold";
  const g: SessionGauge = {
    input,
    s,
    analysis,
    inspect,
    window: inspect.contextWindow.value && inspect.contextWindow.value > 0 ? inspect.contextWindow.value : null,
    tokens: inspect.contextTokens,
    colors,
    level: levelFor(inspect, input.margin, colors),
    limit: gaugeLimit(inspect, input.margin),
    health: checkHealth(analysis),
    name: s.label ?? inspect.sessionName ?? l10n.t("unnamed session"),
    model:
      inspect.model ??
      (analysis.selection ? { provider: analysis.selection.provider, modelId: analysis.selection.modelId } : null),
  };
  const all = problemsOf(g.health, s.file);
  return {
    state: "session",
    text: gaugeText(g),
    level: g.level,
    tooltip: [...tooltipHead(g), ...tooltipRows(g), "", ...tooltipNotes(g, all)].join("\n"),
    ariaLabel: gaugeAriaLabel(g, all).join(", "),
    command: "piContext.openPanel",
  };
}

/** The item's text: percent (or why there is none) and tokens, then flags (auto off, live, pinned, problems). */
function gaugeText({ s, inspect, window, tokens, health, analysis }: SessionGauge): string {
  let text: string;
  if (inspect.estimateFailure)
    text = `π ${l10n.t("pi fails")} · ≈${formatGaugeTokens(tokens)}/${window ? formatWindowTokens(window) : "?"}`;
  else if (!window) text = `π ${formatGaugeTokens(tokens)}/?`;
  else if (!inspect.usageKnown) text = `π ? · ≈${formatGaugeTokens(tokens)}/${formatWindowTokens(window)}`;
  else text = `π ${formatPercent(inspect.percent ?? 0)} · ${formatGaugeTokens(tokens)}/${formatWindowTokens(window)}`;
  if (!inspect.compactionEnabled.value) text += ` · ${l10n.t("auto off")}`;
  if (s.live) text += ` · ${l10n.t("live")}`;
  const others = s.liveSessions ?? [];
  if (others.length > 0) text += ` · ${l10n.t("{0} live", others.length + 1)}`;
  if (health.errors > 0) text = `$(error) ${text}`;
  else if (inspect.settingsProblems.length > 0 || analysis.modelsError) text = `$(warning) ${text}`;
  if (s.pinned) text = `$(pinned) ${text}`;
  return text;
}

/** The tooltip's title line, then the switch links to the folder's other live sessions. */
function tooltipHead({ s, name }: SessionGauge): string[] {
  const lines = [
    `**${PRODUCT_NAME}** — ${escapeMarkdown(name)}${s.pinned ? ` ${l10n.t("(pinned)")}` : ""}${s.live ? ` · ${l10n.t("**live** from pi {0} (pid {1})", escapeMarkdown(s.live.piVersion), s.live.pid)}` : ""}`,
    "",
  ];
  const others = s.liveSessions ?? [];
  if (others.length > 0) {
    lines.push(
      l10n.t(
        "{0} live sessions in this folder (each open in a running pi); this one stays shown while it is live:",
        others.length + 1,
      ),
      "",
      ...others
        .slice(0, 5)
        .map(
          (o) =>
            `- [$(arrow-swap) ${l10n.t("Switch to {0}", escapeMarkdown(o.label))}](command:piContext.switchLiveSession?${encodeURIComponent(JSON.stringify([o.file]))})`,
        ),
      "",
    );
  }
  return lines;
}

/** The tooltip's table: the numbers and where each comes from. */
function tooltipRows(g: SessionGauge): string[] {
  const { s, inspect, analysis, tokens, input } = g;
  const rows: string[] = ["| | |", "|---|---|", contextRow(g), ...modelRows(g)];
  rows.push(row("pi", escapeMarkdown(piText(inspect.pi, s.live))));
  rows.push(computedRow(inspect));
  // what every request carries before the conversation (pi's system message), largest parts first
  const fixed = inspect.fixedContext ? fixedContextLine(inspect.fixedContext, tokens) : undefined;
  if (fixed) rows.push(row(l10n.t("Fixed part"), escapeMarkdown(fixed)));
  rows.push(autoCompactionRow(g));
  rows.push(sourcedRow("reserveTokens", inspect.reserveTokens));
  rows.push(sourcedRow("keepRecentTokens", inspect.keepRecentTokens));
  for (const [label, text] of usageRows(buildUsageModel(inspect, analysis.model?.reasoning)))
    rows.push(`| ${label} | ${escapeMarkdown(text)} |`);
  if (s.live) rows.push(liveRow(s.live));
  rows.push(
    row(
      l10n.t("Session"),
      // by its name (pi's label), as every surface; the file is named at the end of the tooltip
      `${escapeMarkdown(`“${g.name}”`)} — ${pluralText(inspect.entryCount, l10n.t("{0} entry"), l10n.t("{0} entries"))}`,
    ),
  );
  const modifiedAt = s.modifiedAt ?? analysis.session.mtimeMs;
  if (modifiedAt > 0)
    rows.push(
      row(l10n.t("Updated"), l10n.t("{0} (last written)", escapeMarkdown(formatDateTime(modifiedAt, input.locale)))),
    );
  return rows;
}

function contextRow({ inspect, window, tokens }: SessionGauge): string {
  const failure = inspect.estimateFailure;
  const failureText = failure && escapeMarkdown(estimateFailureText(failure));
  if (failureText)
    return row(CONTEXT(), l10n.t("{0}. pi-context's own count: ≈{1} tokens", failureText, formatCount(tokens)));
  if (!window) return row(CONTEXT(), l10n.t("**{0}** tokens; context window unknown", formatCount(tokens)));
  const pct = inspect.percent ?? 0;
  if (inspect.usageKnown)
    return row(
      CONTEXT(),
      l10n.t("**{0}** of {1} tokens ({2})", formatCount(tokens), formatCount(window), `${pct.toFixed(1)}%`),
    );
  return row(
    CONTEXT(),
    l10n.t(
      "pi shows **?** (no answer since the last compaction); our estimate: ≈{0} of {1} tokens (≈{2})",
      formatCount(tokens),
      formatCount(window),
      `${pct.toFixed(1)}%`,
    ),
  );
}

/** The Model row (and where it comes from) and the Window row. */
function modelRows({ inspect, analysis, model, window }: SessionGauge): string[] {
  const rows: string[] = [];
  if (model) {
    const from =
      analysis.selection?.source === "settings-default"
        ? l10n.t("settings `defaultProvider`/`defaultModel`")
        : l10n.t("the session's branch");
    rows.push(
      row(
        l10n.t("Model"),
        `${l10n.t("{0} (from {1})", escapeMarkdown(`${model.provider}/${model.modelId}`), from)}${analysis.model?.reasoning === false ? "" : `, ${l10n.t("thinking {0}", escapeMarkdown(inspect.thinkingLevel || "off"))}`}`,
      ),
    );
  } else {
    rows.push(
      row(
        l10n.t("Model"),
        l10n.t("unknown: no model in the session and no `defaultProvider`/`defaultModel` in pi's settings"),
      ),
    );
  }
  rows.push(
    window
      ? row(l10n.t("Window"), `${formatCount(window)} — ${escapeMarkdown(windowSourceText(inspect.contextWindow))}`)
      : row(
          l10n.t("Window"),
          model
            ? unknownWindowText(model, inspect.contextWindow.catalog, Boolean(analysis.modelsError))
            : l10n.t("unknown"),
        ),
  );
  return rows;
}

/** How the context number is computed: last usage + trailing estimate, or an estimate only (and why). */
function computedRow(inspect: InspectResult): string {
  const est = inspect.estimate;
  if (est.method === "usage+estimate")
    return row(
      l10n.t("Computed"),
      l10n.t(
        "usage of the last answer {0} + estimate {1} for what came after (chars/4)",
        formatCount(est.usageTokens),
        formatCount(est.trailingTokens),
      ),
    );
  return row(
    l10n.t("Computed"),
    inspect.usageKnown
      ? l10n.t("estimate only (chars/4 over the context): no answer with usage yet")
      : l10n.t("estimate only (chars/4 over the context): usage before the last compaction no longer applies"),
  );
}

/** When pi auto-compacts: at its threshold (and how far off), unknown (why), or disabled (where). */
function autoCompactionRow({ inspect, window }: SessionGauge): string {
  if (!inspect.compactionEnabled.value)
    return row(
      AUTO(),
      l10n.t(
        "**disabled** — `compaction.enabled: false` in {0}; the limit is the window itself",
        valueSourceText(inspect.compactionEnabled.source, inspect.compactionEnabled.file, "compaction.enabled"),
      ),
    );
  if (inspect.threshold !== null && inspect.tokensUntilCompaction !== null) {
    const until = inspect.tokensUntilCompaction;
    const when =
      until >= 0
        ? l10n.t("{0} to go", tokensText(until))
        : l10n.t("over by {0}: {1}", formatCount(-until), autoCompactsText(nothingToCompact(inspect)));
    return row(AUTO(), l10n.t("at {0} tokens (window − reserveTokens); {1}", formatCount(inspect.threshold), when));
  }
  return row(
    AUTO(),
    window
      ? l10n.t("threshold unknown — reserveTokens is invalid (see below)")
      : l10n.t("threshold unknown — the context window is unknown"),
  );
}

function liveRow(live: NonNullable<NonNullable<GaugeInput["session"]>["live"]>): string {
  return row(
    l10n.t("Live"),
    live.activity && live.activity !== "idle"
      ? l10n.t(
          "the running pi (pid {0}, pi {1}, bridge {2}) reports these numbers; pi is {3}; Compact and Switch run in that pi",
          live.pid,
          escapeMarkdown(live.piVersion),
          escapeMarkdown(live.bridgeVersion),
          escapeMarkdown(live.activity),
        )
      : l10n.t(
          "the running pi (pid {0}, pi {1}, bridge {2}) reports these numbers; Compact and Switch run in that pi",
          live.pid,
          escapeMarkdown(live.piVersion),
          escapeMarkdown(live.bridgeVersion),
        ),
  );
}

/** Below the table: pi's warnings, the colour level's reason, health and problems, the file and the links. */
function tooltipNotes({ s, inspect, colors, level, limit, health }: SessionGauge, all: ProblemModel[]): string[] {
  const lines: string[] = [];
  for (const warning of piWarnings(inspect.pi)) lines.push(`$(warning) ${escapeMarkdown(warning)}`, "");
  if (colors === "piFooter" && level !== "normal") {
    lines.push(
      `${level === "error" ? "$(error)" : "$(warning)"} ${l10n.t("Above {0} % of the context window (pi's footer colours, setting `piContext.gauge.colors`).", level === "error" ? 90 : 70)}`,
      "",
    );
  } else if (limit && level !== "normal") {
    lines.push(
      level === "error"
        ? `$(error) ${limit.kind === "threshold" ? l10n.t("Above the auto-compaction threshold.") : l10n.t("Above the context window.")}`
        : `$(warning) ${
            limit.kind === "threshold"
              ? l10n.t("Within {0} tokens of the auto-compaction threshold.", formatCount(limit.margin))
              : l10n.t("Within {0} tokens of the context window.", formatCount(limit.margin))
          }`,
      "",
    );
  }
  lines.push(healthBadge(health), "");
  if (all.length > 0) lines.push(...problemSection(inspect, all));
  lines.push(l10n.t("File: {0}", escapeMarkdown(s.file)), "", linksSession());
  return lines;
}

/** The problems list, then what pi does with a settings file it cannot read or an invalid compaction value. */
function problemSection(inspect: InspectResult, all: ProblemModel[]): string[] {
  const problems = inspect.settingsProblems;
  const lines = [l10n.t("**Problems** ({0}; listed in the panel and the log):", all.length), "", ...problemLines(all)];
  // settings-manager.js: an unreadable file is read as {} (defaults); an invalid compaction value throws
  if (problems.some((p) => p.key === undefined && p.scope !== "trust"))
    lines.push(
      "",
      l10n.t("pi ignores a settings file it cannot read: the numbers above use pi's defaults for its values."),
    );
  if (problems.some((p) => p.key?.startsWith("compaction.")))
    lines.push(
      "",
      l10n.t(
        "pi stops with this error whenever it reads an invalid compaction setting (auto-compaction and /compact fail until it is fixed), so there is no threshold.",
      ),
    );
  lines.push("");
  return lines;
}

/** The screen-reader label's parts (numbers written out). */
function gaugeAriaLabel({ s, inspect, window, tokens, level, health }: SessionGauge, all: ProblemModel[]): string[] {
  const aria: string[] = [];
  if (s.live) aria.push(l10n.t("live from the running pi"));
  if (inspect.estimateFailure) aria.push(estimateFailureText(inspect.estimateFailure));
  else if (window) {
    if (inspect.usageKnown)
      aria.push(
        l10n.t(
          "{0} {1}, {2} of {3} tokens",
          PRODUCT_NAME,
          formatPercent(inspect.percent ?? 0).replace("%", " percent"),
          formatCount(tokens),
          formatCount(window),
        ),
      );
    else
      aria.push(
        l10n.t(
          "{0} unknown since the last compaction, estimated {1} of {2} tokens",
          PRODUCT_NAME,
          formatCount(tokens),
          formatCount(window),
        ),
      );
  } else aria.push(l10n.t("{0} {1} tokens, context window unknown", PRODUCT_NAME, formatCount(tokens)));
  if (!inspect.compactionEnabled.value) aria.push(l10n.t("auto-compaction disabled"));
  else if (inspect.tokensUntilCompaction !== null)
    aria.push(
      inspect.tokensUntilCompaction >= 0
        ? l10n.t("{0} until auto-compaction", tokensText(inspect.tokensUntilCompaction))
        : l10n.t("above the auto-compaction threshold"),
    );
  if (level === "warning") aria.push("warning");
  if (inspect.settingsProblems.length > 0) aria.push(l10n.t("invalid pi settings"));
  if (health.errors > 0)
    aria.push(l10n.t("session health: {0}", pluralText(health.errors, l10n.t("{0} error"), l10n.t("{0} errors"))));
  if (all.some((p) => p.source === "session" && p.severity !== "info"))
    aria.push(
      pluralText(
        all.filter((p) => p.source === "session" && p.severity !== "info").length,
        l10n.t("{0} problem"),
        l10n.t("{0} problems"),
      ) + l10n.t(" in the session file"),
    );
  return aria;
}

/**
 * Decides when to notify about the warning margin / threshold: once per level per session,
 * only on a live rise (never when a session is first shown), re-armed when the level drops
 * or a compaction appears.
 */
export class WarningTracker {
  private file: string | undefined;
  private notified: GaugeLevel = "normal";
  private lastCompactionId: string | null = null;

  /** @returns the level to notify about now, or undefined. */
  update(file: string | undefined, level: GaugeLevel, compactionId: string | null): GaugeLevel | undefined {
    if (file !== this.file) {
      this.file = file;
      this.notified = level;
      this.lastCompactionId = compactionId;
      return undefined;
    }
    if (compactionId !== this.lastCompactionId) {
      this.lastCompactionId = compactionId;
      this.notified = level;
      return undefined;
    }
    if (rank(level) < rank(this.notified)) {
      this.notified = level;
      return undefined;
    }
    if (rank(level) > rank(this.notified)) {
      this.notified = level;
      return level;
    }
    return undefined;
  }
}

function rank(level: GaugeLevel): number {
  return level === "error" ? 2 : level === "warning" ? 1 : 0;
}
