/**
 * The status-bar gauge as plain data, without `vscode`: text (`π 62% · 124k/200k`), colour level
 * by distance to pi's real auto-compaction threshold (`contextWindow − reserveTokens`), the
 * Markdown tooltip and the screen-reader label. `statusBar.ts` only renders this.
 *
 * All numbers come from `InspectResult` (`src/core/inspect.ts`), i.e. exactly what
 * `pi-context inspect --json` prints for the same file.
 */

import { formatCount, PRODUCT_NAME, tokensText } from "../shared/format";
import { markdownText } from "../shared/untrusted";
import * as path from "node:path";
import type { Analysis } from "../core/rules/analyze";
import type { SourcedNumber } from "../core/rules/inspect";
import { piText, piWarnings, windowSourceText } from "./sourceText";
import { gaugeLimit, levelFor, type GaugeColors, type GaugeLevel } from "./gauge";
import { buildUsageModel, usageRows } from "./usage";
import type { ValueSource } from "../core/rules/settings";
import type { ProblemModel } from "../shared/protocol";
import {
  AUTO_COMPACTS_WHEN,
  COMPACT_ICON,
  formatDateTime,
  formatGaugeTokens,
  formatWindowTokens,
  plural,
} from "../shared/format";
import { checkHealth } from "../core/health/doctor";
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
    /** A live bridge serves this session: `analysis.inspect` holds the running pi's numbers (see `bridge/liveUsage.ts`). */
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
 * Escape untrusted text (session names, paths, messages) for inline Markdown, also inside table
 * cells: `markdownText` — every ASCII punctuation escaped, so no emphasis, code, link, autolink
 * (`https://`, `www.`), HTML, entity, theme icon or pipe; every line break (a lone CR too) a space.
 */
export const escapeMarkdown = markdownText;

function valueSourceText(source: ValueSource, file: string | undefined, key: string): string {
  const where = file ? ` (${escapeMarkdown(file)})` : "";
  switch (source) {
    case "default":
      return "pi's default";
    case "global":
      return `global settings${where}`;
    case "project":
      return `project settings${where}`;
    case "override":
      return `${escapeMarkdown(key)}${where}`;
  }
}

function sourcedRow(name: string, s: SourcedNumber): string {
  if (s.value === null) return `| ${name} | **invalid** — ${valueSourceText(s.source, s.file, s.key)} |`;
  return `| ${name} | ${formatCount(s.value)} — ${valueSourceText(s.source, s.file, s.key)} |`;
}

const LINKS_SESSION = `[$(${COMPACT_ICON}) Compact…](command:piContext.compact) · [$(dashboard) Compact At…](command:piContext.compactAt) · [$(graph) Open Context Panel](command:piContext.openPanel) · [$(list-selection) Select Session…](command:piContext.selectSession) · [$(output) Log](command:piContext.showLog)`;
const LINKS_NONE =
  "[$(list-selection) Select Session…](command:piContext.selectSession) · [$(output) Log](command:piContext.showLog)";

/**
 * The one explanation of an empty state, shared by the gauge tooltip, the panel and the Pi Session
 * tree: still looking, no folder open, or no session for the folders.
 */
export function emptyStateMessage(discovery: GaugeInput["discovery"] | undefined): string {
  if (!discovery || discovery.phase === "starting") return "Looking for pi sessions…";
  if (!discovery.workspace)
    return "No folder is open. pi sessions belong to the folder pi ran in: open that folder, or pick any session with “Pi: Select Session…”.";
  return "No pi session for this workspace yet. Start pi in a workspace folder, or pick any session with “Pi: Select Session…”.";
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
    lines.push(`- … and ${problems.length - limit} more ([open the panel](command:piContext.openPanel))`);
  return lines;
}

/** Build the gauge for the current state (pure). */
export function buildGaugeView(input: GaugeInput): GaugeView {
  const s = input.session;
  if (!s) {
    const d = input.discovery;
    if (!d || d.phase === "starting") {
      return {
        state: "starting",
        text: "π …",
        level: "normal",
        tooltip: `**${PRODUCT_NAME}** — looking for pi sessions…`,
        ariaLabel: `${PRODUCT_NAME}: looking for sessions`,
        command: "piContext.selectSession",
      };
    }
    if (!d.workspace) {
      return {
        state: "no-workspace",
        text: "π no folder",
        level: "normal",
        tooltip: [
          `**${PRODUCT_NAME}** — no folder is open`,
          "",
          "pi sessions belong to the folder pi ran in (the session header's `cwd`). Open that folder, or pick any session (each listed with its project folder):",
          "",
          LINKS_NONE,
        ].join("\n"),
        ariaLabel: `${PRODUCT_NAME}: no folder open`,
        command: "piContext.selectSession",
      };
    }
    const dirs = d.searchedDirs.map((x) => `- ${escapeMarkdown(x)}`);
    return {
      state: "no-session",
      text: "π no session",
      level: "normal",
      tooltip: [
        `**${PRODUCT_NAME}** — no pi session for this workspace yet`,
        "",
        "Sessions appear here as soon as pi writes one (matched by the `cwd` in the session header). Looked in:",
        "",
        ...dirs,
        "",
        d.agentDir
          ? `Agent dir: ${escapeMarkdown(d.agentDir)} (setting \`piContext.agentDir\`, else \`PI_CODING_AGENT_DIR\`, else \`~/.pi/agent\`)`
          : "",
        "",
        LINKS_NONE,
      ].join("\n"),
      ariaLabel: `${PRODUCT_NAME}: no session for this workspace`,
      command: "piContext.selectSession",
    };
  }

  const analysis = s.analysis;
  const inspect = analysis.inspect;
  const window = inspect.contextWindow.value && inspect.contextWindow.value > 0 ? inspect.contextWindow.value : null;
  const tokens = inspect.contextTokens;
  const colors = input.colors ?? "threshold";
  const level = levelFor(inspect, input.margin, colors);
  const limit = gaugeLimit(inspect, input.margin);
  const problems = inspect.settingsProblems;
  const enabled = inspect.compactionEnabled.value;
  const health = checkHealth(analysis);

  // ---- text
  let text: string;
  if (!window) text = `π ${formatGaugeTokens(tokens)}/?`;
  else if (!inspect.usageKnown) text = `π ? · ≈${formatGaugeTokens(tokens)}/${formatWindowTokens(window)}`;
  else text = `π ${formatPercent(inspect.percent ?? 0)} · ${formatGaugeTokens(tokens)}/${formatWindowTokens(window)}`;
  if (!enabled) text += " · auto off";
  if (s.live) text += " · live";
  const others = s.liveSessions ?? [];
  if (others.length > 0) text += ` · ${others.length + 1} live`;
  if (health.errors > 0) text = `$(error) ${text}`;
  else if (problems.length > 0 || analysis.modelsError) text = `$(warning) ${text}`;
  if (s.pinned) text = `$(pinned) ${text}`;

  // ---- tooltip
  const name = s.label ?? inspect.sessionName ?? "unnamed session";
  const lines: string[] = [];
  lines.push(
    `**${PRODUCT_NAME}** — ${escapeMarkdown(name)}${s.pinned ? " (pinned)" : ""}${s.live ? ` · **live** from pi ${escapeMarkdown(s.live.piVersion)} (pid ${s.live.pid})` : ""}`,
    "",
  );
  if (others.length > 0) {
    lines.push(
      `${others.length + 1} live sessions in this folder (written in the last minute or open in a running pi); this one stays shown while it is live:`,
      "",
      ...others
        .slice(0, 5)
        .map(
          (o) =>
            `- [$(arrow-swap) Switch to ${escapeMarkdown(o.label)}](command:piContext.switchLiveSession?${encodeURIComponent(JSON.stringify([o.file]))})`,
        ),
      "",
    );
  }
  const rows: string[] = ["| | |", "|---|---|"];
  if (window) {
    const pct = inspect.percent ?? 0;
    if (inspect.usageKnown)
      rows.push(`| Context | **${formatCount(tokens)}** of ${formatCount(window)} tokens (${pct.toFixed(1)}%) |`);
    else
      rows.push(
        `| Context | pi shows **?** (no answer since the last compaction); our estimate: ≈${formatCount(tokens)} of ${formatCount(window)} tokens (≈${pct.toFixed(1)}%) |`,
      );
  } else {
    rows.push(`| Context | **${formatCount(tokens)}** tokens; context window unknown |`);
  }
  const model =
    inspect.model ??
    (analysis.selection ? { provider: analysis.selection.provider, modelId: analysis.selection.modelId } : null);
  if (model) {
    const from =
      analysis.selection?.source === "settings-default"
        ? "settings `defaultProvider`/`defaultModel`"
        : "the session's branch";
    rows.push(
      `| Model | ${escapeMarkdown(`${model.provider}/${model.modelId}`)} (from ${from})${analysis.model?.reasoning === false ? "" : `, thinking ${escapeMarkdown(inspect.thinkingLevel || "off")}`} |`,
    );
  } else {
    rows.push("| Model | unknown: no model in the session and no `defaultProvider`/`defaultModel` in pi's settings |");
  }
  rows.push(
    window
      ? `| Window | ${formatCount(window)} — ${escapeMarkdown(windowSourceText(inspect.contextWindow))} |`
      : `| Window | unknown${model ? ` — ${escapeMarkdown(`${model.provider}/${model.modelId}`)} is not in ${escapeMarkdown(inspect.contextWindow.catalog ?? "pi's catalog")} or models.json` : ""} |`,
  );
  rows.push(`| pi | ${escapeMarkdown(piText(inspect.pi, s.live))} |`);
  const est = inspect.estimate;
  if (est.method === "usage+estimate") {
    rows.push(
      `| Computed | usage of the last answer ${formatCount(est.usageTokens)} + estimate ${formatCount(est.trailingTokens)} for what came after (chars/4) |`,
    );
  } else {
    rows.push(
      `| Computed | estimate only (chars/4 over the context): ${inspect.usageKnown ? "no answer with usage yet" : "usage before the last compaction no longer applies"} |`,
    );
  }
  if (enabled) {
    if (inspect.threshold !== null && inspect.tokensUntilCompaction !== null) {
      const until = inspect.tokensUntilCompaction;
      const when = until >= 0 ? `${tokensText(until)} to go` : `over by ${formatCount(-until)}: ${AUTO_COMPACTS_WHEN}`;
      rows.push(`| Auto-compaction | at ${formatCount(inspect.threshold)} tokens (window − reserveTokens); ${when} |`);
    } else {
      rows.push(
        `| Auto-compaction | threshold unknown — ${window ? "reserveTokens is invalid (see below)" : "the context window is unknown"} |`,
      );
    }
  } else {
    rows.push(
      `| Auto-compaction | **disabled** — \`compaction.enabled: false\` in ${valueSourceText(inspect.compactionEnabled.source, inspect.compactionEnabled.file, "compaction.enabled")}; the limit is the window itself |`,
    );
  }
  rows.push(sourcedRow("reserveTokens", inspect.reserveTokens));
  rows.push(sourcedRow("keepRecentTokens", inspect.keepRecentTokens));
  for (const [label, text] of usageRows(buildUsageModel(inspect, analysis.model?.reasoning)))
    rows.push(`| ${label} | ${escapeMarkdown(text)} |`);
  if (s.live)
    rows.push(
      `| Live | the running pi (pid ${s.live.pid}, pi ${escapeMarkdown(s.live.piVersion)}, bridge ${escapeMarkdown(s.live.bridgeVersion)}) reports these numbers${s.live.activity && s.live.activity !== "idle" ? `; pi is ${escapeMarkdown(s.live.activity)}` : ""}; Compact and Switch run in that pi |`,
    );
  rows.push(
    `| Session | ${escapeMarkdown(path.basename(s.file))} — ${plural(inspect.entryCount, "entry", "entries")} |`,
  );
  const modifiedAt = s.modifiedAt ?? analysis.session.mtimeMs;
  if (modifiedAt > 0)
    rows.push(`| Updated | ${escapeMarkdown(formatDateTime(modifiedAt, input.locale))} (last written) |`);
  lines.push(...rows, "");
  for (const warning of piWarnings(inspect.pi)) lines.push(`$(warning) ${escapeMarkdown(warning)}`, "");
  if (colors === "piFooter" && level !== "normal") {
    lines.push(
      `${level === "error" ? "$(error)" : "$(warning)"} Above ${level === "error" ? "90" : "70"} % of the context window (pi's footer colours, setting \`piContext.gauge.colors\`).`,
      "",
    );
  } else if (limit && level !== "normal") {
    lines.push(
      level === "error"
        ? `$(error) Above the ${limit.kind === "threshold" ? "auto-compaction threshold" : "context window"}.`
        : `$(warning) Within ${formatCount(limit.margin)} tokens of the ${limit.kind === "threshold" ? "auto-compaction threshold" : "context window"}.`,
      "",
    );
  }
  const all = problemsOf(health, s.file);
  lines.push(healthBadge(health), "");
  if (all.length > 0) {
    lines.push(`**Problems** (${all.length}; listed in the panel and the log):`, "");
    lines.push(...problemLines(all));
    // what pi does with each kind (settings-manager.js): an unreadable file is read as {} (defaults);
    // an invalid compaction value throws whenever pi reads it
    if (problems.some((p) => p.key === undefined && p.scope !== "trust"))
      lines.push("", "pi ignores a settings file it cannot read: the numbers above use pi's defaults for its values.");
    if (problems.some((p) => p.key?.startsWith("compaction.")))
      lines.push(
        "",
        "pi stops with this error whenever it reads an invalid compaction setting (auto-compaction and /compact fail until it is fixed), so there is no threshold.",
      );
    lines.push("");
  }
  lines.push(`File: ${escapeMarkdown(s.file)}`, "", LINKS_SESSION);

  // ---- screen reader
  const aria: string[] = [];
  if (s.live) aria.push("live from the running pi");
  if (window) {
    if (inspect.usageKnown)
      aria.push(
        `${PRODUCT_NAME} ${formatPercent(inspect.percent ?? 0).replace("%", " percent")}, ${formatCount(tokens)} of ${formatCount(window)} tokens`,
      );
    else
      aria.push(
        `${PRODUCT_NAME} unknown since the last compaction, estimated ${formatCount(tokens)} of ${formatCount(window)} tokens`,
      );
  } else aria.push(`${PRODUCT_NAME} ${formatCount(tokens)} tokens, context window unknown`);
  if (!enabled) aria.push("auto-compaction disabled");
  else if (inspect.tokensUntilCompaction !== null)
    aria.push(
      inspect.tokensUntilCompaction >= 0
        ? `${tokensText(inspect.tokensUntilCompaction)} until auto-compaction`
        : "above the auto-compaction threshold",
    );
  if (level === "warning") aria.push("warning");
  if (problems.length > 0) aria.push("invalid pi settings");
  if (health.errors > 0) aria.push(`session health: ${plural(health.errors, "error")}`);
  if (all.some((p) => p.source === "session" && p.severity !== "info"))
    aria.push(
      plural(all.filter((p) => p.source === "session" && p.severity !== "info").length, "problem") +
        " in the session file",
    );

  return {
    state: "session",
    text,
    level,
    tooltip: lines.join("\n"),
    ariaLabel: aria.join(", "),
    command: "piContext.openPanel",
  };
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
