/**
 * `pi-context inspect <session.jsonl> [--json] …`: what the gauge shows (pi's numbers and where
 * each comes from) and what pi's `/compact` would do now.
 */

import { sessionInfoOf } from "../core/read/store";
import { sessionLabel } from "../core/rules/sessionLabel";
import { estimateFailureText } from "../core/rules/estimateFailure";
import * as path from "node:path";
import { analyzeSession, type Analysis } from "../core/rules/analyze";
import type { InspectResult } from "../core/rules/inspect";
import { autoCompactsText, formatCount as n, tokensText, withPeriod } from "../shared/format";
import { lineText } from "../shared/untrusted";
import { nothingToCompact } from "../viewModel/gauge";
import { windowSourceText } from "../viewModel/sourceText";
import { buildUsageModel, usageRows } from "../viewModel/usage";
import { fixedContextLines } from "../viewModel/fixedContext";
import {
  analyzeOptionsFrom,
  checkFlags,
  formatUsage,
  NotASessionError,
  parseArgs,
  UsageError,
  userPiFrom,
  type CliCommand,
} from "./args";

export const INSPECT_USAGE = `pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID]
  [--project-settings auto|always|never] [--context-window N] [--pi PATH]`;

const INSPECT_FLAGS = new Set(["json", "agent-dir", "cwd", "leaf", "project-settings", "context-window", "pi"]);

/** Where a pi setting came from, in words: `global settings: /…/settings.json`. */
function sourceText(s: { source: string; file?: string; key?: string; error?: string }): string {
  if (s.error) return `invalid: ${s.error}`;
  if (s.source === "default") return "pi's default";
  const where =
    s.source === "override"
      ? "compaction.modelOverrides in"
      : s.source === "project"
        ? "project settings"
        : "global settings";
  return `${where}${s.file ? `: ${s.file}` : ""}`;
}

/** `label` padded to the report's first column. */
const row = (label: string, text: string) => `${label.padEnd(12)}${text}`;

/** The human-readable `inspect` report. */
export function formatInspect(analysis: Analysis, label?: string): string {
  const r: InspectResult = analysis.inspect;
  const lines: string[] = [];
  const model = r.model ? `${r.model.provider}/${r.model.modelId}` : "(none on the session's path)";
  const shown = label ?? r.sessionName;
  if (shown) lines.push(row("session", shown));
  lines.push(row("file", r.file));
  lines.push(
    row(
      "entries",
      r.piLeaf
        ? `${n(r.entryCount)}; leaf: ${r.piLeaf.branchEmpty ? "none for pi" : "not one pi-context can name"} — line ${r.piLeaf.line} is ${r.piLeaf.what}, not an entry with a string id; the numbers below are pi's there (pi-context doctor has the repair)`
        : `${n(r.entryCount)}; leaf ${r.leafId ?? "(none)"}`,
    ),
  );
  lines.push(
    row(
      "model",
      `${analysis.selection ? `${analysis.selection.provider}/${analysis.selection.modelId}` : model}${analysis.selection?.source === "settings-default" ? " (pi's default model from settings.json)" : ""}`,
    ),
  );
  const pi = r.pi;
  if (pi) {
    lines.push(row("pi", pi.version ? `${pi.version}, ${pi.sourceText}` : pi.sourceText));
    if (pi.catalog.problem)
      lines.push(row("", `${withPeriod(pi.catalog.problem)} Windows come from ${pi.catalog.name}.`));
    if (pi.note) lines.push(row("", pi.note));
  }
  const win = r.contextWindow.value;
  lines.push(
    row(
      "window",
      `${win ? `${n(win)} tokens, from ${windowSourceText(r.contextWindow, "file")}` : `unknown (${windowSourceText(r.contextWindow, "file")})`}`,
    ),
  );
  const how =
    r.estimate.method === "usage+estimate"
      ? `last reported usage ${n(r.estimate.usageTokens)} + estimate of later messages ${n(r.estimate.trailingTokens)}`
      : `estimate of all messages`;
  if (r.estimateFailure) {
    // pi has no number here: never print pi-context's own count as pi's
    lines.push(row("context", withPeriod(estimateFailureText(r.estimateFailure))));
    lines.push(row("pi footer", "fails (no number; pi's auto-compaction check after each answer fails too)"));
  } else {
    lines.push(
      row(
        "context",
        `${n(r.contextTokens)} tokens${r.percent !== null ? ` = ${r.percent.toFixed(1)}% of the window` : ""} (${how})${r.usageKnown ? "" : "; pi shows ? until its next answer"}`,
      ),
    );
    lines.push(row("pi footer", r.footer));
  }
  lines.push(
    row(
      "auto",
      `compaction ${r.compactionEnabled.value ? "enabled" : "disabled"} (${sourceText(r.compactionEnabled)})`,
    ),
  );
  lines.push(
    row(
      "reserve",
      `${r.reserveTokens.value !== null ? `${n(r.reserveTokens.value)} tokens` : "?"} (${sourceText(r.reserveTokens)})`,
    ),
  );
  lines.push(
    row(
      "keep",
      `${r.keepRecentTokens.value !== null ? `${n(r.keepRecentTokens.value)} tokens` : "?"} (${sourceText(r.keepRecentTokens)})`,
    ),
  );
  if (r.threshold !== null && r.estimateFailure)
    lines.push(row("threshold", `${n(r.threshold)} tokens (window − reserve); pi cannot compare its estimate with it`));
  else if (r.threshold !== null) {
    const until = r.tokensUntilCompaction!;
    const state = !r.compactionEnabled.value
      ? "auto-compaction is off"
      : until >= 0
        ? `${tokensText(until)} until auto-compaction`
        : `over by ${tokensText(-until)}: ${autoCompactsText(nothingToCompact(r))}`;
    lines.push(row("threshold", `${n(r.threshold)} tokens (window − reserve); ${state}`));
  } else lines.push(row("threshold", "unknown (no context window, or reserveTokens is invalid)"));
  for (const [label, text] of usageRows(buildUsageModel(r, analysis.model?.reasoning)))
    lines.push(row(label.toLowerCase().slice(0, 11), text));
  lines.push("");
  lines.push("fixed part (what every request carries before the conversation: pi's system message)");
  for (const line of fixedContextLines(r.fixedContext)) lines.push(`  ${line}`);
  lines.push("");
  if (r.compaction) {
    const c = r.compaction;
    const k = (label: string, text: string) => `  ${label.padEnd(18)}${text}`;
    lines.push("compaction preview (what pi's /compact would do now)");
    lines.push(k("first kept entry", c.firstKeptEntryId));
    lines.push(k("split turn", c.isSplitTurn ? `yes (the turn starts at ${c.turnStartEntryId})` : "no"));
    if (c.estimateFailure) lines.push(k("pi's /compact", withPeriod(estimateFailureText(c.estimateFailure))));
    lines.push(
      k(
        "tokens before",
        c.estimateFailure ? `≈${n(c.tokensBefore)} (pi-context's count; pi has none)` : n(c.tokensBefore),
      ),
    );
    lines.push(
      k(
        "summarized",
        `${n(c.summarizedEntryIds.length)} entries${c.turnPrefixEntryIds.length ? ` + ${n(c.turnPrefixEntryIds.length)} turn-prefix entries` : ""}, ≈${tokensText(c.summarizedTokens)}${c.hasPreviousSummary ? ` (+ the summary of compaction ${c.previousCompactionId})` : ""}`,
      ),
    );
    lines.push(
      k(
        "kept",
        `${n(c.keptEntryCount)} entries, ≈${tokensText(c.keptTokens)}${c.keptExceedsKeepRecent ? " (more than keepRecentTokens: a tool call and its results stay together)" : ""}`,
      ),
    );
    lines.push(k("after", `≈${n(c.tokensAfterWithoutSummary)} tokens + the summary`));
    lines.push(k("read files", c.readFiles.length ? c.readFiles.join(", ") : "(none)"));
    lines.push(k("modified files", c.modifiedFiles.length ? c.modifiedFiles.join(", ") : "(none)"));
  } else lines.push(`compaction preview: none — ${withPeriod(r.compactionUnavailable ?? "nothing to compact")}`);
  const problems = [
    ...r.settingsProblems.map((p) => `settings: ${p.message}`),
    ...(analysis.modelsError ? [`models: ${analysis.modelsError.split("\n")[0]}`] : []),
    ...r.diagnostics.map((d) => `${d.severity}: ${d.message}`),
  ];
  if (problems.length) {
    lines.push("");
    lines.push("diagnostics");
    for (const p of problems.slice(0, 50)) lines.push(`  ${p}`);
    if (problems.length > 50) lines.push(`  … ${n(problems.length - 50)} more`);
  }
  return lines.map(lineText).join("\n"); // one line each, whatever a session string holds
}

/** `pi-context inspect`. */
export const inspectCommand: CliCommand = async (argv, out) => {
  const args = parseArgs(argv, new Set(["json"]));
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError(`usage:\n${formatUsage(INSPECT_USAGE, 2)}`);
  checkFlags(args, INSPECT_FLAGS, INSPECT_USAGE);
  const pi = await userPiFrom(args);
  const options = { ...analyzeOptionsFrom(args), pi };
  const analysis = await analyzeSession(path.resolve(file), options);
  const session = analysis.session;
  if (session.invalid || !session.header) throw new NotASessionError(file, session.size === 0);
  // --leaf names an entry of the file (pi's message, as `switch`): never the numbers of another leaf
  if (typeof options.leafId === "string" && !session.byId.has(options.leafId))
    throw new Error(`Entry ${options.leafId} not found`);
  if (args.flags.has("json")) out(JSON.stringify(analysis.inspect, null, 2));
  else {
    // the label every surface shows (pi's rule: name, else the first user message)
    const info = await sessionInfoOf(path.resolve(file)).catch(() => undefined);
    out(
      formatInspect(analysis, sessionLabel({ name: analysis.inspect.sessionName, firstMessage: info?.firstMessage })),
    );
  }
  return 0;
};
