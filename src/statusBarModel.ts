/**
 * The status-bar gauge as plain data, without `vscode`: text (`π 62% · 124k/200k`), colour level
 * by distance to pi's real auto-compaction threshold (`contextWindow − reserveTokens`), the
 * Markdown tooltip and the screen-reader label. `statusBar.ts` only renders this.
 *
 * All numbers come from `InspectResult` (`src/core/inspect.ts`), i.e. exactly what
 * `pi-context inspect --json` prints for the same file.
 */

import * as path from "node:path";
import type { Analysis } from "./core/analyze";
import { formatTokens, type InspectResult, type ResolvedWindow, type SourcedNumber } from "./core/inspect";
import type { ValueSource } from "./core/settings";
import type { Diagnostic } from "./core/types";

/** Colour level of the gauge: `warning`/`error` map to `statusBarItem.warningBackground`/`errorBackground`. */
export type GaugeLevel = "normal" | "warning" | "error";

/** Which state the gauge is in. */
export type GaugeState = "starting" | "no-workspace" | "no-session" | "session";

/** Commands linked from the tooltip (the only ones the trusted Markdown may run). */
export const TOOLTIP_COMMANDS = ["piContext.compact", "piContext.openPanel", "piContext.selectSession", "piContext.followLatest", "piContext.showLog"] as const;

/** What the gauge is computed from. */
export interface GaugeInput {
  session?: {
    file: string;
    analysis: Analysis;
    pinned: boolean;
    /** When the file was last read (ms since epoch). */
    updatedAt: number;
    /** A live bridge serves this session: `analysis.inspect` holds the running pi's numbers (see `bridge/liveUsage.ts`). */
    live?: { pid: number; piVersion: string; bridgeVersion: string; activity?: string };
  };
  discovery?: { phase: "starting" | "ready"; workspace: boolean; searchedDirs: string[]; sessionCount: number; agentDir?: string };
  /** `piContext.warning.margin`: tokens before the limit where the warning colour starts. */
  margin: number;
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

/** Where the colour limit is and why. */
export interface GaugeLimit {
  /** Tokens at which the colour turns to error when exceeded (pi: strict `>`). */
  limit: number;
  kind: "threshold" | "window";
  /** Warning starts at `limit − margin` (margin capped at a quarter of the limit). */
  margin: number;
}

/**
 * The limit the colour is measured against: pi's auto-compaction threshold when auto-compaction is
 * on and `reserveTokens` is valid, else the context window itself (pi will not compact before the
 * provider overflows). `null` without a known window.
 */
export function gaugeLimit(inspect: InspectResult, margin: number): GaugeLimit | null {
  const window = inspect.contextWindow.value;
  if (!window || window <= 0) return null;
  const useThreshold = inspect.compactionEnabled.value && inspect.threshold !== null;
  const limit = useThreshold ? (inspect.threshold as number) : window;
  return { limit, kind: useThreshold ? "threshold" : "window", margin: Math.max(0, Math.min(margin, Math.floor(Math.max(limit, 0) / 4))) };
}

/**
 * The colour level: `error` when the tokens pi's threshold check uses are above the limit (pi
 * compacts before the next request), `warning` within the margin below it, else `normal`.
 */
export function gaugeLevel(inspect: InspectResult, margin: number): GaugeLevel {
  const limit = gaugeLimit(inspect, margin);
  if (!limit) return "normal";
  const tokens = inspect.contextTokens;
  if (tokens > limit.limit) return "error";
  if (limit.limit - tokens <= limit.margin) return "warning";
  return "normal";
}

/** Percent as shown in the text: whole numbers, `<1%` for a non-empty context below 1 %. */
export function formatPercent(percent: number): string {
  if (percent > 0 && percent < 1) return "<1%";
  return `${Math.round(percent)}%`;
}

/** `123,456` (en-US grouping, independent of the host locale). */
export function formatCount(n: number): string {
  const sign = n < 0 ? "-" : "";
  return sign + Math.abs(Math.round(n)).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * Escape untrusted text (session names, paths, messages) for inline Markdown, also inside table
 * cells: emphasis, code, links, HTML, entities, theme icons (`$(…)`) and pipes. Never used at the
 * start of a line, so block syntax (`#`, `-`, `1.`) needs no escaping.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>|~&$]/g, (c) => `\\${c}`).replace(/\r?\n/g, " ");
}

function windowSourceText(w: ResolvedWindow): string {
  const base = {
    catalog: "pi's built-in model catalog",
    "models-store": "models-store.json (pi's cached model catalog)",
    "models-json": "models.json",
    "models-json-override": "models.json `modelOverrides`",
    unknown: "unknown",
    live: "the running pi",
  }[w.source];
  return w.detail ? `${base} (${escapeMarkdown(w.detail)})` : base;
}

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

function timeOf(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

const LINKS_SESSION = "[$(fold) Compact…](command:piContext.compact) · [$(graph) Open Context Panel](command:piContext.openPanel) · [$(list-selection) Select Session…](command:piContext.selectSession) · [$(output) Log](command:piContext.showLog)";
const LINKS_NONE = "[$(list-selection) Select Session…](command:piContext.selectSession) · [$(output) Log](command:piContext.showLog)";

/** Diagnostics worth showing: everything but a torn final line (pi is mid-write). */
export function visibleDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.code !== "truncated-final-line");
}

/** Build the gauge for the current state (pure). */
export function buildGaugeView(input: GaugeInput): GaugeView {
  const s = input.session;
  if (!s) {
    const d = input.discovery;
    if (!d || d.phase === "starting") {
      return { state: "starting", text: "π …", level: "normal", tooltip: "**pi context** — looking for pi sessions…", ariaLabel: "pi context: looking for sessions", command: "piContext.selectSession" };
    }
    if (!d.workspace) {
      return {
        state: "no-workspace",
        text: "π no folder",
        level: "normal",
        tooltip: ["**pi context** — no folder is open", "", "pi sessions belong to the folder pi ran in (the session header's `cwd`). Open that folder, or pick any session:", "", LINKS_NONE].join("\n"),
        ariaLabel: "pi context: no folder open",
        command: "piContext.selectSession",
      };
    }
    const dirs = d.searchedDirs.map((x) => `- ${escapeMarkdown(x)}`);
    return {
      state: "no-session",
      text: "π no session",
      level: "normal",
      tooltip: [
        "**pi context** — no pi session for this workspace yet",
        "",
        "Sessions appear here as soon as pi writes one (matched by the `cwd` in the session header). Looked in:",
        "",
        ...dirs,
        "",
        d.agentDir ? `Agent dir: ${escapeMarkdown(d.agentDir)} (setting \`piContext.agentDir\`, else \`PI_CODING_AGENT_DIR\`, else \`~/.pi/agent\`)` : "",
        "",
        LINKS_NONE,
      ].join("\n"),
      ariaLabel: "pi context: no session for this workspace",
      command: "piContext.selectSession",
    };
  }

  const analysis = s.analysis;
  const inspect = analysis.inspect;
  const window = inspect.contextWindow.value && inspect.contextWindow.value > 0 ? inspect.contextWindow.value : null;
  const tokens = inspect.contextTokens;
  const level = gaugeLevel(inspect, input.margin);
  const limit = gaugeLimit(inspect, input.margin);
  const problems = inspect.settingsProblems;
  const enabled = inspect.compactionEnabled.value;

  // ---- text
  let text: string;
  if (!window) text = `π ${formatTokens(tokens)}/?`;
  else if (!inspect.usageKnown) text = `π ? · ≈${formatTokens(tokens)}/${formatTokens(window)}`;
  else text = `π ${formatPercent(inspect.percent ?? 0)} · ${formatTokens(tokens)}/${formatTokens(window)}`;
  if (!enabled) text += " · auto off";
  if (s.live) text += " · live";
  if (problems.length > 0 || analysis.modelsError) text = `$(warning) ${text}`;
  if (s.pinned) text = `$(pinned) ${text}`;

  // ---- tooltip
  const name = inspect.sessionName ?? "unnamed session";
  const lines: string[] = [];
  lines.push(`**pi context** — ${escapeMarkdown(name)}${s.pinned ? " (pinned)" : ""}${s.live ? ` · **live** from pi ${escapeMarkdown(s.live.piVersion)} (pid ${s.live.pid})` : ""}`, "");
  const rows: string[] = ["| | |", "|---|---|"];
  if (window) {
    const pct = inspect.percent ?? 0;
    if (inspect.usageKnown) rows.push(`| Context | **${formatCount(tokens)}** of ${formatCount(window)} tokens (${pct.toFixed(1)}%) |`);
    else rows.push(`| Context | pi shows **?** (no answer since the last compaction); our estimate: ≈${formatCount(tokens)} of ${formatCount(window)} tokens (≈${pct.toFixed(1)}%) |`);
  } else {
    rows.push(`| Context | **${formatCount(tokens)}** tokens; context window unknown |`);
  }
  const model = inspect.model ?? (analysis.selection ? { provider: analysis.selection.provider, modelId: analysis.selection.modelId } : null);
  if (model) {
    const from = analysis.selection?.source === "settings-default" ? "settings `defaultProvider`/`defaultModel`" : "the session's branch";
    rows.push(`| Model | ${escapeMarkdown(`${model.provider}/${model.modelId}`)} (from ${from})${inspect.thinkingLevel && inspect.thinkingLevel !== "off" ? `, thinking ${escapeMarkdown(inspect.thinkingLevel)}` : ""} |`);
  } else {
    rows.push("| Model | unknown: no model in the session and no `defaultProvider`/`defaultModel` in pi's settings |");
  }
  rows.push(window ? `| Window | ${formatCount(window)} — ${windowSourceText(inspect.contextWindow)} |` : `| Window | unknown${model ? ` — ${escapeMarkdown(`${model.provider}/${model.modelId}`)} is not in pi's catalog or models.json` : ""} |`);
  const est = inspect.estimate;
  if (est.method === "usage+estimate") {
    rows.push(`| Computed | usage of the last answer ${formatCount(est.usageTokens)} + estimate ${formatCount(est.trailingTokens)} for what came after (chars/4) |`);
  } else {
    rows.push(`| Computed | estimate only (chars/4 over the context): ${inspect.usageKnown ? "no answer with usage yet" : "usage before the last compaction no longer applies"} |`);
  }
  if (enabled) {
    if (inspect.threshold !== null && inspect.tokensUntilCompaction !== null) {
      const until = inspect.tokensUntilCompaction;
      const when = until >= 0 ? `${formatCount(until)} tokens to go` : `over by ${formatCount(-until)}: pi compacts before its next request`;
      rows.push(`| Auto-compaction | at ${formatCount(inspect.threshold)} tokens (window − reserveTokens); ${when} |`);
    } else {
      rows.push("| Auto-compaction | threshold unknown (needs the window and a valid reserveTokens) |");
    }
  } else {
    rows.push(`| Auto-compaction | **disabled** — \`compaction.enabled: false\` in ${valueSourceText(inspect.compactionEnabled.source, inspect.compactionEnabled.file, "compaction.enabled")}; the limit is the window itself |`);
  }
  rows.push(sourcedRow("reserveTokens", inspect.reserveTokens));
  rows.push(sourcedRow("keepRecentTokens", inspect.keepRecentTokens));
  if (s.live) rows.push(`| Live | the running pi (pid ${s.live.pid}, pi ${escapeMarkdown(s.live.piVersion)}, bridge ${escapeMarkdown(s.live.bridgeVersion)}) reports these numbers${s.live.activity && s.live.activity !== "idle" ? `; pi is ${escapeMarkdown(s.live.activity)}` : ""}; Compact and Switch run in that pi |`);
  rows.push(`| Session | ${escapeMarkdown(path.basename(s.file))} — ${formatCount(inspect.entryCount)} entries |`);
  rows.push(`| Updated | ${timeOf(s.updatedAt)} |`);
  lines.push(...rows, "");
  if (limit && level !== "normal") {
    lines.push(level === "error" ? `$(error) Above the ${limit.kind === "threshold" ? "auto-compaction threshold" : "context window"}.` : `$(warning) Within ${formatCount(limit.margin)} tokens of the ${limit.kind === "threshold" ? "auto-compaction threshold" : "context window"}.`, "");
  }
  if (problems.length > 0 || analysis.modelsError) {
    lines.push("**Invalid pi settings** (the numbers above use pi's defaults where a value is invalid):", "");
    for (const p of problems) lines.push(`- ${escapeMarkdown(p.file)}${p.key ? ` — ${escapeMarkdown(p.key)}` : ""}: ${escapeMarkdown(p.message)}`);
    if (analysis.modelsError) lines.push(`- ${escapeMarkdown(analysis.modelsError)}`);
    lines.push("");
  }
  const diagnostics = visibleDiagnostics(inspect.diagnostics);
  if (diagnostics.length > 0) {
    lines.push(`**Session file problems** (${diagnostics.length}; see the log):`, "");
    for (const d of diagnostics.slice(0, 5)) lines.push(`- ${d.line !== undefined ? `line ${d.line}: ` : ""}${escapeMarkdown(d.message)}`);
    if (diagnostics.length > 5) lines.push(`- … ${diagnostics.length - 5} more`);
    lines.push("");
  }
  lines.push(`File: ${escapeMarkdown(s.file)}`, "", LINKS_SESSION);

  // ---- screen reader
  const aria: string[] = [];
  if (s.live) aria.push("live from the running pi");
  if (window) {
    if (inspect.usageKnown) aria.push(`pi context ${formatPercent(inspect.percent ?? 0).replace("%", " percent")}, ${formatCount(tokens)} of ${formatCount(window)} tokens`);
    else aria.push(`pi context unknown since the last compaction, estimated ${formatCount(tokens)} of ${formatCount(window)} tokens`);
  } else aria.push(`pi context ${formatCount(tokens)} tokens, context window unknown`);
  if (!enabled) aria.push("auto-compaction disabled");
  else if (inspect.tokensUntilCompaction !== null) aria.push(inspect.tokensUntilCompaction >= 0 ? `${formatCount(inspect.tokensUntilCompaction)} tokens until auto-compaction` : "above the auto-compaction threshold");
  if (level === "warning") aria.push("warning");
  if (problems.length > 0) aria.push("invalid pi settings");

  return { state: "session", text, level, tooltip: lines.join("\n"), ariaLabel: aria.join(", "), command: "piContext.openPanel" };
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
