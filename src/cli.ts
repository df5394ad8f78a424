/**
 * `pi-context` command line: the same core as the extension, without VS Code.
 *
 *   pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID]
 *                      [--project-settings auto|always|never] [--context-window N]
 *
 * Further commands (compact, switch, tree) register themselves in `cliCommands`.
 */

import * as path from "node:path";
import { compactCommand, COMPACT_USAGE } from "./compactCli";
import { analyzeSession, type Analysis } from "./core/analyze";
import { formatTokens, type InspectResult } from "./core/inspect";
import { getAgentDir, type ProjectSettingsMode } from "./core/settings";
import { SWITCH_USAGE, switchCommand, TREE_USAGE, treeCommand } from "./treeCli";

/** Parsed command-line flags: `--name value`, `--flag`, and positional arguments. */
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
}

/** Parse `argv` (without node and script). Flags listed in `booleans` take no value. */
export function parseArgs(argv: readonly string[], booleans: ReadonlySet<string>): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
      else if (booleans.has(arg.slice(2))) flags.set(arg.slice(2), true);
      else {
        const value = argv[i + 1];
        if (value === undefined) throw new UsageError(`${arg} needs a value`);
        flags.set(arg.slice(2), value);
        i++;
      }
    } else positional.push(arg);
  }
  return { positional, flags };
}

/** A user error on the command line (exit code 2). */
export class UsageError extends Error {}

function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === "string" ? v : undefined;
}

/** The analysis options the shared flags describe. */
export function analyzeOptionsFrom(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env) {
  const agentDir = flag(args, "agent-dir") ? path.resolve(flag(args, "agent-dir")!) : getAgentDir(env);
  const mode = flag(args, "project-settings") ?? "auto";
  if (!["auto", "always", "never"].includes(mode)) throw new UsageError(`--project-settings must be auto, always or never`);
  const windowFlag = flag(args, "context-window");
  const contextWindow = windowFlag !== undefined ? Number(windowFlag) : undefined;
  if (contextWindow !== undefined && !(contextWindow > 0)) throw new UsageError("--context-window must be a positive number");
  const leaf = flag(args, "leaf");
  return {
    agentDir,
    projectSettings: mode as ProjectSettingsMode,
    ...(flag(args, "cwd") ? { cwd: path.resolve(flag(args, "cwd")!) } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(leaf !== undefined ? { leafId: leaf === "null" ? null : leaf } : {}),
  };
}

function sourceText(s: { source: string; file?: string; key?: string; error?: string }): string {
  if (s.error) return `invalid (${s.error})`;
  if (s.source === "default") return "default";
  if (s.source === "override") return `modelOverrides (${s.file ?? "?"})`;
  return `${s.source} (${s.file ?? "?"})`;
}

/** The human-readable `inspect` report. */
export function formatInspect(analysis: Analysis): string {
  const r: InspectResult = analysis.inspect;
  const lines: string[] = [];
  const model = r.model ? `${r.model.provider}/${r.model.modelId}` : "(none)";
  lines.push(`session   ${r.sessionName ? `${r.sessionName} — ` : ""}${r.file}`);
  lines.push(`entries   ${r.entryCount}, leaf ${r.leafId ?? "(none)"}`);
  lines.push(`model     ${analysis.selection ? `${analysis.selection.provider}/${analysis.selection.modelId}` : model}${analysis.selection?.source === "settings-default" ? " (settings default)" : ""}`);
  const win = r.contextWindow.value;
  lines.push(`window    ${win ? `${win.toLocaleString("en-US")} tokens` : "unknown"} (${r.contextWindow.source}${r.contextWindow.detail ? `: ${r.contextWindow.detail}` : ""})`);
  const how = r.estimate.method === "usage+estimate" ? `last usage ${r.estimate.usageTokens} + estimate ${r.estimate.trailingTokens}` : `estimate of all ${r.estimate.trailingTokens}`;
  lines.push(`context   ${r.usageKnown ? "" : "? (pi shows ? until the next answer; estimate) "}${r.contextTokens.toLocaleString("en-US")} tokens${r.percent !== null ? ` = ${r.percent.toFixed(1)}%` : ""} (${how})`);
  lines.push(`footer    ${r.footer}`);
  lines.push(`auto      compaction ${r.compactionEnabled.value ? "enabled" : "DISABLED"} (${sourceText(r.compactionEnabled)})`);
  lines.push(`reserve   ${r.reserveTokens.value ?? "?"} tokens (${sourceText(r.reserveTokens)})`);
  lines.push(`keep      ${r.keepRecentTokens.value ?? "?"} tokens (${sourceText(r.keepRecentTokens)})`);
  if (r.threshold !== null) {
    lines.push(`threshold ${r.threshold.toLocaleString("en-US")} tokens (window − reserve); ${r.tokensUntilCompaction! >= 0 ? `${formatTokens(r.tokensUntilCompaction!)} tokens until auto-compaction` : `over by ${formatTokens(-r.tokensUntilCompaction!)}`}; shouldCompact ${r.shouldCompact}`);
  } else lines.push("threshold unknown (no context window or invalid reserve)");
  lines.push("");
  if (r.compaction) {
    const c = r.compaction;
    lines.push("compaction preview (what pi's /compact would do now)");
    lines.push(`  firstKeptEntryId  ${c.firstKeptEntryId}`);
    lines.push(`  split turn        ${c.isSplitTurn ? `yes (turn starts at ${c.turnStartEntryId})` : "no"}`);
    lines.push(`  tokensBefore      ${c.tokensBefore}`);
    lines.push(`  summarised        ${c.summarizedEntryIds.length} entries${c.turnPrefixEntryIds.length ? ` + ${c.turnPrefixEntryIds.length} turn-prefix entries` : ""}, ≈${c.summarizedTokens} tokens${c.hasPreviousSummary ? ` (+ previous summary of ${c.previousCompactionId})` : ""}`);
    lines.push(`  kept              ${c.keptEntryCount} entries, ≈${c.keptTokens} tokens${c.keptExceedsKeepRecent ? " (more than keepRecentTokens: a tool call and its results stay together)" : ""}`);
    lines.push(`  after             ≈${c.tokensAfterWithoutSummary} tokens + the summary`);
    lines.push(`  read files        ${c.readFiles.length ? c.readFiles.join(", ") : "(none)"}`);
    lines.push(`  modified files    ${c.modifiedFiles.length ? c.modifiedFiles.join(", ") : "(none)"}`);
  } else lines.push(`compaction preview: none — ${r.compactionUnavailable ?? "nothing to compact"}`);
  const problems = [...r.settingsProblems.map((p) => `settings: ${p.message}`), ...(analysis.modelsError ? [`models: ${analysis.modelsError.split("\n")[0]}`] : []), ...r.diagnostics.map((d) => `${d.severity}: ${d.message}`)];
  if (problems.length) {
    lines.push("");
    lines.push("diagnostics");
    for (const p of problems.slice(0, 50)) lines.push(`  ${p}`);
    if (problems.length > 50) lines.push(`  … ${problems.length - 50} more`);
  }
  return lines.join("\n");
}

/** `pi-context inspect`. */
async function inspectCommand(argv: readonly string[], out: (s: string) => void): Promise<number> {
  const args = parseArgs(argv, new Set(["json"]));
  const file = args.positional[0];
  if (!file) throw new UsageError("usage: pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID] [--project-settings auto|always|never] [--context-window N]");
  const analysis = await analyzeSession(path.resolve(file), analyzeOptionsFrom(args));
  if (args.flags.has("json")) out(JSON.stringify(analysis.inspect, null, 2));
  else out(formatInspect(analysis));
  return 0;
}

/** A CLI sub-command: returns the exit code. */
export type CliCommand = (argv: readonly string[], out: (s: string) => void, err: (s: string) => void) => Promise<number>;

/** All sub-commands by name. */
export const cliCommands = new Map<string, CliCommand>([
  ["inspect", inspectCommand],
  ["compact", (argv, out, err) => compactCommand(argv, out, err)],
  ["tree", (argv, out, err) => treeCommand(argv, out, err)],
  ["switch", (argv, out, err) => switchCommand(argv, out, err)],
]);

const USAGE = `pi-context — see and steer pi's context window

usage:
  pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID]
                     [--project-settings auto|always|never] [--context-window N]
  ${COMPACT_USAGE}
  ${TREE_USAGE}
  ${SWITCH_USAGE}`;

/** Run the CLI. @returns the process exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: readonly string[], out: (s: string) => void = (s) => process.stdout.write(`${s}\n`), err: (s: string) => void = (s) => process.stderr.write(`${s}\n`)): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    out(USAGE);
    return command ? 0 : 2;
  }
  const run = cliCommands.get(command);
  if (!run) {
    err(`unknown command ${command}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await run(rest, out, err);
  } catch (error) {
    if (error instanceof UsageError) {
      err(error.message);
      return 2;
    }
    err(`pi-context ${command}: ${(error as Error).message}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
